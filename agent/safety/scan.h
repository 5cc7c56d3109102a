/*
 * agent/safety/scan — the built-in code scanner: a rule engine for shell, python
 * and javascript whose rules live in a JSON file users can extend.
 *
 * Before matching, the code is normalised per language: line
 * continuations and (for python and javascript) lines inside open brackets
 * are joined into one logical line, comments outside strings are dropped,
 * runs of blanks become one space, and every byte keeps the number of the
 * original line it came from, so findings name lines of the code as
 * written. String contents are kept: a shell command inside os.system("...")
 * is matched like shell.
 *
 * Rules are PCRE2 regular expressions (see agent/safety/rules/scan-rules.json
 * for the format). A rule reports at most one finding per original line. A
 * python string that is a whole statement (a docstring) does nothing and is
 * dropped; shell quote removal is applied (r''m and r\m are rm).
 *
 * Error convention: functions that can fail return NULL or false and leave
 * a reason in agent_scan_error() (per thread, valid until the next
 * agent_scan_ call). Nothing here prints or exits.
 */
#ifndef DESKHAND_AGENT_SCAN_H
#define DESKHAND_AGENT_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* The reason for the last failure on this thread; never NULL. */
const char *agent_scan_error(void);

typedef enum agent_scan_lang {
	AGENT_SCAN_SHELL = 0,
	AGENT_SCAN_PYTHON,
	AGENT_SCAN_JAVASCRIPT,
	AGENT_SCAN_LANG_COUNT
} agent_scan_lang;

/* "shell", "python", "javascript"; "unknown" otherwise. */
const char *agent_scan_lang_name(agent_scan_lang lang);
/*
 * Parses a language name: shell, sh, bash; python, py, python3;
 * javascript, js, node. False for anything else (or NULL).
 */
bool agent_scan_lang_parse(const char *name, agent_scan_lang *out);
/*
 * Guesses the language from a file name's extension (.sh .bash; .py;
 * .js .mjs .cjs) or, failing that, from a "#!" first line naming sh, bash,
 * dash, zsh, ksh, python*, node or nodejs (directly or through env).
 * `path` and `code` may be NULL. False when neither tells.
 */
bool agent_scan_lang_guess(const char *path, const char *code, size_t len,
                           agent_scan_lang *out);

typedef enum agent_scan_severity {
	AGENT_SCAN_NONE = 0, /* no findings */
	AGENT_SCAN_LOW,
	AGENT_SCAN_MEDIUM,
	AGENT_SCAN_HIGH,
	AGENT_SCAN_CRITICAL,
	AGENT_SCAN_SEVERITY_COUNT
} agent_scan_severity;

/* "none", "low", "medium", "high", "critical"; "unknown" otherwise. */
const char *agent_scan_severity_name(agent_scan_severity s);
/* Parses "low".."critical" (not "none"). False otherwise. */
bool agent_scan_severity_parse(const char *s, agent_scan_severity *out);

/* ---- rule sets --------------------------------------------------------- */

typedef struct agent_scan_rules agent_scan_rules;

/* Inputs larger than this are refused by agent_scan() and rule loading. */
#define AGENT_SCAN_MAX_INPUT (32u << 20)

/*
 * An empty rule set, to fill with agent_scan_rules_add_*.
 * Ownership: the caller destroys it with agent_scan_rules_destroy().
 */
agent_scan_rules *agent_scan_rules_create(void);
void agent_scan_rules_destroy(agent_scan_rules *r); /* NULL is a no-op */

/*
 * Adds the rules of a JSON document to r. `name` names the document in
 * error messages (a file name, "built-in"). A rule whose id already exists
 * replaces it; a rule {"id": ..., "disabled": true} removes it. On any error
 * (malformed JSON with line and column, a missing or mistyped field, an
 * unknown key, a pattern that does not compile, a duplicate id within the
 * document, disabling an unknown id) nothing is added and the error names
 * `name`, the rule and the problem.
 */
