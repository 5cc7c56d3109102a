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
 *
 * This file decides and asks; the runners it calls once a proposal is
 * approved (gate_code.c, gate_action.c) are called from here alone, and
 * what is proposed is parsed, scanned and edited in gate_proposal.c and
 * shown in gate_details.c (see gate-internal.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"

void agent_tool_result_finish(agent_tool_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	free(r->ack);
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

void gate_result_text(agent_tool_result *r, bool is_error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = agent_vformat(fmt, ap);
	va_end(ap);
	free(r->text);
	r->text = text;     /* NULL (out of memory) reads as "[no output]" */
	r->is_error = is_error;
}

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
		.interactive = agent_term_answerable(g->term),
		.own_terminal = aims_at_own_terminal(g, p),
		.unsandboxed = g->sandbox == SANDBOX_OFF,
	};
	return agent_policy_decide(&in);
}

static bool is_computer_call(const struct conv_block *call)
{
	return call->toolset != NULL || strcmp(call->name, "computer") == 0 ||
	       strcmp(call->name, "find_text") == 0 || strcmp(call->name, "elements") == 0 ||
	       strcmp(call->name, "click_element") == 0;
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
	gate_result_text(res, true, "error: %s", err);
}

/* Blocks the proposal because the scanner could not run. Returns false. */
static bool scanner_failed(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	gate_result_text(res, true, "not run: the scanner failed");
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
		char *f = gate_findings_text(p->scan);
		gate_result_text(res, true, "The user declined to %s. The safety scanner had "
		            "flagged it:\n%s", what, f);
		free(f);
	} else {
		gate_result_text(res, true, "The user declined to %s.", what);
	}
}

enum step { STEP_AGAIN, STEP_RUN, STEP_STOP };

/*
 * What a second place to answer shows beside the question: the text an
 * edit starts from and the points the action aims at. Returns the text
 * to free after asking (NULL for code, which is borrowed).
 */
static char *ask_info(const proposal *p, agent_term_ask_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!p->has_action) {
		info->edit_text = p->code;
		info->language = p->language;
		return NULL;
	}
	char *json = agent_computer_to_json(&p->action);
	info->edit_text = json;
	const agent_computer_action *a = &p->action;
	if (a->has_start) {
		info->x[info->n_targets] = a->start_sx;
		info->y[info->n_targets++] = a->start_sy;
	}
	if (a->has_point) {
		info->x[info->n_targets] = a->sx;
		info->y[info->n_targets++] = a->sy;
	}
	return json;
}

/*
 * One ASK round: the scan offer of safe mode ask, or the question itself
 * with y / n / e / d. STEP_AGAIN: decide again (after details, an edit, a
 * scan); STEP_RUN: approved and recorded; STEP_STOP: the result says why not.
 */
