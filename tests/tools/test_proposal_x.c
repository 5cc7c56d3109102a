/*
 * Action proposals with the computer tool on (agent/tools/proposal): on a
 * private Xvfb this test starts itself (-displayfd: the server picks a
 * free display; ended by its pid), every dialect's call becomes an ACTION
 * with the facts the gate decides on — the parsed action, its JSON once,
 * its description, whether it reaches deskhand's own terminal, the pointer
 * and the monitors — and the human's edit replaces the action (or, not
 * valid, leaves the proposal as it was). Skipped when Xvfb is not
 * installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/tools/tools.h"

#define SCREEN_W 1920
#define SCREEN_H 1080

static pid_t xvfb = -1;
static os_display *display;
static agent_tools *tools;      /* the picture's pixels: 1280x720 for 1920x1080 */
static agent_tools *tools_grid; /* Gemini's 0..999 grid over the same picture */

/* Xvfb on a display it chooses; false when there is no Xvfb to start. */
static bool start_xvfb(char *name, size_t len)
{
	int fds[2];
	if (pipe(fds) != 0)
		return false;
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		/* Ended with this test, even if it dies on an assertion. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		close(fds[0]);
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		char fd[16], screen[32];
		snprintf(fd, sizeof(fd), "%d", fds[1]);
		snprintf(screen, sizeof(screen), "%dx%dx24", SCREEN_W, SCREEN_H);
		execlp("Xvfb", "Xvfb", "-displayfd", fd, "-screen", "0", screen, "-nolisten", "tcp",
		       "-noreset", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	xvfb = pid;
	char buf[32];
	size_t n = 0;
	/* Bounded generously: a shared machine may be slow to start a server. */
	while (n < sizeof(buf) - 1 && (n == 0 || buf[n - 1] != '\n')) {
		struct pollfd pf = {fds[0], POLLIN, 0};
		int r = poll(&pf, 1, 30000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t got = read(fds[0], buf + n, sizeof(buf) - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fds[0]);
	buf[n] = '\0';
	if (n == 0 || buf[n - 1] != '\n')
		return false;
	snprintf(name, len, ":%d", atoi(buf));
	return true;
}

static void stop_xvfb(void)
{
	if (xvfb <= 0)
		return;
	kill(xvfb, SIGTERM);
	int status;
	while (waitpid(xvfb, &status, 0) < 0 && errno == EINTR)
		;
	xvfb = -1;
}

static agent_tools *tools_on(vision_grounding g)
{
	agent_tools_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.display = display;
	vision_shot_opts_init(&cfg.shot);
	cfg.shot.grounding = g;
	agent_tools *t = agent_tools_create(&cfg);
	if (t == NULL)
		fprintf(stderr, "# agent_tools_create: %s\n", agent_tools_error());
	return t;
}

static int group_setup(void **state)
{
	(void)state;
	char name[32];
	if (!start_xvfb(name, sizeof(name))) {
		int status = 0;
		bool missing = xvfb > 0 && waitpid(xvfb, &status, 0) == xvfb && WIFEXITED(status) &&
		               WEXITSTATUS(status) == 127;
		if (missing)
			xvfb = -1;
		else
			stop_xvfb();
		/* No Xvfb installed: every case skips. One that will not start fails. */
		return missing ? 0 : -1;
	}
	display = os_display_open(name);
	if (display == NULL) {
		fprintf(stderr, "# %s\n", os_error());
		stop_xvfb();
		return -1;
	}
	tools = tools_on(VISION_GROUND_PIXELS);
	tools_grid = tools_on(VISION_GROUND_RELATIVE);
	return tools != NULL && tools_grid != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	agent_tools_destroy(tools);
	agent_tools_destroy(tools_grid);
	os_display_close(display);
	stop_xvfb();
	return 0;
}

#define NEED_X()                                                                          \
	do {                                                                              \
		if (tools == NULL)                                                        \
			skip();                                                           \
	} while (0)

/* ---- calls ---------------------------------------------------------------- */

typedef struct held {
	agent_tool_call call;
	cJSON *args;
	agent_proposal p;
} held;

static void propose(agent_tools *t, held *h, const agent_dialect *d, const char *name,
                    const char *arguments, const char *checks)
{
	memset(h, 0, sizeof(*h));
	h->args = cJSON_Parse(arguments);
	assert_true(cJSON_IsObject(h->args));
	h->call = (agent_tool_call){"call_1", name, arguments, h->args, "", d, checks};
	agent_tools_propose(t, &h->call, &h->p);
	assert_ptr_equal(h->p.call, &h->call);
}

static void release(held *h)
{
	agent_proposal_finish(&h->p);
	cJSON_Delete(h->args);
}

/* An ACTION with every fact it must carry, consistent with its action. */
static void expect_action(const held *h, agent_action kind)
{
	const agent_proposal *p = &h->p;
	if (p->kind != AGENT_PROPOSAL_ACTION)
		fail_msg("%s %s: kind %d (%s)", h->call.name, h->call.arguments, p->kind,
		         p->text ? p->text : "");
	assert_int_equal(p->action.kind, kind);
	assert_true(p->computer);
	assert_null(p->text);
	assert_null(p->code.code);
	/* The JSON is built once, and is exactly the action's. */
	assert_non_null(p->json);
	assert_non_null(p->json_text);
	char *again = agent_computer_to_json(&p->action);
	assert_non_null(again);
	assert_string_equal(p->json_text, again);
	free(again);
	cJSON *printed = cJSON_Parse(p->json_text);
	assert_true(cJSON_Compare(printed, p->json, true));
	cJSON_Delete(printed);
	assert_non_null(p->description);
	assert_non_null(strstr(p->description, p->action.name));
	/* stdin is /dev/null here (main): no terminal of deskhand's to reach. */
	assert_false(p->own_terminal);
	/* The kill switch's facts: Xvfb's pointer and its one screen. */
	assert_true(p->have_pointer);
	assert_true(p->pointer.x >= 0 && p->pointer.x < SCREEN_W);
	assert_true(p->pointer.y >= 0 && p->pointer.y < SCREEN_H);
	assert_int_equal(p->n_monitors, 1);
	assert_int_equal(p->monitors[0].x, 0);
	assert_int_equal(p->monitors[0].y, 0);
	assert_int_equal(p->monitors[0].width, SCREEN_W);
	assert_int_equal(p->monitors[0].height, SCREEN_H);
}

/* ---- proposals ----------------------------------------------------------- */

/* deskhand's computer tool: a left click at the middle of the picture. */
static void click_becomes_an_action(void **state)
{
	(void)state;
	NEED_X();
	const vision_view *v = agent_tools_view(tools);
	assert_int_equal(v->model_w, 1280);
	assert_int_equal(v->model_h, 720);
	assert_ptr_equal(agent_tools_display(tools), display);
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "computer",
	        "{\"action\":\"left_click\",\"coordinate\":[640,360]}", NULL);
	expect_action(&h, AGENT_ACTION_LEFT_CLICK);
	assert_true(h.p.action.input);
	assert_int_equal(h.p.action.sx, 960);
	assert_int_equal(h.p.action.sy, 540);
	assert_null(h.p.checks);
	release(&h);
}

/* The same click in every dialect's words is the same proposal. */
static void every_dialect_proposes_the_same_click(void **state)
{
	(void)state;
	NEED_X();
	held own;
	propose(tools, &own, &agent_dialect_deskhand, "computer",
	        "{\"action\":\"left_click\",\"coordinate\":[640,360]}", NULL);
	expect_action(&own, AGENT_ACTION_LEFT_CLICK);
	static const struct {
		const agent_dialect *d;
		const char *name, *args;
	} same[] = {
		{&agent_dialect_anthropic, "left_click", "{\"coordinate\":[640,360]}"},
		{&agent_dialect_openai, "computer_call",
		 "{\"type\":\"click\",\"button\":\"left\",\"x\":640,\"y\":360}"},
		{&agent_dialect_qwen, "computer_use", "{\"action\":\"left_click\",\"coordinate\":[640,360]}"},
		{&agent_dialect_uitars, "uitars", "{\"action\":\"click(start_box='(640,360)')\"}"},
	};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		held h;
		propose(tools, &h, same[i].d, same[i].name, same[i].args, NULL);
		expect_action(&h, AGENT_ACTION_LEFT_CLICK);
		if (strcmp(h.p.json_text, own.p.json_text) != 0)
			fail_msg("%s: %s, not %s", same[i].d->name, h.p.json_text, own.p.json_text);
		assert_string_equal(h.p.description, own.p.description);
		release(&h);
	}
	/* Gemini's grid: the point its 500,500 stands for. */
	int gx, gy;
	assert_true(vision_model_to_screen(agent_tools_view(tools_grid), 500, 500, &gx, &gy));
	held g;
	propose(tools_grid, &g, &agent_dialect_gemini, "click_at", "{\"x\":500,\"y\":500}", NULL);
	expect_action(&g, AGENT_ACTION_LEFT_CLICK);
	assert_int_equal(g.p.action.sx, gx);
	assert_int_equal(g.p.action.sy, gy);
	release(&g);
	release(&own);
}

