/*
 * agent/safety/scan — normalisation of shell, python and javascript source, the
 * rule file loader (cJSON) and the matcher (PCRE2). See scan.h.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/safety/scan.h"
#include "agent/util/textutil.h"
#include "config.h"

/* Generated at build time from agent/safety/rules/scan-rules.json. */
extern const char agent_scan_builtin_json[];
extern const size_t agent_scan_builtin_json_len;

AGENT_ERROR_TEXT(static, scan_err, agent_scan_error, scan_fail)

/* ---- names ------------------------------------------------------------- */

static const char *const lang_names[AGENT_SCAN_LANG_COUNT] = {
	[AGENT_SCAN_SHELL] = "shell",
	[AGENT_SCAN_PYTHON] = "python",
	[AGENT_SCAN_JAVASCRIPT] = "javascript",
};

const char *agent_scan_lang_name(agent_scan_lang lang)
{
	if ((unsigned)lang >= AGENT_SCAN_LANG_COUNT)
		return "unknown";
	return lang_names[lang];
}

bool agent_scan_lang_parse(const char *name, agent_scan_lang *out)
{
	static const struct {
		const char *name;
		agent_scan_lang lang;
	} aliases[] = {
		{"shell", AGENT_SCAN_SHELL}, {"sh", AGENT_SCAN_SHELL},
		{"bash", AGENT_SCAN_SHELL}, {"python", AGENT_SCAN_PYTHON},
		{"py", AGENT_SCAN_PYTHON}, {"python3", AGENT_SCAN_PYTHON},
		{"javascript", AGENT_SCAN_JAVASCRIPT}, {"js", AGENT_SCAN_JAVASCRIPT},
		{"node", AGENT_SCAN_JAVASCRIPT},
	};
	if (name == NULL)
		return false;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcmp(name, aliases[i].name) == 0) {
			*out = aliases[i].lang;
			return true;
		}
	}
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The interpreter a "#!" line names: its basename, or env's argument. */
static bool shebang_lang(const char *code, size_t len, agent_scan_lang *out)
{
	if (code == NULL || len < 3 || code[0] != '#' || code[1] != '!')
		return false;
	char line[256];
	size_t n = 0;
	for (size_t i = 2; i < len && code[i] != '\n' && n + 1 < sizeof(line); i++)
		line[n++] = code[i];
	line[n] = '\0';
	char *save = NULL;
	char *word = strtok_r(line, " \t\r", &save);
	if (word == NULL)
		return false;
	const char *base = strrchr(word, '/');
	base = base != NULL ? base + 1 : word;
	if (strcmp(base, "env") == 0) {
		do
			word = strtok_r(NULL, " \t\r", &save);
		while (word != NULL && word[0] == '-');
		if (word == NULL)
			return false;
		base = word;
	}
	static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"};
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		if (strcmp(base, shells[i]) == 0) {
			*out = AGENT_SCAN_SHELL;
			return true;
		}
	}
	if (strncmp(base, "python", 6) == 0) {
		const char *v = base + 6;
		while (*v == '.' || (*v >= '0' && *v <= '9'))
			v++;
		if (*v == '\0') {
			*out = AGENT_SCAN_PYTHON;
			return true;
		}
	}
	if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0) {
		*out = AGENT_SCAN_JAVASCRIPT;
		return true;
	}
	return false;
}

bool agent_scan_lang_guess(const char *path, const char *code, size_t len,
                           agent_scan_lang *out)
{
	if (path != NULL) {
		const char *base = strrchr(path, '/');
		base = base != NULL ? base + 1 : path;
		static const struct {
			const char *ext;
			agent_scan_lang lang;
		} exts[] = {
			{".sh", AGENT_SCAN_SHELL}, {".bash", AGENT_SCAN_SHELL},
			{".py", AGENT_SCAN_PYTHON}, {".js", AGENT_SCAN_JAVASCRIPT},
			{".mjs", AGENT_SCAN_JAVASCRIPT}, {".cjs", AGENT_SCAN_JAVASCRIPT},
		};
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
			if (ends_with(base, exts[i].ext)) {
				*out = exts[i].lang;
				return true;
			}
		}
	}
	return shebang_lang(code, len, out);
}

static const char *const severity_names[AGENT_SCAN_SEVERITY_COUNT] = {
	[AGENT_SCAN_NONE] = "none",
	[AGENT_SCAN_LOW] = "low",
	[AGENT_SCAN_MEDIUM] = "medium",
	[AGENT_SCAN_HIGH] = "high",
	[AGENT_SCAN_CRITICAL] = "critical",
};

const char *agent_scan_severity_name(agent_scan_severity s)
{
	if ((unsigned)s >= AGENT_SCAN_SEVERITY_COUNT)
		return "unknown";
	return severity_names[s];
}

bool agent_scan_severity_parse(const char *s, agent_scan_severity *out)
{
	if (s == NULL)
		return false;
	for (unsigned i = AGENT_SCAN_LOW; i < AGENT_SCAN_SEVERITY_COUNT; i++) {
		if (strcmp(s, severity_names[i]) == 0) {
			*out = (agent_scan_severity)i;
			return true;
		}
	}
	return false;
}

/* ---- normalisation ----------------------------------------------------- */

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

static bool is_hblank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Emits one character of normalised output (blank runs become a space,
 * blank lines vanish, lines are trimmed). */
static void emit(struct norm *n, unsigned char c, int line)
{
	if (is_hblank(c)) {
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

/* The last non-blank character emitted, 0 at the start of a line. */
static char last_emitted(const struct norm *n)
{
	if (n->len == 0 || n->at_line_start)
		return 0;
	return n->text[n->len - 1];
}

static int norm_line_at(const struct norm *n, size_t off)
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

static void norm_free(struct norm *n)
{
	free(n->text);
	free(n->brk_off);
	free(n->brk_line);
	memset(n, 0, sizeof(*n));
}

static bool is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* -- shell -- */

#define MAX_HEREDOCS 8

/* The shell lexer's state while normalizing (see normalize_shell). */
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
	while (j < x->len && is_hblank(s[j]))
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
				emit(x->n, s[k], x->line);
			emit(x->n, '\n', x->line);
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
		emit(x->n, ' ', x->line);
		x->line++;
		x->i += 2;
		x->prev = ' ';
		return true;
	}
	if (c == '\\' && i + 1 < x->len) {
		/* Quote removal as the shell does it: r\m is rm. */
		if (!is_word(s[i + 1]))
			emit(x->n, c, x->line);
		emit(x->n, s[i + 1], x->line);
		x->prev = s[i + 1];
		x->i += 2;
		return true;
	}
	if ((c == '\'' || c == '"') && i + 1 < x->len && s[i + 1] == c &&
	    (is_word((unsigned char)last_emitted(x->n)) || (i + 2 < x->len && is_word(s[i + 2])))) {
		x->i += 2; /* an empty quote inside a word: r''m is rm */
		return true;
	}
	unsigned char p = x->prev;
	if (c == '#' && (p == '\n' || is_hblank(p) || p == ';' || p == '&' || p == '|' ||
	                 p == '(' || p == ')')) {
		while (x->i < x->len && s[x->i] != '\n')
			x->i++;
		return true;
	}
	if (c == '<' && i + 2 < x->len && s[i + 1] == '<' && s[i + 2] != '<' &&
	    x->n_heredocs < MAX_HEREDOCS)
		note_heredoc(x);   /* and "<<" itself is emitted as usual */
	if (c == '\n') {
		emit(x->n, '\n', x->line);
		x->line++;
		x->i++;
		x->prev = '\n';
		copy_heredoc_bodies(x);
		return true;
	}
	return false;
}

