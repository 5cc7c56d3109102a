/*
 * agent/safety/gate — the single path from a tool call to an executor or os/
 * (see gate.h).
 *
 * For every call: parse and validate it, record "proposed", scan when the
 * policy says so, ask the policy, ask the human when told to (y / n / e / d,
 * and the scan offer of safe mode ask), record the decision (flushed to disk
 * before anything runs), and only then run it and record "executed". A
 * denied or blocked action never reaches exec_ or os_ functions: there is no
 * other call site for them in the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/safety/gate.h"
#include "agent/tools/computer-run.h"
#include "agent/util/textutil.h"

/* Screenshots capture in strips of a few hundred KB; keep no more. */
#define CAPTURE_KEEP_BYTES (1u << 20)

void agent_tool_result_finish(agent_tool_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	conv_image_clear(&r->image);
	memset(r, 0, sizeof(*r));
}

void agent_gate_finish(agent_gate *g)
{
	if (g == NULL)
		return;
	if (g->exec_for_signals != NULL)
		*g->exec_for_signals = NULL;
	exec_sessions_destroy(g->exec);
	g->exec = NULL;
	agent_scan_rules_destroy(g->rules);
	g->rules = NULL;
	os_display_close(g->watch_display);
	g->watch_display = NULL;
}

static void result_text(agent_tool_result *r, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result_text(agent_tool_result *r, bool is_error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = agent_vformat(fmt, ap);
	va_end(ap);
	free(r->text);
	r->text = text;     /* NULL (out of memory) reads as "[no output]" */
	r->is_error = is_error;
}

/* ---- a proposal, whatever its tool ------------------------------------- */

typedef struct proposal {
	const char *id;
	agent_policy_kind kind;
	/* execute */
	char *language;
	char *code;
	bool display;
	/* computer */
	agent_computer_action action;
	bool has_action;
	/* the scan */
	bool scanned;
	agent_scan_result *scan;
} proposal;

static void proposal_finish(proposal *p)
{
	free(p->language);
	free(p->code);
	if (p->has_action)
		agent_computer_action_finish(&p->action);
	agent_scan_result_destroy(p->scan);
}

static bool parse_execute(agent_gate *g, const cJSON *args, proposal *p,
                          char *err, size_t errlen)
{
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(args, "code");
	const cJSON *disp = cJSON_GetObjectItemCaseSensitive(args, "display");
	if (!cJSON_IsString(lang)) {
		snprintf(err, errlen, "execute needs \"language\" (python, shell, javascript, ruby or r)");
		return false;
	}
	if (!cJSON_IsString(code)) {
		snprintf(err, errlen, "execute needs \"code\" as a string");
		return false;
	}
	if (disp != NULL && !cJSON_IsBool(disp) && !cJSON_IsNull(disp)) {
		snprintf(err, errlen, "\"display\" must be true or false");
		return false;
	}
	exec_lang el;
	if (!exec_lang_from_name(lang->valuestring, &el)) {
		snprintf(err, errlen, "unknown language \"%.40s\" (python, shell, javascript, ruby or r)",
		         lang->valuestring);
		return false;
	}
	p->language = strdup(lang->valuestring);
	p->code = strdup(code->valuestring);
	p->display = cJSON_IsTrue(disp);
	if (p->display && g->display == NULL && getenv("DISPLAY") == NULL) {
		snprintf(err, errlen, "no display is available to this code (no DISPLAY)");
		return false;
	}
	p->kind = p->display ? AGENT_POLICY_CODE_DISPLAY : AGENT_POLICY_CODE;
	return p->language != NULL && p->code != NULL;
}

static bool parse_call(agent_gate *g, const struct conv_block *call, proposal *p,
                       char *err, size_t errlen)
{
	if (call->args == NULL) {
		snprintf(err, errlen, "the arguments are not a JSON object: %s",
		         call->args_error ? call->args_error : "unparsable");
		return false;
	}
	if (strcmp(call->name, "execute") == 0)
		return parse_execute(g, call->args, p, err, errlen);
	bool find_text = strcmp(call->name, "find_text") == 0;
	if (strcmp(call->name, "computer") == 0 || find_text) {
		if (g->display == NULL) {
			snprintf(err, errlen, "the computer tool is not enabled (deskhand was started without --os)");
			return false;
		}
		/* find_text is also a tool of its own (Anthropic's native tool
		 * cannot take new actions): the same action underneath. */
		cJSON *args = find_text ? cJSON_Duplicate(call->args, 1) : NULL;
		if (args != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(args, "action");
			cJSON_AddStringToObject(args, "action", "find_text");
		}
		bool ok = agent_computer_parse(args != NULL ? args : call->args, &g->view,
		                               &p->action, err, errlen);
		cJSON_Delete(args);
		if (!ok)
			return false;
		p->has_action = true;
		p->kind = agent_policy_action_kind(p->action.kind);
		return true;
	}
	snprintf(err, errlen, "unknown tool \"%.60s\" (the tools are execute%s)", call->name,
	         g->display ? ", computer and find_text" : "");
	return false;
}

/* ---- scanning ---------------------------------------------------------- */

/* See gate.h. */
bool agent_gate_logged(agent_gate *g, bool ok)
{
	if (!ok && !g->audit_broken) {
		g->audit_broken = true;
		g->end_run = true;
		agent_term_error(g->term, "the audit log cannot be written (%s): nothing more runs",
		                 agent_audit_error());
	}
	return ok;
}

/*
 * Scans the code, or the text a `type` action would type: typed into a
 * terminal it runs as a shell command, so it is read as one.
 */
static bool do_scan(agent_gate *g, proposal *p)
{
	agent_scan_lang lang = AGENT_SCAN_SHELL;
	const char *text = p->has_action ? p->action.text : p->code;
	p->scanned = true;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	if (text == NULL || (!p->has_action && !agent_scan_lang_parse(p->language, &lang))) {
		/* No rules for this language: scanned, nothing found. */
		agent_gate_logged(g, agent_audit_scanned(g->audit, p->id, p->kind, NULL));
		return true;
	}
	if (g->rules == NULL) {
		g->rules = agent_scan_rules_load(NULL, true);
		if (g->rules == NULL) {
			agent_term_error(g->term, "scanner: %s", agent_scan_error());
			return false;
		}
	}
	p->scan = agent_scan(g->rules, lang, text, strlen(text));
	if (p->scan == NULL) {
		agent_term_error(g->term, "scanner: %s", agent_scan_error());
		return false;
	}
	agent_gate_logged(g, agent_audit_scanned(g->audit, p->id, p->kind, p->scan));
	return true;
}

static char *findings_text(const agent_scan_result *r)
{
	agent_buf b;
	agent_buf_init(&b);
	for (size_t i = 0; r != NULL && i < r->count; i++)
		agent_buf_printf(&b, "%sline %d: %s [%s, %s]", i ? "\n" : "", r->findings[i].line,
		                 r->findings[i].message, r->findings[i].rule_id,
		                 agent_scan_severity_name(r->findings[i].severity));
	return agent_buf_steal(&b);
}

/* Records the proposal (again, after an edit: the newest one counts). */
static void audit_proposed(agent_gate *g, const proposal *p)
{
	if (!p->has_action) {
		agent_gate_logged(g, agent_audit_proposed_code(g->audit, p->id, p->kind, p->language,
		                                               p->code, strlen(p->code)));
		return;
	}
	char *json = agent_computer_to_json(&p->action);
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	agent_gate_logged(g, agent_audit_proposed_action(g->audit, p->id, p->kind, o));
	cJSON_Delete(o);
	free(json);
}

/* ---- details and editing ------------------------------------------------ */

static void show_proposal(agent_gate *g, const proposal *p)
{
	if (p->has_action) {
		char *desc = agent_computer_describe(&p->action);
		char *json = agent_computer_to_json(&p->action);
		agent_term_show_action(g->term, p->id, desc ? desc : p->action.name,
		                       json ? json : "{}");
		free(desc);
		free(json);
	} else {
		/* Without a sandbox every block reaches the display (policy rule 11). */
		agent_term_show_code(g->term, p->id, p->language, p->code,
		                     p->display || g->sandbox == SANDBOX_OFF);
	}
}

/* The window under a screen point, for the details of an OS action. */
static void window_at(agent_gate *g, int x, int y, char *out, size_t len)
{
	size_t n = 0;
	os_window *w = os_windows_list(g->display, &n);
	snprintf(out, len, "(none: the root window)");
	/* The list is bottom to top: the last hit is the one on top. */
	for (size_t i = 0; w != NULL && i < n; i++) {
		os_rect r = w[i].geometry;
		if (x >= r.x && y >= r.y && x < r.x + r.width && y < r.y + r.height) {
			/* Any program names its window: one line, shown as it is. */
			char *title = agent_show_dup(w[i].title, 0);
			char *klass = agent_show_dup(w[i].klass, 0);
			snprintf(out, len, "0x%x \"%s\" (%s, pid %d)", w[i].id, title ? title : "?",
			         klass ? klass : "?", w[i].pid);
			free(title);
			free(klass);
		}
	}
	os_windows_free(w, n);
}

/*
 * Where the preview of call `id` goes: beside the conversation, so it is
 * kept with what it explains. The id is the model's text: only plain
 * characters reach the file name (turn.c already renames odd ids).
 */
static void preview_path(agent_gate *g, const char *id, char *out, size_t size)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	char name[65];
	size_t k = 0;
	for (const char *c = id; *c && k < sizeof(name) - 1; c++)
		name[k++] = strchr(plain, *c) != NULL ? *c : '_';
	name[k] = '\0';
	char *dir = strdup((*g->conv)->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash != NULL)
		*slash = '\0';
	snprintf(out, size, "%s/preview-%s.png", slash != NULL ? dir : ".", name);
	free(dir);
}