/* Observing is an action too, but not input; find_text and elements are
 * tools of their own naming their action. */
static void observe_actions(void **state)
{
	(void)state;
	NEED_X();
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "computer", "{\"action\":\"screenshot\"}", NULL);
	expect_action(&h, AGENT_ACTION_SCREENSHOT);
	assert_false(h.p.action.input);
	release(&h);
	propose(tools, &h, &agent_dialect_deskhand, "find_text", "{\"text\":\"OK\"}", NULL);
	expect_action(&h, AGENT_ACTION_FIND_TEXT);
	assert_false(h.p.action.input);
	assert_string_equal(h.p.action.text, "OK");
	release(&h);
	propose(tools, &h, &agent_dialect_deskhand, "elements", "{}", NULL);
	expect_action(&h, AGENT_ACTION_ELEMENTS);
	assert_false(h.p.action.input);
	release(&h);
	propose(tools, &h, &agent_dialect_openai, "computer_call", "{\"type\":\"screenshot\"}",
	        "[{\"id\":\"cu_1\"}]");
	expect_action(&h, AGENT_ACTION_SCREENSHOT);
	/* The vendor's checks stay with the action for the gate. */
	assert_int_equal(cJSON_GetArraySize(h.p.checks), 1);
	release(&h);
}

/* Qwen's drag starts where the pointer is, read from the desktop. */
static void qwen_drag_starts_at_the_pointer(void **state)
{
	(void)state;
	NEED_X();
	int px, py, mx, my, sx, sy;
	assert_true(os_pointer(display, &px, &py));
	assert_true(vision_screen_to_model(agent_tools_view(tools), px, py, &mx, &my));
	assert_true(vision_model_to_screen(agent_tools_view(tools), mx, my, &sx, &sy));
	held h;
	propose(tools, &h, &agent_dialect_qwen, "computer_use",
	        "{\"action\":\"left_click_drag\",\"coordinate\":[10,20]}", NULL);
	expect_action(&h, AGENT_ACTION_LEFT_CLICK_DRAG);
	assert_true(h.p.action.has_start);
	assert_int_equal(h.p.action.start_mx, mx);
	assert_int_equal(h.p.action.start_my, my);
	assert_int_equal(h.p.action.start_sx, sx);
	assert_int_equal(h.p.action.start_sy, sy);
	assert_int_equal(h.p.action.mx, 10);
	assert_int_equal(h.p.action.my, 20);
	release(&h);
}

