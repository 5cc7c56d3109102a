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
 * Once a line could not be written (disk full, I/O error, ...) the handle
 * writes no more: every later record fails with the first one's reason, so
 * no line ever follows one that is missing.
 *
 * Tamper evidence: the lines form a hash chain. Each line carries "prev",
 * the SHA-256 (64 lowercase hex digits) of the previous line's bytes with
 * its newline; the first line's "prev" is 64 zeros. So changing, removing,
 * inserting or reordering any line breaks the chain at the next line. The
 * end of the log, which no later line vouches for, is held by a head file
 * beside it, PATH.head: {"lines":N,"last":"<hash of line N>"}, rewritten
 * in place (one write, then its length) after every line, so a cut-off
 * end, a changed last line and lines added after the end are seen too. A line whose head could
 * not be written is taken back: a log deskhand wrote always matches it,
 * except after a crash between the two writes (reported as a line after
 * the recorded end).
 *
 * Limits, stated plainly: the chain is keyless. Whoever can rewrite the
 * whole log and its head can recompute every hash, and an empty log
 * without a head looks new. What stands against that is the data
 * directory being out of the sandbox's reach (not visible in standard
 * and strict); the chain makes any edit that does not redo all of it
 * evident, and tells which line breaks it.
 *
 * Appending to a log that exists (a resumed conversation) first checks it
 * against its head; a log that fails is kept untouched as evidence and
 * never extended: the next of PATH.2.jsonl, PATH.3.jsonl ... that verifies
 * or is new takes the lines, and agent_audit_set_aside() says why.
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

/* Hex digits of a chain value (SHA-256). */
#define AGENT_AUDIT_HASH_HEX 64

/*
 * Opens (creating 0600, with its head) `path` for appending, after checking
 * what it holds against its head (see "Appending" above: a log that fails
 * is set aside, not extended). The directory must exist; a symbolic link
 * is refused (O_NOFOLLOW). Writers take a lock (flock) around each line;
 * a handle that finds the log grown or shrunk since its own last line
 * reads and verifies it again before chaining to it, and refuses to write
 * if it no longer verifies. Ownership: the caller closes it with
 * agent_audit_close().
 */
agent_audit *agent_audit_open(const char *path);
/*
 * NULL, or why the log at the path given to agent_audit_open() was not
 * extended ("PATH: line N: problem"); agent_audit_path() then names the
 * log in use, and the session line records this too. Owned by a.
 */
const char *agent_audit_set_aside(const agent_audit *a);
/* Whether that log's only fault is the end a crash leaves (agent_audit_report.unconfirmed). */
bool agent_audit_set_aside_crashed(const agent_audit *a);
/* SHA-256 of `len` bytes in hex: a line's chain value (with its newline), a file's digest. */
void agent_audit_hash(const char *line, size_t len, char hex[AGENT_AUDIT_HASH_HEX + 1]);
/* Closes (after a final fsync). NULL is a no-op. */
void agent_audit_close(agent_audit *a);
/* The path given to agent_audit_open(); owned by a. */
const char *agent_audit_path(const agent_audit *a);
/* The head file beside the log (PATH.head); owned by a. */
const char *agent_audit_head_path(const agent_audit *a);

/*
 * The default log of a conversation:
 * $XDG_DATA_HOME/deskhand/audit/<conversation_id>.jsonl (an unset or
 * relative XDG_DATA_HOME means ~/.local/share), creating missing
 * directories with mode 0700. The id must be 1-128 characters of
 * [A-Za-z0-9._-] not starting with '.', so it can never name another path.
 * Ownership: the caller frees the returned string. NULL on error.
 */
char *agent_audit_default_path(const char *conversation_id);
/* That directory, without creating it. Ownership: the caller frees. NULL on error. */
char *agent_audit_default_dir(void);

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

/*
 * The conversation file as deskhand is about to save it: its path and the
 * SHA-256 of the bytes that will replace it (fsync'd, before the rename:
 * conv_save_witnessed). A resumed conversation is compared with the last
 * such record for its path, so a message inserted into the file since
 * shows (as strong as the log itself: see "Limits").
 */
AGENT_AUDIT_CHECKED bool agent_audit_conversation(agent_audit *a, const char *path,
                                                  const char *sha256_hex);
