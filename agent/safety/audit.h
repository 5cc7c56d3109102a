/*
 * agent/safety/audit — the audit log: one JSON object per line, one file per
 * conversation, appended and never rewritten.
 *
 * Every proposed action leaves a trail: proposed, scanned (with the
 * findings), asked, approved / denied / blocked, executed (status and
 * duration). Each line carries "ts" (ISO-8601 UTC with milliseconds),
 * "event", "id" (the action's id) and "kind" (agent_policy_kind_name()).
 * The log is the evidence that nothing ran without a yes:
 * agent_audit_verify() checks it.
 *
 * Durability: the file is opened O_APPEND and created 0600; each line is
 * built in memory and written with a single write(), so a crash never
 * leaves half a line (a short write is undone with ftruncate); approved,
 * denied, blocked and session lines are followed by fsync(). A caller must
 * treat a failed approval record as a denial: run nothing it could not log.
 *
 * Error convention: functions return false or NULL and leave a reason in
 * agent_audit_error() (per thread). Nothing here prints or exits.
 */
#ifndef DESKHAND_AGENT_AUDIT_H
#define DESKHAND_AGENT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "agent/safety/policy.h"
#include "agent/safety/scan.h"

const char *agent_audit_error(void);

typedef struct agent_audit agent_audit;

/*
 * Opens (creating 0600) `path` for appending. The directory must exist; a
 * symbolic link is refused (O_NOFOLLOW). One writer per file: a short
 * write is undone by truncating to the size before it, which assumes no
 * other process appends meanwhile (several handles in one thread are fine).
 * Ownership: the caller closes it with agent_audit_close().
 */
agent_audit *agent_audit_open(const char *path);
/* Closes (after a final fsync). NULL is a no-op. */
void agent_audit_close(agent_audit *a);
/* The path given to agent_audit_open(); owned by a. */
const char *agent_audit_path(const agent_audit *a);

/*
 * The default log of a conversation:
 * $XDG_DATA_HOME/deskhand/audit/<conversation_id>.jsonl (an unset or
 * relative XDG_DATA_HOME means ~/.local/share), creating missing
 * directories with mode 0700. The id must be 1-128 characters of
 * [A-Za-z0-9._-] not starting with '.', so it can never name another path.
 * Ownership: the caller frees the returned string. NULL on error.
 */
char *agent_audit_default_path(const char *conversation_id);

/* ---- events (each writes one line; false if it could not) ------------- */

/* A record that could not be written must not pass unnoticed. */
#define AGENT_AUDIT_CHECKED __attribute__((warn_unused_result))

/* The settings in force when the conversation starts (fsync'd). */
AGENT_AUDIT_CHECKED bool agent_audit_session(agent_audit *a, const char *conversation_id,
                         const agent_policy_settings *s);
/* A setting changed by the user's magic command (e.g. "%auto_run true"). */
AGENT_AUDIT_CHECKED bool agent_audit_setting(agent_audit *a, const agent_policy_settings *s,
                         const char *command);
/*
 * A code block proposed by the model: its language and code (`len` bytes;
 * invalid UTF-8 and NULs are replaced by U+FFFD and the line gets
 * "code_lossy": true).
 */
AGENT_AUDIT_CHECKED bool agent_audit_proposed_code(agent_audit *a, const char *id, agent_policy_kind kind,
                               const char *language, const char *code, size_t len);
/* An OS action proposed by the model, as JSON (copied; NULL: {}). */
AGENT_AUDIT_CHECKED bool agent_audit_proposed_action(agent_audit *a, const char *id, agent_policy_kind kind,
                                 const cJSON *action);
/* The scan's findings (NULL or none: "findings": []). */
AGENT_AUDIT_CHECKED bool agent_audit_scanned(agent_audit *a, const char *id, agent_policy_kind kind,
                         const agent_scan_result *res);
/* A question was put to the user; reason is the policy's. */
AGENT_AUDIT_CHECKED bool agent_audit_asked(agent_audit *a, const char *id, agent_policy_kind kind,
                       const char *reason);
/*
 * Permission to run: by_user true for a human yes, false for the policy's
 * automatic run decision (RUN). fsync'd before it returns.
 */
AGENT_AUDIT_CHECKED bool agent_audit_approved(agent_audit *a, const char *id, agent_policy_kind kind,
                          bool by_user, const char *reason);
/* The user said no, or gave no answer ("by": "user" or "no-answer"). fsync'd. */
AGENT_AUDIT_CHECKED bool agent_audit_denied(agent_audit *a, const char *id, agent_policy_kind kind,
                        bool no_answer, const char *reason);
/* The policy blocked it (kill switch in a non-interactive run...). fsync'd. */
AGENT_AUDIT_CHECKED bool agent_audit_blocked(agent_audit *a, const char *id, agent_policy_kind kind,
                         const char *reason);
/* The action ran: exit status (0 ok), wall time, optional error text. */
AGENT_AUDIT_CHECKED bool agent_audit_executed(agent_audit *a, const char *id, agent_policy_kind kind,
                          int status, long duration_ms, const char *error);

/* ---- verification ------------------------------------------------------ */

typedef struct agent_audit_report {
	size_t lines;
	size_t executed;      /* executed lines checked */
	size_t by_user;       /* of those, approved by a human */
	size_t by_policy;     /* of those, approved by the policy */
	int bad_line;         /* first offending line (1-based), 0 if none */
	char problem[256];    /* what is wrong there; "" if nothing */
} agent_audit_report;

/*
 * Checks a log's text (pure: no I/O). Every line must be a complete JSON
 * object ending in '\n' with a known "event", a "ts" and (except session
 * and setting lines) a string "id" and a known "kind". Every "executed"
 * line must come after an "approved" line for the same id, with no
 * "denied" or "blocked" line for that id before it, and each approval
 * allows one execution. Returns true when the log passes; false with
 * bad_line and problem set otherwise.
 */
bool agent_audit_verify(const char *text, size_t len, agent_audit_report *rep);
/* agent_audit_verify() on a file (false with problem set if unreadable). */
bool agent_audit_verify_file(const char *path, agent_audit_report *rep);

#endif