static void normalize_shell(struct norm *n, const unsigned char *s, size_t len)
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
				emit(n, c, x.line);
				c = s[++x.i];
				st = ANSI;
			}
			emit(n, c, x.line);
			x.prev = c;
			x.i++;
			continue;
		}
		/* inside quotes */
		if (c == '\n') {
			emit(n, '\n', x.line);
			x.line++;
			x.i++;
			continue;
		}
		if (c == '\\' && st != SQ && x.i + 1 < len) {
			if (s[x.i + 1] != '\n') {
				emit(n, c, x.line);
				emit(n, s[x.i + 1], x.line);
			} else {
				x.line++;
			}
			x.i += 2;
			continue;
		}
		emit(n, c, x.line);
		if ((st == SQ && c == '\'') || (st == ANSI && c == '\'') ||
		    (st == DQ && c == '"') || (st == BQ && c == '`'))
			st = NORMAL;
		x.prev = c;
		x.i++;
	}
}

/* -- python -- */

/*
 * The end of the string literal whose opening quote is at s[i]: the index
 * just past its closing quote (or the newline that ends an unterminated
 * one-line string, or len). Adds the newlines it contains to *lines.
 */
static size_t py_string_end(const unsigned char *s, size_t len, size_t i, int *lines)
{
	unsigned char q = s[i];
	bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;
	i += triple ? 3 : 1;
	while (i < len) {
		if (s[i] == '\\' && i + 1 < len) {
			if (s[i + 1] == '\n')
				(*lines)++;
			i += 2;
			continue;
		}
		if (s[i] == '\n') {
			if (!triple)
				return i;
			(*lines)++;
			i++;
			continue;
		}
		if (s[i] == q && (!triple || (i + 2 < len && s[i + 1] == q && s[i + 2] == q)))
			return i + (triple ? 3 : 1);
		i++;
	}
	return len;
}

