/*
 * The JSON text builder the providers write request bodies with: appends
 * straight into one growing buffer, so a screenshot is read from its file
 * and base64-encoded in place, never copied through an intermediate string.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"

void jb_free(struct jbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void jb_reset(struct jbuf *b)
{
	b->len = 0;
	b->oom = false;
}

bool jb_reserve(struct jbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (more > SIZE_MAX / 2 - b->len) {
		b->oom = true;
		return false;
	}
	size_t need = b->len + more + 1;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void jb_put(struct jbuf *b, const char *s, size_t n)
{
	if (!jb_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void jb_puts(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

void jb_long(struct jbuf *b, long v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%ld", v);
	jb_put(b, tmp, (size_t)n);
}

void jb_strn(struct jbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	/* Worst case: every byte becomes \u00XX. Reserving once keeps the loop simple. */
	if (!jb_reserve(b, n * 6 + 2))
		return;
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80 || c == 0) {
			size_t k = agent_utf8_seq(s + i, n - i);
			if (k) {
				memcpy(o, s + i, k);
				o += k;
				i += k;
			} else {
				memcpy(o, "\xEF\xBF\xBD", 3);
				o += 3;
				i++;
			}
			continue;
		}
		i++;
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c >= 0x20) {
			*o++ = (char)c;
		} else if (c == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (c == '\t') {
			*o++ = '\\';
			*o++ = 't';
		} else if (c == '\r') {
			*o++ = '\\';
			*o++ = 'r';
		} else {
			memcpy(o, "\\u00", 4);
			o[4] = hex[c >> 4];
			o[5] = hex[c & 15];
			o += 6;
		}
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

void jb_str(struct jbuf *b, const char *s)
{
	s = s ? s : "";
	jb_strn(b, s, strlen(s));
}

void jb_json(struct jbuf *b, const cJSON *v)
{
	char *s = cJSON_PrintUnformatted(v);
	if (!s) {
		b->oom = true;
		return;
	}
	jb_puts(b, s);
	free(s);
}

static void b64_block(const unsigned char *in, size_t n, char *out)
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

bool jb_base64_file(struct jbuf *b, const char *path)
{
	/* A multiple of 3, so only the last chunk can carry padding. */
	enum { CHUNK = 3 * 16384 };
	unsigned char chunk[CHUNK];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	size_t start = b->len;
	size_t size = (size_t)st.st_size;
	if (!jb_reserve(b, (size + 2) / 3 * 4)) {
		close(fd);
		return false;
	}
	for (;;) {
		size_t got = 0;
		while (got < CHUNK) {
			ssize_t r = read(fd, chunk + got, CHUNK - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				close(fd);
				b->len = start;
				return false;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		if (got == 0)
			break;
		if (!jb_reserve(b, (got + 2) / 3 * 4)) {
			close(fd);
			return false;
		}
		b64_block(chunk, got, b->p + b->len);
		b->len += (got + 2) / 3 * 4;
		if (got < CHUNK)
			break;
	}
	close(fd);
	return true;
}

const char *jb_cstr(struct jbuf *b)
{
	if (!b->p || !jb_reserve(b, 0))
		return "";
	b->p[b->len] = '\0';
	return b->p;
}
