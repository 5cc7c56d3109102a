/*
 * agent/safety/gate — the gate's insides, shared by its files: gate.c
 * decides and asks (agent_gate_tool_call, the one way in),
 * gate_proposal.c scans and edits what is proposed, gate_details.c shows
 * its details, gate_code.c runs code, gate_action.c runs computer actions,
 * gate_checks.c puts the vendors' safety checks to the human. Only the
 * gate's files include this header, and the runners below are called by
 * gate.c alone (tests/safety/test_one_gate.py).
 */
#ifndef DESKHAND_AGENT_GATE_INTERNAL_H
#define DESKHAND_AGENT_GATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/gate.h"
#include "agent/safety/scan.h"
#include "os/os.h"

struct agent_gate {
	/* Given once (agent_gate_config); not owned. */
	agent_term *term;
	agent_audit *audit;
	agent_tools *tools;
	os_display *display;                  /* the tools'; NULL without --os */
	const char *preview_dir;
	volatile sig_atomic_t *cancel;
	exec_sessions *volatile *exec_for_signals;
	sandbox_profile sandbox;
	const char *workspace;
	const char *const *hidden;
	size_t max_output;
	/* Changed by the user's magic commands (and the kill switch). */
	agent_policy_settings settings;
	bool verbose;
	agent_gate_hold (*hold)(void *ctx);
	void *hold_ctx;
	/* The gate's own. */
	exec_sessions *exec;                  /* sessions per language, created lazily */
	agent_scan_rules *rules;              /* loaded on first scan */
	bool have_last_pointer;
	int last_px, last_py;                 /* where deskhand left the pointer */
	bool end_run;                         /* the policy or a broken log ends the run */
	bool audit_broken;                    /* a record failed: nothing more runs */
	/* The kill switch stopped a run: the rest of the model's batch does not
	 * run (agent_gate_tool_calls clears this before each batch). */
	bool stop_batch;
	/* A vendor's safety check was declined: the turn ends (cleared per batch). */
	bool end_turn;
	/* The model ended the task (cleared per batch). */
	bool task_done;
	/* More calls follow in this batch: an input action's screenshot waits
	 * for the end of the batch. */
	bool batch_more;
	/* The kill switch watched during a code run (see gate_code.c). */
	os_display *watch_display;            /* own connection when there is no --os */
	os_display *watching;                 /* the display watched now; NULL: none */
	agent_policy_rect watch_monitors[16];
	size_t watch_n;
	bool watch_armed;                     /* the pointer was out of the corners */
	bool watch_tripped;
	char watch_reason[160];
};

/* ---- a proposal as the gate holds it ------------------------------------ */

typedef struct proposal {
	agent_proposal p;                     /* what agent/tools made of the call */
	const char *id;                       /* the call's */
	agent_policy_kind kind;               /* gate_kind(&p), again after an edit */
	bool scanned;
	agent_scan_result *scan;              /* when scanned */
} proposal;

/* The policy's class of the proposal (code with or without the display, input, observation). */
agent_policy_kind gate_kind(const agent_proposal *p);

/* Whether it is an action on the desktop (else code). */
static inline bool gate_is_action(const proposal *p)
{
	return p->p.kind == AGENT_PROPOSAL_ACTION;
}

/* The monitors as the policy's kill switch reads them (at most 16); how many. */
size_t gate_policy_rects(const os_rect *mons, int n, agent_policy_rect out[16]);

/*
 * Scans the code, or the text a `type` action would type: typed into a
 * terminal it runs as a shell command, so it is read as one.
 */
bool gate_scan(agent_gate *g, proposal *p);

/* The scanner's findings, one a line. Ownership: the caller frees. */
char *gate_findings_text(const agent_scan_result *r);

/* Records the proposal (again, after an edit: the newest one counts). */
void gate_audit_proposed(agent_gate *g, const proposal *p);

/* Lets the user edit the proposal in the editor, or takes `given` (edited in the
 * console; consumed) instead; true when it changed and is valid. */
bool gate_edit_proposal(agent_gate *g, proposal *p, char *given);

/* Shows the proposal; gate_show_details its details (the answer `d`). */
void gate_show_proposal(agent_gate *g, const proposal *p);
void gate_show_details(agent_gate *g, const proposal *p);

/* Sets the result's text (replacing any); NULL text reads as "[no output]". */
void gate_result_text(agent_tool_result *r, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Run an approved proposal and fill the result (code: and record it as
 * executed; gate.c records an action). Called by agent_gate_tool_call
 * alone, after the approval is on disk.
 */
void gate_run_code(agent_gate *g, const proposal *p, agent_tool_result *res);
void gate_run_action(agent_gate *g, const proposal *p, agent_tool_result *res);
/* Attaches a settled screenshot to res; a failure is noted in its text. */
void gate_attach_screenshot(agent_gate *g, agent_tool_result *res);

/*
 * The vendor's safety checks on the proposal (gate_checks.c): each put to
 * the human (policy rule 12) and recorded. True: all acknowledged (or
 * none); *ack is then the JSON array to send back (NULL: none; the caller
 * frees). False: one was declined or could not be asked; res says so,
 * ends the batch, and g->end_turn is set.
 */
bool gate_vendor_checks(agent_gate *g, const agent_proposal *p, char **ack,
                        agent_tool_result *res);

#endif
