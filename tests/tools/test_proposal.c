/*
 * The tools room's proposals (agent/tools/proposal, dialect): a tool call
 * becomes one typed agent_proposal through its dialect. Here without an X
 * server: the dialect table and its flags, deskhand's own tools (code, and
 * every refusal with its reason), the calls that end a task, the vendor's
 * safety checks, the refusals of the computer tool while it is off, and
 * what is safe to free twice. The action path, which needs the computer
 * tool on, is exercised through the translators and the strict parser the
 * dialects hand their calls to, in the model's view of a 1920x1080 screen
 * (test_proposal_x.c drives the same path through agent_tools_propose on a
 * private Xvfb).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/tools/tools.h"

/* ---- calls as the session hands them over -------------------------------- */

/* A call and what it borrows (the proposal borrows the call in turn),
 * built as agent/session/loop.c builds it from a conversation block. */
typedef struct held {
	agent_tool_call call;
	cJSON *args;
	agent_proposal p;
} held;

static agent_tools *tools_off(void)
{
	agent_tools_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	vision_shot_opts_init(&cfg.shot);
	agent_tools *t = agent_tools_create(&cfg);
	assert_non_null(t);
	return t;
}

/* The proposal of `name`(arguments) in dialect d; arguments that are not a
 * JSON object leave args NULL with the conversation's reason. */
static void propose(agent_tools *t, held *h, const agent_dialect *d, const char *name,
                    const char *arguments, const char *checks)
{
	memset(h, 0, sizeof(*h));
	h->args = cJSON_Parse(arguments);
	if (h->args != NULL && !cJSON_IsObject(h->args)) {
		cJSON_Delete(h->args);
		h->args = NULL;
	}
	h->call = (agent_tool_call){"call_1", name, arguments, h->args,
	                            h->args != NULL ? "" : "arguments are not a JSON object", d,
	                            checks};
	agent_tools_propose(t, &h->call, &h->p);
	/* The proposal always refers to the call it was made from. */
	assert_ptr_equal(h->p.call, &h->call);
}

static void release(held *h)
{
	agent_proposal_finish(&h->p);
	cJSON_Delete(h->args);
}

static const char *kind_name(agent_proposal_kind k)
{
	switch (k) {
	case AGENT_PROPOSAL_REFUSED: return "REFUSED";
	case AGENT_PROPOSAL_CODE: return "CODE";
	case AGENT_PROPOSAL_ACTION: return "ACTION";
	case AGENT_PROPOSAL_FINAL: return "FINAL";
	}
	return "?";
}

/* A refusal whose text says `why`; `computer`: whether it ends the batch
 * as a failed action does. Nothing but the text is filled. */
static void expect_refused(agent_tools *t, const agent_dialect *d, const char *name,
                           const char *arguments, bool computer, const char *why)
{
	held h;
	propose(t, &h, d, name, arguments, NULL);
	if (h.p.kind != AGENT_PROPOSAL_REFUSED)
		fail_msg("%s %s: %s, not refused", name, arguments, kind_name(h.p.kind));
	assert_non_null(h.p.text);
	if (strstr(h.p.text, why) == NULL)
		fail_msg("%s %s: \"%s\" does not say \"%s\"", name, arguments, h.p.text, why);
	if (h.p.computer != computer)
		fail_msg("%s %s: computer is %d", name, arguments, h.p.computer);
	assert_null(h.p.code.code);
	assert_null(h.p.json);
	assert_null(h.p.json_text);
	assert_null(h.p.description);
	assert_false(h.p.have_pointer);
	assert_int_equal(h.p.n_monitors, 0);
	release(&h);
}

static const char not_enabled[] =
	"the computer tool is not enabled (deskhand was started without --os)";

/* ---- the dialect table ----------------------------------------------------- */

/* A toolset's name becomes its dialect exactly once: only the exact names
 * deskhand declares, so a file or a server cannot invent a vocabulary. */
