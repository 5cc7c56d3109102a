/*
 * agent/util/show — foreign text made safe and visible for a terminal; see
 * textutil.h. A terminal obeys control characters and escape sequences, and
 * Unicode has characters that draw nothing or reorder what follows: text
 * deskhand did not write could hide a line of the code the human approves,
 * retitle the terminal or write the clipboard. Each such character becomes
 * a visible mark, so what the human reads is what is there.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent/util/textutil.h"
#include "base/base.h"

static const char *const c0_names[32] = {
	"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "tab", "LF", "VT",
	"FF", "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB",
	"CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
};

/* Characters that draw nothing, reorder text or stand for a line break. */
static bool invisible(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{0x80, 0x9F},       /* C1 controls: 0x9B is a CSI to many terminals */
		{0xAD, 0xAD},       /* soft hyphen */
		{0x34F, 0x34F},     /* combining grapheme joiner */
		{0x61C, 0x61C},     /* Arabic letter mark */
		{0x115F, 0x1160},   /* Hangul fillers */
		{0x17B4, 0x17B5},
		{0x180B, 0x180F},   /* Mongolian selectors and vowel separator */
		{0x200B, 0x200C},   /* zero-width space and non-joiner */
		{0x200E, 0x200F},   /* LRM, RLM */
		{0x2028, 0x202E},   /* line/paragraph separators, bidi embeddings */
		{0x2060, 0x2064},   /* word joiner, invisible operators */
		{0x2066, 0x206F},   /* bidi isolates, deprecated format characters */
		{0x3164, 0x3164},
		{0xFEFF, 0xFEFF},   /* zero-width no-break space */
		{0xFFA0, 0xFFA0},
		{0xFFF9, 0xFFFB},   /* interlinear annotation */
		{0x1BCA0, 0x1BCA3},
		{0x1D173, 0x1D17A},
		{0xE0000, 0xE007F}, /* tags: invisible ASCII */
	};
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return false;
}

/*
 * Harmless in prose (emoji are built with them) but hiding something in
 * text to be approved: joiners, variation selectors, spaces that are not
 * the space they look like.
 */
static bool strict_only(uint32_t cp)
{
	return cp == 0x200D || (cp >= 0xFE00 && cp <= 0xFE0F) ||
	       (cp >= 0xE0100 && cp <= 0xE01EF) || cp == 0xA0 || cp == 0x1680 ||
	       (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F ||
	       cp == 0x2800 || cp == 0x3000 ||
	       /* the marks' own characters, so that no text can pass for a mark */
	       cp == 0x27E8 || cp == 0x27E9 || cp == 0x23CE;
}

/*
 * The mark for code point `cp` under `flags`, written to buf; false when
 * the character shows as itself.
 */
static bool mark_of(uint32_t cp, unsigned flags, char buf[24])
{
	if (cp == '\n' || cp == '\t')
		if (flags & AGENT_SHOW_LINES)
			return false;
	if (cp < 0x20 || cp == 0x7F) {
		snprintf(buf, 24, "\u27e8%s\u27e9", cp == 0x7F ? "DEL" : c0_names[cp]);
		return true;
	}
	if (invisible(cp) || ((flags & AGENT_SHOW_STRICT) && strict_only(cp))) {
		snprintf(buf, 24, "\u27e8U+%04X\u27e9", (unsigned)cp);
		return true;
	}
	return false;
}

/*
 * How many bytes at the end of s[0..n) are the start of a UTF-8 sequence
 * still missing its continuation bytes (0 when none).
 */
static size_t incomplete_tail(const unsigned char *s, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = s[n - back];
		if ((c & 0xC0) == 0x80)
			continue;
		size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3
		              : c >= 0xC2 && c <= 0xDF ? 2 : 0;
		return need > back ? back : 0;
	}
	return 0;
}

/* Appends s[0..n), complete sequences or invalid bytes, in shown form. */
static void show_whole(agent_buf *out, const char *s, size_t n, unsigned flags)
{
	size_t i = 0;
	while (i < n) {
		uint32_t cp = 0xFFFD;
		size_t k = s[i] == '\0' ? 1 : base_utf8_next(s + i, n - i, &cp);
		if (s[i] == '\0')
			cp = 0;
		if (k == 0) {
			agent_buf_puts(out, "\xef\xbf\xbd");  /* never a raw 0x9B or half a character */
			i++;
			continue;
		}
		char mark[24];
		if (mark_of(cp, flags, mark))
			agent_buf_puts(out, mark);
		else
			agent_buf_append(out, s + i, k);
		i += k;
	}
}

void agent_show_init(agent_show *st, unsigned flags)
{
	memset(st, 0, sizeof(*st));
	st->flags = flags;
}

void agent_show_feed(agent_show *st, agent_buf *out, const char *s, size_t n)
{
	if (st->ncarry > 0) {
		/* Complete the held character from the new piece's first bytes. */
		while (n > 0 && st->ncarry < sizeof(st->carry) &&
		       incomplete_tail((const unsigned char *)st->carry, st->ncarry) == st->ncarry) {
			st->carry[st->ncarry++] = *s++;
			n--;
		}
		if (incomplete_tail((const unsigned char *)st->carry, st->ncarry) == st->ncarry &&
		    n == 0)
			return;
		size_t held = st->ncarry;
		st->ncarry = 0;
		show_whole(out, st->carry, held, st->flags);
	}
	size_t tail = incomplete_tail((const unsigned char *)s, n);
	show_whole(out, s, n - tail, st->flags);
	memcpy(st->carry, s + n - tail, tail);
	st->ncarry = tail;
}