static enum step ask_round(agent_gate *g, proposal *p, const agent_policy_decision *d,
                           agent_tool_result *res)
{
	if (d->show_findings) {
		char *f = gate_findings_text(p->scan);
		agent_term_warning(g->term, "the scanner flagged this code:\n%s", f);
		free(f);
	}
	if (d->offer_scan) {
		agent_gate_logged(g, agent_audit_asked(g->audit, p->id, p->kind, "offered a scan first"));
		agent_term_answer a = agent_term_ask(g->term, p->id, "Scan this code first?", "yn");
		if (a == AGENT_ANSWER_YES)
			return gate_scan(g, p) || scanner_failed(g, p, res) ? STEP_AGAIN : STEP_STOP;
		p->scanned = true; /* declining the scan is not declining the run */
		return STEP_AGAIN;
	}
	const char *question = p->has_action ? "Perform this action?" : "Run this code?";
	agent_gate_logged(g, agent_audit_asked(g->audit, p->id, p->kind, d->reason));
	agent_term_ask_info info;
	char *edit_from = ask_info(p, &info);
	agent_term_answer a = agent_term_ask_ex(g->term, p->id, question, "yned", &info);
	free(edit_from);
	agent_audit_answer_from(g->audit, agent_term_answered_from(g->term));
	switch (a) {
	case AGENT_ANSWER_YES:
		return agent_gate_logged(g, agent_audit_approved(g->audit, p->id, p->kind, true,
		                                                 "the user said yes"))
		       ? STEP_RUN : STEP_STOP;
	case AGENT_ANSWER_DETAILS:
		gate_show_details(g, p);
		return STEP_AGAIN;
	case AGENT_ANSWER_EDIT:
		if (gate_edit_proposal(g, p, agent_term_take_edit(g->term))) {
			gate_show_proposal(g, p);
			if (p->has_action && p->action.kind == AGENT_ACTION_TYPE && !gate_scan(g, p))
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
			if (!gate_scan(g, p))
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
			gate_result_text(res, true, "not run: %s", d.reason);
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
	gate_result_text(res, true, "not run: no decision was reached");
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
	if (!gate_proposal_parse(g, call, &p, err, sizeof(err))) {
		refuse_call(g, call, p.id, err, res);
		res->ends_batch = is_computer_call(call);
		gate_proposal_finish(&p);
		return;
	}
	gate_audit_proposed(g, &p);
	gate_show_proposal(g, &p);
	/*
	 * Text typed into a terminal is a command: it is scanned like shell code
	 * whatever the safe mode, and findings send it to a human even under
	 * --os-auto-approve.
	 */
	if (p.has_action && p.action.kind == AGENT_ACTION_TYPE && !gate_scan(g, &p)) {
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
		gate_result_text(res, true, "not run: the audit log cannot be written");
		goto out;
	}
	if (!approved)
		goto out;
	if (p.has_action)
		gate_run_action(g, &p, res);
	else
		gate_run_code(g, &p, res);
	if (res->text == NULL)
		gate_result_text(res, res->is_error, "[no output]");
	agent_term_result(g->term, p.id, res->is_error ? "error" : "ok", res->text);
out:
	if (p.has_action && res->is_error)
		res->ends_batch = true;
	gate_proposal_finish(&p);
}

/*
 * An action of a vendor whose actions have no screenshot of their own to
 * ask for (OpenAI's computer_call, Qwen's computer_use, UI-TARS's text):
 * answered with a screenshot whatever happened.
 */
static bool answered_with_screenshot(const struct conv_block *call)
{
	static const char *const sets[] = {"openai", "qwen", "uitars"};
	for (size_t i = 0; call->toolset != NULL && i < sizeof(sets) / sizeof(sets[0]); i++)
		if (strcmp(call->toolset, sets[i]) == 0)
			return true;
	return false;
}

/*
 * Qwen's terminate/answer and UI-TARS's finished/call_user end the task:
 * not an action (nothing runs, nothing to confirm); the user is shown what
 * the model said and the loop stops after this batch (g->task_done).
 */
static bool final_call(agent_gate *g, const struct conv_block *call, agent_tool_result *res)
{
	char *text = NULL;
	bool final = false;
	if (call->toolset == NULL || call->args == NULL)
		return false;
	if (strcmp(call->toolset, "qwen") == 0)
		final = agent_qwen_final(call->args, &text);
	else if (strcmp(call->toolset, "uitars") == 0)
		final = agent_uitars_final(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		                               call->args, "action")), &text);
	if (!final)
		return false;
	agent_term_notice(g->term, "the model ends the task: %s", text != NULL ? text : "");
	gate_result_text(res, false, "The task ended: %s", text != NULL ? text : "");
	free(text);
	g->task_done = true;
	return true;
}

/* One call of a batch: its vendor's safety checks first, then the gate. */
static void batch_call(agent_gate *g, const struct conv_block *call, agent_tool_result *res)
{
	char *ack = NULL;
	if (final_call(g, call, res))
		return;
	if (call->checks != NULL && !gate_vendor_checks(g, call, &ack, res))
		return;
	agent_gate_tool_call(g, call, res);
	res->ack = ack;
}

/*
 * Before each call: a supervisor's pause holds here. After a take-over the
 * rest of the batch aimed at a screen that is gone, so it does not run and
 * the model gets a fresh screenshot; a stop is the kill switch's.
 */
static bool held(agent_gate *g, bool *took_over)
{
	if (g->hold == NULL)
		return false;
	agent_gate_hold h = g->hold(g->hold_ctx);
	if (h == AGENT_GATE_STOP) {
		const char *note = agent_policy_settings_stop(&g->settings);
		agent_term_warning(g->term, "stopped from the console — %s", note);
		g->stop_batch = true;
	} else if (h == AGENT_GATE_TOOK_OVER) {
		*took_over = true;
	}
	return h != AGENT_GATE_GO;
}

void agent_gate_tool_calls(agent_gate *g, const struct conv_block *const *calls, size_t n,
                           agent_tool_result *res)
{
	bool ended = false, due = false, took_over = false;
	g->stop_batch = false;
	g->end_turn = false;
	g->task_done = false;
	for (size_t k = 0; k < n; k++) {
		memset(&res[k], 0, sizeof(res[k]));
		due = due || answered_with_screenshot(calls[k]);
		if (!ended && held(g, &took_over) && took_over) {
			ended = true;
			due = true;
		}
		if (took_over) {
			gate_result_text(&res[k], true, "%s", AGENT_TOOK_OVER);
		} else if (ended) {
			gate_result_text(&res[k], true, "%s", AGENT_NOT_EXECUTED);
		} else if (g->task_done) {
			gate_result_text(&res[k], true, "not run: the task had ended");
		} else if (g->end_run || g->stop_batch || (g->cancel != NULL && *g->cancel)) {
			gate_result_text(&res[k], true, g->end_run || g->stop_batch
			                 ? "not run: the run was stopped" : "not run: the user interrupted");
		} else {
			g->batch_more = k + 1 < n;
			batch_call(g, calls[k], &res[k]);
			due = due || res[k].screenshot_due;
			ended = res[k].ends_batch;
		}
	}
	g->batch_more = false;
	if (due && !g->end_turn && !g->task_done && n > 0 && res[n - 1].image.path == NULL)
		gate_attach_screenshot(g, true, &res[n - 1]);
}
