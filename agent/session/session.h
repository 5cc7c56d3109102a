/*
 * agent/session — one agent session, the door of the room.
 *
 * Does: `deskhand [OPTIONS] [MESSAGE]` (loop.h: agent_main): the settings
 * (options.h: defaults, config file, flags), the system prompt and tool
 * declarations (prompt.h), the conversation loop between the user, the
 * model and the gate, magic commands, Ctrl-C; the session bus deskhand
 * runs with, started when the display has none (bus.h).
 * Owns: the session state (agent-internal.h), which holds the gate's.
 * May call: agent/llm, agent/safety, agent/tools (the action table, for the
 * prompt), agent/ui, agent/util, os/ and vision/ (to open the desktop).
 */
#ifndef DESKHAND_AGENT_SESSION_H
#define DESKHAND_AGENT_SESSION_H

#include "agent/session/bus.h"
#include "agent/session/loop.h"
#include "agent/session/options.h"

#endif