static void show_details(agent_gate *g, const proposal *p)
{
	if (!p->has_action) {
		agent_buf b;
		agent_buf_init(&b);
		int line = 1;
		agent_buf_printf(&b, "%4d  ", line);
		char *code = agent_show_dup(p->code, AGENT_SHOW_LINES | AGENT_SHOW_STRICT);
		for (const char *c = code ? code : ""; *c; c++) {
			agent_buf_append(&b, c, 1);
			if (*c == '\n' && c[1] != '\0')
				agent_buf_printf(&b, "%4d  ", ++line);
		}
		free(code);
		if (p->scan != NULL && p->scan->count > 0) {
			char *f = findings_text(p->scan);
			agent_buf_printf(&b, "\nscanner findings:\n%s", f);
			free(f);
		}
		agent_buf_printf(&b, "\nlanguage %s, sandbox %s%s", p->language, g->sandbox_name,
		                 p->display ? ", WITH access to the display" : "");
		char *text = agent_buf_steal(&b);
		agent_term_print(g->term, text);
		free(text);
		return;
	}
	const agent_computer_action *a = &p->action;
	char win[256] = "", shot[512] = "";
	char *desc = agent_computer_describe(a);
	vision_point pts[2];
	int n = 0;
	if (a->has_start)
		pts[n++] = (vision_point){a->start_sx, a->start_sy};
	if (a->has_point)
		pts[n++] = (vision_point){a->sx, a->sy};
	if (n == 0) {
		int x, y;
		if (os_pointer(g->display, &x, &y))
			pts[n++] = (vision_point){x, y};
	}
	if (n > 0) {
		window_at(g, pts[n - 1].x, pts[n - 1].y, win, sizeof(win));
		/* A label of one short line; the text itself is in the details. */
		const char *label = desc != NULL && strlen(desc) < 100 && !strchr(desc, '\n')
		                    ? desc : a->name;
		os_image *img = vision_preview_capture(g->display, pts, n, label, 480, 320);
		if (img != NULL) {
			preview_path(g, p->id, shot, sizeof(shot));
			if (!os_png_write_file(img, shot, NULL))
				snprintf(shot, sizeof(shot), "(could not save: %s)", os_error());
			os_image_destroy(img);
		} else {
			snprintf(shot, sizeof(shot), "(no preview: %s)", vision_error());
		}
	}
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "action:  %s\n", desc ? desc : a->name);
	free(desc);
	if (n > 0)
		agent_buf_printf(&b, "target:  screen %d,%d\nwindow:  %s\npreview: %s",
		                 pts[n - 1].x, pts[n - 1].y, win, shot);
	char *text = agent_buf_steal(&b);
	agent_term_print(g->term, text);
	free(text);
	os_capture_trim(g->display, CAPTURE_KEEP_BYTES);
	if (shot[0] == '/' || shot[0] == '.')
		agent_term_show_image(g->term, shot);
}

