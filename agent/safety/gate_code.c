/*
 * agent/safety/gate — running an approved block of code, with the kill
 * switch watched while it runs. gate_run_code is called by
 * agent_gate_tool_call alone, and this file alone calls exec_sessions_run
 * (tests/safety/test_one_gate.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

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
	if (g->watching == NULL)
		return false;
	if (os_stop_key_pressed(g->watching)) {
		snprintf(g->watch_reason, sizeof(g->watch_reason), "the stop key was pressed");
		return true;
	}
	if (!os_pointer(g->watching, &x, &y))
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
static void watch_begin(agent_gate *g, const agent_proposal *p)
{
	g->watching = NULL;
	g->watch_tripped = false;
	g->watch_reason[0] = '\0';
	os_display *d = g->display;
	if (d == NULL && (p->code.display || g->sandbox == SANDBOX_OFF) &&
	    getenv("DISPLAY") != NULL) {
		if (g->watch_display == NULL)
			g->watch_display = os_display_open(NULL);
		d = g->watch_display;
	}
	if (d == NULL)
		return;
	os_rect mons[16];
	g->watch_n = gate_policy_rects(mons, os_monitors(d, mons, 16), g->watch_monitors);
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
	if (!agent_term_answerable(g->term))
		g->end_run = true;
	int x, y;
	if (g->display != NULL && os_pointer(g->display, &x, &y)) {
		/* Judge later moves from here. */
		g->last_px = x;
		g->last_py = y;
		g->have_last_pointer = true;
	}
}

void gate_run_code(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	const agent_proposal *c = &p->p;
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
			gate_result_text(res, true, "cannot start the interpreter: %s", exec_error());
			agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, -1, 0,
			                                          exec_error()));
			return;
		}
		*g->exec_for_signals = g->exec;
	}
	/* A Ctrl-C while the session was starting would be dropped by it. */
	if (*g->cancel) {
		gate_result_text(res, true, "not run: the user interrupted");
		agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind,
		                                          EXEC_STATUS_INTERRUPTED, 0,
		                                          "interrupted before it started"));
		return;
	}
	long long t0 = base_now_ms();
	exec_result r;
	watch_begin(g, c);
	bool ok = exec_sessions_run(g->exec, c->code.lang, c->code.display, c->code.code,
	                            strlen(c->code.code), on_output, g, &r);
	g->watching = NULL;
	long dt = (long)(base_now_ms() - t0);
	if (!ok) {
		gate_result_text(res, true, "%s", exec_error());
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
	if (c->code.display || g->sandbox == SANDBOX_OFF)
		agent_term_discard_action_input(g->term);
	if (stopped)
		kill_switch_stopped_run(g);
}
