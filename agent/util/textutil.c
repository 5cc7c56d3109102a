/* agent/util/textutil — UTF-8 repair and a string buffer; see textutil.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/util/textutil.h"
#include "base/base.h"

size_t agent_utf8_seq(const char *str, size_t n)
{
	uint32_t cp;
	if (n == 0 || str[0] == '\0')
		return 0;
	return base_utf8_next(str, n, &cp);
}

bool agent_utf8_valid(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t l = agent_utf8_seq(s + i, n - i);
		if (l == 0)
			return false;
		i += l;
	}
	return true;
}

char *agent_utf8_sanitize(const char *s, size_t n, size_t *out_len)
{
	/* Worst case: every byte becomes the 3-byte replacement character. */
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	char *out = malloc(n * 3 + 1);
	if (out == NULL)
		return NULL;
	size_t o = 0, i = 0;
	while (i < n) {
		size_t l = agent_utf8_seq(s + i, n - i);
		if (l == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, s + i, l);
			o += l;
			i += l;
		}
	}
	out[o] = '\0';
	if (out_len != NULL)
		*out_len = o;
	return out;
}

char *agent_vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

void agent_buf_init(agent_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void agent_buf_finish(agent_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

bool agent_buf_reserve(agent_buf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (extra > SIZE_MAX / 2 - b->len) {
		b->oom = true;
		return false;
	}
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (d == NULL) {
		b->oom = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void agent_buf_reset(agent_buf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void agent_buf_truncate(agent_buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

const char *agent_buf_cstr(const agent_buf *b)
{
	return b->data != NULL && !b->oom ? b->data : "";
}

bool agent_buf_append(agent_buf *b, const char *s, size_t n)
{
	if (!agent_buf_reserve(b, n))
		return false;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return true;
}

bool agent_buf_puts(agent_buf *b, const char *s)
{
	return agent_buf_append(b, s, strlen(s));
}

bool agent_buf_printf(agent_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !agent_buf_reserve(b, (size_t)n))
		return false;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

char *agent_buf_steal(agent_buf *b)
{
	char *d = b->data;
	if (d == NULL)
		d = calloc(1, 1);
	memset(b, 0, sizeof(*b));
	return d;
}

bool agent_own_dir(agent_dir_kind kind, char *buf, size_t size)
{
	const char *xdg = getenv(kind == AGENT_DIR_CONFIG ? "XDG_CONFIG_HOME" : "XDG_DATA_HOME");
	int k;
	if (xdg != NULL && xdg[0] == '/') {
		k = snprintf(buf, size, "%s/deskhand", xdg);
	} else {
		const char *home = getenv("HOME");
		if (home == NULL || home[0] != '/') {
			errno = ENOENT;
			return false;
		}
		k = snprintf(buf, size, "%s/%s", home,
		             kind == AGENT_DIR_CONFIG ? ".config/deskhand" : ".local/share/deskhand");
	}
	if (k < 0 || (size_t)k >= size) {
		errno = ENAMETOOLONG;
		return false;
	}
	return true;
}

bool agent_make_dirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(buf)) {
		errno = len == 0 ? ENOENT : ENAMETOOLONG;
		return false;
	}
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return false;
		buf[i] = path[i];
	}
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return false;
	}
	return true;
}

/* ---- base64 ------------------------------------------------------------ */

void agent_base64_block(const unsigned char *in, size_t n, char *out)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		*out++ = tbl[v >> 18];
		*out++ = tbl[(v >> 12) & 63];
		*out++ = tbl[(v >> 6) & 63];
		*out++ = tbl[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);
		*out++ = tbl[v >> 18];
		*out++ = tbl[(v >> 12) & 63];
		*out++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
		*out++ = '=';
	}
}

char *agent_base64(const unsigned char *in, size_t n, size_t *out_len)
{
	size_t len = (n + 2) / 3 * 4;
	char *out = malloc(len + 1);
	if (out == NULL)
		return NULL;
	agent_base64_block(in, n, out);
	out[len] = '\0';
	if (out_len != NULL)
		*out_len = len;
	return out;
}

/* Every backslash of JSON text is inside a string; an escaped backslash is
 * stepped over whole. */
bool agent_json_has_escaped_nul(const char *text, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] != '\\')
			continue;
		if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
			return true;
		i++;
	}
	return false;
}
