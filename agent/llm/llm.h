/*
 * agent/llm — the model side, the door of the room.
 *
 * Does: one model turn over HTTP (provider.h: the vendors, their keys, the
 * request in the right wire format, the answer streamed or whole, retries,
 * cancellation) and the conversation it is about (conversation.h: messages
 * of content blocks, the atomic JSON file, screenshots beside it, pruning
 * to the context window), and which open model family a model name
 * belongs to (family.h: how it points and calls).
 * Owns: the conversation file and its PNGs; the only code that knows
 * libcurl, SSE and the wire formats (provider-internal.h, one file per
 * format, each a struct provider_format).
 * May call: agent/tools (the dialect table: a call's vocabulary, made a
 * dialect once where the call is built), agent/util, base/, cJSON, libcurl
 * (loaded at run time).
 */
#ifndef DESKHAND_AGENT_LLM_H
#define DESKHAND_AGENT_LLM_H

#include "agent/llm/conversation.h"
#include "agent/llm/family.h"
#include "agent/llm/provider.h"

#endif
