/*
 * agent/safety/gate — the single path from a tool call to an executor or os/
 * (see gate.h).
 *
 * For every call: agent/tools makes it a proposal; record "proposed", scan
 * when the policy says so, ask the policy, ask the human when told to (y /
 * n / e / d, and the scan offer of safe mode ask), record the decision
 * (flushed to disk before anything runs), and only then run it and record
 * "executed". A denied or blocked action never reaches exec_ or os_
 * functions: there is no other call site for them in the agent.
 *
 * This file decides and asks; the runners it calls once a proposal is
 * approved (gate_code.c, gate_action.c) are called from here alone, and
 * what is proposed is scanned and edited in gate_proposal.c and its
 * details shown in gate_details.c (see gate-internal.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

agent_gate *agent_gate_create(const agent_gate_config *cfg)
{
	agent_gate *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->term = cfg->term;
	g->audit = cfg->audit;
	g->tools = cfg->tools;
	g->display = agent_tools_display(cfg->tools);
	g->preview_dir = cfg->preview_dir;
	g->cancel = cfg->cancel;
	g->exec_for_signals = cfg->exec_for_signals;
	g->sandbox = cfg->sandbox;
	g->workspace = cfg->workspace;
	g->hidden = cfg->hidden;
	g->max_output = cfg->max_output;
	g->settings = cfg->settings;
	/* The kill switch judges later moves from where the pointer is now. */
	if (g->display != NULL && os_pointer(g->display, &g->last_px, &g->last_py))
		g->have_last_pointer = true;
	return g;
}

void agent_gate_destroy(agent_gate *g)
{
	if (g == NULL)
		return;
	if (g->exec_for_signals != NULL)
		*g->exec_for_signals = NULL;
	exec_sessions_destroy(g->exec);
	agent_scan_rules_destroy(g->rules);
	os_display_close(g->watch_display);
	free(g);
}

const agent_policy_settings *agent_gate_settings(const agent_gate *g)
{
	return &g->settings;
}

agent_policy_change agent_gate_magic(agent_gate *g, const agent_policy_magic *m, char *msg,
                                     size_t len)
{
	agent_policy_change ch = agent_policy_magic_apply(&g->settings, m, msg, len);
	if (ch == AGENT_POLICY_CHANGED)
		agent_gate_logged(g, agent_audit_setting(g->audit, &g->settings,
		                                         agent_policy_magic_name(m->cmd)));
	return ch;
}

void agent_gate_set_verbose(agent_gate *g, bool verbose)
{
	g->verbose = verbose;
}

void agent_gate_set_hold(agent_gate *g, agent_gate_hold (*hold)(void *ctx), void *ctx)
{
	g->hold = hold;
	g->hold_ctx = ctx;
}

bool agent_gate_ended(const agent_gate *g)
{
	return g->end_run;
}