static void normalize_python(struct norm *n, const unsigned char *s, size_t len)
{
	int line = 1;
	long depth = 0;
	size_t i = 0;
	while (i < len) {
		unsigned char c = s[i];
		if (c == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '\\' && i + 1 < len && s[i + 1] == '\n') {
			emit(n, ' ', line);
			line++;
			i += 2;
			continue;
		}
		/*
		 * A string that is a whole statement (a docstring) does nothing:
		 * drop it, so prose about "rm -rf /" is not code. Not f-strings,
		 * whose expressions run.
		 */
		if (n->at_line_start && depth == 0) {
			size_t q = i;
			if (q < len && (s[q] == 'r' || s[q] == 'R' || s[q] == 'u' || s[q] == 'U'))
				q++;
			if (q < len && (s[q] == '\'' || s[q] == '"')) {
				int extra = 0;
				size_t e = py_string_end(s, len, q, &extra);
				size_t k = e;
				while (k < len && is_hblank(s[k]))
					k++;
				if (e > q + 1 && (k == len || s[k] == '\n' || s[k] == '#' || s[k] == ';')) {
					line += extra;
					i = e;
					continue;
				}
			}
		}
		if (c == '\'' || c == '"') {
			int extra = 0;
			size_t e = py_string_end(s, len, i, &extra);
			for (size_t k = i; k < e; k++) {
				if (s[k] == '\\' && k + 1 < e && s[k + 1] == '\n') {
					line++;
					k++;
					continue;
				}
				emit(n, s[k], line);
				if (s[k] == '\n')
					line++;
			}
			i = e;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		if (c == '\n') {
			emit(n, depth > 0 ? ' ' : '\n', line);
			line++;
			i++;
			continue;
		}
		emit(n, c, line);
		i++;
	}
}

/* -- javascript -- */

#define JS_STACK 256

static bool js_regex_allowed(const struct norm *n)
{
	char p = last_emitted(n);
	if (p == 0)
		return true;
	if (strchr("(,=:[!&|?{};+-*%<>~^", p) != NULL)
		return true;
	if (!((p >= 'a' && p <= 'z') || (p >= 'A' && p <= 'Z')))
		return false;
	/* A keyword before it: "return /x/" */
	static const char *const kws[] = {"return", "typeof", "case", "do", "else", "in",
	                                  "of", "void", "delete", "throw", "new",
	                                  "yield", "await"};
	size_t e = n->len, b = e;
	while (b > 0 && ((n->text[b - 1] >= 'a' && n->text[b - 1] <= 'z') ||
	                 (n->text[b - 1] >= 'A' && n->text[b - 1] <= 'Z')))
		b--;
	if (b > 0 && (n->text[b - 1] == '.' || n->text[b - 1] == '_' || n->text[b - 1] == '$'))
		return false;
	for (size_t k = 0; k < sizeof(kws) / sizeof(kws[0]); k++)
		if (strlen(kws[k]) == e - b && memcmp(n->text + b, kws[k], e - b) == 0)
			return true;
	return false;
}

/* The JavaScript lexer's state while normalizing (see normalize_js). */
struct js_lex {
	struct norm *n;
	const unsigned char *s;
	size_t len, i;
	int line;
	/* Open brackets: 'J' joins lines (parentheses, brackets, object
	 * literals), 'B' keeps them (blocks), 'T' is a template's ${. */
	char stack[JS_STACK];
	size_t sp;
	bool in_template;            /* in a template literal's text, not its ${...} */
};

static void js_open(struct js_lex *x, char kind)
{
	if (x->sp < JS_STACK)
		x->stack[x->sp++] = kind;
}

/* Whether a line break here only continues an expression. */
static bool js_joining(const struct js_lex *x)
{
	return x->sp > 0 && x->stack[x->sp - 1] == 'J';
}

/* One character (or escape) of a template literal's text; "${" leaves
 * the text for an expression, which its '}' resumes (js_bracket). */
static void js_template_step(struct js_lex *x)
{
	const unsigned char *s = x->s;
	unsigned char c = s[x->i];
	if (c == '\\' && x->i + 1 < x->len) {
		if (s[x->i + 1] == '\n')
			x->line++;
		emit(x->n, c, x->line);
		emit(x->n, s[x->i + 1], x->line);
		x->i += 2;
		return;
	}
	if (c == '\n') {
		emit(x->n, '\n', x->line);
		x->line++;
		x->i++;
		return;
	}
	emit(x->n, c, x->line);
	x->i++;
	if (c == '`') {
		x->in_template = false;
	} else if (c == '$' && x->i < x->len && s[x->i] == '{') {
		emit(x->n, '{', x->line);
		x->i++;
		js_open(x, 'T');
		x->in_template = false;
	}
}

/*
 * At a line or block comment: skips it. A block comment still separates
 * what surrounds it: a blank, or a line break if it spanned lines where
 * lines are not joined. False: no comment starts here.
 */
static bool js_skip_comment(struct js_lex *x)
{
	const unsigned char *s = x->s;
	size_t i = x->i, len = x->len;
	if (s[i] != '/' || i + 1 >= len || (s[i + 1] != '/' && s[i + 1] != '*'))
		return false;
	if (s[i + 1] == '/') {
		while (x->i < len && s[x->i] != '\n')
			x->i++;
		return true;
	}
	bool nl = false;
	i += 2;
	while (i < len && !(s[i] == '*' && i + 1 < len && s[i + 1] == '/')) {
		if (s[i] == '\n') {
			x->line++;
			nl = true;
		}
		i++;
	}
	x->i = i < len ? i + 2 : len;
	emit(x->n, nl && !js_joining(x) ? '\n' : ' ', x->line);
	return true;
}

/* A regular expression literal, copied up to its closing slash (not one
 * inside a character class) or the end of the line. */
static void js_copy_regex(struct js_lex *x)
{
	const unsigned char *s = x->s;
	bool cls = false;
	emit(x->n, s[x->i], x->line);
	x->i++;
	while (x->i < x->len && s[x->i] != '\n') {
		unsigned char d = s[x->i];
		if (d == '\\' && x->i + 1 < x->len && s[x->i + 1] != '\n') {
			emit(x->n, d, x->line);
			emit(x->n, s[x->i + 1], x->line);
			x->i += 2;
			continue;
		}
		emit(x->n, d, x->line);
		x->i++;
		if (d == '[')
			cls = true;
		else if (d == ']')
			cls = false;
		else if (d == '/' && !cls)
			break;
	}
}

/* A quoted string, copied up to its closing quote or the end of the
 * line; an escaped newline continues it without breaking the line. */
static void js_copy_string(struct js_lex *x)
{
	const unsigned char *s = x->s;
	unsigned char q = s[x->i];
	emit(x->n, q, x->line);
	x->i++;
	while (x->i < x->len && s[x->i] != '\n') {
		unsigned char d = s[x->i];
		if (d == '\\' && x->i + 1 < x->len) {
			if (s[x->i + 1] == '\n') {
				x->line++;
			} else {
				emit(x->n, d, x->line);
				emit(x->n, s[x->i + 1], x->line);
			}
			x->i += 2;
			continue;
		}
		emit(x->n, d, x->line);
		x->i++;
		if (d == q)
			break;
	}
}

/*
 * Keeps the bracket stack. An object literal's '{' follows an operator
 * or an opening bracket; a block's does not. True: c closed a template's
 * ${...} and was consumed, the template's text resumes.
 */
static bool js_bracket(struct js_lex *x, unsigned char c)
{
	if (c == '(' || c == '[') {
		js_open(x, 'J');
	} else if (c == '{') {
		char p = last_emitted(x->n);
		bool object = p != 0 && strchr("(,=:[?", p) != NULL;
		js_open(x, object ? 'J' : 'B');
	} else if ((c == ')' || c == ']' || c == '}') && x->sp > 0) {
		char top = x->stack[--x->sp];
		if (top == 'T' && c == '}') {
			emit(x->n, c, x->line);
			x->i++;
			x->in_template = true;
			return true;
		}
	}
	return false;
}

/* A regular expression, string or template literal starting at c,
 * copied as it is. False: none starts here. */
static bool js_copy_literal(struct js_lex *x, unsigned char c)
{
	if (c == '/' && js_regex_allowed(x->n)) {
		js_copy_regex(x);
	} else if (c == '\'' || c == '"') {
		js_copy_string(x);
	} else if (c == '`') {
		emit(x->n, c, x->line);
		x->i++;
		x->in_template = true;
	} else {
		return false;
	}
	return true;
}

static void normalize_js(struct norm *n, const unsigned char *s, size_t len)
{
	struct js_lex x = {.n = n, .s = s, .len = len, .line = 1};
	while (x.i < len) {
		if (x.in_template) {
			js_template_step(&x);
			continue;
		}
		unsigned char c = s[x.i];
		if (js_skip_comment(&x) || js_copy_literal(&x, c) || js_bracket(&x, c))
			continue;
		if (c == '\n') {
			emit(n, js_joining(&x) ? ' ' : '\n', x.line);
			x.line++;
		} else {
			emit(n, c, x.line);
		}
		x.i++;
	}
}

static bool normalize(agent_scan_lang lang, const char *code, size_t len, struct norm *n)
{
	memset(n, 0, sizeof(*n));
	n->at_line_start = true;
	const unsigned char *s = (const unsigned char *)code;
	switch (lang) {
	case AGENT_SCAN_SHELL:
		normalize_shell(n, s, len);
		break;
	case AGENT_SCAN_PYTHON:
		normalize_python(n, s, len);
		break;
	case AGENT_SCAN_JAVASCRIPT:
		normalize_js(n, s, len);
		break;
	default:
		return scan_fail("unknown language");
	}
	if (!n->oom && !n->at_line_start)
		norm_push(n, '\n', n->nbrk ? n->brk_line[n->nbrk - 1] : 1);
	if (!n->oom && n->text == NULL)
		norm_push(n, '\n', 1);
	if (n->oom) {
		norm_free(n);
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
	if (!normalize(lang, code, len, &n))
		return NULL;
	char *t = n.text;
	if (out_len != NULL)
		*out_len = n.len;
	n.text = NULL;
	norm_free(&n);
	return t;
}

/* ---- rules ------------------------------------------------------------- */

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

static void patterns_free(struct pattern_list *p)
{
	for (size_t i = 0; i < p->n; i++)
		pcre2_code_free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static void examples_free(struct example *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].code);
	free(e);
}

static void rule_free(struct rule *r)
{
	if (r == NULL)
		return;
	free(r->id);
	free(r->message);
	patterns_free(&r->patterns);
	patterns_free(&r->unless);
	patterns_free(&r->unless_line);
	patterns_free(&r->requires);
	examples_free(r->flag, r->n_flag);
	examples_free(r->clean, r->n_clean);
	free(r);
}

agent_scan_rules *agent_scan_rules_create(void)
{
	agent_scan_rules *r = calloc(1, sizeof(*r));
	if (r == NULL)
		scan_fail("out of memory");
	return r;
}

void agent_scan_rules_destroy(agent_scan_rules *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		rule_free(r->v[i]);
	free(r->v);
	free(r->origin);
	free(r);
}

size_t agent_scan_rules_count(const agent_scan_rules *r)
{
	return r->n;
}

const char *agent_scan_rules_origin(const agent_scan_rules *r)
{
	return r->origin != NULL ? r->origin : "";
}

static bool origin_add(agent_scan_rules *r, const char *name)
{
	size_t old = r->origin ? strlen(r->origin) : 0;
	char *o = realloc(r->origin, old + strlen(name) + 4);
	if (o == NULL)
		return scan_fail("out of memory");
	if (old == 0)
		strcpy(o, name);
	else {
		strcpy(o + old, " + ");
		strcpy(o + old + 3, name);
	}
	r->origin = o;
	return true;
}

/* Line and column (1-based) of byte offset `off` in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

struct loader {
	const char *name; /* the document, for messages */
	int index;        /* 1-based rule number */
	const char *id;   /* the rule's id once known */
};

