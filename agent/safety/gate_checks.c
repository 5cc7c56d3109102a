/*
 * agent/safety/gate — the safety checks a model's vendor attaches to a call
 * (OpenAI's pending_safety_checks, Google's safety_decision
 * require_confirmation with its explanation as the message): each one put
 * to the human, whatever
 * --os-auto-approve says (policy rule 12), recorded in the audit log with
 * its answer, and only those the human approved acknowledged back.
 *
 * A declined check ends the call before any of its actions runs, and the
 * turn with it (g->end_turn): the vendor refuses a call answered with a
 * check left unacknowledged, so the model is told in words instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"

/* The vendor's text, shown safely (it comes from the network). */
static char *shown(const char *s)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_show_append(&b, s ? s : "", s ? strlen(s) : 0, AGENT_SHOW_STRICT);
	return agent_buf_steal(&b);
}

/* One check: asked (or refused with nobody to ask); true when the human said yes. */
static bool ask_check(agent_gate *g, const agent_tool_call *call, const cJSON *check,
                      char *why, size_t whylen)
{
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(check, "code"));
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(check, "message"));
	char *scode = shown(code ? code : "unknown"), *smsg = shown(msg ? msg : "");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "tool", call->name);
	cJSON_AddItemToObject(o, "vendor_safety_check", cJSON_Duplicate(check, 1));
	agent_gate_logged(g, agent_audit_proposed_action(g->audit, call->id, AGENT_POLICY_OS_INPUT, o));
	cJSON_Delete(o);
	agent_policy_input in = {
		.kind = AGENT_POLICY_OS_INPUT,
		.safe_mode = g->settings.safe_mode,
		.os_auto_approve = g->settings.os_auto_approve,
		.interactive = agent_term_answerable(g->term),
		.vendor_check = true,
	};
	agent_policy_decision d = agent_policy_decide(&in);
	const char *whose = call->dialect->checks_name ? call->dialect->checks_name
	                    : "The vendor's safety check";
	snprintf(why, whylen, "%s %s: %s", whose, scode, smsg);
	agent_term_warning(g->term, "%s", why);
	bool yes = false;
	if (d.verdict == AGENT_POLICY_ASK && !g->audit_broken) {
		agent_gate_logged(g, agent_audit_asked(g->audit, call->id, AGENT_POLICY_OS_INPUT, why));
		agent_term_answer a = agent_term_ask(g->term, call->id,
		                                     "Acknowledge this safety check and go on?", "yn");
		yes = a == AGENT_ANSWER_YES;
		agent_audit_answer_from(g->audit, agent_term_answered_from(g->term));
		if (yes)
			yes = agent_gate_logged(g, agent_audit_approved(g->audit, call->id,
			                                                AGENT_POLICY_OS_INPUT, true,
			                                                "the user acknowledged the check"));
		else
			agent_gate_logged(g, agent_audit_denied(g->audit, call->id, AGENT_POLICY_OS_INPUT,
			                                        a == AGENT_ANSWER_NONE,
			                                        "the user declined the safety check"));
	} else {
		agent_gate_logged(g, agent_audit_blocked(g->audit, call->id, AGENT_POLICY_OS_INPUT,
		                                         d.reason));
	}
	free(scode);
	free(smsg);
	return yes;
}

bool gate_vendor_checks(agent_gate *g, const agent_proposal *p, char **ack,
                        agent_tool_result *res)
{
	*ack = NULL;
	const agent_tool_call *call = p->call;
	const cJSON *checks = p->checks;
	if (!cJSON_IsArray(checks) || cJSON_GetArraySize(checks) == 0)
		return true;
	cJSON *acked = cJSON_CreateArray();
	bool all = true;
	char why[600] = "";
	const cJSON *c;
	cJSON_ArrayForEach(c, checks) {
		if (!ask_check(g, call, c, why, sizeof(why))) {
			all = false;
			break; /* one no is enough: the call does not run */
		}
		cJSON_AddItemToArray(acked, cJSON_Duplicate(c, 1));
	}
	if (all) {
		*ack = cJSON_PrintUnformatted(acked);
	} else {
		g->end_turn = true;
		const char *what = call->dialect->checks_declined ? call->dialect->checks_declined
		                   : "This call did not run";
		gate_result_text(res, true, "Not run: the user did not acknowledge %s. %s; wait for "
		                 "the user's next message.", why, what);
		res->ends_batch = true;
	}
	cJSON_Delete(acked);
	return all;
}