/* With the computer on, a bad action is the parser's or the translator's
 * reason, still a computer call; the model is told every tool it has. */
static void refusals_with_the_computer_on(void **state)
{
	(void)state;
	NEED_X();
	static const struct {
		const agent_dialect *d;
		const char *name, *args, *why;
	} bad[] = {
		/* Off the picture: refused, never clamped. */
		{&agent_dialect_deskhand, "computer", "{\"action\":\"left_click\",\"coordinate\":[1280,10]}",
		 "coordinate"},
		{&agent_dialect_deskhand, "computer", "{\"action\":\"warp\"}", "unknown action \"warp\""},
		{&agent_dialect_deskhand, "find_text", "{}", "find_text needs a non-empty \"text\""},
		/* click_element's own words, once the computer is on. */
		{&agent_dialect_deskhand, "click_element", "{}", "click_element needs \"element\""},
		{&agent_dialect_deskhand, "click_element", "{\"element\":3,\"action\":\"key\"}",
		 "click_element: \"action\" must be left_click"},
		{&agent_dialect_anthropic, "warp", "{}", "unknown action \"warp\""},
		{&agent_dialect_openai, "computer_call", "{\"type\":\"teleport\"}", "teleport"},
		{&agent_dialect_qwen, "computer_use", "{\"action\":\"fly\"}", "fly"},
		{&agent_dialect_uitars, "uitars", "{\"action\":\"keydown(key='ctrl')\"}", "keydown"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		held h;
		propose(tools, &h, bad[i].d, bad[i].name, bad[i].args, NULL);
		if (h.p.kind != AGENT_PROPOSAL_REFUSED)
			fail_msg("%s accepted", bad[i].args);
		if (strstr(h.p.text, bad[i].why) == NULL)
			fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].args, h.p.text, bad[i].why);
		assert_null(strstr(h.p.text, "not enabled"));
		assert_true(h.p.computer);
		assert_null(h.p.json_text);
		assert_null(h.p.description);
		release(&h);
	}
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "nope", "{}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_non_null(strstr(h.p.text, "(the tools are execute, computer, find_text, elements and "
	                                 "click_element)"));
	assert_false(h.p.computer);
	release(&h);
}