/*
 * Opens `text` in the user's editor and returns what was saved. The editor
 * ($VISUAL, $EDITOR, else vi) is the user's own setting and may carry
 * arguments ("code -w"), so it is word-split by /bin/sh from the
 * environment; the file name travels as a separate argument, and nothing of
 * the model's text is ever part of the command.
 */
static char *edit_text(agent_gate *g, const char *text)
{
	char path[] = "/tmp/deskhand-edit-XXXXXX.txt";
	int fd = mkstemps(path, 4);
	if (fd < 0) {
		agent_term_warning(g->term, "cannot create a file to edit: %s", strerror(errno));
		return NULL;
	}
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	char *result = NULL;
	if (!ok)
		goto out;
	agent_term_tty_release(g->term);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exec $DESKHAND_EDITOR \"$1\"", "sh", path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	agent_term_tty_reclaim(g->term);
	if (pid < 0)
		goto out;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		agent_term_warning(g->term, "the editor failed; nothing was changed");
		goto out;
	}
	result = agent_read_file(path, 16u << 20, NULL);
	if (result == NULL)
		agent_term_warning(g->term, "cannot read the edited file: %s", strerror(errno));
out:
	unlink(path);
	return result;
}

/* Lets the user edit the proposal; true when it changed and parsed. */
static bool edit_proposal(agent_gate *g, proposal *p)
{
	const char *ed = getenv("VISUAL");
	if (ed == NULL || ed[0] == '\0')
		ed = getenv("EDITOR");
	setenv("DESKHAND_EDITOR", ed != NULL && ed[0] != '\0' ? ed : "vi", 1);
	if (!p->has_action) {
		char *code = edit_text(g, p->code);
		if (code == NULL)
			return false;
		free(p->code);
		p->code = code;
	} else {
		char *json = agent_computer_to_json(&p->action);
		char *edited = json ? edit_text(g, json) : NULL;
		free(json);
		if (edited == NULL)
			return false;
		cJSON *args = cJSON_Parse(edited);
		free(edited);
		agent_computer_action a;
		char err[256];
		if (args == NULL || !agent_computer_parse(args, &g->view, &a, err, sizeof(err))) {
			agent_term_warning(g->term, "the edited action is not valid: %s",
			                   args == NULL ? "not JSON" : err);
			cJSON_Delete(args);
			return false;
		}
		cJSON_Delete(args);
		agent_computer_action_finish(&p->action);
		p->action = a;
		p->kind = agent_policy_action_kind(a.kind);
	}
	/* What the user edited is a new proposal: record it, scan it anew. */
	p->scanned = false;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	audit_proposed(g, p);
	return true;
}