static void dialect_find_takes_exact_names_only(void **state)
{
	(void)state;
	assert_ptr_equal(agent_dialect_find(NULL), &agent_dialect_deskhand);
	assert_null(agent_dialect_deskhand.name);
	static const struct {
		const char *name;
		const agent_dialect *d;
	} named[] = {
		{"computer", &agent_dialect_anthropic}, {"openai", &agent_dialect_openai},
		{"gemini", &agent_dialect_gemini},      {"qwen", &agent_dialect_qwen},
		{"uitars", &agent_dialect_uitars},
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		const agent_dialect *d = agent_dialect_find(named[i].name);
		if (d != named[i].d)
			fail_msg("\"%s\" is not its dialect", named[i].name);
		assert_string_equal(d->name, named[i].name);
		assert_non_null(d->propose);
	}
	assert_non_null(agent_dialect_deskhand.propose);
	/* Near misses are unknown, never the closest match. */
	static const char *const unknown[] = {"Computer", "", "openai ", "x", "deskhand",
	                                      "OPENAI", "gemini\n", "qwen2", "ui-tars"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		if (agent_dialect_find(unknown[i]) != NULL)
			fail_msg("\"%s\" found a dialect", unknown[i]);
}

/* The flags the session and the gate branch on, as dialect.h documents them. */
static void dialect_flags_as_documented(void **state)
{
	(void)state;
	static const struct {
		const agent_dialect *d;
		bool shot, in_text, checks, final;
	} rows[] = {
		{&agent_dialect_deskhand, false, false, false, false},
		{&agent_dialect_anthropic, false, false, false, false},
		{&agent_dialect_openai, true, false, true, false},
		{&agent_dialect_gemini, false, false, true, false},
		{&agent_dialect_qwen, true, false, false, true},
		{&agent_dialect_uitars, true, true, false, true},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const agent_dialect *d = rows[i].d;
		const char *n = d->name ? d->name : "deskhand";
		if (d->results_carry_screenshot != rows[i].shot)
			fail_msg("%s: results_carry_screenshot %d", n, d->results_carry_screenshot);
		if (d->in_text != rows[i].in_text)
			fail_msg("%s: in_text %d", n, d->in_text);
		/* A dialect with checks names whose they are and what a decline says. */
		if ((d->checks_name != NULL) != rows[i].checks ||
		    (d->checks_declined != NULL) != rows[i].checks)
			fail_msg("%s: checks_name/checks_declined", n);
		if ((d->final != NULL) != rows[i].final)
			fail_msg("%s: final", n);
	}
	assert_string_equal(agent_dialect_openai.checks_name, "OpenAI's safety check");
	assert_string_equal(agent_dialect_gemini.checks_name, "Google's safety decision");
}

/* ---- deskhand's own tools ------------------------------------------------ */

/* execute becomes code in its language, copied: the proposal outlives
 * nothing of the call's arguments. */
static void execute_becomes_code(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	static const struct {
		const char *name;
		exec_lang lang;
	} langs[] = {
		{"python", EXEC_PYTHON}, {"shell", EXEC_SHELL}, {"javascript", EXEC_JAVASCRIPT},
		{"ruby", EXEC_RUBY},     {"r", EXEC_R},
	};
	for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++) {
		char args[128];
		snprintf(args, sizeof(args), "{\"language\":\"%s\",\"code\":\"print(1)\\n\"}",
		         langs[i].name);
		held h;
		propose(t, &h, &agent_dialect_deskhand, "execute", args, NULL);
		if (h.p.kind != AGENT_PROPOSAL_CODE)
			fail_msg("%s: %s (%s)", args, kind_name(h.p.kind), h.p.text);
		assert_int_equal(h.p.code.lang, langs[i].lang);
		assert_string_equal(h.p.code.code, "print(1)\n");
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(h.args, "code");
		assert_ptr_not_equal(h.p.code.code, code->valuestring);
		assert_false(h.p.code.display);
		assert_false(h.p.computer);
		assert_null(h.p.text);
		assert_null(h.p.checks);
		/* With the computer tool off there is no desktop to read facts from. */
		assert_false(h.p.have_pointer);
		assert_int_equal(h.p.n_monitors, 0);
		release(&h);
	}
	agent_tools_destroy(t);
}