static bool rule_fail(const struct loader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool rule_fail(const struct loader *ld, const char *fmt, ...)
{
	char what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ld->id != NULL)
		return scan_fail("%s: rule %d (\"%s\"): %s", ld->name, ld->index, ld->id, what);
	return scan_fail("%s: rule %d: %s", ld->name, ld->index, what);
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 64)
		return false;
	if (!(id[0] >= 'a' && id[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		          c == '-' || c == '_';
		if (!ok)
			return false;
	}
	return true;
}

static bool compile_list(const struct loader *ld, const cJSON *arr, const char *key,
                         bool required, bool caseless, struct pattern_list *out)
{
	if (arr == NULL) {
		if (required)
			return rule_fail(ld, "\"%s\" is missing", key);
		return true;
	}
	if (!cJSON_IsArray(arr))
		return rule_fail(ld, "\"%s\" must be an array of strings", key);
	int n = cJSON_GetArraySize(arr);
	if (n == 0 && required)
		return rule_fail(ld, "\"%s\" must not be empty", key);
	out->v = calloc((size_t)n + 1, sizeof(*out->v));
	if (out->v == NULL)
		return scan_fail("out of memory");
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		i++;
		if (!cJSON_IsString(item) || item->valuestring[0] == '\0')
			return rule_fail(ld, "\"%s\" %d must be a non-empty string", key, i);
		int err = 0;
		PCRE2_SIZE erroff = 0;
		uint32_t opts = PCRE2_MULTILINE | PCRE2_USE_OFFSET_LIMIT | (caseless ? PCRE2_CASELESS : 0);
		pcre2_code *code = pcre2_compile((PCRE2_SPTR)item->valuestring,
		                                 PCRE2_ZERO_TERMINATED, opts, &err,
		                                 &erroff, NULL);
		if (code == NULL) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof(msg));
			return rule_fail(ld, "\"%s\" %d does not compile: %s at offset %zu",
			                 key, i, (const char *)msg, (size_t)erroff);
		}
		/* JIT is an optimisation; the interpreter is the fallback. */
		(void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
		out->v[out->n++] = code;
	}
	return true;
}

static bool load_examples(const struct loader *ld, const cJSON *arr, const char *key,
                          agent_scan_lang deflang, struct example **out, size_t *count)
{
	if (arr == NULL)
		return true;
	if (!cJSON_IsArray(arr))
		return rule_fail(ld, "\"examples\".\"%s\" must be an array", key);
	int n = cJSON_GetArraySize(arr);
	*out = calloc((size_t)n + 1, sizeof(**out));
	if (*out == NULL)
		return scan_fail("out of memory");
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, arr) {
		i++;
		agent_scan_lang lang = deflang;
		const char *code = NULL;
		if (cJSON_IsString(item)) {
			code = item->valuestring;
		} else if (cJSON_IsObject(item)) {
			const cJSON *l = cJSON_GetObjectItemCaseSensitive(item, "lang");
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(item, "code");
			if (!cJSON_IsString(l) || !agent_scan_lang_parse(l->valuestring, &lang))
				return rule_fail(ld, "example \"%s\" %d: \"lang\" must name a language", key, i);
			if (!cJSON_IsString(c))
				return rule_fail(ld, "example \"%s\" %d: \"code\" must be a string", key, i);
			code = c->valuestring;
		} else {
			return rule_fail(ld, "example \"%s\" %d must be a string or {\"lang\", \"code\"}", key, i);
		}
		(*out)[*count].lang = lang;
		(*out)[*count].code = strdup(code);
		if ((*out)[*count].code == NULL)
			return scan_fail("out of memory");
		(*count)++;
	}
	return true;
}

static const char *const rule_keys[] = {
	"id", "languages", "severity", "message", "patterns", "unless", "unless_line",
	"requires", "scope", "caseless", "examples", "disabled", "comment",
};

static bool known_rule_keys(const struct loader *ld, const cJSON *obj)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, obj) {
		bool known = false;
		for (size_t k = 0; k < sizeof(rule_keys) / sizeof(rule_keys[0]); k++)
			if (strcmp(item->string, rule_keys[k]) == 0)
				known = true;
		if (!known)
			return rule_fail(ld, "unknown key \"%s\"", item->string);
	}
	return true;
}

/* "languages": the rule's language bits; the first one is the examples'
 * default language. */
static bool parse_rule_languages(const struct loader *ld, const cJSON *obj, struct rule *r)
{
	const cJSON *langs = cJSON_GetObjectItemCaseSensitive(obj, "languages");
	if (!cJSON_IsArray(langs) || cJSON_GetArraySize(langs) == 0)
		return rule_fail(ld, "\"languages\" must be a non-empty array "
		                     "(\"shell\", \"python\", \"javascript\")");
	bool first = true;
	const cJSON *item;
	cJSON_ArrayForEach(item, langs) {
		agent_scan_lang l;
		if (!cJSON_IsString(item) || !agent_scan_lang_parse(item->valuestring, &l))
			return rule_fail(ld, "\"languages\": unknown language %s%s%s",
			                 cJSON_IsString(item) ? "\"" : "",
			                 cJSON_IsString(item) ? item->valuestring : "(not a string)",
			                 cJSON_IsString(item) ? "\"" : "");
		r->langs |= 1u << l;
		if (first)
			r->first_lang = l;
		first = false;
	}
	return true;
}

/* "severity", "message", "scope", "caseless" (into *caseless, for the
 * patterns) and "comment". */
static bool parse_rule_settings(const struct loader *ld, const cJSON *obj, struct rule *r,
                                bool *caseless)
{
	const cJSON *sev = cJSON_GetObjectItemCaseSensitive(obj, "severity");
	if (!cJSON_IsString(sev) || !agent_scan_severity_parse(sev->valuestring, &r->severity))
		return rule_fail(ld, "\"severity\" must be \"low\", \"medium\", \"high\" or \"critical\"");

	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
	if (!cJSON_IsString(msg) || msg->valuestring[0] == '\0')
		return rule_fail(ld, "\"message\" must be a non-empty string");
	r->message = strdup(msg->valuestring);
	if (r->message == NULL)
		return scan_fail("out of memory");

	const cJSON *scope = cJSON_GetObjectItemCaseSensitive(obj, "scope");
	if (scope != NULL) {
		if (cJSON_IsString(scope) && strcmp(scope->valuestring, "line") == 0)
			r->scope = SCOPE_LINE;
		else if (cJSON_IsString(scope) && strcmp(scope->valuestring, "file") == 0)
			r->scope = SCOPE_FILE;
		else
			return rule_fail(ld, "\"scope\" must be \"line\" or \"file\"");
	}

	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(obj, "caseless");
	if (cl != NULL && !cJSON_IsBool(cl))
		return rule_fail(ld, "\"caseless\" must be true or false");
	*caseless = cJSON_IsTrue(cl);

	const cJSON *comment = cJSON_GetObjectItemCaseSensitive(obj, "comment");
	if (comment != NULL && !cJSON_IsString(comment))
		return rule_fail(ld, "\"comment\" must be a string");
	return true;
}

