/*
 * agent/tools — the tools the model calls, the door of the room.
 *
 * Does: turns a tool call into one typed proposal the gate decides on
 * (proposal.h), through the dialect the call is in (dialect.h: deskhand's
 * own tools, Anthropic's toolset, OpenAI's actions, Gemini's functions,
 * Qwen's computer_use, UI-TARS's text actions, an MCP host's tools, each
 * translated by its own file: openai_actions.h, gemini_actions.h,
 * qwen_actions.h, uitars.h, mcp_actions.h, pure); the computer tool's
 * actions in one table (actions.h) and their strict parsing against the
 * last screenshot's view, their description and JSON form (computer.h); the desktop as the tools see it and the
 * model's screenshots, settled, captured once and encoded (desk.h); the
 * elements action and the element: ID targets, checked again before
 * acting (elements.h, private).
 * Owns: the action table, the dialect table, the view of the last
 * screenshot; the runner that turns a parsed action into os/ calls.
 * Side door: agent/tools/computer-run.h (the runner), for
 * agent/safety/gate_action.c alone.
 * May call: agent/util, base/, os/, vision/, executors/ (the languages),
 * cJSON.
 */
#ifndef DESKHAND_AGENT_TOOLS_H
#define DESKHAND_AGENT_TOOLS_H

#include "agent/tools/actions.h"
#include "agent/tools/computer.h"
#include "agent/tools/desk.h"
#include "agent/tools/dialect.h"
#include "agent/tools/gemini_actions.h"
#include "agent/tools/mcp_actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/proposal.h"
#include "agent/tools/qwen_actions.h"
#include "agent/tools/uitars.h"

#endif