/* display: false and null both mean no display; true needs one somewhere. */
static void execute_display_flag(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	const char *saved = getenv("DISPLAY");
	char *keep = saved ? strdup(saved) : NULL;
	held h;
	propose(t, &h, &agent_dialect_deskhand, "execute",
	        "{\"language\":\"shell\",\"code\":\"ls\",\"display\":false}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_false(h.p.code.display);
	release(&h);
	propose(t, &h, &agent_dialect_deskhand, "execute",
	        "{\"language\":\"shell\",\"code\":\"ls\",\"display\":null}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_false(h.p.code.display);
	release(&h);
	/* Without --os the code may still reach the DISPLAY deskhand runs in. */
	assert_int_equal(setenv("DISPLAY", ":4242", 1), 0);
	propose(t, &h, &agent_dialect_deskhand, "execute",
	        "{\"language\":\"shell\",\"code\":\"xclock\",\"display\":true}", NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_true(h.p.code.display);
	assert_string_equal(h.p.code.code, "xclock");
	release(&h);
	/* ... but not on a Wayland session (XWayland's DISPLAY set or not): the
	 * stop key that watches such a block is armed only with --os. */
	assert_int_equal(setenv("WAYLAND_DISPLAY", "wayland-42", 1), 0);
	expect_refused(t, &agent_dialect_deskhand, "execute",
	               "{\"language\":\"shell\",\"code\":\"foot\",\"display\":true}", false,
	               "no display is available to this code: on a Wayland session code "
	               "reaches the display only with --os");
	assert_int_equal(unsetenv("WAYLAND_DISPLAY"), 0);
	/* ... and with neither, the code would be promised a display it cannot have. */
	assert_int_equal(unsetenv("DISPLAY"), 0);
	assert_int_equal(unsetenv("XDG_SESSION_TYPE"), 0);
	expect_refused(t, &agent_dialect_deskhand, "execute",
	               "{\"language\":\"shell\",\"code\":\"xclock\",\"display\":true}", false,
	               "no display is available to this code (no DISPLAY)");
	if (keep != NULL)
		assert_int_equal(setenv("DISPLAY", keep, 1), 0);
	free(keep);
	agent_tools_destroy(t);
}

/* Each malformed execute is refused with what the model must fix. */
static void execute_bad_forms_refused(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	const agent_dialect *d = &agent_dialect_deskhand;
	static const char list[] = "(python, shell, javascript, ruby or r)";
	expect_refused(t, d, "execute", "{\"code\":\"ls\"}", false, "execute needs \"language\"");
	expect_refused(t, d, "execute", "{\"code\":\"ls\"}", false, list);
	expect_refused(t, d, "execute", "{\"language\":3,\"code\":\"ls\"}", false,
	               "execute needs \"language\"");
	expect_refused(t, d, "execute", "{\"language\":\"perl\",\"code\":\"1\"}", false,
	               "unknown language \"perl\"");
	expect_refused(t, d, "execute", "{\"language\":\"perl\",\"code\":\"1\"}", false, list);
	/* Language names are exact, as the tool's schema declares them. */
	expect_refused(t, d, "execute", "{\"language\":\"Python\",\"code\":\"1\"}", false,
	               "unknown language \"Python\"");
	expect_refused(t, d, "execute", "{\"language\":\"python\"}", false,
	               "execute needs \"code\" as a string");
	expect_refused(t, d, "execute", "{\"language\":\"python\",\"code\":[\"print(1)\"]}", false,
	               "execute needs \"code\" as a string");
	expect_refused(t, d, "execute", "{\"language\":\"python\",\"code\":1}", false,
	               "execute needs \"code\" as a string");
	expect_refused(t, d, "execute", "{\"language\":\"python\",\"code\":\"1\",\"display\":\"yes\"}",
	               false, "\"display\" must be true or false");
	expect_refused(t, d, "execute", "{\"language\":\"python\",\"code\":\"1\",\"display\":1}",
	               false, "\"display\" must be true or false");
	/* A long unknown language is cut in the message, not echoed whole. */
	char args[400], name[301];
	memset(name, 'z', 300);
	name[300] = '\0';
	snprintf(args, sizeof(args), "{\"language\":\"%s\",\"code\":\"1\"}", name);
	held h;
	propose(t, &h, d, "execute", args, NULL);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_null(strstr(h.p.text, name));
	release(&h);
	agent_tools_destroy(t);
}

/* Without --os, every tool of the computer is refused as such, and its
 * refusal ends the batch like a failed action (computer true). */
static void computer_tools_refused_when_off(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	assert_null(agent_tools_display(t));
	const agent_dialect *d = &agent_dialect_deskhand;
	expect_refused(t, d, "computer", "{\"action\":\"left_click\",\"coordinate\":[1,2]}", true,
	               not_enabled);
	expect_refused(t, d, "computer", "{\"action\":\"screenshot\"}", true, not_enabled);
	expect_refused(t, d, "find_text", "{\"text\":\"OK\"}", true, not_enabled);
	expect_refused(t, d, "elements", "{}", true, not_enabled);
	expect_refused(t, d, "click_element", "{\"element\":3}", true, not_enabled);
	expect_refused(t, d, "click_element", "{\"element\":3,\"action\":\"right_click\"}", true,
	               not_enabled);
	/* click_element says the computer is off before it reads its arguments,
	 * as every computer call does. */
	expect_refused(t, d, "click_element", "{}", true, not_enabled);
	expect_refused(t, d, "click_element", "{\"element\":3,\"action\":\"key\"}", true,
	               not_enabled);
	/* The same for every vendor's calls, whatever they are named. */
	expect_refused(t, &agent_dialect_anthropic, "left_click", "{\"coordinate\":[1,2]}", true,
	               not_enabled);
	expect_refused(t, &agent_dialect_anthropic, "execute", "{\"language\":\"shell\",\"code\":\"ls\"}",
	               true, not_enabled);
	expect_refused(t, &agent_dialect_openai, "computer_call",
	               "{\"type\":\"click\",\"button\":\"left\",\"x\":1,\"y\":2}", true, not_enabled);
	expect_refused(t, &agent_dialect_gemini, "click_at", "{\"x\":1,\"y\":2}", true, not_enabled);
	agent_tools_destroy(t);
}

/* A name outside deskhand's tools is not a computer call; the model is
 * told the tools it has (without --os: only execute). */
static void unknown_tool_refused(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	expect_refused(t, &agent_dialect_deskhand, "nope", "{}", false,
	               "unknown tool \"nope\" (the tools are execute)");
	/* A vendor's action name means nothing in deskhand's own vocabulary:
	 * the dialect decides, not the name. */
	expect_refused(t, &agent_dialect_deskhand, "left_click", "{\"coordinate\":[1,2]}", false,
	               "unknown tool \"left_click\"");
	/* Tool names are exact. */
	expect_refused(t, &agent_dialect_deskhand, "Execute", "{\"language\":\"shell\",\"code\":\"ls\"}",
	               false, "unknown tool \"Execute\"");
	agent_tools_destroy(t);
}

/* Arguments that are not an object are refused before the dialect reads
 * them, with the conversation's reason; a vendor's call and deskhand's
 * computer tools stay computer calls. */
static void unparsable_arguments_refused(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	static const char why[] = "the arguments are not a JSON object: arguments are not a JSON object";
	expect_refused(t, &agent_dialect_deskhand, "execute", "[1]", false, why);
	expect_refused(t, &agent_dialect_deskhand, "nope", "[1]", false, why);
	expect_refused(t, &agent_dialect_deskhand, "computer", "\"x\"", true, why);
	expect_refused(t, &agent_dialect_deskhand, "find_text", "{", true, why);
	expect_refused(t, &agent_dialect_deskhand, "elements", "1", true, why);
	expect_refused(t, &agent_dialect_deskhand, "click_element", "null", true, why);
	expect_refused(t, &agent_dialect_anthropic, "left_click", "[]", true, why);
	expect_refused(t, &agent_dialect_openai, "computer_call", "[]", true, why);
	expect_refused(t, &agent_dialect_gemini, "click_at", "[]", true, why);
	/* A final call whose arguments are broken is not final: it is refused. */
	expect_refused(t, &agent_dialect_qwen, "computer_use", "[\"terminate\"]", true, why);
	expect_refused(t, &agent_dialect_uitars, "uitars", "\"finished()\"", true, why);

	/* The reason is the conversation's own; a call without one still says so. */
	held h;
	memset(&h, 0, sizeof(h));
	h.call = (agent_tool_call){"c", "execute", "{\"code\": \"broken", NULL,
	                           "arguments are not valid JSON (error at byte 17 of 17)",
	                           &agent_dialect_deskhand, NULL};
	agent_tools_propose(t, &h.call, &h.p);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_string_equal(h.p.text, "the arguments are not a JSON object: arguments are not "
	                              "valid JSON (error at byte 17 of 17)");
	assert_false(h.p.computer);
	release(&h);
	h.call.args_error = NULL;
	h.call.dialect = &agent_dialect_openai;
	agent_tools_propose(t, &h.call, &h.p);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_string_equal(h.p.text, "the arguments are not a JSON object: unparsable");
	assert_true(h.p.computer);
	release(&h);
	agent_tools_destroy(t);
}

/* ---- the end of a task ----------------------------------------------------- */

static void expect_final(const agent_dialect *d, const char *arguments, const char *text)
{
	agent_tools *t = tools_off();
	held h;
	propose(t, &h, d, d->name, arguments, NULL);
	if (h.p.kind != AGENT_PROPOSAL_FINAL)
		fail_msg("%s %s: %s (%s)", d->name, arguments, kind_name(h.p.kind),
		         h.p.text ? h.p.text : "");
	assert_string_equal(h.p.text, text);
	assert_true(h.p.computer);
	assert_null(h.p.json_text);
	release(&h);
	agent_tools_destroy(t);
}

/* Qwen's and UI-TARS's calls that end the task do so even with the
 * computer tool off: nothing runs, the model's words are the answer. */
static void final_calls_end_the_task(void **state)
{
	(void)state;
	expect_final(&agent_dialect_qwen, "{\"action\":\"terminate\",\"status\":\"success\"}",
	             "the task is done");
	expect_final(&agent_dialect_qwen, "{\"action\":\"terminate\",\"status\":\"failure\"}",
	             "the task failed");
	expect_final(&agent_dialect_qwen, "{\"action\":\"answer\",\"text\":\"42\"}", "42");
	expect_final(&agent_dialect_qwen, "{\"action\":\"answer\"}", "");
	expect_final(&agent_dialect_uitars, "{\"action\":\"finished(content='done')\"}", "done");
	expect_final(&agent_dialect_uitars, "{\"action\":\"finished()\"}", "the task is done");
	expect_final(&agent_dialect_uitars, "{\"action\":\"call_user()\"}",
	             "the model needs you to continue");
}

/* Any other call of theirs is an action, refused while the computer is
 * off; and the dialects without a final call have none. */
static void non_final_calls_are_actions(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	expect_refused(t, &agent_dialect_qwen, "computer_use",
	               "{\"action\":\"left_click\",\"coordinate\":[1,2]}", true, not_enabled);
	expect_refused(t, &agent_dialect_qwen, "computer_use", "{\"action\":\"Terminate\"}", true,
	               not_enabled);
	expect_refused(t, &agent_dialect_uitars, "uitars", "{\"action\":\"click(start_box='(1,2)')\"}",
	               true, not_enabled);
	/* Unparsable text is not a final call either. */
	expect_refused(t, &agent_dialect_uitars, "uitars", "{\"action\":\"finished(content='done'\"}",
	               true, not_enabled);
	expect_refused(t, &agent_dialect_uitars, "uitars", "{}", true, not_enabled);
	expect_refused(t, &agent_dialect_openai, "computer_call",
	               "{\"action\":\"terminate\",\"status\":\"success\"}", true, not_enabled);
	expect_refused(t, &agent_dialect_anthropic, "terminate", "{\"status\":\"success\"}", true,
	               not_enabled);
	agent_tools_destroy(t);
}

/* ---- the vendor's safety checks ------------------------------------------ */

/* The checks travel with the proposal as an array, parsed once, whatever
 * becomes of the call: the gate puts them to the human. */
static void checks_parsed_once(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	static const char checks[] = "[{\"id\":\"cu_1\",\"code\":\"malicious_instructions\","
	                             "\"message\":\"look\"},{\"id\":\"cu_2\"}]";
	held h;
	propose(t, &h, &agent_dialect_openai, "computer_call",
	        "{\"type\":\"click\",\"button\":\"left\",\"x\":1,\"y\":2}", checks);
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_true(cJSON_IsArray(h.p.checks));
	assert_int_equal(cJSON_GetArraySize(h.p.checks), 2);
	cJSON *want = cJSON_Parse(checks);
	assert_true(cJSON_Compare(h.p.checks, want, true));
	cJSON_Delete(want);
	release(&h);

	propose(t, &h, &agent_dialect_gemini, "click_at", "{\"x\":1,\"y\":2}",
	        "[{\"decision\":\"require_confirmation\"}]");
	assert_true(cJSON_IsArray(h.p.checks));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                    cJSON_GetArrayItem(h.p.checks, 0), "decision")), "require_confirmation");
	release(&h);

	/* Code carries them too: the checks are the call's, not the action's. */
	propose(t, &h, &agent_dialect_deskhand, "execute", "{\"language\":\"shell\",\"code\":\"ls\"}",
	        "[]");
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_true(cJSON_IsArray(h.p.checks));
	assert_int_equal(cJSON_GetArraySize(h.p.checks), 0);
	release(&h);

	propose(t, &h, &agent_dialect_openai, "computer_call", "{\"type\":\"screenshot\"}", NULL);
	assert_null(h.p.checks);
	release(&h);
	agent_tools_destroy(t);
}

