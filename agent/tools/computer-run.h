/*
 * agent/tools/computer-run — running a parsed computer action: the one place
 * that turns an action into os/ calls (mouse, keys, typing, zoom, OCR).
 *
 * Only the gate (its action runner, agent/safety/gate_action.c, called by
 * agent_gate_tool_call alone) includes this header: an action reaches the
 * desktop after the policy, the audit log and, where needed, the human
 * said yes, and by no other path. tests/safety/test_one_gate.py checks it
 * on the built objects: no other product object refers to
 * agent_computer_run, and only this runner and the human's own commands
 * (agent/cli/cmd_input.c) refer to os/'s input functions.
 */
#ifndef DESKHAND_AGENT_COMPUTER_RUN_H
#define DESKHAND_AGENT_COMPUTER_RUN_H

#include "agent/tools/computer.h"
#include "agent/tools/desk.h"
#include "agent/tools/proposal.h"

/* What running an action produced. */
typedef struct agent_computer_result {
	char *text;              /* for the model; malloc'd */
	bool is_error;
	agent_shot shot;         /* the screenshot answering it, or zoom's image; png NULL: none */
	bool screenshot_due;     /* its screenshot waits for the end of the batch */
	int pointer_x, pointer_y;/* where deskhand left the pointer (kill switch); -1: unknown */
	bool want_screenshot;    /* the runner's own */
} agent_computer_result;

/*
 * Performs the proposal's action through os/ (and vision/ for zoom and
 * find_text) and answers it with a screenshot (desk.h), or, when
 * `screenshot_later` (more calls of the batch follow), leaves that to one
 * at the batch's end. Fails only for errors of deskhand itself (lost
 * display); an action that cannot be done (text not found, typing
 * refused) is a result with is_error. Ownership: free the result with agent_computer_result_finish.
 */
bool agent_computer_run(agent_tools *t, const agent_proposal *p, bool screenshot_later,
                        agent_computer_result *res);
void agent_computer_result_finish(agent_computer_result *r);

#endif
