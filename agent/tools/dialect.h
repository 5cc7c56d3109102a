/*
 * agent/tools/dialect — the vocabularies a model calls the computer in, one
 * const struct each, as agent/llm's wire formats are one struct
 * provider_format each: deskhand's own tools (execute, computer, find_text,
 * elements, click_element), the members of Anthropic's computer toolset
 * (each action a tool of its own), OpenAI's computer actions, Gemini's
 * computer-use functions, Qwen's computer_use and UI-TARS's text actions.
 *
 * A dialect turns a call into deskhand's terms (agent_tools_propose, in
 * proposal.h, calls its propose), says which call ends the task, whether
 * its results always carry a screenshot and whether its calls carry the
 * vendor's safety checks. A toolset's name becomes its dialect once, where
 * a call is built (from the wire or from a conversation file, in
 * agent/llm), and is never compared again.
 *
 * Adding a dialect is one file (its translator and its struct) and one row
 * in the table in dialect.c.
 */
#ifndef DESKHAND_AGENT_TOOLS_DIALECT_H
#define DESKHAND_AGENT_TOOLS_DIALECT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct agent_dialect agent_dialect;
typedef struct agent_tools agent_tools;
typedef struct agent_proposal agent_proposal;

/* One tool call as the model made it: borrowed from the conversation. */
typedef struct agent_tool_call {
	const char *id;
	const char *name;
	const char *arguments;        /* the raw text the model sent */
	const cJSON *args;            /* NULL: the arguments are not a JSON object */
	const char *args_error;       /* why args is NULL */
	const agent_dialect *dialect; /* whose vocabulary; never NULL */
	const char *checks;           /* the vendor's safety checks (JSON array text); NULL: none */
} agent_tool_call;

struct agent_dialect {
	/* The toolset's name in conversation files, and Anthropic's
	 * toolset_name on the wire; NULL for deskhand's own tools. */
	const char *name;
	/*
	 * Fills p (already holding the call) with what the call proposes:
	 * an action (agent_tools_parse_action), code, or a refusal
	 * (agent_proposal_refuse) with the reason for the model.
	 */
	void (*propose)(agent_tools *t, const agent_tool_call *call, agent_proposal *p);
	/* Whether the call ends the task (*text: what the model said, malloc'd);
	 * NULL when the dialect has no such call. */
	bool (*final)(const agent_tool_call *call, char **text);
	/* Its actions have no screenshot of their own to ask for: every batch
	 * holding one is answered with a screenshot, whatever happened. */
	bool results_carry_screenshot;
	/* Each executed action is answered with the screenshot taken after it,
	 * not the batch once at its end: the model binds a screen to each call
	 * (Google's computer use: "if the action was executed, the client
	 * captures a new screenshot ... as part of the function_response"). */
	bool screenshot_each_action;
	/* Its calls travel in the message's text (no tool call on the wire). */
	bool in_text;
	/* Whose safety checks its calls carry ("OpenAI's safety check"); NULL: none. */
	const char *checks_name;
	/* What the model is told when the human declines one. */
	const char *checks_declined;
};

extern const agent_dialect agent_dialect_deskhand;
extern const agent_dialect agent_dialect_anthropic;
extern const agent_dialect agent_dialect_openai;
extern const agent_dialect agent_dialect_gemini;
extern const agent_dialect agent_dialect_qwen;
extern const agent_dialect agent_dialect_uitars;
/* An MCP host's tools (mcp_actions.h): named by no toolset, built only by agent/mcp. */
extern const agent_dialect agent_dialect_mcp;

/* The dialect named exactly `name` (a toolset's name); NULL for any other.
 * NULL names deskhand's own tools. */
const agent_dialect *agent_dialect_find(const char *name);

#endif
