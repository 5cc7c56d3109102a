/*
 * agent/llm/conversation — the conversation's insides, shared by its files:
 * conversation.c (memory), conv_prune.c (tokens, pruning), conv_file.c
 * (the file, screenshots, listing). Only those include this header.
 */
#ifndef DESKHAND_AGENT_CONV_INTERNAL_H
#define DESKHAND_AGENT_CONV_INTERNAL_H

#include <stdbool.h>

#include "agent/llm/conversation.h"

/* Sets conv_error() from a printf format. Always returns false. */
bool conv_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Empties conv_error(): a load that succeeds leaves no stale reason. */
void conv_error_clear(void);

/*
 * Whether p is an image path a conversation may hold: relative, inside
 * its directory ("STEM.images/NNNN.png"), of plain characters only.
 */
bool conv_image_path_safe(const char *p);

/* Lets go of the newest image's bytes (conv_file.c); the file stays. */
void conv_forget_newest(struct conv *c);

/* A message the human wrote (user text), not a tool result. */
bool conv_is_human(const struct conv_message *m);

#endif