void agent_tool_result_finish(agent_tool_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	free(r->ack);
	agent_shot_clear(&r->shot);
	memset(r, 0, sizeof(*r));
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

agent_policy_kind gate_kind(const agent_proposal *p)
{
	if (p->kind == AGENT_PROPOSAL_ACTION)
		return p->action.input ? AGENT_POLICY_OS_INPUT : AGENT_POLICY_OS_OBSERVE;
	return p->code.display ? AGENT_POLICY_CODE_DISPLAY : AGENT_POLICY_CODE;
}

/* ---- the gate ----------------------------------------------------------- */

size_t gate_policy_rects(const os_rect *mons, int n, agent_policy_rect out[16])
{
	size_t k = n < 0 ? 0 : n > 16 ? 16 : (size_t)n;
	for (size_t i = 0; i < k; i++)
		out[i] = (agent_policy_rect){mons[i].x, mons[i].y, mons[i].width, mons[i].height};
	return k;
}

/* The kill switch, judged on where the pointer was when the proposal was made. */
static bool kill_switch(agent_gate *g, const agent_proposal *p, char *reason, size_t len)
{
	if (g->display != NULL && os_stop_key_pressed(g->display)) {
		snprintf(reason, len, "the stop key was pressed");
		return true;
	}
	if (!p->have_pointer)
		return false;
	int x = p->pointer.x, y = p->pointer.y;
	agent_policy_rect rects[AGENT_PROPOSAL_MONITORS];
	size_t n = gate_policy_rects(p->monitors, p->n_monitors, rects);
	agent_policy_point ptr = {x, y};
	agent_policy_point last = {g->last_px, g->last_py};
	agent_policy_kill k = agent_policy_killswitch(ptr, rects, n,
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
		/* A fact of the proposal, read once when it was made. */
		.own_terminal = gate_is_action(p) && p->p.own_terminal,
		.unsandboxed = g->sandbox == SANDBOX_OFF,
	};
	return agent_policy_decide(&in);
}

/* Records the proposal (again, after an edit: the newest one counts). */
void gate_audit_proposed(agent_gate *g, const proposal *p)
{
	if (gate_is_action(p)) {
		agent_gate_logged(g, agent_audit_proposed_action(g->audit, p->id, p->kind, p->p.json));
		return;
	}
	const char *code = p->p.code.code;
	agent_gate_logged(g, agent_audit_proposed_code(g->audit, p->id, p->kind,
	                                               exec_lang_name(p->p.code.lang), code,
	                                               strlen(code)));
}

void gate_show_proposal(agent_gate *g, const proposal *p)
{
	if (gate_is_action(p)) {
		agent_term_show_action(g->term, p->id, p->p.description, p->p.json_text);
		return;
	}
	/* Without a sandbox every block reaches the display (policy rule 11). */
	agent_term_show_code(g->term, p->id, exec_lang_name(p->p.code.lang), p->p.code.code,
	                     p->p.code.display || g->sandbox == SANDBOX_OFF);
}

/* A call that cannot run (unknown tool, bad arguments): recorded as
 * proposed and blocked, never asked about; the model is told why. */
static void refuse_call(agent_gate *g, const agent_proposal *p, agent_tool_result *res)
{
	const agent_tool_call *call = p->call;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "tool", call->name);
	cJSON_AddStringToObject(o, "arguments", call->arguments ? call->arguments : "");
	agent_gate_logged(g, agent_audit_proposed_action(g->audit, call->id, AGENT_POLICY_OS_INPUT,
	                                                 o));
	cJSON_Delete(o);
	agent_gate_logged(g, agent_audit_blocked(g->audit, call->id, AGENT_POLICY_OS_INPUT,
	                                         p->text));
	agent_term_warning(g->term, "%s: %s", call->name, p->text);
	gate_result_text(res, true, "error: %s", p->text);
	res->ends_batch = p->computer;
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
	/* No answer: the input ended, or a place beside the terminal (an MCP
	 * client withdrawing its call) says why. */
	char why[160] = "the user declined";
	if (a == AGENT_ANSWER_NONE && strcmp(agent_term_answered_from(g->term), "terminal") != 0)
		snprintf(why, sizeof(why), "no answer: %s", agent_term_answered_from(g->term));
	else if (a == AGENT_ANSWER_NONE)
		snprintf(why, sizeof(why), "no answer (end of input)");
	agent_gate_logged(g, agent_audit_denied(g->audit, p->id, p->kind, a == AGENT_ANSWER_NONE,
	                                        why));
	const char *what = gate_is_action(p) ? "perform this action" : "run this code";
	char said[160];
	if (a == AGENT_ANSWER_NONE)
		snprintf(said, sizeof(said), "Not run: nobody answered the question whether to %s "
		         "(no answer is a no).", what);
	else
		snprintf(said, sizeof(said), "The user declined to %s.", what);
	if (findings) {
		char *f = gate_findings_text(p->scan);
		gate_result_text(res, true, "%s The safety scanner had flagged it:\n%s", said, f);
		free(f);
	} else {
		gate_result_text(res, true, "%s", said);
	}
}