void agent_show_end(agent_show *st, agent_buf *out)
{
	size_t held = st->ncarry;
	st->ncarry = 0;
	show_whole(out, st->carry, held, st->flags);
}

void agent_show_append(agent_buf *out, const char *s, size_t n, unsigned flags)
{
	show_whole(out, s, n, flags);
}

char *agent_show_dup(const char *s, unsigned flags)
{
	agent_buf b;
	agent_buf_init(&b);
	show_whole(&b, s, strlen(s), flags);
	if (b.oom) {
		agent_buf_finish(&b);
		return NULL;
	}
	return agent_buf_steal(&b);
}

/* ---- text to be typed ---------------------------------------------------- */

/* The script of a letter that has look-alikes in other scripts; NULL for others. */
static const char *letter_script(uint32_t cp)
{
	static const struct {
		uint32_t lo, hi;
		const char *name;
	} scripts[] = {
		{'A', 'Z', "Latin"}, {'a', 'z', "Latin"}, {0xC0, 0x24F, "Latin"},
		{0x1E00, 0x1EFF, "Latin"}, {0x370, 0x3FF, "Greek"}, {0x1F00, 0x1FFF, "Greek"},
		{0x400, 0x52F, "Cyrillic"}, {0x1C80, 0x1C8F, "Cyrillic"},
		{0x2DE0, 0x2DFF, "Cyrillic"}, {0xA640, 0xA69F, "Cyrillic"},
		{0x530, 0x58F, "Armenian"}, {0x13A0, 0x13FF, "Cherokee"},
		{0xFF21, 0xFF3A, "fullwidth Latin"}, {0xFF41, 0xFF5A, "fullwidth Latin"},
		{0x1D400, 0x1D7FF, "mathematical"}, {0x10A0, 0x10FF, "Georgian"},
		{0x2C00, 0x2C5F, "Glagolitic"}, {0xA4D0, 0xA4FF, "Lisu"},
	};
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
		if (cp >= scripts[i].lo && cp <= scripts[i].hi)
			return scripts[i].name;
	return NULL;
}

/* What a pass over the text counts, for the line that states it. */
struct typed_stats {
	size_t chars, lines, marked;
	const char *scripts[4];
	size_t n_scripts;
};

static void note_script(struct typed_stats *t, uint32_t cp)
{
	const char *s = letter_script(cp);
	if (s == NULL)
		return;
	for (size_t i = 0; i < t->n_scripts; i++)
		if (strcmp(t->scripts[i], s) == 0)
			return;
	if (t->n_scripts < sizeof(t->scripts) / sizeof(t->scripts[0]))
		t->scripts[t->n_scripts++] = s;
}

/* The text itself: marks for what does not show, line breaks after ⏎. */
static void typed_body(agent_buf *out, const char *s, size_t n, struct typed_stats *t)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0xFFFD;
		size_t k = s[i] == '\0' ? 0 : base_utf8_next(s + i, n - i, &cp);
		t->chars++;
		if (cp == ' ' && i + 2 < n && s[i + 1] == ' ' && s[i + 2] == ' ') {
			size_t run = strspn(s + i, " ");
			run = run > n - i ? n - i : run;
			agent_buf_printf(out, "\u27e8%zu spaces\u27e9", run);
			t->chars += run - 1;
			t->marked++;
			i += run;
			continue;
		}
		if (cp == '\n') {
			agent_buf_puts(out, "\u23ce\n  ");
			t->lines++;
		} else if (k == 0) {
			agent_buf_puts(out, "\u27e8invalid byte\u27e9");
			t->marked++;
		} else {
			char mark[24];
			if (mark_of(cp, AGENT_SHOW_STRICT, mark)) {
				agent_buf_puts(out, mark);
				t->marked++;
			} else {
				agent_buf_append(out, s + i, k);
				note_script(t, cp);
			}
		}
		i += k ? k : 1;
	}
}

void agent_show_typed(agent_buf *out, const char *s, size_t n)
{
	struct typed_stats t = {.lines = 1};
	agent_buf body;
	agent_buf_init(&body);
	typed_body(&body, s, n, &t);
	agent_buf_printf(out, "%zu character%s", t.chars, t.chars == 1 ? "" : "s");
	if (t.lines > 1)
		agent_buf_printf(out, " on %zu lines", t.lines);
	if (t.marked > 0)
		agent_buf_puts(out, ", \u27e8\u2026\u27e9 marks what does not show");
	if (t.n_scripts > 1) {
		agent_buf_puts(out, "; MIXED SCRIPTS (");
		for (size_t i = 0; i < t.n_scripts; i++)
			agent_buf_printf(out, "%s%s", i ? ", " : "", t.scripts[i]);
		agent_buf_puts(out, "): some letters may be look-alikes");
	}
	agent_buf_printf(out, ":\n  \"%s\"", agent_buf_cstr(&body));
	if (body.oom)
		out->oom = true;
	agent_buf_finish(&body);
}
