/*
 * agent/safety/audit — the audit log's insides, shared by its two files:
 * audit.c opens logs and writes lines, audit_verify.c checks a log line by
 * line and against its head. Only they include this header; everyone else
 * includes audit.h.
 */
#ifndef DESKHAND_AGENT_AUDIT_INTERNAL_H
#define DESKHAND_AGENT_AUDIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/audit.h"

/* The chain value before a log's first line. */
extern const char audit_seed[AGENT_AUDIT_HASH_HEX + 1];

/* The largest log that is read (to verify it, to extend it). */
enum { AUDIT_MAX_SIZE = 1 << 30 };

/*
 * The head file's text (NULL with errno ENOENT when there is none).
 * Ownership: the caller frees it.
 */
char *audit_head_read(const char *head_path, size_t *len);

/*
 * Remembers the conversation record the log now holds (NULL path: none),
 * for agent_audit_conversation_check. False: out of memory (reason set).
 */
bool audit_note_conversation(agent_audit *a, const char *path, const char *sha);
/* A line other than a conversation record was read after it (the record no longer ends the log). */
void audit_note_line(agent_audit *a);

/*
 * Verifies a log's text and, when have_head, its end against the head
 * file's text. With `learn`, the last conversation record seen is noted
 * in it (audit_note_conversation). False with rep saying why.
 */
bool audit_verify_log(const char *text, size_t len, const char *head, size_t head_len,
                      bool have_head, agent_audit_report *rep, agent_audit *learn);

#endif
