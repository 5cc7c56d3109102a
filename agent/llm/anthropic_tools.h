/*
 * agent/llm/anthropic_tools — which computer tool an Anthropic model takes,
 * in one table: the GA toolset (computer_toolset_20260801) for the 5.x
 * generation and Opus 4.8, computer_20251124 (beta header, enable_zoom) for
 * Opus 4.5-4.7 and Sonnet 4.6, computer_20250124 (beta header) for Sonnet
 * 4.5, Haiku 4.5 and Opus 4.1; an unknown model gets the newest. Also what
 * a model does with thinking (asked for with display "summarized"; bound to
 * the conversation on the 5.5 generation). Pure lookups: private to
 * agent/llm (provider_anthropic.c) and its tests, but for the versions and
 * their names, which are the --computer-tool setting (provider.h's
 * provider_settings holds one).
 */
#ifndef DESKHAND_AGENT_ANTHROPIC_TOOLS_H
#define DESKHAND_AGENT_ANTHROPIC_TOOLS_H

#include <stdbool.h>

/*
 * Newest first, the order --computer-tool lists them in: "the next older
 * version" is one more. AUTO (0) is no version: the model's, from the table.
 */
enum anthropic_tool {
	ANTHROPIC_TOOL_AUTO = 0,
	ANTHROPIC_TOOL_TOOLSET = 1,
	ANTHROPIC_TOOL_20251124 = 2,
	ANTHROPIC_TOOL_20250124 = 3,
	ANTHROPIC_TOOL_COUNT
};
#define ANTHROPIC_TOOL_NEWEST ANTHROPIC_TOOL_TOOLSET

/* "toolset", "20251124", "20250124" (the --computer-tool values), by the
 * version; AUTO has none. The one table of these names. */
extern const char *const anthropic_tool_names[ANTHROPIC_TOOL_COUNT];

struct anthropic_model {
	enum anthropic_tool tool;
	bool known;          /* the model is in the table */
	bool thinks;         /* send thinking {type: adaptive, display: summarized} */
	bool binds_thinking; /* its thinking blocks are bound to the history before them */
};

/*
 * What the table says of `model` (an id such as "claude-sonnet-4-5" or
 * "claude-sonnet-4-5-20250929"; NULL or unknown: the newest tool, no
 * thinking asked for, known false).
 */
struct anthropic_model anthropic_model_lookup(const char *model);

/* A --computer-tool value -> the version. False for anything else. */
bool anthropic_tool_parse(const char *name, enum anthropic_tool *out);
/* The version's --computer-tool value; "?" for AUTO and anything else. */
const char *anthropic_tool_name(enum anthropic_tool t);
/* The tools[] type: "computer_toolset_20260801", "computer_20251124", ... */
const char *anthropic_tool_type(enum anthropic_tool t);
/* Its anthropic-beta value; NULL for the toolset (the GA tool takes none). */
const char *anthropic_tool_beta(enum anthropic_tool t);
/* The next older version; false when t is the oldest. */
bool anthropic_tool_older(enum anthropic_tool t, enum anthropic_tool *out);
/*
 * Whether an HTTP 400's message refuses tool type t ("'claude-x' does not
 * support tool types: computer_toolset_20260801. ...").
 */
bool anthropic_tool_refused(enum anthropic_tool t, const char *message);

#endif
