/*
 * agent/tools/dialect — the table of dialects (dialect.h), and the members
 * of Anthropic's computer toolset, in deskhand's vocabulary already.
 * deskhand's own tools are proposal.c's; the vendors' own dialects live
 * beside their translators (openai_actions.c, gemini_actions.c,
 * qwen_actions.c, uitars.c).
 */
#include <string.h>

#include "agent/tools/tools-internal.h"

/* Every dialect a call can name; deskhand's own has no name and comes first. */
static const agent_dialect *const dialects[] = {
	&agent_dialect_deskhand,
	&agent_dialect_anthropic,
	&agent_dialect_openai,
	&agent_dialect_gemini,
	&agent_dialect_qwen,
	&agent_dialect_uitars,
};

const agent_dialect *agent_dialect_find(const char *name)
{
	if (name == NULL)
		return &agent_dialect_deskhand;
	for (size_t i = 1; i < sizeof(dialects) / sizeof(dialects[0]); i++)
		if (strcmp(name, dialects[i]->name) == 0)
			return dialects[i];
	return NULL;
}

/* ---- Anthropic's computer toolset ----------------------------------------- */

/* Each member is an action of the one table, named by the tool. */
static void propose_anthropic(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	agent_tools_parse_action(t, call->name, call->args, p);
}

const agent_dialect agent_dialect_anthropic = {
	/* The toolset's name as deskhand declares it (provider_anthropic.c). */
	.name = "computer",
	.propose = propose_anthropic,
};