static bool compile_rule_patterns(const struct loader *ld, const cJSON *obj, struct rule *r,
                                  bool caseless)
{
	return compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "patterns"), "patterns",
	                    true, caseless, &r->patterns) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "unless"), "unless",
	                    false, caseless, &r->unless) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "unless_line"),
	                    "unless_line", false, caseless, &r->unless_line) &&
	       compile_list(ld, cJSON_GetObjectItemCaseSensitive(obj, "requires"), "requires",
	                    false, caseless, &r->requires);
}

/* "examples": {"flag": [...], "clean": [...]}, both optional. */
static bool parse_rule_examples(const struct loader *ld, const cJSON *obj, struct rule *r)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(obj, "examples");
	if (ex == NULL)
		return true;
	if (!cJSON_IsObject(ex))
		return rule_fail(ld, "\"examples\" must be an object {\"flag\": [...], \"clean\": [...]}");
	const cJSON *item;
	cJSON_ArrayForEach(item, ex) {
		if (strcmp(item->string, "flag") != 0 && strcmp(item->string, "clean") != 0)
			return rule_fail(ld, "\"examples\": unknown key \"%s\"", item->string);
	}
	return load_examples(ld, cJSON_GetObjectItemCaseSensitive(ex, "flag"), "flag",
	                     r->first_lang, &r->flag, &r->n_flag) &&
	       load_examples(ld, cJSON_GetObjectItemCaseSensitive(ex, "clean"), "clean",
	                     r->first_lang, &r->clean, &r->n_clean);
}

/* One rule of the array. *out, once set, is the caller's to rule_free()
 * even when this fails. */
static bool parse_rule(const struct loader *ld_in, const cJSON *obj, struct rule **out)
{
	struct loader ld = *ld_in;
	*out = NULL;
	if (!cJSON_IsObject(obj))
		return rule_fail(&ld, "must be an object");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
	if (cJSON_IsString(id))
		ld.id = id->valuestring; /* names the rule in the messages below */
	if (!known_rule_keys(&ld, obj))
		return false;
	if (!cJSON_IsString(id))
		return rule_fail(&ld, "\"id\" must be a string");
	if (!valid_id(id->valuestring))
		return rule_fail(&ld, "\"id\" \"%s\" must be lower-case letters, digits, '.', '-', '_' "
		                      "(starting with a letter, at most 64)", id->valuestring);

	struct rule *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return scan_fail("out of memory");
	*out = r;
	r->id = strdup(id->valuestring);
	if (r->id == NULL)
		return scan_fail("out of memory");

	const cJSON *disabled = cJSON_GetObjectItemCaseSensitive(obj, "disabled");
	if (disabled != NULL && !cJSON_IsBool(disabled))
		return rule_fail(&ld, "\"disabled\" must be true or false");
	if (cJSON_IsTrue(disabled)) {
		r->disabled = true;
		return true; /* nothing else is needed to remove a rule */
	}
	bool caseless = false;
	return parse_rule_languages(&ld, obj, r) && parse_rule_settings(&ld, obj, r, &caseless) &&
	       compile_rule_patterns(&ld, obj, r, caseless) && parse_rule_examples(&ld, obj, r);
}

static ssize_t find_rule(const agent_scan_rules *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i]->id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* A rules document's outer shape: an object with "version" 1, a "rules"
 * array and perhaps a "comment". */
static bool rules_doc_shape(const cJSON *doc, const char *name)
{
	if (!cJSON_IsObject(doc))
		return scan_fail("%s: the top level must be a JSON object with \"version\" and \"rules\"",
		                 name);
	const cJSON *item;
	cJSON_ArrayForEach(item, doc) {
		if (strcmp(item->string, "version") != 0 && strcmp(item->string, "rules") != 0 &&
		    strcmp(item->string, "comment") != 0)
			return scan_fail("%s: unknown top-level key \"%s\"", name, item->string);
	}
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
	if (!cJSON_IsNumber(version) || version->valuedouble != 1)
		return scan_fail("%s: \"version\" must be 1", name);
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "rules")))
		return scan_fail("%s: \"rules\" must be an array", name);
	return true;
}

/* The parsed document, of the right shape; the caller owns it
 * (cJSON_Delete). NULL: scan_fail() said why. */
static cJSON *parse_rules_doc(const char *json, size_t len, const char *name)
{
	if (len > AGENT_SCAN_MAX_INPUT) {
		scan_fail("%s: too large (%zu bytes)", name, len);
		return NULL;
	}
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(json, len, &end, false);
	if (doc == NULL) {
		size_t off = end != NULL && end >= json && end <= json + len ? (size_t)(end - json) : 0;
		int line, col;
		line_col(json, off, &line, &col);
		if (len == 0)
			scan_fail("%s: empty file, expected a JSON object", name);
		else
			scan_fail("%s:%d:%d: malformed JSON", name, line, col);
		return NULL;
	}
	if (!rules_doc_shape(doc, name)) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/*
 * Parses the "rules" array into parsed[] (room for all of them), counting
 * in *n_parsed what the caller must free even on failure. Refuses an id
 * twice in the document, and disabling a rule r does not have.
 */
static bool parse_rules(const agent_scan_rules *r, const cJSON *rules, const char *name,
                        struct rule **parsed, size_t *n_parsed)
{
	int index = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, rules) {
		struct loader ld = {name, ++index, NULL};
		struct rule *rule = NULL;
		if (!parse_rule(&ld, item, &rule)) {
			rule_free(rule);
			return false;
		}
		parsed[(*n_parsed)++] = rule;
		ld.id = rule->id;
		for (size_t k = 0; k + 1 < *n_parsed; k++)
			if (strcmp(parsed[k]->id, rule->id) == 0)
				return rule_fail(&ld, "duplicate id (also rule %zu)", k + 1);
		if (rule->disabled && find_rule(r, rule->id) < 0)
			return rule_fail(&ld, "disables a rule that does not exist");
	}
	return true;
}

/*
 * Merges the parsed rules into r, taking them out of parsed[] (r owns
 * them then): a disabled one removes its id, a known id is replaced in
 * place, a new one appended. Fails only before r's rules change.
 */