enum step { STEP_AGAIN, STEP_RUN, STEP_STOP };

/* What a second place to answer shows beside the question: the text an
 * edit starts from and the points the action aims at. */
static void ask_info(const proposal *p, agent_term_ask_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!gate_is_action(p)) {
		info->edit_text = p->p.code.code;
		info->language = exec_lang_name(p->p.code.lang);
		return;
	}
	info->edit_text = p->p.json_text;
	os_point pts[2];
	info->n_targets = agent_computer_points(&p->p.action, pts);
	for (int i = 0; i < info->n_targets; i++) {
		info->x[i] = pts[i].x;
		info->y[i] = pts[i].y;
	}
}

/* The human's answer to the question itself. */
static enum step answered(agent_gate *g, proposal *p, const agent_policy_decision *d,
                          agent_term_answer a, agent_tool_result *res)
{
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
			if (gate_is_action(p) && p->p.action.kind == AGENT_ACTION_TYPE && !gate_scan(g, p))
				return scanner_failed(g, p, res) ? STEP_AGAIN : STEP_STOP;
		}
		return STEP_AGAIN;
	default: /* no, end of input, or anything else */
		declined(g, p, a, d->show_findings, res);
		return STEP_STOP;
	}
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
	const char *question = gate_is_action(p) ? "Perform this action?" : "Run this code?";
	agent_gate_logged(g, agent_audit_asked(g->audit, p->id, p->kind, d->reason));
	agent_term_ask_info info;
	ask_info(p, &info);
	agent_term_answer a = agent_term_ask_ex(g->term, p->id, question, "yned", &info);
	agent_audit_answer_from(g->audit, agent_term_answered_from(g->term));
	return answered(g, p, d, a, res);
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
				agent_term_decision(g->term, p->id, agent_policy_verdict_name(d.verdict),
				                    d.reason);
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

/*
 * The kill switch matters only for actions on the desktop that would run
 * unasked; it is read once per proposal, before anything runs.
 */
static bool kill_switch_first(agent_gate *g, const proposal *p, char *reason, size_t len)
{
	if (p->kind != AGENT_POLICY_OS_INPUT && p->kind != AGENT_POLICY_CODE_DISPLAY &&
	    !(p->kind == AGENT_POLICY_CODE && g->sandbox == SANDBOX_OFF))
		return false;
	agent_policy_decision pre = decide(g, p, false);
	return pre.verdict == AGENT_POLICY_RUN && kill_switch(g, &p->p, reason, len);
}

/* An approved action run, recorded as executed; what it typed or pasted
 * into deskhand's own terminal is not the user's. */
static void run_action(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	long long t0 = base_now_ms();
	gate_run_action(g, p, res);
	agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, res->is_error ? 1 : 0,
	                                          (long)(base_now_ms() - t0),
	                                          res->is_error ? res->text : NULL));
	if (p->kind == AGENT_POLICY_OS_INPUT)
		agent_term_discard_action_input(g->term);
}

/* A proposal that may run: recorded, shown, decided, and run once approved. */
static void decide_and_run(agent_gate *g, proposal *p, agent_tool_result *res)
{
	gate_audit_proposed(g, p);
	gate_show_proposal(g, p);
	/*
	 * Text typed into a terminal is a command: it is scanned like shell code
	 * whatever the safe mode, and findings send it to a human even under
	 * --os-auto-approve.
	 */
	if (gate_is_action(p) && p->p.action.kind == AGENT_ACTION_TYPE && !gate_scan(g, p)) {
		scanner_failed(g, p, res);
		return;
	}
	char kill_reason[160] = "";
	bool tripped = kill_switch_first(g, p, kill_reason, sizeof(kill_reason));
	bool approved = decide_until_done(g, p, tripped, kill_reason, res);
	if (g->audit_broken) {
		/* Something about this proposal, or before it, is missing from the log. */
		gate_result_text(res, true, "not run: the audit log cannot be written");
		return;
	}
	if (!approved)
		return;
	if (gate_is_action(p))
		run_action(g, p, res);
	else
		gate_run_code(g, p, res);
	if (res->text == NULL)
		gate_result_text(res, res->is_error, "[no output]");
	agent_term_result(g->term, p->id, res->is_error ? "error" : "ok", res->text);
}

