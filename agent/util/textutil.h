/*
 * agent/util/textutil — small text helpers the agent's parts share: UTF-8
 * validation and repair (model text, tool output and file names are
 * untrusted bytes), and a growable string buffer.
 *
 * The door of agent/util, the room every other room may use. May call:
 * os/'s UTF-8 decoder, nothing else of deskhand's.
 */
#ifndef DESKHAND_AGENT_TEXTUTIL_H
#define DESKHAND_AGENT_TEXTUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Length of the well-formed UTF-8 sequence at s (n > 0 bytes available):
 * 1..4, or 0 when it is invalid, truncated, overlong, a surrogate, beyond
 * U+10FFFF, or a NUL byte.
 */
size_t agent_utf8_seq(const char *s, size_t n);

/* Whether s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool agent_utf8_valid(const char *s, size_t n);

/*
 * Returns a NUL-terminated copy of s[0..n) with every invalid sequence and
 * every NUL byte replaced by U+FFFD. *out_len (if not NULL) receives the
 * length. Ownership: the caller frees. NULL only when out of memory.
 */
char *agent_utf8_sanitize(const char *s, size_t n, size_t *out_len);

/* A printf into fresh memory. Ownership: the caller frees; NULL when out of memory. */
char *agent_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A growable, always NUL-terminated byte buffer. */
typedef struct agent_buf {
	char *data;
	size_t len, cap;
	bool oom;       /* an append failed; data holds what fit */
} agent_buf;

void agent_buf_init(agent_buf *b);
void agent_buf_finish(agent_buf *b);
bool agent_buf_append(agent_buf *b, const char *s, size_t n);
bool agent_buf_puts(agent_buf *b, const char *s);
bool agent_buf_printf(agent_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hands the data over (never NULL unless out of memory); b is reset. */
char *agent_buf_steal(agent_buf *b);

#endif
