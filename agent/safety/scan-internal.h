/*
 * agent/safety/scan — the scanner's insides, shared by its files: scan.c
 * names the languages and severities and runs the rules over normalised
 * text; scan_normalise.c writes that text, with the lexer of each language
 * (scan_shell.c, scan_python.c, scan_js.c) feeding it one character at a
 * time; scan_rules.c loads and keeps the rules. Only the scanner's files
 * include this header; everyone else includes scan.h.
 */
#ifndef DESKHAND_AGENT_SCAN_INTERNAL_H
#define DESKHAND_AGENT_SCAN_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/scan.h"

/* Sets agent_scan_error() from a printf format. Always returns false. */
bool scan_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- normalised text (scan_normalise.c) -------------------------------- */

/*
 * The normalised text and, for every byte of it, the original line: kept
 * as break points (offset where a new original line begins in the output),
 * so memory grows with lines, not bytes.
 */
struct norm {
	char *text;
	size_t len, cap;
	size_t *brk_off;
	int *brk_line;
	size_t nbrk, brk_cap;
	bool pending_blank;
	bool at_line_start;
	bool oom;
};

/* A blank within a line: newlines are not, they end lines. */
static inline bool scan_is_hblank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool scan_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Emits one character of normalised output (blank runs become a space,
 * blank lines vanish, lines are trimmed). */
void scan_emit(struct norm *n, unsigned char c, int line);

/* The last non-blank character emitted, 0 at the start of a line. */
static inline char scan_last_emitted(const struct norm *n)
{
	if (n->len == 0 || n->at_line_start)
		return 0;
	return n->text[n->len - 1];
}

/* The original line of byte `off` of the normalised text. */
int scan_norm_line_at(const struct norm *n, size_t off);
/* Frees what n holds and empties it. */
void scan_norm_free(struct norm *n);

/*
 * Normalises `len` bytes of `code` into *n (which it initialises). False
 * with the reason in agent_scan_error() (an unknown language, out of
 * memory; *n is then empty). Ownership: the caller frees n with
 * scan_norm_free().
 */
bool scan_normalize(agent_scan_lang lang, const char *code, size_t len, struct norm *n);

/* The lexers, one per language: each writes s[0, len) into n through scan_emit. */
void scan_normalize_shell(struct norm *n, const unsigned char *s, size_t len);
void scan_normalize_python(struct norm *n, const unsigned char *s, size_t len);
void scan_normalize_js(struct norm *n, const unsigned char *s, size_t len);

/* ---- rules (scan_rules.c) ---------------------------------------------- */

struct pattern_list {
	pcre2_code **v;
	size_t n;
};

enum scope { SCOPE_LINE, SCOPE_FILE };

struct example {
	agent_scan_lang lang;
	char *code;
};

struct rule {
	char *id;
	unsigned langs; /* bit per agent_scan_lang */
	agent_scan_lang first_lang;
	agent_scan_severity severity;
	char *message;
	enum scope scope;
	struct pattern_list patterns, unless, unless_line, requires;
	struct example *flag, *clean;
	size_t n_flag, n_clean;
	bool disabled; /* only while loading: removes the rule of that id */
};

struct agent_scan_rules {
	struct rule **v;
	size_t n, cap;
	char *origin;
};

#endif