/* ---- edits without a display ---------------------------------------------- */

/* Editing code replaces the code, copied; anything but code or an action
 * has nothing to edit and stays as it was. */
static void edit_code_and_nothing_else(void **state)
{
	(void)state;
	agent_tools *t = tools_off();
	held h;
	char why[128] = "";
	propose(t, &h, &agent_dialect_deskhand, "execute",
	        "{\"language\":\"python\",\"code\":\"import os\"}", NULL);
	char edited[] = "print('edited')";
	assert_true(agent_tools_edit(t, &h.p, edited, why, sizeof(why)));
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_CODE);
	assert_string_equal(h.p.code.code, "print('edited')");
	assert_ptr_not_equal(h.p.code.code, edited);
	assert_int_equal(h.p.code.lang, EXEC_PYTHON);
	/* An edit of an edit. */
	assert_true(agent_tools_edit(t, &h.p, "", why, sizeof(why)));
	assert_string_equal(h.p.code.code, "");
	release(&h);

	expect_refused(t, &agent_dialect_deskhand, "nope", "{}", false, "unknown tool");
	propose(t, &h, &agent_dialect_deskhand, "nope", "{}", NULL);
	char *before = strdup(h.p.text);
	assert_false(agent_tools_edit(t, &h.p, "{\"action\":\"screenshot\"}", why, sizeof(why)));
	assert_string_equal(why, "nothing to edit");
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_REFUSED);
	assert_string_equal(h.p.text, before);
	free(before);
	release(&h);

	propose(t, &h, &agent_dialect_qwen, "computer_use", "{\"action\":\"answer\",\"text\":\"42\"}",
	        NULL);
	why[0] = '\0';
	assert_false(agent_tools_edit(t, &h.p, "43", why, sizeof(why)));
	assert_string_equal(why, "nothing to edit");
	assert_int_equal(h.p.kind, AGENT_PROPOSAL_FINAL);
	assert_string_equal(h.p.text, "42");
	release(&h);
	agent_tools_destroy(t);
}