/* Code carries the desktop's facts too (the kill switch judges it), and
 * final calls stay final with the computer on. */
static void code_and_final_with_the_computer_on(void **state)
{
	(void)state;
	NEED_X();
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "execute",
	        "{\"language\":\"shell\",\"code\":\"xdpyinfo\",\"display\":true}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_true(h.p.code.display);
	assert_true(h.p.have_pointer);
	assert_int_equal(h.p.n_monitors, 1);
	assert_null(h.p.json_text);
	release(&h);
	propose(tools, &h, &agent_dialect_qwen, "computer_use",
	        "{\"action\":\"terminate\",\"status\":\"success\"}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_FINAL);
	assert_string_equal(h.p.text, "the task is done");
	assert_false(h.p.have_pointer);
	release(&h);
	propose(tools, &h, &agent_dialect_uitars, "uitars", "{\"action\":\"finished(content='done')\"}",
	        NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_FINAL);
	assert_string_equal(h.p.text, "done");
	release(&h);
}

/* ---- edits ---------------------------------------------------------------- */

/* A valid edit is a new action: JSON and description rebuilt from it. */
static void edit_replaces_the_action(void **state)
{
	(void)state;
	NEED_X();
	held h;
	propose(tools, &h, &agent_dialect_openai, "computer_call",
	        "{\"type\":\"click\",\"button\":\"left\",\"x\":640,\"y\":360}", NULL);
	expect_action(&h, AGENT_ACTION_LEFT_CLICK);
	char *old_desc = strdup(h.p.description);
	char why[256] = "";
	/* Edited in deskhand's arguments, whatever the call's dialect. */
	if (!agent_tools_edit(tools, &h.p, "{\"action\":\"right_click\",\"coordinate\":[10,20]}", why,
	                      sizeof(why)))
		fail_msg("edit refused: %s", why);
	expect_action(&h, AGENT_ACTION_RIGHT_CLICK);
	assert_int_equal(h.p.action.mx, 10);
	assert_int_equal(h.p.action.my, 20);
	assert_int_equal(h.p.action.sx, 15);
	assert_int_equal(h.p.action.sy, 30);
	assert_string_not_equal(h.p.description, old_desc);
	assert_non_null(strstr(h.p.json_text, "right_click"));
	free(old_desc);
	/* An edit may turn input into observing: the class is the new action's. */
	assert_true(agent_tools_edit(tools, &h.p, "{\"action\":\"type\",\"text\":\"hi\"}", why,
	                             sizeof(why)));
	expect_action(&h, AGENT_ACTION_TYPE);
	assert_true(h.p.action.input);
	assert_string_equal(h.p.action.text, "hi");
	assert_true(agent_tools_edit(tools, &h.p, "{\"action\":\"screenshot\"}", why, sizeof(why)));
	expect_action(&h, AGENT_ACTION_SCREENSHOT);
	assert_false(h.p.action.input);
	release(&h);
}

/* An edit that is not valid leaves the proposal exactly as it was. */
static void invalid_edit_changes_nothing(void **state)
{
	(void)state;
	NEED_X();
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "computer",
	        "{\"action\":\"type\",\"text\":\"hello\"}", NULL);
	expect_action(&h, AGENT_ACTION_TYPE);
	char *json = strdup(h.p.json_text), *desc = strdup(h.p.description);
	const char *json_at = h.p.json_text, *text_at = h.p.action.text;
	static const struct {
		const char *edit, *why;
	} bad[] = {
		{"{\"action\":\"type\",", "not JSON"},
		{"", "not JSON"},
		{"{\"action\":\"left_click\",\"coordinate\":[5000,1]}", "coordinate"},
		{"{\"action\":\"warp\"}", "unknown action \"warp\""},
		{"{\"text\":\"no action\"}", "missing \"action\""},
		{"[1,2]", "JSON object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[256] = "";
		if (agent_tools_edit(tools, &h.p, bad[i].edit, why, sizeof(why)))
			fail_msg("edit %s accepted", bad[i].edit);
		if (strstr(why, bad[i].why) == NULL)
			fail_msg("edit %s: \"%s\" does not say \"%s\"", bad[i].edit, why, bad[i].why);
		assert_int_equal(h.p.kind, AGENT_PROPOSAL_ACTION);
		assert_int_equal(h.p.action.kind, AGENT_ACTION_TYPE);
		assert_ptr_equal(h.p.json_text, json_at);
		assert_ptr_equal(h.p.action.text, text_at);
		assert_string_equal(h.p.json_text, json);
		assert_string_equal(h.p.description, desc);
		assert_string_equal(h.p.action.text, "hello");
	}
	free(json);
	free(desc);
	release(&h);
}

/* Code edited with the computer on is still just new code. */
static void edit_code_with_the_computer_on(void **state)
{
	(void)state;
	NEED_X();
	held h;
	propose(tools, &h, &agent_dialect_deskhand, "execute", "{\"language\":\"ruby\",\"code\":\"1\"}",
	        NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	char why[64] = "";
	assert_true(agent_tools_edit(tools, &h.p, "puts 2", why, sizeof(why)));
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_string_equal(h.p.code.code, "puts 2");
	assert_int_equal(h.p.code.lang, EXEC_RUBY);
	assert_null(h.p.json_text);
	release(&h);
}

int main(void)
{
	/* No terminal on stdin, wherever the test is started from: own_terminal
	 * is then false by definition, not by the windows Xvfb happens to have. */
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(click_becomes_an_action),
		cmocka_unit_test(every_dialect_proposes_the_same_click),
		cmocka_unit_test(observe_actions),
		cmocka_unit_test(qwen_drag_starts_at_the_pointer),
		cmocka_unit_test(refusals_with_the_computer_on),
		cmocka_unit_test(code_and_final_with_the_computer_on),
		cmocka_unit_test(edit_replaces_the_action),
		cmocka_unit_test(invalid_edit_changes_nothing),
		cmocka_unit_test(edit_code_with_the_computer_on),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