static bool merge_rules(agent_scan_rules *r, struct rule **parsed, size_t n_parsed,
                        const char *name)
{
	if (r->n + n_parsed > r->cap) {
		size_t cap = r->n + n_parsed + 16;
		struct rule **v = realloc(r->v, cap * sizeof(*v));
		if (v == NULL)
			return scan_fail("out of memory");
		r->v = v;
		r->cap = cap;
	}
	if (!origin_add(r, name))
		return false;
	for (size_t k = 0; k < n_parsed; k++) {
		struct rule *rule = parsed[k];
		parsed[k] = NULL;
		ssize_t at = find_rule(r, rule->id);
		if (rule->disabled) {
			if (at >= 0) {
				rule_free(r->v[at]);
				memmove(&r->v[at], &r->v[at + 1], (r->n - (size_t)at - 1) * sizeof(*r->v));
				r->n--;
			}
			rule_free(rule);
		} else if (at >= 0) {
			rule_free(r->v[at]);
			r->v[at] = rule;
		} else {
			r->v[r->n++] = rule;
		}
	}
	return true;
}

/* All or nothing: the document's rules are merged only once every one of
 * them has parsed. */
bool agent_scan_rules_add_json(agent_scan_rules *r, const char *json, size_t len,
                               const char *name)
{
	cJSON *doc = parse_rules_doc(json, len, name);
	if (doc == NULL)
		return false;
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc, "rules");
	size_t n_parsed = 0;
	struct rule **parsed = calloc((size_t)cJSON_GetArraySize(rules) + 1, sizeof(*parsed));
	bool ok;
	if (parsed == NULL)
		ok = scan_fail("out of memory");
	else
		ok = parse_rules(r, rules, name, parsed, &n_parsed) &&
		     merge_rules(r, parsed, n_parsed, name);
	for (size_t k = 0; k < n_parsed; k++)
		rule_free(parsed[k]);
	free(parsed);
	cJSON_Delete(doc);
	return ok;
}

/* Reads a whole file (at most AGENT_SCAN_MAX_INPUT bytes). With
 * `require_safe`, refuses files others could have written. */