/* ---- ownership ------------------------------------------------------------ */

/* The gate may finish a proposal on every path: twice, or never made. */
static void finish_and_destroy_are_safe(void **state)
{
	(void)state;
	agent_proposal z;
	memset(&z, 0, sizeof(z));
	agent_proposal_finish(&z);
	agent_proposal_finish(&z);
	agent_proposal_finish(NULL);

	agent_tools *t = tools_off();
	held h;
	propose(t, &h, &agent_dialect_deskhand, "execute", "{\"language\":\"shell\",\"code\":\"ls\"}",
	        "[{\"id\":\"x\"}]");
	agent_proposal_finish(&h.p);
	assert_null(h.p.code.code);
	assert_null(h.p.checks);
	assert_null(h.p.call);
	agent_proposal_finish(&h.p);
	release(&h);
	propose(t, &h, &agent_dialect_qwen, "computer_use", "{\"action\":\"answer\",\"text\":\"x\"}",
	        NULL);
	agent_proposal_finish(&h.p);
	assert_null(h.p.text);
	release(&h);
	agent_tools_destroy(t);
	agent_tools_destroy(NULL);

	agent_shot_clear(NULL);
	agent_shot s;
	memset(&s, 0, sizeof(s));
	agent_shot_clear(&s);
	s.png = malloc(16);
	assert_non_null(s.png);
	s.len = 16;
	s.width = s.height = 4;
	agent_shot_clear(&s);
	assert_null(s.png);
	assert_int_equal(s.len, 0);
	agent_shot_clear(&s);
}

