/*
 * agent/tools — the tools the model calls, the door of the room.
 *
 * Does: the computer tool: its actions in one table (actions.h), their
 * strict parsing against the last screenshot's view and their description
 * and JSON form (computer.h); OpenAI's computer actions translated into
 * those (openai_actions.h, pure); Google Gemini's computer-use functions,
 * both sets, in its 0..999 coordinates (gemini_actions.h, pure); likewise
 * Qwen's computer_use function (qwen_actions.h) and UI-TARS's text
 * actions, parsed strictly (uitars.h). The elements action and the
 * element: ID targets, checked again before acting (elements.h, private).
 * Owns: the action table; the runner that turns a parsed action into os/
 * calls (computer-run.h), a side door that only the gate uses
 * (agent/safety/gate_action.c).
 * May call: agent/util, os/, vision/, cJSON.
 */
#ifndef DESKHAND_AGENT_TOOLS_H
#define DESKHAND_AGENT_TOOLS_H

#include "agent/tools/actions.h"
#include "agent/tools/computer.h"
#include "agent/tools/gemini_actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/qwen_actions.h"
#include "agent/tools/uitars.h"

#endif