/* ---- running ------------------------------------------------------------ */

static void on_output(const char *chunk, size_t len, exec_stream stream, void *user)
{
	agent_gate *g = user;
	agent_term_output(g->term, chunk, len,
	                  stream == EXEC_STDERR ? AGENT_TERM_STDERR : AGENT_TERM_STDOUT);
}

/* Whether the pointer is in a real screen corner now (the reason kept). */
static bool watch_corner(agent_gate *g)
{
	int x, y;
	if (g->watching == NULL || !os_pointer(g->watching, &x, &y))
		return false;
	agent_policy_point ptr = {x, y};
	return agent_policy_killswitch(ptr, g->watch_monitors, g->watch_n, NULL, g->watch_reason,
	                               sizeof(g->watch_reason)) != AGENT_POLICY_KILL_NONE;
}

/*
 * The kill switch during a code run. Before the run: whether this block
 * can reach a display to watch (granted one, or no sandbox), with the
 * monitors read once. During it, every EXEC_WATCH_MS on this thread: the
 * pointer in a real screen corner stops the block at once (the pointer's
 * moving proves nothing while code may be driving it). Without --os, a
 * display the block can reach gets a connection of its own.
 */
static void watch_begin(agent_gate *g, const proposal *p)
{
	g->watching = NULL;
	g->watch_tripped = false;
	g->watch_reason[0] = '\0';
	os_display *d = g->display;
	if (d == NULL && (p->display || g->sandbox == SANDBOX_OFF) && getenv("DISPLAY") != NULL) {
		if (g->watch_display == NULL)
			g->watch_display = os_display_open(NULL);
		d = g->watch_display;
	}
	if (d == NULL)
		return;
	os_rect mons[16];
	int n = os_monitors(d, mons, 16);
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++)
		g->watch_monitors[i] = (agent_policy_rect){mons[i].x, mons[i].y, mons[i].width,
		                                           mons[i].height};
	g->watch_n = n > 0 ? (size_t)n : 0;
	g->watching = d;
	/* A pointer already resting in a corner was judged before the block
	 * (an unasked block does not start; an asked one was approved with it
	 * there): only a push into a corner during the run counts. */
	g->watch_armed = !watch_corner(g);
	g->watch_reason[0] = '\0';
}

/* exec_config.watch: true once the pointer is pushed into a corner. */
static bool watch_run(void *user)
{
	agent_gate *g = user;
	bool corner = watch_corner(g);
	if (!corner)
		g->watch_armed = true;
	if (!corner || !g->watch_armed)
		return false;
	g->watch_tripped = true;
	return true;
}

/* After the kill switch ended a run: automatic control stops, the rest of
 * the batch does not run, and a run nobody can take over ends. */
static void kill_switch_stopped_run(agent_gate *g)
{
	const char *note = agent_policy_settings_stop(&g->settings);
	agent_term_warning(g->term, "%s: the running block was stopped — %s", g->watch_reason,
	                   note);
	g->stop_batch = true;
	if (!agent_term_interactive(g->term))
		g->end_run = true;
	int x, y;
	if (g->display != NULL && os_pointer(g->display, &x, &y)) {
		/* Judge later moves from here. */
		g->last_px = x;
		g->last_py = y;
		g->have_last_pointer = true;
	}
}