/* ---- the action path, through what the dialects call ---------------------- */

/* The model's view of a 1920x1080 screen, fitted in 1280x720. */
static const vision_view pixels = {0, 0, 1920, 1080, 1280, 720, 0, 0};
/* The same with Gemini's 0..999 grid. */
static const vision_view grid = {0, 0, 1920, 1080, 1280, 720, 1000, 1000};

static char *parsed_json(const char *name, const cJSON *args, const vision_view *v,
                         agent_computer_action *a)
{
	char err[512] = "";
	if (!agent_computer_parse_named(name, args, v, a, err, sizeof(err)))
		fail_msg("%s refused: %s", name ? name : "(action)", err);
	char *s = agent_computer_to_json(a);
	assert_non_null(s);
	return s;
}

static void expect_click(agent_computer_action *a, int sx, int sy)
{
	assert_int_equal(a->kind, AGENT_ACTION_LEFT_CLICK);
	assert_string_equal(a->name, "left_click");
	assert_true(a->input);
	assert_true(a->has_point);
	assert_int_equal(a->sx, sx);
	assert_int_equal(a->sy, sy);
}

/* A translator's arguments (consumed) parsed as the click at the middle
 * of the picture whose JSON is `own`. */
static void expect_same_click(cJSON *args, const char *own)
{
	agent_computer_action a;
	assert_non_null(args);
	char *s = parsed_json(NULL, args, &pixels, &a);
	expect_click(&a, 960, 540);
	assert_string_equal(s, own);
	free(s);
	agent_computer_action_finish(&a);
	cJSON_Delete(args);
}

