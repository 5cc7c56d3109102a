/*
 * agent/safety/scan_shell — the shell lexer of the normalisation: comments
 * dropped outside quotes, line continuations joined, quote removal as the
 * shell does it (r''m and r\m are rm), here-documents copied as they are.
 */
#include <stdbool.h>
#include <string.h>

#include "agent/safety/scan-internal.h"

#define MAX_HEREDOCS 8

/* The shell lexer's state while normalizing (see scan_normalize_shell). */
struct shell_lex {
	struct norm *n;
	const unsigned char *s;
	size_t len, i;
	int line;
	unsigned char prev;          /* the last character emitted outside quotes */
	struct {
		char word[64];
		size_t len;
		bool strip_tabs;
	} heredocs[MAX_HEREDOCS];    /* here-documents whose bodies start on the next line */
	size_t n_heredocs;
};

static bool is_heredoc_word(unsigned char c)
{
	return c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') ||
	       (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* At "<<" (not "<<<"): records the delimiter; the text itself is emitted as usual. */
static void note_heredoc(struct shell_lex *x)
{
	const unsigned char *s = x->s;
	size_t j = x->i + 2;
	bool strip = false;
	if (j < x->len && s[j] == '-') {
		strip = true;
		j++;
	}
	while (j < x->len && scan_is_hblank(s[j]))
		j++;
	unsigned char q = 0;
	if (j < x->len && (s[j] == '\'' || s[j] == '"'))
		q = s[j++];
	size_t k = 0;
	char *word = x->heredocs[x->n_heredocs].word;
	while (j < x->len && k + 1 < sizeof(x->heredocs[0].word) &&
	       (q ? s[j] != q : is_heredoc_word(s[j]))) {
		if (s[j] != '\n')
			word[k++] = (char)s[j];
		j++;
	}
	if (k > 0) {
		word[k] = '\0';
		x->heredocs[x->n_heredocs].len = k;
		x->heredocs[x->n_heredocs].strip_tabs = strip;
		x->n_heredocs++;
	}
}

/* After a newline: the bodies of the pending here-documents, copied line by
 * line as they are (no comments in them), each up to its delimiter line. */
static void copy_heredoc_bodies(struct shell_lex *x)
{
	const unsigned char *s = x->s;
	for (size_t h = 0; h < x->n_heredocs; h++) {
		while (x->i < x->len) {
			size_t eol = x->i;
			while (eol < x->len && s[eol] != '\n')
				eol++;
			size_t b = x->i;
			if (x->heredocs[h].strip_tabs)
				while (b < eol && s[b] == '\t')
					b++;
			size_t e = eol;
			if (e > b && s[e - 1] == '\r')
				e--;
			bool end = e - b == x->heredocs[h].len &&
			           memcmp(s + b, x->heredocs[h].word, x->heredocs[h].len) == 0;
			for (size_t k = x->i; k < eol; k++)
				scan_emit(x->n, s[k], x->line);
			scan_emit(x->n, '\n', x->line);
			if (eol < x->len)
				x->line++;
			x->i = eol < x->len ? eol + 1 : eol;
			if (end)
				break;
		}
	}
	x->n_heredocs = 0;
}

/*
 * Outside quotes, the cases that consume input on their own (line
 * continuation, quote removal, empty quotes inside a word, comments, a
 * newline with its here-documents). False: c is an ordinary character.
 */
static bool shell_special(struct shell_lex *x, unsigned char c)
{
	const unsigned char *s = x->s;
	size_t i = x->i;
	if (c == '\\' && i + 1 < x->len && s[i + 1] == '\n') {
		scan_emit(x->n, ' ', x->line);
		x->line++;
		x->i += 2;
		x->prev = ' ';
		return true;
	}
	if (c == '\\' && i + 1 < x->len) {
		/* Quote removal as the shell does it: r\m is rm. */
		if (!scan_is_word(s[i + 1]))
			scan_emit(x->n, c, x->line);
		scan_emit(x->n, s[i + 1], x->line);
		x->prev = s[i + 1];
		x->i += 2;
		return true;
	}
	if ((c == '\'' || c == '"') && i + 1 < x->len && s[i + 1] == c &&
	    (scan_is_word((unsigned char)scan_last_emitted(x->n)) || (i + 2 < x->len && scan_is_word(s[i + 2])))) {
		x->i += 2; /* an empty quote inside a word: r''m is rm */
		return true;
	}
	unsigned char p = x->prev;
	if (c == '#' && (p == '\n' || scan_is_hblank(p) || p == ';' || p == '&' || p == '|' ||
	                 p == '(' || p == ')')) {
		while (x->i < x->len && s[x->i] != '\n')
			x->i++;
		return true;
	}
	if (c == '<' && i + 2 < x->len && s[i + 1] == '<' && s[i + 2] != '<' &&
	    x->n_heredocs < MAX_HEREDOCS)
		note_heredoc(x);   /* and "<<" itself is emitted as usual */
	if (c == '\n') {
		scan_emit(x->n, '\n', x->line);
		x->line++;
		x->i++;
		x->prev = '\n';
		copy_heredoc_bodies(x);
		return true;
	}
	return false;
}

void scan_normalize_shell(struct norm *n, const unsigned char *s, size_t len)
{
	enum { NORMAL, SQ, DQ, BQ, ANSI } st = NORMAL;
	struct shell_lex x = {.n = n, .s = s, .len = len, .line = 1, .prev = '\n'};
	while (x.i < len) {
		unsigned char c = s[x.i];
		if (st == NORMAL) {
			if (shell_special(&x, c))
				continue;
			if (c == '\'')
				st = SQ;
			else if (c == '"')
				st = DQ;
			else if (c == '`')
				st = BQ;
			else if (c == '$' && x.i + 1 < len && s[x.i + 1] == '\'') {
				scan_emit(n, c, x.line);
				c = s[++x.i];
				st = ANSI;
			}
			scan_emit(n, c, x.line);
			x.prev = c;
			x.i++;
			continue;
		}
		/* inside quotes */
		if (c == '\n') {
			scan_emit(n, '\n', x.line);
			x.line++;
			x.i++;
			continue;
		}
		if (c == '\\' && st != SQ && x.i + 1 < len) {
			if (s[x.i + 1] != '\n') {
				scan_emit(n, c, x.line);
				scan_emit(n, s[x.i + 1], x.line);
			} else {
				x.line++;
			}
			x.i += 2;
			continue;
		}
		scan_emit(n, c, x.line);
		if ((st == SQ && c == '\'') || (st == ANSI && c == '\'') ||
		    (st == DQ && c == '"') || (st == BQ && c == '`'))
			st = NORMAL;
		x.prev = c;
		x.i++;
	}
}
