/*
 * agent/safety/scan_python — the python lexer of the normalisation:
 * comments dropped, lines inside open brackets and continued lines joined,
 * a string that is a whole statement (a docstring) dropped, other strings
 * kept as they are.
 */
#include <stdbool.h>

#include "agent/safety/scan-internal.h"

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

void scan_normalize_python(struct norm *n, const unsigned char *s, size_t len)
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
			scan_emit(n, ' ', line);
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
				while (k < len && scan_is_hblank(s[k]))
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
				scan_emit(n, s[k], line);
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
			scan_emit(n, depth > 0 ? ' ' : '\n', line);
			line++;
			i++;
			continue;
		}
		scan_emit(n, c, line);
		i++;
	}
}
