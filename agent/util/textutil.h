/*
 * agent/util/textutil — small text helpers the agent's parts share: UTF-8
 * validation and repair (model text, tool output and file names are
 * untrusted bytes) and its safe showing on a terminal, a growable string
 * buffer, and base64 (images for the models, the terminal and MCP hosts).
 *
 * The door of agent/util, the room every other room may use. Owns: nothing
 * that outlives a call (a buffer is its holder's).
 * May call:
 * base/ (its UTF-8 decoder, clock, file reader and error text), nothing
 * else of deskhand's.
 */
#ifndef DESKHAND_AGENT_TEXTUTIL_H
#define DESKHAND_AGENT_TEXTUTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

/*
 * Length of the well-formed UTF-8 sequence at s (n > 0 bytes available):
 * 1..4, or 0 when it is invalid, truncated, overlong, a surrogate, beyond
 * U+10FFFF, or a NUL byte.
 */
size_t agent_utf8_seq(const char *s, size_t n);

/* Whether s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool agent_utf8_valid(const char *s, size_t n);
/*
 * Whether a string of the JSON text holds an escaped NUL (\u0000): cJSON
 * ends its strings there, so "click\u0000x" would read as "click". For
 * parsers of what strangers send, which refuse such text.
 */
bool agent_json_has_escaped_nul(const char *text, size_t len);

/*
 * Returns a NUL-terminated copy of s[0..n) with every invalid sequence and
 * every NUL byte replaced by U+FFFD. *out_len (if not NULL) receives the
 * length. Ownership: the caller frees. NULL only when out of memory.
 */
char *agent_utf8_sanitize(const char *s, size_t n, size_t *out_len);

/* A printf into fresh memory. Ownership: the caller frees; NULL when out of memory. */
char *agent_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/*
 * The one growable byte buffer: always NUL-terminated once it holds
 * anything (the NUL not counted in len). Out of memory is sticky: the
 * first failed growth sets oom, and every later write does nothing, so a
 * writer checks once at the end. A zeroed struct is an empty buffer.
 */
typedef struct agent_buf {
	char *data;
	size_t len, cap;
	bool oom;       /* an append failed; data holds what fit */
} agent_buf;

void agent_buf_init(agent_buf *b);
void agent_buf_finish(agent_buf *b);      /* frees; the buffer is empty again */
void agent_buf_reset(agent_buf *b);       /* length 0 and oom cleared, memory kept */
/* Cuts the text back to its first `len` bytes (len <= b->len). */
void agent_buf_truncate(agent_buf *b, size_t len);
/* Room for `extra` more bytes and the NUL; false (oom set) when it cannot be had. */
bool agent_buf_reserve(agent_buf *b, size_t extra);
/* The text, or "" when empty or after oom. */
const char *agent_buf_cstr(const agent_buf *b);
bool agent_buf_append(agent_buf *b, const char *s, size_t n);
bool agent_buf_puts(agent_buf *b, const char *s);
bool agent_buf_printf(agent_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hands the data over (never NULL unless out of memory); b is reset. */
char *agent_buf_steal(agent_buf *b);

/*
 * Text deskhand did not write (model text, code, its output, server replies,
 * window titles, file names) as it may reach a terminal: every character a
 * terminal would obey, or that draws nothing or reorders what follows,
 * becomes a visible mark. C0 controls and DEL show by name (⟨ESC⟩, ⟨CR⟩),
 * C1 controls, bidi controls, zero-width and other invisible characters by
 * code point (⟨U+202E⟩); an invalid byte becomes U+FFFD. So no escape
 * sequence of theirs reaches the terminal, and nothing in them is hidden.
 *   AGENT_SHOW_LINES   newline and tab stay themselves (else ⟨LF⟩, ⟨tab⟩)
 *   AGENT_SHOW_STRICT  text to be approved: also joiners, variation
 *                      selectors, spaces other than U+0020 and the marks'
 *                      own characters (⟨ ⟩ ⏎), which prose keeps
 */
enum {
	AGENT_SHOW_LINES = 1u << 0,
	AGENT_SHOW_STRICT = 1u << 1,
};

/* A stream of foreign text arriving in pieces split anywhere (a character
 * split between two pieces is held until it is whole). */
typedef struct agent_show {
	unsigned flags;
	char carry[4];
	size_t ncarry;
} agent_show;

void agent_show_init(agent_show *st, unsigned flags);
/* Appends the shown form of the piece s[0..n) to out. */
void agent_show_feed(agent_show *st, agent_buf *out, const char *s, size_t n);
/* The end of the stream: a held incomplete character shows as U+FFFD. */
void agent_show_end(agent_show *st, agent_buf *out);
/* A whole text at once: its shown form appended to out. */
void agent_show_append(agent_buf *out, const char *s, size_t n, unsigned flags);
/* The shown form of a string. Ownership: the caller frees; NULL when out of memory. */
char *agent_show_dup(const char *s, unsigned flags);

/*
 * Text a `type` action would type, for the human who approves it: its
 * length in characters (and lines), the whole text quoted, nothing cut, in
 * the strict shown form, besides a run of three or more spaces as
 * ⟨N spaces⟩ and a newline as ⏎ and a line break; a notice when its
 * letters mix scripts that have look-alikes (Latin and Cyrillic, ...).
 */
void agent_show_typed(agent_buf *out, const char *s, size_t n);

/* deskhand's own directories. */
typedef enum agent_dir_kind {
	AGENT_DIR_CONFIG,       /* $XDG_CONFIG_HOME/deskhand, else ~/.config/deskhand */
	AGENT_DIR_DATA,         /* $XDG_DATA_HOME/deskhand, else ~/.local/share/deskhand */
} agent_dir_kind;

/*
 * The one place that knows where deskhand keeps its files. A relative XDG
 * value is ignored (as the specification says), and so is a relative
 * $HOME. Writes the path into buf. False with errno ENOENT (no absolute
 * home) or ENAMETOOLONG. Creates nothing.
 */
bool agent_own_dir(agent_dir_kind kind, char *buf, size_t size);

/* mkdir -p with mode 0700 for what it creates; false with errno (ENOTDIR
 * when the path exists but is not a directory). */
bool agent_make_dirs(const char *path);

/* ---- base64 ------------------------------------------------------------ */

/* The base64 of n bytes into out: exactly (n + 2) / 3 * 4 characters, padded,
 * no NUL (the caller reserved them). */
void agent_base64_block(const unsigned char *in, size_t n, char *out);
/* The same, NUL-terminated in fresh memory; *out_len (may be NULL) its
 * length. Ownership: the caller frees; NULL when out of memory. */
char *agent_base64(const unsigned char *in, size_t n, size_t *out_len);

#endif