typedef enum {
	AGENT_AUDIT_CONV_UNRECORDED, /* the log has no record of this path */
	AGENT_AUDIT_CONV_VOUCHED,    /* the file is what the last record says */
	AGENT_AUDIT_CONV_UNSAVED,    /* it is what the record before said, and that last
	                                record ended the log: deskhand stopped between
	                                the record and the save (a crash, kill -9) */
	AGENT_AUDIT_CONV_CHANGED,    /* neither: the file was changed since */
} agent_audit_conv;
/* The file at `path` (its real path) with that SHA-256 against the log's records as opened. */
agent_audit_conv agent_audit_conversation_check(const agent_audit *a, const char *path,
                                                const char *sha256_hex);

/*
 * Each line, as written (with its newline, `len` bytes), goes to `fn` right
 * after it is on disk, from the writing thread: the console's timeline is
 * made of the same records. NULL removes it.
 */
typedef void (*agent_audit_listener)(void *ctx, const char *line, size_t len);
void agent_audit_set_listener(agent_audit *a, agent_audit_listener fn, void *ctx);
/*
 * Where the human's answers come from ("terminal", "console:approver"):
 * approved/denied lines by the user carry it as "from" until changed
 * ("" or NULL: not said).
 */
void agent_audit_answer_from(agent_audit *a, const char *from);
/*
 * Who proposes what follows, when it is not the session's own model: the
 * MCP client as it names itself ("mcp:NAME VERSION", self-reported, for
 * the record only); proposed lines carry it as "proposer" until changed
 * ("" or NULL: the model).
 */
void agent_audit_set_proposer(agent_audit *a, const char *who);

/* ---- verification ------------------------------------------------------ */

typedef struct agent_audit_report {
	size_t lines;
	size_t executed;      /* executed lines checked */
	size_t by_user;       /* of those, approved by a human */
	size_t by_policy;     /* of those, approved by the policy */
	int bad_line;         /* first offending line (1-based); 0 if none, or if the
	                         problem is the head file or reading the log */
	char problem[256];    /* what is wrong there; "" if nothing */
	int unconfirmed;      /* when the only fault is the end a crash leaves (one whole
	                         line after the head's recorded end, or one cut short
	                         there): that line (== bad_line); lines before it verify.
	                         0 otherwise */
	char last[AGENT_AUDIT_HASH_HEX + 1]; /* when it passes: the chain value after the
	                                        last line (the next line's "prev") */
} agent_audit_report;

/*
 * Checks a log's text (pure: no I/O). Every line must be a complete JSON
 * object ending in '\n' with a "prev" that continues the chain, a known
 * "event", a "ts" and (except session, setting and conversation lines) a
 * string "id" and a known "kind"; a conversation line has a string "path"
 * and a "sha256". Every "executed" line must come after an "approved"
 * line for the same id, with no "denied" or "blocked" line for that id
 * before it, and each approval allows one execution. Returns true when
 * the log passes; false with bad_line and problem set otherwise.
 *
 * bad_line for a broken chain is the first line that does not follow the
 * line before it: a changed line k shows at k+1, removed lines at the line
 * after the gap, swapped lines at the first of them. Inserted lines are
 * named themselves when the line after them follows an earlier line. The
 * end is not checked here (see agent_audit_verify_head).
 */
bool agent_audit_verify(const char *text, size_t len, agent_audit_report *rep);
/*
 * agent_audit_verify() and the end against the head file's text (NULL: no
 * head file, itself a problem): lines cut off (bad_line: the first missing
 * one), the last line changed (bad_line: it), lines after the recorded end
 * (bad_line: the first of them), a malformed head (bad_line 0).
 *
 * A crash or kill -9 can stop deskhand between a line and its head, or
 * (in theory) in the middle of a line's one write(): the log then holds
 * exactly one line, whole or cut short, past the line the head records,
 * and everything up to the head verifies. That end is still a failure
 * (no head vouches for the line, and another writer appending one line
 * looks the same), but it is told apart: `unconfirmed` names the line and
 * the problem says what a crash leaves. Two or more lines past the head,
 * or a torn line anywhere else, are never a crash's.
 */
bool agent_audit_verify_head(const char *text, size_t len, const char *head, size_t head_len,
                             agent_audit_report *rep);
/* agent_audit_verify_head() on a file and PATH.head (false with problem set if unreadable). */
bool agent_audit_verify_file(const char *path, agent_audit_report *rep);

#endif