static void run_code(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	exec_lang lang;
	exec_lang_from_name(p->language, &lang);
	if (g->exec == NULL) {
		exec_config cfg;
		exec_config_init(&cfg);
		cfg.sandbox = g->sandbox;
		cfg.max_output = g->max_output;
		cfg.workspace = g->workspace;
		cfg.hidden = g->hidden;
		cfg.watch = watch_run;
		cfg.watch_user = g;
		g->exec = exec_sessions_create(&cfg);
		if (g->exec == NULL) {
			result_text(res, true, "cannot start the interpreter: %s", exec_error());
			agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, -1, 0,
			                                          exec_error()));
			return;
		}
		*g->exec_for_signals = g->exec;
	}
	/* A Ctrl-C while the session was starting would be dropped by it. */
	if (*g->cancel) {
		result_text(res, true, "not run: the user interrupted");
		agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind,
		                                          EXEC_STATUS_INTERRUPTED, 0,
		                                          "interrupted before it started"));
		return;
	}
	long long t0 = agent_now_ms();
	exec_result r;
	watch_begin(g, p);
	bool ok = exec_sessions_run(g->exec, lang, p->display, p->code, strlen(p->code),
	                            on_output, g, &r);
	g->watching = NULL;
	long dt = (long)(agent_now_ms() - t0);
	if (!ok) {
		result_text(res, true, "%s", exec_error());
		agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, -1, dt,
		                                          exec_error()));
		return;
	}
	agent_buf b;
	agent_buf_init(&b);
	if (r.restarted)
		agent_buf_puts(&b, "[the interpreter had died and was restarted; earlier state is gone]\n");
	agent_buf_append(&b, r.output, r.output_len);
	if (r.stopped && g->watch_tripped)
		agent_buf_printf(&b, "%s[stopped by the kill switch (%s): every process of the "
		                 "block was killed at once; the next block starts a fresh session]",
		                 b.len ? "\n" : "", g->watch_reason);
	else if (r.message[0] != '\0')
		agent_buf_printf(&b, "%s[%s]", b.len ? "\n" : "", r.message);
	else if (r.timed_out)
		agent_buf_printf(&b, "%s[timed out; the block was stopped]", b.len ? "\n" : "");
	else if (r.interrupted)
		agent_buf_printf(&b, "%s[interrupted by the user]", b.len ? "\n" : "");
	else if (r.status != 0)
		agent_buf_printf(&b, "%s[exit status %d]", b.len ? "\n" : "", r.status);
	if (b.len == 0)
		agent_buf_puts(&b, "[no output]");
	free(res->text);
	res->text = agent_buf_steal(&b);
	res->is_error = r.status != 0 || r.timed_out || r.interrupted || r.stopped;
	agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, r.status, dt,
	                                          r.stopped ? "stopped by the kill switch" : NULL));
	bool stopped = r.stopped && g->watch_tripped;
	exec_result_finish(&r);
	/* Code that reached the display may have typed into deskhand's terminal. */
	if (p->display || g->sandbox == SANDBOX_OFF)
		agent_term_discard_action_input(g->term);
	if (stopped)
		kill_switch_stopped_run(g);
}

bool agent_gate_screenshot(agent_gate *g, bool settle, struct conv_image *img,
                      char *err, size_t errlen)
{
	if (settle) {
		vision_settle_opts so;
		vision_settle_opts_init(&so);
		so.cap_ms = g->settle_ms;
		vision_settle_result sr;
		/* The monitor the model sees: changes elsewhere do not delay it. */
		os_rect mon = {g->view.screen_x, g->view.screen_y, g->view.screen_w, g->view.screen_h};
		if (!vision_settle(g->display, &mon, &so, &sr)) {
			snprintf(err, errlen, "%s", vision_error());
			return false;
		}
	}
	vision_shot_opts vo;
	vision_shot_opts_init(&vo);
	vo.max_w = g->screen_max_w;
	vo.max_h = g->screen_max_h;
	vo.monitor = g->monitor;
	vo.grid = g->grid;
	vision_view view;
	os_image *shot = vision_shot(g->display, &vo, &view);
	if (shot == NULL) {
		snprintf(err, errlen, "%s", vision_error());
		return false;
	}
	uint8_t *png = NULL;
	size_t len = 0;
	bool ok = os_png_encode(shot, &png, &len, NULL);
	os_image_destroy(shot);
	if (!ok) {
		snprintf(err, errlen, "%s", os_error());
		return false;
	}
	ok = conv_store_png(*g->conv, png, len, view.model_w, view.model_h, img);
	free(png);
	if (!ok) {
		snprintf(err, errlen, "%s", conv_error());
		return false;
	}
	/* From now on, the model's coordinates refer to this image. */
	g->view = view;
	return true;
}