/*
 * Qwen's terminate/answer and UI-TARS's finished/call_user end the task:
 * not an action (nothing runs, nothing to confirm); the user is shown what
 * the model said and the loop stops after this batch (g->task_done).
 */
static void final_call(agent_gate *g, const agent_proposal *p, agent_tool_result *res)
{
	agent_term_notice(g->term, "the model ends the task: %s", p->text);
	gate_result_text(res, false, "The task ended: %s", p->text);
	g->task_done = true;
}

void agent_gate_tool_call(agent_gate *g, const agent_tool_call *call, agent_tool_result *res)
{
	memset(res, 0, sizeof(*res));
	proposal p = {.id = call->id};
	agent_tools_propose(g->tools, call, &p.p);
	char *ack = NULL;
	if (p.p.kind == AGENT_PROPOSAL_FINAL) {
		final_call(g, &p.p, res);
		goto out;
	}
	/* A vendor's safety checks come first: declined, nothing of the call runs. */
	if (p.p.checks != NULL && !gate_vendor_checks(g, &p.p, &ack, res))
		goto out;
	if (p.p.kind == AGENT_PROPOSAL_REFUSED) {
		refuse_call(g, &p.p, res);
	} else {
		p.kind = gate_kind(&p.p);
		decide_and_run(g, &p, res);
		if (gate_is_action(&p) && res->is_error)
			res->ends_batch = true;
	}
	res->ack = ack;
out:
	if (p.scanned)
		agent_scan_result_destroy(p.scan);
	agent_proposal_finish(&p.p);
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

/* What a call that does not run is answered, or NULL when it may run. */
static const char *not_run(const agent_gate *g, bool ended, bool took_over)
{
	if (took_over)
		return AGENT_TOOK_OVER;
	if (ended)
		return AGENT_NOT_EXECUTED;
	if (g->task_done)
		return "not run: the task had ended";
	if (g->end_run || g->stop_batch)
		return "not run: the run was stopped";
	if (g->cancel != NULL && *g->cancel)
		return "not run: the user interrupted";
	return NULL;
}

static agent_gate_outcome outcome(const agent_gate *g)
{
	return g->end_run ? AGENT_GATE_END_RUN : g->task_done ? AGENT_GATE_TASK_DONE
	       : g->end_turn ? AGENT_GATE_END_TURN : AGENT_GATE_GO_ON;
}

agent_gate_outcome agent_gate_tool_calls(agent_gate *g, const agent_tool_call *calls, size_t n,
                                         agent_tool_result *res)
{
	bool ended = false, due = false, took_over = false;
	g->stop_batch = false;
	g->end_turn = false;
	g->task_done = false;
	for (size_t k = 0; k < n; k++) {
		memset(&res[k], 0, sizeof(res[k]));
		due = due || calls[k].dialect->results_carry_screenshot;
		if (!ended && held(g, &took_over) && took_over) {
			ended = true;
			due = true;
		}
		const char *why = not_run(g, ended, took_over);
		if (why != NULL) {
			gate_result_text(&res[k], true, "%s", why);
			continue;
		}
		/* More calls follow: one screenshot at the batch's end will do,
		 * unless the dialect answers each action with its own. */
		g->batch_more = k + 1 < n && !calls[k].dialect->screenshot_each_action;
		agent_gate_tool_call(g, &calls[k], &res[k]);
		due = due || res[k].screenshot_due;
		ended = res[k].ends_batch;
	}
	g->batch_more = false;
	if (due && !g->end_turn && !g->task_done && n > 0 && res[n - 1].shot.png == NULL)
		gate_attach_screenshot(g, &res[n - 1]);
	return outcome(g);
}
