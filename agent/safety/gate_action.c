/*
 * agent/safety/gate — running an approved computer action through the
 * computer runner (agent/tools/computer-run.h, which only this file
 * includes). gate_run_action is called by agent_gate_tool_call alone
 * (tests/safety/test_one_gate.py).
 */
#include <stdlib.h>

#include "agent/safety/gate-internal.h"
#include "agent/tools/computer-run.h"

void gate_attach_screenshot(agent_gate *g, agent_tool_result *res)
{
	agent_tools_screenshot_for(g->tools, true, &res->shot, &res->text);
}

void gate_run_action(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	agent_computer_result r;
	agent_computer_run(g->tools, &p->p, g->batch_more, &r);
	if (p->kind == AGENT_POLICY_OS_INPUT && r.pointer_x >= 0) {
		g->last_px = r.pointer_x;
		g->last_py = r.pointer_y;
		g->have_last_pointer = true;
	}
	free(res->text);
	res->text = r.text;
	res->is_error = r.is_error;
	res->shot = r.shot;
	res->screenshot_due = r.screenshot_due;
	r.text = NULL;
	r.shot = (agent_shot){0};
	agent_computer_result_finish(&r);
}
