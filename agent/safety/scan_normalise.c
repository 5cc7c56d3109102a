/*
 * agent/safety/scan_normalise — the normalised text the rules see: the
 * buffer the lexers write into one character at a time (blank runs
 * become one space, blank lines vanish, every byte keeps its original
 * line), and the choice of lexer by language. See scan.h.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/safety/scan-internal.h"

static void norm_push(struct norm *n, char c, int line)
{
	if (n->oom)
		return;
	if (n->len + 2 > n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4096;
		char *t = realloc(n->text, cap);
		if (t == NULL) {
			n->oom = true;
			return;
		}
		n->text = t;
		n->cap = cap;
	}
	if (n->nbrk == 0 || n->brk_line[n->nbrk - 1] != line) {
		if (n->nbrk == n->brk_cap) {
			size_t cap = n->brk_cap ? n->brk_cap * 2 : 256;
			size_t *o = realloc(n->brk_off, cap * sizeof(*o));
			if (o == NULL) {
				n->oom = true;
				return;
			}
			n->brk_off = o;
			int *l = realloc(n->brk_line, cap * sizeof(*l));
			if (l == NULL) {
				n->oom = true;
				return;
			}
			n->brk_line = l;
			n->brk_cap = cap;
		}
		n->brk_off[n->nbrk] = n->len;
		n->brk_line[n->nbrk] = line;
		n->nbrk++;
	}
	n->text[n->len++] = c;
	n->text[n->len] = '\0';
}

/* Emits one character of normalised output (blank runs become a space,
 * blank lines vanish, lines are trimmed). */
void scan_emit(struct norm *n, unsigned char c, int line)
{
	if (scan_is_hblank(c)) {
		if (!n->at_line_start)
			n->pending_blank = true;
		return;
	}
	if (c == '\n') {
		n->pending_blank = false;
		if (!n->at_line_start) {
			norm_push(n, '\n', line);
			n->at_line_start = true;
		}
		return;
	}
	if (n->pending_blank) {
		norm_push(n, ' ', line);
		n->pending_blank = false;
	}
	norm_push(n, (char)c, line);
	n->at_line_start = false;
}

int scan_norm_line_at(const struct norm *n, size_t off)
{
	if (n->nbrk == 0)
		return 1;
	size_t lo = 0, hi = n->nbrk;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (n->brk_off[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return n->brk_line[lo];
}

void scan_norm_free(struct norm *n)
{
	free(n->text);
	free(n->brk_off);
	free(n->brk_line);
	memset(n, 0, sizeof(*n));
}

bool scan_normalize(agent_scan_lang lang, const char *code, size_t len, struct norm *n)
{
	memset(n, 0, sizeof(*n));
	n->at_line_start = true;
	const unsigned char *s = (const unsigned char *)code;
	switch (lang) {
	case AGENT_SCAN_SHELL:
		scan_normalize_shell(n, s, len);
		break;
	case AGENT_SCAN_PYTHON:
		scan_normalize_python(n, s, len);
		break;
	case AGENT_SCAN_JAVASCRIPT:
		scan_normalize_js(n, s, len);
		break;
	default:
		return scan_fail("unknown language");
	}
	if (!n->oom && !n->at_line_start)
		norm_push(n, '\n', n->nbrk ? n->brk_line[n->nbrk - 1] : 1);
	if (!n->oom && n->text == NULL)
		norm_push(n, '\n', 1);
	if (n->oom) {
		scan_norm_free(n);
		return scan_fail("out of memory");
	}
	return true;
}

char *agent_scan_normalize(agent_scan_lang lang, const char *code, size_t len,
                           size_t *out_len)
{
	struct norm n;
	if (len > AGENT_SCAN_MAX_INPUT) {
		scan_fail("input too large (%zu bytes; the limit is %u)", len, AGENT_SCAN_MAX_INPUT);
		return NULL;
	}
	if (!scan_normalize(lang, code, len, &n))
		return NULL;
	char *t = n.text;
	if (out_len != NULL)
		*out_len = n.len;
	n.text = NULL;
	scan_norm_free(&n);
	return t;
}
