/*
 * agent/safety/scan_js — the javascript lexer of the normalisation:
 * comments dropped, lines inside parentheses, brackets and object literals
 * joined (not in blocks), strings, regular expressions and template
 * literals kept as they are, the expressions in templates read as code.
 */
#include <stdbool.h>
#include <string.h>

#include "agent/safety/scan-internal.h"

#define JS_STACK 256

static bool js_regex_allowed(const struct norm *n)
{
	char p = scan_last_emitted(n);
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

/* The JavaScript lexer's state while normalizing (see scan_normalize_js). */
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

/* A backslash and the character it escapes (x->i + 1 < x->len), copied as they are. */
static void js_copy_escape(struct js_lex *x)
{
	scan_emit(x->n, x->s[x->i], x->line);
	scan_emit(x->n, x->s[x->i + 1], x->line);
	x->i += 2;
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
		js_copy_escape(x);
		return;
	}
	if (c == '\n') {
		scan_emit(x->n, '\n', x->line);
		x->line++;
		x->i++;
		return;
	}
	scan_emit(x->n, c, x->line);
	x->i++;
	if (c == '`') {
		x->in_template = false;
	} else if (c == '$' && x->i < x->len && s[x->i] == '{') {
		scan_emit(x->n, '{', x->line);
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
	scan_emit(x->n, nl && !js_joining(x) ? '\n' : ' ', x->line);
	return true;
}

/* A regular expression literal, copied up to its closing slash (not one
 * inside a character class) or the end of the line. */
static void js_copy_regex(struct js_lex *x)
{
	const unsigned char *s = x->s;
	bool cls = false;
	scan_emit(x->n, s[x->i], x->line);
	x->i++;
	while (x->i < x->len && s[x->i] != '\n') {
		unsigned char d = s[x->i];
		if (d == '\\' && x->i + 1 < x->len && s[x->i + 1] != '\n') {
			js_copy_escape(x);
			continue;
		}
		scan_emit(x->n, d, x->line);
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
	scan_emit(x->n, q, x->line);
	x->i++;
	while (x->i < x->len && s[x->i] != '\n') {
		unsigned char d = s[x->i];
		if (d == '\\' && x->i + 1 < x->len) {
			if (s[x->i + 1] == '\n') {
				x->line++;
				x->i += 2;
			} else {
				js_copy_escape(x);
			}
			continue;
		}
		scan_emit(x->n, d, x->line);
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
		char p = scan_last_emitted(x->n);
		bool object = p != 0 && strchr("(,=:[?", p) != NULL;
		js_open(x, object ? 'J' : 'B');
	} else if ((c == ')' || c == ']' || c == '}') && x->sp > 0) {
		char top = x->stack[--x->sp];
		if (top == 'T' && c == '}') {
			scan_emit(x->n, c, x->line);
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
		scan_emit(x->n, c, x->line);
		x->i++;
		x->in_template = true;
	} else {
		return false;
	}
	return true;
}

void scan_normalize_js(struct norm *n, const unsigned char *s, size_t len)
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
			scan_emit(n, js_joining(&x) ? ' ' : '\n', x.line);
			x.line++;
		} else {
			scan_emit(n, c, x.line);
		}
		x.i++;
	}
}