static void run_action(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	agent_computer_ctx ctx = {
		.display = g->display,
		.view = &g->view,
		.max_w = g->screen_max_w,
		.max_h = g->screen_max_h,
		.cancel = g->cancel,
	};
	long long t0 = agent_now_ms();
	agent_computer_result r;
	agent_computer_run(&ctx, &p->action, &r);
	if (p->kind == AGENT_POLICY_OS_INPUT && r.pointer_x >= 0) {
		g->last_px = r.pointer_x;
		g->last_py = r.pointer_y;
		g->have_last_pointer = true;
	}
	free(res->text);
	res->text = r.text;
	r.text = NULL;
	res->is_error = r.is_error;
	char err[256];
	if (r.image != NULL) {
		uint8_t *png = NULL;
		size_t len = 0;
		if (os_png_encode(r.image, &png, &len, NULL))
			conv_store_png(*g->conv, png, len, r.image->width, r.image->height, &res->image);
		free(png);
	} else if (r.want_screenshot &&
	           !agent_gate_screenshot(g, p->action.kind != AGENT_ACTION_SCREENSHOT &&
	                                    p->action.kind != AGENT_ACTION_FIND_TEXT,
	                             &res->image, err, sizeof(err))) {
		agent_buf b;
		agent_buf_init(&b);
		agent_buf_printf(&b, "%s\n[no screenshot: %s]", res->text ? res->text : "", err);
		free(res->text);
		res->text = agent_buf_steal(&b);
	}
	agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, res->is_error ? 1 : 0,
	                                          (long)(agent_now_ms() - t0),
	                                          res->is_error ? res->text : NULL));
	agent_computer_result_finish(&r);
	/* What it typed or pasted into deskhand's own terminal is not the user's. */
	if (p->kind == AGENT_POLICY_OS_INPUT)
		agent_term_discard_action_input(g->term);
	/* find_text and zoom capture whole regions: keep no screenful around. */
	os_capture_trim(g->display, CAPTURE_KEEP_BYTES);
}

/* ---- the gate ----------------------------------------------------------- */

static bool kill_switch(agent_gate *g, char *reason, size_t len)
{
	if (g->display == NULL)
		return false;
	int x, y;
	if (!os_pointer(g->display, &x, &y))
		return false;
	os_rect mons[16];
	int n = os_monitors(g->display, mons, 16);
	if (n > 16)
		n = 16;
	agent_policy_rect rects[16];
	for (int i = 0; i < n; i++)
		rects[i] = (agent_policy_rect){mons[i].x, mons[i].y, mons[i].width, mons[i].height};
	agent_policy_point ptr = {x, y};
	agent_policy_point last = {g->last_px, g->last_py};
	agent_policy_kill k = agent_policy_killswitch(ptr, rects, (size_t)n,
	                                              g->have_last_pointer ? &last : NULL,
	                                              reason, len);
	if (k != AGENT_POLICY_KILL_NONE) {
		/* Judge later moves from here. */
		g->last_px = x;
		g->last_py = y;
		g->have_last_pointer = true;
	}
	return k != AGENT_POLICY_KILL_NONE;
}

/* ---- deskhand's own terminal ------------------------------------------ */

#define OWN_MAX_PIDS 512

