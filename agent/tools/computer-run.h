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
 * (agent/cmd_input.c) refer to os/'s input functions.
 */
#ifndef DESKHAND_AGENT_COMPUTER_RUN_H
#define DESKHAND_AGENT_COMPUTER_RUN_H

#include "agent/tools/computer.h"

/* What running an action produced. */
typedef struct agent_computer_result {
	char *text;              /* for the model; malloc'd */
	bool is_error;
	bool want_screenshot;    /* the loop attaches a settled screenshot */
	os_image *image;         /* zoom: the image to send instead (caller destroys) */
	vision_view image_view;  /* the view of `image` */
	int pointer_x, pointer_y;/* where deskhand left the pointer (kill switch) */
} agent_computer_result;

typedef struct agent_computer_ctx {
	os_display *display;
	const vision_view *view; /* the last screenshot's view */
	int max_w, max_h;        /* the model's image size limit (zoom) */
	volatile sig_atomic_t *cancel; /* set asynchronously by Ctrl-C: stop wait */
} agent_computer_ctx;

/*
 * Performs the action through os/ (and vision/ for zoom and find_text).
 * Fails only for errors of deskhand itself (lost display); an action that
 * cannot be done (text not found, typing refused) is a result with is_error.
 * Ownership: free the result with agent_computer_result_finish.
 */
bool agent_computer_run(const agent_computer_ctx *ctx, const agent_computer_action *a,
                        agent_computer_result *res);
void agent_computer_result_finish(agent_computer_result *r);

#endif
