/*
 * agent/session — one agent session, the door of the room.
 *
 * Does: `deskhand [OPTIONS] [MESSAGE]` (loop.h: agent_main): the settings
 * (options.h: defaults, config file, flags), the system prompt and tool
 * declarations (prompt.h), deskhand's hands without the model for entry
 * points beside the loop (hands.h), the conversation loop between the user, the
 * model and the gate, magic commands, Ctrl-C; the session bus deskhand
 * runs with, started when the display has none (bus.h).
 * Owns: the session state (agent-internal.h): the provider, the
 * conversation, the audit log, the tools and the gate it gives them to.
 * May call: agent/llm, agent/safety, agent/tools (the desktop, the
 * proposals' calls, the action table for the prompt), agent/console,
 * agent/ui, agent/util, base/, executors/ (the languages, the sandbox
 * profile), os/ and vision/ (to open the desktop).
 */
#ifndef DESKHAND_AGENT_SESSION_H
#define DESKHAND_AGENT_SESSION_H

#include "agent/session/bus.h"
#include "agent/session/hands.h"
#include "agent/session/loop.h"
#include "agent/session/options.h"

#endif