/* pid's parent, from /proc/PID/stat (after the name, which may hold ')'). */
static int parent_of(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	size_t len = 0;
	char *stat = agent_read_file(path, 4096, &len);
	char *end = stat != NULL ? strrchr(stat, ')') : NULL;
	int ppid = 0;
	if (end == NULL || sscanf(end + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	free(stat);
	return ppid;
}

/*
 * deskhand's own terminal: the nearest of its ancestors that is an X
 * client (xterm, gnome-terminal-server, ...), only while a terminal is on
 * standard input. 0 when none is: a console, or a multiplexer or ssh in
 * between, whose terminal window is not among the ancestors.
 */
static int own_terminal_pid(agent_gate *g)
{
	if (!isatty(STDIN_FILENO))
		return 0;
	int clients[OWN_MAX_PIDS];
	size_t n = os_client_pids(g->display, clients, OWN_MAX_PIDS);
	/* Without X-Resource, the windows' _NET_WM_PID. */
	size_t nw = 0;
	os_window *w = os_windows_list(g->display, &nw);
	for (size_t i = 0; w != NULL && i < nw && n < OWN_MAX_PIDS; i++)
		if (w[i].pid > 0)
			clients[n++] = w[i].pid;
	os_windows_free(w, nw);
	int pid = getppid();
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		for (size_t i = 0; i < n; i++)
			if (clients[i] == pid)
				return pid;
		pid = parent_of(pid);
	}
	return 0;
}

static bool is_key_action(agent_action k)
{
	return k == AGENT_ACTION_KEY || k == AGENT_ACTION_TYPE || k == AGENT_ACTION_HOLD_KEY;
}

/*
 * Whether this input would reach deskhand's own terminal: the windows at
 * its points (or under the pointer, for an action without one) and, for
 * keys, the window they go to. Typed there, text reads as the user's line.
 */
static bool aims_at_own_terminal(agent_gate *g, const proposal *p)
{
	if (g->display == NULL || !p->has_action || p->kind != AGENT_POLICY_OS_INPUT)
		return false;
	int term = own_terminal_pid(g);
	if (term <= 0)
		return false;
	const agent_computer_action *a = &p->action;
	int owners[64];
	size_t n = 0;
	if (a->has_start)
		n += os_point_owners(g->display, a->start_sx, a->start_sy, owners + n, 64 - n);
	int x, y;
	if (a->has_point)
		n += os_point_owners(g->display, a->sx, a->sy, owners + n, 64 - n);
	else if (os_pointer(g->display, &x, &y))
		n += os_point_owners(g->display, x, y, owners + n, 64 - n);
	if (is_key_action(a->kind))
		n += os_keys_owners(g->display, owners + n, 64 - n);
	for (size_t i = 0; i < n; i++)
		if (owners[i] == term)
			return true;
	return false;
}

static agent_policy_decision decide(agent_gate *g, const proposal *p, bool kill_tripped)
{
	agent_policy_input in = {
		.kind = p->kind,
		.auto_run = g->settings.auto_run,
		.safe_mode = g->settings.safe_mode,
		.scanned = p->scanned,
		.findings = p->scan ? (unsigned)p->scan->count : 0,
		.worst = p->scan ? p->scan->worst : AGENT_SCAN_NONE,
		.os_auto_approve = g->settings.os_auto_approve,
		.kill_tripped = kill_tripped,
		.interactive = agent_term_interactive(g->term),
		.own_terminal = aims_at_own_terminal(g, p),
		.unsandboxed = g->sandbox == SANDBOX_OFF,
	};
	return agent_policy_decide(&in);
}

/* A call that cannot run (unknown tool, bad arguments): recorded as
 * proposed and blocked, never asked about; the model is told why. */
static void refuse_call(agent_gate *g, const struct conv_block *call, const char *id,
                        const char *err, agent_tool_result *res)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "tool", call->name);
	cJSON_AddStringToObject(o, "arguments", call->arguments ? call->arguments : "");
	agent_gate_logged(g, agent_audit_proposed_action(g->audit, id, AGENT_POLICY_OS_INPUT, o));
	cJSON_Delete(o);
	agent_gate_logged(g, agent_audit_blocked(g->audit, id, AGENT_POLICY_OS_INPUT, err));
	agent_term_warning(g->term, "%s: %s", call->name, err);
	result_text(res, true, "error: %s", err);
}

/* Blocks the proposal because the scanner could not run. Returns false. */
static bool scanner_failed(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	result_text(res, true, "not run: the scanner failed");
	agent_gate_logged(g, agent_audit_blocked(g->audit, p->id, p->kind, "the scanner failed"));
	return false;
}

/* The answer to a question the human declined (or left unanswered). */
static void declined(agent_gate *g, const proposal *p, agent_term_answer a, bool findings,
                     agent_tool_result *res)
{
	agent_gate_logged(g, agent_audit_denied(g->audit, p->id, p->kind, a == AGENT_ANSWER_NONE,
	                                        a == AGENT_ANSWER_NONE ? "no answer (end of input)"
	                                                               : "the user declined"));
	const char *what = p->has_action ? "perform this action" : "run this code";
	if (findings) {
		char *f = findings_text(p->scan);
		result_text(res, true, "The user declined to %s. The safety scanner had "
		            "flagged it:\n%s", what, f);
		free(f);
	} else {
		result_text(res, true, "The user declined to %s.", what);
	}
}

enum step { STEP_AGAIN, STEP_RUN, STEP_STOP };

/*
 * One ASK round: the scan offer of safe mode ask, or the question itself
 * with y / n / e / d. STEP_AGAIN: decide again (after details, an edit, a
 * scan); STEP_RUN: approved and recorded; STEP_STOP: the result says why not.
 */
static enum step ask_round(agent_gate *g, proposal *p, const agent_policy_decision *d,
                           agent_tool_result *res)
{
	if (d->show_findings) {
		char *f = findings_text(p->scan);
		agent_term_warning(g->term, "the scanner flagged this code:\n%s", f);
		free(f);
	}
	if (d->offer_scan) {
		agent_gate_logged(g, agent_audit_asked(g->audit, p->id, p->kind, "offered a scan first"));
		agent_term_answer a = agent_term_ask(g->term, p->id, "Scan this code first?", "yn");
		if (a == AGENT_ANSWER_YES)
			return do_scan(g, p) || scanner_failed(g, p, res) ? STEP_AGAIN : STEP_STOP;
		p->scanned = true; /* declining the scan is not declining the run */
		return STEP_AGAIN;
	}
	const char *question = p->has_action ? "Perform this action?" : "Run this code?";
	agent_gate_logged(g, agent_audit_asked(g->audit, p->id, p->kind, d->reason));
	agent_term_answer a = agent_term_ask(g->term, p->id, question, "yned");
	switch (a) {
	case AGENT_ANSWER_YES:
		return agent_gate_logged(g, agent_audit_approved(g->audit, p->id, p->kind, true,
		                                                 "the user said yes"))
		       ? STEP_RUN : STEP_STOP;
	case AGENT_ANSWER_DETAILS:
		show_details(g, p);
		return STEP_AGAIN;
	case AGENT_ANSWER_EDIT:
		if (edit_proposal(g, p)) {
			show_proposal(g, p);
			if (p->has_action && p->action.kind == AGENT_ACTION_TYPE && !do_scan(g, p))
				return scanner_failed(g, p, res) ? STEP_AGAIN : STEP_STOP;
		}
		return STEP_AGAIN;
	default: /* no, end of input, or anything else */
		declined(g, p, a, d->show_findings, res);
		return STEP_STOP;
	}
}

