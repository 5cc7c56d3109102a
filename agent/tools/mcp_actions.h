/*
 * agent/tools/mcp_actions — the tools deskhand offers an MCP host, in one
 * table: each tool's name (deskhand's own command names: screenshot,
 * click, drag, scroll, move, key, type, wait, find_text, elements,
 * click_element, windows, execute), its input schema, output schema and
 * the hints a host reads, and its translation into deskhand's terms. The
 * host's arguments become the arguments of one action of the one table
 * (actions.h), which agent_computer_parse then validates against the last
 * screenshot's view like any model's; execute, find_text, elements and
 * click_element are deskhand's own tools under the same names.
 *
 * Pure, like the vendors' translators: no I/O. agent/mcp lists the table
 * and builds calls of the dialect; the gate decides each one.
 *
 * The mapping:
 *   screenshot{}                          screenshot
 *   click{x?,y?,button?,count?,modifiers?} left|right|middle|back|forward
 *                                         _click; left with count 2 or 3:
 *                                         double_click, triple_click
 *   drag{x1,y1,x2,y2,modifiers?}          left_click_drag
 *   move{x,y}                             mouse_move
 *   scroll{direction,amount?,x?,y?}       scroll (amount: wheel clicks, 3)
 *   key{keys,repeat?}                     key
 *   type{text,x?,y?,clear?}               type
 *   wait{seconds}                         wait
 *   windows{}                             windows
 */
#ifndef DESKHAND_AGENT_MCP_ACTIONS_H
#define DESKHAND_AGENT_MCP_ACTIONS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct agent_mcp_tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;   /* JSON Schema text of its arguments */
	const char *output_schema;  /* of its structured result; NULL: none */
	bool read_only;             /* it only looks (the host's readOnlyHint) */
	bool open_world;            /* it reaches past deskhand: the desktop, the programs */
	bool own;                   /* deskhand's own tool of that name, passed on as it is */
} agent_mcp_tool;

/* Every tool, in the order a host lists them. */
extern const agent_mcp_tool agent_mcp_tools[];
extern const size_t agent_mcp_tool_count;

/* The tool named exactly `name`; NULL for any other. */
const agent_mcp_tool *agent_mcp_tool_find(const char *name);

/*
 * The arguments of a computer action (deskhand's vocabulary, with
 * "action") for MCP tool `name` called with `args`; NULL with the reason
 * in err for arguments the tool does not take, and for tools that are not
 * computer actions (execute, find_text, elements, click_element: see
 * agent_mcp_own_tool). Ownership: the caller deletes the object.
 */
cJSON *agent_mcp_translate(const char *name, const cJSON *args, char *err, size_t errlen);

/* Whether `name` is one of deskhand's own tools, passed on as it is. */
bool agent_mcp_own_tool(const char *name);

#endif