static char *read_file(const char *path, size_t *out_len, bool require_safe, bool *unsafe)
{
	if (unsafe != NULL)
		*unsafe = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		scan_fail("%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		scan_fail("%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		scan_fail("%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (require_safe && ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	                     (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
		scan_fail("%s: refusing a rules file that others can write (owner uid %u, mode %03o)",
		          path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		if (unsafe != NULL)
			*unsafe = true;
		close(fd);
		return NULL;
	}
	if ((uintmax_t)st.st_size > AGENT_SCAN_MAX_INPUT) {
		scan_fail("%s: too large (%jd bytes)", path, (intmax_t)st.st_size);
		close(fd);
		return NULL;
	}
	char *text = agent_read_fd(fd, AGENT_SCAN_MAX_INPUT, out_len);
	if (text == NULL)
		scan_fail("%s: %s", path, errno == EFBIG ? "too large" : strerror(errno));
	close(fd);
	return text;
}

bool agent_scan_rules_add_file(agent_scan_rules *r, const char *path)
{
	size_t len;
	char *text = read_file(path, &len, false, NULL);
	if (text == NULL)
		return false;
	bool ok = agent_scan_rules_add_json(r, text, len, path);
	free(text);
	return ok;
}

agent_scan_rules *agent_scan_rules_builtin(void)
{
	agent_scan_rules *r = agent_scan_rules_create();
	if (r == NULL)
		return NULL;
	if (!agent_scan_rules_add_json(r, agent_scan_builtin_json, agent_scan_builtin_json_len,
	                               "built-in")) {
		agent_scan_rules_destroy(r);
		return NULL;
	}
	return r;
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* $XDG_CONFIG_HOME/deskhand/scan-rules.json (relative XDG values are
 * ignored, as the specification says), else ~/.config/...; NULL if no home. */
static char *user_rules_path(void)
{
	char dir[PATH_MAX - 32], buf[PATH_MAX];
	if (!agent_own_dir(AGENT_DIR_CONFIG, dir, sizeof(dir)))
		return NULL;
	snprintf(buf, sizeof(buf), "%s/scan-rules.json", dir);
	return strdup(buf);
}

agent_scan_rules *agent_scan_rules_load(const char *explicit_path, bool user_extensions)
{
	agent_scan_rules *r = agent_scan_rules_create();
	if (r == NULL)
		return NULL;
	if (explicit_path != NULL) {
		if (!agent_scan_rules_add_file(r, explicit_path))
			goto fail;
	} else {
		const char *candidates[] = {
			DESKHAND_DATADIR "/scan-rules.json",
			DESKHAND_SRCDIR "/agent/safety/rules/scan-rules.json",
		};
		bool loaded = false;
		for (size_t i = 0; i < 2 && !loaded; i++) {
			if (!file_exists(candidates[i]))
				continue;
			size_t len;
			bool unsafe;
			char *text = read_file(candidates[i], &len, true, &unsafe);
			if (text == NULL) {
				if (unsafe)
					continue; /* the compiled-in copy stands in */
				goto fail;
			}
			bool ok = agent_scan_rules_add_json(r, text, len, candidates[i]);
			free(text);
			if (!ok)
				goto fail;
			loaded = true;
		}
		if (!loaded && !agent_scan_rules_add_json(r, agent_scan_builtin_json,
		                                          agent_scan_builtin_json_len, "built-in"))
			goto fail;
	}
	if (user_extensions) {
		char *path = user_rules_path();
		if (path != NULL && file_exists(path)) {
			size_t len;
			char *text = read_file(path, &len, true, NULL);
			bool ok = text != NULL && agent_scan_rules_add_json(r, text, len, path);
			free(text);
			free(path);
			if (!ok)
				goto fail;
		} else {
			free(path);
		}
	}
	return r;
fail:
	agent_scan_rules_destroy(r);
	return NULL;
}

/* ---- matching ---------------------------------------------------------- */

/*
 * PCRE2's match limit counts per start position, so a search over a long
 * subject can still cost (start positions x limit). Searches therefore run
 * in windows of SCAN_WINDOW start positions (pcre2_set_offset_limit), and
 * the clock is checked between windows: a scan that exceeds SCAN_BUDGET_S
 * stops with a "scanner.timeout" finding instead of hanging the caller.
 */
#define SCAN_WINDOW 4096
#define SCAN_MATCH_LIMIT 200000
#define SCAN_BUDGET_S 20

struct matcher {
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	pcre2_jit_stack *jit;
	struct timespec deadline;
	bool timed_out;
};

static bool matcher_init(struct matcher *m)
{
	memset(m, 0, sizeof(*m));
	m->md = pcre2_match_data_create(1, NULL);
	m->mctx = pcre2_match_context_create(NULL);
	m->jit = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
	if (m->md == NULL || m->mctx == NULL || m->jit == NULL)
		return scan_fail("out of memory");
	pcre2_jit_stack_assign(m->mctx, NULL, m->jit);
	pcre2_set_match_limit(m->mctx, SCAN_MATCH_LIMIT);
	pcre2_set_depth_limit(m->mctx, SCAN_MATCH_LIMIT);
	pcre2_set_heap_limit(m->mctx, 64 * 1024); /* KiB */
	clock_gettime(CLOCK_MONOTONIC, &m->deadline);
	m->deadline.tv_sec += SCAN_BUDGET_S;
	return true;
}

static void matcher_finish(struct matcher *m)
{
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mctx);
	pcre2_jit_stack_free(m->jit);
}

static bool out_of_time(struct matcher *m)
{
	if (m->timed_out)
		return true;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > m->deadline.tv_sec ||
	    (now.tv_sec == m->deadline.tv_sec && now.tv_nsec >= m->deadline.tv_nsec))
		m->timed_out = true;
	return m->timed_out;
}

enum mres { M_NO, M_YES, M_LIMIT };

/*
 * The first match of `code` in subject[0, len) that starts at or after
 * `start`; the whole subject is visible to lookbehind and lookahead.
 */
static enum mres search(struct matcher *m, const pcre2_code *code, const char *subject,
                        size_t len, size_t start, size_t *ms, size_t *me)
{
	size_t pos = start;
	for (;;) {
		if (out_of_time(m))
			return M_LIMIT;
		size_t limit = len - pos > SCAN_WINDOW ? pos + SCAN_WINDOW : len;
		pcre2_set_offset_limit(m->mctx, limit);
		int rc = pcre2_match(code, (PCRE2_SPTR)subject, len, pos, 0, m->md, m->mctx);
		if (rc >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
			*ms = ov[0];
			*me = ov[1] < ov[0] ? ov[0] : ov[1]; /* \K can pass the end */
			return M_YES;
		}
		if (rc != PCRE2_ERROR_NOMATCH)
			return M_LIMIT; /* match, depth, heap or JIT stack limit */
		if (limit >= len)
			return M_NO;
		pos = limit + 1;
	}
}

static enum mres any_matches(struct matcher *m, const struct pattern_list *p,
                             const char *subject, size_t len)
{
	size_t s, e;
	for (size_t i = 0; i < p->n; i++) {
		enum mres r = search(m, p->v[i], subject, len, 0, &s, &e);
		if (r != M_NO)
			return r;
	}
	return M_NO;
}

struct results {
	agent_scan_finding *v;
	size_t n, cap;
	bool oom;
};

static void results_free(struct results *res)
{
	for (size_t k = 0; k < res->n; k++) {
		free((char *)res->v[k].rule_id);
		free((char *)res->v[k].message);
		free((char *)res->v[k].excerpt);
	}
	free(res->v);
}

static char *make_excerpt(const char *s, size_t len)
{
	enum { MAX = 120 };
	char *out = malloc(MAX + 8);
	if (out == NULL)
		return NULL;
	size_t o = 0, i = 0;
	while (i < len && o < MAX) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
			i++;
			continue;
		}
		/* A complete, shortest-form UTF-8 sequence is copied; anything
		 * else becomes U+FFFD. */
		size_t need = agent_utf8_seq(s + i, len - i);
		bool ok = need > 0;
		if (ok && o + need <= MAX) {
			memcpy(out + o, s + i, need);
			o += need;
			i += need;
		} else if (ok) {
			break;
		} else {
			if (o + 3 > MAX)
				break;
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	if (i < len) {
		memcpy(out + o, "\xe2\x80\xa6", 3); /* … */
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static bool add_finding(struct results *res, const char *id, agent_scan_severity sev,
                        int line, const char *message, const char *text, size_t len)
{
	for (size_t i = 0; i < res->n; i++)
		if (res->v[i].line == line && strcmp(res->v[i].rule_id, id) == 0 &&
		    strcmp(res->v[i].message, message) == 0)
			return true;
	if (res->n == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 16;
		agent_scan_finding *v = realloc(res->v, cap * sizeof(*v));
		if (v == NULL) {
			res->oom = true;
			return false;
		}
		res->v = v;
		res->cap = cap;
	}
	agent_scan_finding *f = &res->v[res->n];
	f->rule_id = strdup(id);
	f->message = strdup(message);
	f->excerpt = make_excerpt(text, len);
	f->severity = sev;
	f->line = line;
	if (f->rule_id == NULL || f->message == NULL || f->excerpt == NULL) {
		free((char *)f->rule_id);
		free((char *)f->message);
		free((char *)f->excerpt);
		res->oom = true;
		return false;
	}
	res->n++;
	return true;
}

static void limit_finding(struct matcher *m, struct results *res, const struct rule *rule,
                          int line)
{
	if (m->timed_out)
		return; /* reported once, by scan_with() */
	char msg[200];
	snprintf(msg, sizeof(msg),
	         "rule %s could not be evaluated on this input (regex limits); review it yourself",
	         rule->id);
	add_finding(res, "scanner.limit", AGENT_SCAN_MEDIUM, line, msg, "", 0);
}

/* One rule's pass over the normalised text (see run_rule). */
struct rule_run {
	struct matcher *m;
	const struct rule *rule;
	const struct norm *n;
	struct results cand;   /* owned: results_free() */
	bool limited;          /* a regex limit stopped the pass */
	int limited_line;
};

static void run_stop(struct rule_run *rr, size_t off)
{
	rr->limited = true;
	rr->limited_line = norm_line_at(rr->n, off);
}

/* A file-scope match text[s, e): matches may span lines, so "unless_line"
 * looks at the line [ls, le) where the match starts. */
static void file_match(struct rule_run *rr, size_t s, size_t e, size_t ls, size_t le)
{
	const char *t = rr->n->text;
	enum mres u = any_matches(rr->m, &rr->rule->unless, t + s, e - s);
	if (u == M_NO)
		u = any_matches(rr->m, &rr->rule->unless_line, t + ls, le - ls);
	if (u == M_LIMIT)
		run_stop(rr, s);
	else if (u == M_NO)
		add_finding(&rr->cand, rr->rule->id, rr->rule->severity, norm_line_at(rr->n, s),
		            rr->rule->message, t + s, e - s);
}

/* Line scope: every match within the logical line [ls, le) from the one
 * at s on, with the line as the whole subject. */
static void line_matches(struct rule_run *rr, const pcre2_code *code, size_t ls, size_t le,
                         size_t s)
{
	const struct rule *rule = rr->rule;
	const char *line = rr->n->text + ls;
	size_t llen = le - ls;
	size_t lpos = s - ls;
	while (lpos <= llen) {
		size_t a, b;
		enum mres lr = search(rr->m, code, line, llen, lpos, &a, &b);
		if (lr == M_NO)
			break;
		if (lr == M_LIMIT) {
			run_stop(rr, ls);
			break;
		}
		enum mres u = any_matches(rr->m, &rule->unless, line + a, b - a);
		if (u == M_NO)
			u = any_matches(rr->m, &rule->unless_line, line, llen);
		if (u == M_LIMIT) {
			run_stop(rr, ls + a);
			break;
		}
		if (u == M_NO)
			add_finding(&rr->cand, rule->id, rule->severity, norm_line_at(rr->n, ls + a),
			            rule->message, line + a, b - a);
		lpos = b > a ? b : a + 1;
	}
}

/* Every match of one of the rule's patterns, as candidates. */
static void pattern_matches(struct rule_run *rr, const pcre2_code *code)
{
	const char *t = rr->n->text;
	size_t len = rr->n->len;
	size_t pos = 0;
	while (pos <= len && !rr->limited) {
		size_t s, e;
		enum mres r = search(rr->m, code, t, len, pos, &s, &e);
		if (r == M_NO)
			break;
		if (r == M_LIMIT) {
			run_stop(rr, pos);
			break;
		}
		size_t ls = s, le = s;
		while (ls > 0 && t[ls - 1] != '\n')
			ls--;
		while (le < len && t[le] != '\n')
			le++;
		if (rr->rule->scope == SCOPE_FILE) {
			file_match(rr, s, e, ls, le);
			pos = e > s ? e : s + 1;
		} else {
			line_matches(rr, code, ls, le, s);
			pos = le + 1;
		}
	}
}

/* Whether each of the rule's "requires" patterns matches somewhere. One
 * that hits a regex limit is reported (at the first candidate's line)
 * and counts as not matching. */
static bool requirements_met(struct rule_run *rr, struct results *res)
{
	const struct rule *rule = rr->rule;
	for (size_t q = 0; q < rule->requires.n; q++) {
		struct pattern_list one = {&rule->requires.v[q], 1};
		enum mres r = any_matches(rr->m, &one, rr->n->text, rr->n->len);
		if (r == M_LIMIT)
			limit_finding(rr->m, res, rule, rr->cand.v[0].line);
		if (r != M_YES)
			return false;
	}
	return true;
}

/*
 * Runs one rule over the normalised text. Candidate findings go to a
 * scratch list first: the rule's "requires" patterns are checked once a
 * candidate exists, and decide whether they count.
 */
static void run_rule(struct matcher *m, const struct rule *rule, const struct norm *n,
                     struct results *res)
{
	struct rule_run rr = {.m = m, .rule = rule, .n = n, .limited_line = 1};
	for (size_t p = 0; p < rule->patterns.n && !rr.limited; p++)
		pattern_matches(&rr, rule->patterns.v[p]);
	if (rr.limited) {
		limit_finding(m, res, rule, rr.limited_line);
	} else if (rr.cand.n > 0 && requirements_met(&rr, res)) {
		for (size_t k = 0; k < rr.cand.n; k++) {
			const agent_scan_finding *f = &rr.cand.v[k];
			add_finding(res, f->rule_id, f->severity, f->line, f->message, f->excerpt,
			            strlen(f->excerpt));
		}
	}
	if (rr.cand.oom)
		res->oom = true;
	results_free(&rr.cand);
}

static int finding_cmp(const void *pa, const void *pb)
{
	const agent_scan_finding *a = pa, *b = pb;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	return strcmp(a->rule_id, b->rule_id);
}

void agent_scan_result_destroy(agent_scan_result *res)
{
	if (res == NULL)
		return;
	for (size_t i = 0; i < res->count; i++) {
		free((char *)res->findings[i].rule_id);
		free((char *)res->findings[i].message);
		free((char *)res->findings[i].excerpt);
	}
	free(res->findings);
	free(res);
}

/* The scan proper, with an optional single rule (for examples). */
static agent_scan_result *scan_with(const agent_scan_rules *r, const struct rule *only,
                                    agent_scan_lang lang, const char *code, size_t len)
{
	if ((unsigned)lang >= AGENT_SCAN_LANG_COUNT) {
		scan_fail("unknown language");
		return NULL;
	}
	if (len > AGENT_SCAN_MAX_INPUT) {
		scan_fail("input too large (%zu bytes; the limit is %u)", len, AGENT_SCAN_MAX_INPUT);
		return NULL;
	}
	struct norm n;
	if (!normalize(lang, code != NULL ? code : "", code != NULL ? len : 0, &n))
		return NULL;
	struct matcher m;
	struct results res = {0};
	agent_scan_result *out = NULL;
	if (!matcher_init(&m))
		goto done;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *rule = r->v[i];
		if (only != NULL && rule != only)
			continue;
		if ((rule->langs & (1u << lang)) == 0)
			continue;
		run_rule(&m, rule, &n, &res);
		if (res.oom)
			break;
		if (m.timed_out) {
			char msg[200];
			snprintf(msg, sizeof(msg),
			         "the scan stopped after %d s at rule %s; later rules were not "
			         "evaluated: review this code yourself", SCAN_BUDGET_S, rule->id);
			add_finding(&res, "scanner.timeout", AGENT_SCAN_MEDIUM, 1, msg, "", 0);
			break;
		}
	}
	if (res.oom) {
		scan_fail("out of memory");
		goto done;
	}
	out = calloc(1, sizeof(*out));
	if (out == NULL) {
		scan_fail("out of memory");
		goto done;
	}
	if (res.n > 1)
		qsort(res.v, res.n, sizeof(*res.v), finding_cmp);
	out->findings = res.v;
	out->count = res.n;
	out->worst = AGENT_SCAN_NONE;
	for (size_t i = 0; i < res.n; i++)
		if (res.v[i].severity > out->worst)
			out->worst = res.v[i].severity;
	res.v = NULL;
	res.n = 0;
done:
	results_free(&res);
	matcher_finish(&m);
	norm_free(&n);
	return out;
}

agent_scan_result *agent_scan(const agent_scan_rules *r, agent_scan_lang lang,
                              const char *code, size_t len)
{
	return scan_with(r, NULL, lang, code, len);
}

static bool has_rule(const agent_scan_result *res, const char *id)
{
	for (size_t i = 0; i < res->count; i++)
		if (strcmp(res->findings[i].rule_id, id) == 0)
			return true;
	return false;
}

bool agent_scan_rules_check_examples(const agent_scan_rules *r, size_t *checked)
{
	size_t count = 0;
	if (checked != NULL)
		*checked = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *rule = r->v[i];
		for (int pass = 0; pass < 2; pass++) {
			const struct example *ex = pass == 0 ? rule->flag : rule->clean;
			size_t nex = pass == 0 ? rule->n_flag : rule->n_clean;
			for (size_t k = 0; k < nex; k++) {
				agent_scan_result *res = scan_with(r, rule, ex[k].lang, ex[k].code,
				                                   strlen(ex[k].code));
				if (res == NULL)
					return false;
				bool hit = has_rule(res, rule->id);
				bool limited = has_rule(res, "scanner.limit");
				agent_scan_result_destroy(res);
				count++;
				if (limited || hit != (pass == 0))
					return scan_fail("rule %s: %s example %zu (%s) %s: %s", rule->id,
					                 pass == 0 ? "flag" : "clean", k + 1,
					                 agent_scan_lang_name(ex[k].lang),
					                 limited ? "hit the regex limits"
					                 : pass == 0 ? "was not flagged" : "was flagged",
					                 ex[k].code);
			}
		}
	}
	if (checked != NULL)
		*checked = count;
	return true;
}
