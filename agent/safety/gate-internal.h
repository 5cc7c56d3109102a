/*
 * agent/safety/gate — the gate's insides, shared by its files: gate.c
 * decides and asks (agent_gate_tool_call, the one way in), gate_proposal.c
 * parses, scans, records and edits what is proposed, gate_details.c shows
 * it, gate_code.c runs code, gate_action.c runs computer actions. Only the
 * gate's files include this header, and the runners below are called by
 * gate.c alone (tests/safety/test_one_gate.py).
 */
#ifndef DESKHAND_AGENT_GATE_INTERNAL_H
#define DESKHAND_AGENT_GATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/gate.h"
#include "agent/tools/tools.h"

/* Screenshots capture in strips of a few hundred KB; keep no more. */
#define CAPTURE_KEEP_BYTES (1u << 20)

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

/* Releases what the proposal owns. */
void gate_proposal_finish(proposal *p);

/* Parses one tool call into p; false with the reason in err. */
bool gate_proposal_parse(agent_gate *g, const struct conv_block *call, proposal *p,
                         char *err, size_t errlen);

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
 * console; consumed) instead; true when it changed and parsed. */
bool gate_edit_proposal(agent_gate *g, proposal *p, char *given);

/* Shows the proposal; gate_show_details its details (the answer `d`). */
void gate_show_proposal(agent_gate *g, const proposal *p);
void gate_show_details(agent_gate *g, const proposal *p);

/* Sets the result's text (replacing any); NULL text reads as "[no output]". */
void gate_result_text(agent_tool_result *r, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Run an approved proposal, record it as executed and fill the result.
 * Called by agent_gate_tool_call alone, after the approval is on disk.
 */
void gate_run_code(agent_gate *g, const proposal *p, agent_tool_result *res);
void gate_run_action(agent_gate *g, const proposal *p, agent_tool_result *res);
/* Attaches a screenshot (settled first when `settle`) to res; a failure is noted in its text. */
void gate_attach_screenshot(agent_gate *g, bool settle, agent_tool_result *res);

/*
 * The vendor's safety checks on `call` (gate_checks.c): each put to the
 * human (policy rule 12) and recorded. True: all acknowledged (or none);
 * *ack is then the JSON array to send back (NULL: none; the caller frees).
 * False: one was declined or could not be asked; res says so, ends the
 * batch, and g->end_turn is set.
 */
bool gate_vendor_checks(agent_gate *g, const struct conv_block *call, char **ack,
                        agent_tool_result *res);

#endif