bool agent_scan_rules_add_json(agent_scan_rules *r, const char *json, size_t len,
                               const char *name);
/* agent_scan_rules_add_json on a file's contents; names the file in errors. */
bool agent_scan_rules_add_file(agent_scan_rules *r, const char *path);
/* The rules compiled into the binary (agent/safety/rules/scan-rules.json at
 * build time). Never fails short of memory exhaustion (then NULL). Caller
 * destroys. */
agent_scan_rules *agent_scan_rules_builtin(void);

/*
 * The rule set deskhand uses. The base set is the first of: `explicit_path`
 * (a --rules FILE; replaces the others), the installed
 * DESKHAND_DATADIR/scan-rules.json, the compiled-in copy. The source tree is
 * never read. The installed file is used only when it is owned by root or
 * the user and writable by nobody else (otherwise the compiled-in copy is
 * used). Then, when `user_extensions` is true, the user's
 * $XDG_CONFIG_HOME/deskhand/scan-rules.json (default ~/.config/...), if it
 * exists, is added on top: it may add rules, replace rules by id and
 * disable them. A malformed or unsafe (writable by others) user file is an
 * error, never skipped. Caller destroys.
 */
agent_scan_rules *agent_scan_rules_load(const char *explicit_path, bool user_extensions);

size_t agent_scan_rules_count(const agent_scan_rules *r);
/* Where the rules came from, e.g. "built-in + /home/u/.config/deskhand/
 * scan-rules.json"; owned by r. */
const char *agent_scan_rules_origin(const agent_scan_rules *r);

/*
 * Checks every rule's own examples ("examples": {"flag": [...], "clean":
 * [...]}): each "flag" snippet must give a finding of that rule and each
 * "clean" snippet none of it, for each of the rule's languages. Returns
 * false at the first failure with the rule and snippet in
 * agent_scan_error(). Stores how many examples were checked in *checked
 * when not NULL.
 */
bool agent_scan_rules_check_examples(const agent_scan_rules *r, size_t *checked);

/* ---- scanning ---------------------------------------------------------- */

typedef struct agent_scan_finding {
	const char *rule_id;  /* owned by the result */
	agent_scan_severity severity;
	int line;             /* 1-based line of the scanned code */
	const char *message;  /* owned by the result */
	/* The matched text, normalised, at most ~120 bytes, valid UTF-8
	 * without control characters; owned by the result. */
	const char *excerpt;
} agent_scan_finding;

typedef struct agent_scan_result {
	agent_scan_finding *findings; /* by line, then severity (worst first) */
	size_t count;
	agent_scan_severity worst;    /* AGENT_SCAN_NONE when count == 0 */
} agent_scan_result;

/*
 * Scans `len` bytes of `code` (any bytes: invalid UTF-8 and NULs are
 * scanned as they are) with the rules for `lang`. Nothing silently passes
 * for lack of resources: a rule whose pattern exceeds PCRE2's match limits
 * on this input gives a medium finding "scanner.limit" naming the rule, and
 * a scan still running after 20 seconds (only pathological rules or inputs
 * get near: 5 MB of ordinary code takes well under a second) stops with a
 * medium finding "scanner.timeout". Fails (NULL) only
 * for an unknown language, an input over AGENT_SCAN_MAX_INPUT or memory
 * exhaustion. The result does not refer to r or code afterwards.
 * Ownership: the caller destroys it with agent_scan_result_destroy().
 */
agent_scan_result *agent_scan(const agent_scan_rules *r, agent_scan_lang lang,
                              const char *code, size_t len);
void agent_scan_result_destroy(agent_scan_result *res); /* NULL: no-op */

/*
 * The normalised text the rules see, for debugging rules (deskhand scan
 * --show-normalized). Ownership: the caller frees it. NULL on failure.
 */
char *agent_scan_normalize(agent_scan_lang lang, const char *code, size_t len,
                           size_t *out_len);

#endif