/*
 * Decides until the proposal may run (true, approval recorded) or must not
 * (false, the result says why). The kill switch was read before, once.
 */
static bool decide_until_done(agent_gate *g, proposal *p, bool tripped,
                              const char *kill_reason, agent_tool_result *res)
{
	for (int round = 0; round < 50; round++) {
		agent_policy_decision d = decide(g, p, tripped);
		if (d.scan_first) {
			if (!do_scan(g, p))
				return scanner_failed(g, p, res);
			continue;
		}
		if (d.kill_tripped) {
			const char *note = agent_policy_settings_stop(&g->settings);
			agent_term_warning(g->term, "%s — %s", kill_reason, note);
		}
		if (d.verdict == AGENT_POLICY_RUN) {
			if (!agent_gate_logged(g, agent_audit_approved(g->audit, p->id, p->kind, false,
			                                               d.reason)))
				return false;
			if (g->verbose || p->kind != AGENT_POLICY_CODE || agent_term_json(g->term))
				agent_term_decision(g->term, p->id, "run", d.reason);
			return true;
		}
		if (d.verdict == AGENT_POLICY_BLOCK) {
			agent_gate_logged(g, agent_audit_blocked(g->audit, p->id, p->kind, d.reason));
			agent_term_error(g->term, "%s", d.reason);
			result_text(res, true, "not run: %s", d.reason);
			if (d.end_run)
				g->end_run = true;
			return false;
		}
		enum step st = ask_round(g, p, &d, res);
		if (st != STEP_AGAIN)
			return st == STEP_RUN;
	}
	agent_gate_logged(g, agent_audit_denied(g->audit, p->id, p->kind, false,
	                                        "no decision after many rounds"));
	result_text(res, true, "not run: no decision was reached");
	return false;
}

void agent_gate_tool_call(agent_gate *g, const struct conv_block *call,
                          agent_tool_result *res)
{
	memset(res, 0, sizeof(*res));
	proposal p;
	memset(&p, 0, sizeof(p));
	p.id = call->id;
	char err[512];
	if (!parse_call(g, call, &p, err, sizeof(err))) {
		refuse_call(g, call, p.id, err, res);
		proposal_finish(&p);
		return;
	}
	audit_proposed(g, &p);
	show_proposal(g, &p);
	/*
	 * Text typed into a terminal is a command: it is scanned like shell code
	 * whatever the safe mode, and findings send it to a human even under
	 * --os-auto-approve.
	 */
	if (p.has_action && p.action.kind == AGENT_ACTION_TYPE && !do_scan(g, &p)) {
		scanner_failed(g, &p, res);
		goto out;
	}
	/*
	 * The kill switch matters only for actions on the desktop that would run
	 * unasked; it is read once per proposal, before anything runs.
	 */
	char kill_reason[160] = "";
	bool tripped = false;
	if (p.kind == AGENT_POLICY_OS_INPUT || p.kind == AGENT_POLICY_CODE_DISPLAY ||
	    (p.kind == AGENT_POLICY_CODE && g->sandbox == SANDBOX_OFF)) {
		agent_policy_decision pre = decide(g, &p, false);
		if (pre.verdict == AGENT_POLICY_RUN)
			tripped = kill_switch(g, kill_reason, sizeof(kill_reason));
	}
	bool approved = decide_until_done(g, &p, tripped, kill_reason, res);
	if (g->audit_broken) {
		/* Something about this proposal, or before it, is missing from the log. */
		result_text(res, true, "not run: the audit log cannot be written");
		goto out;
	}
	if (!approved)
		goto out;
	if (p.has_action)
		run_action(g, &p, res);
	else
		run_code(g, &p, res);
	if (res->text == NULL)
		result_text(res, res->is_error, "[no output]");
	agent_term_result(g->term, p.id, res->is_error ? "error" : "ok", res->text);
out:
	proposal_finish(&p);
}