/* A left click at the middle of the picture, in each dialect's words, is
 * one and the same action: the point on the screen, and the JSON the
 * audit line, the question and an edit start from. */
static void every_dialect_clicks_the_same(void **state)
{
	(void)state;
	/* The JSON names the screen point too: the human reads where it lands. */
	static const char want[] = "{\"action\":\"left_click\",\"coordinate\":[640,360],"
	                           "\"screen_coordinate\":[960,540]}";
	agent_computer_action a;
	char err[512] = "";

	/* deskhand's computer tool: the action in its arguments */
	cJSON *args = cJSON_Parse("{\"action\":\"left_click\",\"coordinate\":[640,360]}");
	char *s = parsed_json(NULL, args, &pixels, &a);
	expect_click(&a, 960, 540);
	cJSON *got = cJSON_Parse(s), *w = cJSON_Parse(want);
	assert_true(cJSON_Compare(got, w, true));
	cJSON_Delete(got);
	char *own = s;
	agent_computer_action_finish(&a);
	cJSON_Delete(args);

	/* Anthropic's toolset: the tool names the action; an "action" in the
	 * arguments does not override it. */
	args = cJSON_Parse("{\"coordinate\":[640,360],\"action\":\"right_click\"}");
	s = parsed_json("left_click", args, &pixels, &a);
	expect_click(&a, 960, 540);
	assert_string_equal(s, own);
	free(s);
	agent_computer_action_finish(&a);
	cJSON_Delete(args);

	/* OpenAI */
	cJSON *in = cJSON_Parse("{\"type\":\"click\",\"button\":\"left\",\"x\":640,\"y\":360}");
	expect_same_click(agent_openai_action_args(in, err, sizeof(err)), own);
	cJSON_Delete(in);

	/* Qwen */
	in = cJSON_Parse("{\"action\":\"left_click\",\"coordinate\":[640,360]}");
	expect_same_click(agent_qwen_action_args(in, NULL, err, sizeof(err)), own);
	cJSON_Delete(in);

	/* UI-TARS, its text */
	expect_same_click(agent_uitars_action_args("click(start_box='(640,360)')", err,
	                                           sizeof(err)), own);

	/* Gemini, on the 0..999 grid: the same screen point the grid maps to. */
	int gx, gy;
	assert_true(vision_model_to_screen(&grid, 500, 500, &gx, &gy));
	in = cJSON_Parse("{\"x\":500,\"y\":500}");
	args = agent_gemini_action_args("click_at", in, &grid, err, sizeof(err));
	assert_non_null(args);
	s = parsed_json(NULL, args, &grid, &a);
	expect_click(&a, gx, gy);
	assert_true(gx >= 959 && gx <= 961 && gy >= 539 && gy <= 541);
	free(s);
	agent_computer_action_finish(&a);
	cJSON_Delete(args);
	cJSON_Delete(in);

	cJSON_Delete(w);
	free(own);
}

/* What an action proposal and an edit rest on: the JSON of a parsed action
 * reads back as the same action, so the human edits what will run. */
static void action_json_reads_back_the_same(void **state)
{
	(void)state;
	static const char *const actions[] = {
		"{\"action\":\"left_click\",\"coordinate\":[640,360]}",
		"{\"action\":\"left_click\",\"coordinate\":[0,0],\"text\":\"shift\"}",
		"{\"action\":\"double_click\",\"coordinate\":[1279,719]}",
		"{\"action\":\"type\",\"text\":\"h\\u00e9llo\\nworld\"}",
		"{\"action\":\"key\",\"text\":\"ctrl+shift+t\"}",
		"{\"action\":\"scroll\",\"coordinate\":[10,20],\"scroll_direction\":\"down\","
		"\"scroll_amount\":3}",
		"{\"action\":\"left_click_drag\",\"start_coordinate\":[1,2],\"coordinate\":[300,400]}",
		"{\"action\":\"mouse_move\",\"coordinate\":[5,6]}",
		"{\"action\":\"wait\",\"duration\":2}",
		"{\"action\":\"screenshot\"}",
		"{\"action\":\"zoom\",\"region\":[0,0,640,360]}",
		"{\"action\":\"find_text\",\"text\":\"OK\"}",
	};
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		cJSON *args = cJSON_Parse(actions[i]);
		assert_non_null(args);
		agent_computer_action a, b;
		char *first = parsed_json(NULL, args, &pixels, &a);
		cJSON *back = cJSON_Parse(first);
		assert_non_null(back);
		char *second = parsed_json(NULL, back, &pixels, &b);
		if (strcmp(first, second) != 0)
			fail_msg("%s: %s, then %s", actions[i], first, second);
		assert_int_equal(a.kind, b.kind);
		assert_int_equal(a.sx, b.sx);
		assert_int_equal(a.sy, b.sy);
		char *da = agent_computer_describe(&a), *db = agent_computer_describe(&b);
		assert_non_null(da);
		assert_string_equal(da, db);
		assert_non_null(strstr(da, a.name));
		free(da);
		free(db);
		free(first);
		free(second);
		agent_computer_action_finish(&a);
		agent_computer_action_finish(&b);
		cJSON_Delete(back);
		cJSON_Delete(args);
	}
}

/* Each translator's refusal reaches the model as the parse's reason, and
 * a point off the picture is refused, never clamped. */
static void translated_refusals(void **state)
{
	(void)state;
	char err[512] = "";
	agent_computer_action a;
	cJSON *args = cJSON_Parse("{\"action\":\"left_click\",\"coordinate\":[1280,10]}");
	assert_false(agent_computer_parse_named(NULL, args, &pixels, &a, err, sizeof(err)));
	assert_true(err[0] != '\0');
	cJSON_Delete(args);
	args = cJSON_Parse("{\"action\":\"warp\"}");
	assert_false(agent_computer_parse_named(NULL, args, &pixels, &a, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown action \"warp\""));
	cJSON_Delete(args);
	args = cJSON_Parse("{\"coordinate\":[1,2]}");
	assert_false(agent_computer_parse_named("warp", args, &pixels, &a, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown action \"warp\""));
	cJSON_Delete(args);

	err[0] = '\0';
	assert_null(agent_uitars_action_args("keydown(key='ctrl')", err, sizeof(err)));
	assert_true(err[0] != '\0');
	err[0] = '\0';
	cJSON *in = cJSON_Parse("{\"action\":\"terminate\",\"status\":\"success\"}");
	assert_null(agent_qwen_action_args(in, NULL, err, sizeof(err)));
	assert_true(err[0] != '\0');
	cJSON_Delete(in);
	err[0] = '\0';
	in = cJSON_Parse("{\"url\":\"https://example.com\"}");
	assert_null(agent_gemini_action_args("navigate", in, &grid, err, sizeof(err)));
	assert_true(err[0] != '\0');
	cJSON_Delete(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dialect_find_takes_exact_names_only),
		cmocka_unit_test(dialect_flags_as_documented),
		cmocka_unit_test(execute_becomes_code),
		cmocka_unit_test(execute_display_flag),
		cmocka_unit_test(execute_bad_forms_refused),
		cmocka_unit_test(computer_tools_refused_when_off),
		cmocka_unit_test(unknown_tool_refused),
		cmocka_unit_test(unparsable_arguments_refused),
		cmocka_unit_test(final_calls_end_the_task),
		cmocka_unit_test(non_final_calls_are_actions),
		cmocka_unit_test(checks_parsed_once),
		cmocka_unit_test(edit_code_and_nothing_else),
		cmocka_unit_test(finish_and_destroy_are_safe),
		cmocka_unit_test(every_dialect_clicks_the_same),
		cmocka_unit_test(action_json_reads_back_the_same),
		cmocka_unit_test(translated_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
