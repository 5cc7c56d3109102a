/*
 * The JSON text builder the providers write request bodies with (and the
 * raw spans of what vendors send, kept byte for byte): appends
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

void jb_sep(agent_buf *b, bool *first)
{
	if (!*first)
		agent_buf_append(b, ",", 1);
	*first = false;
}

void jb_long(agent_buf *b, long v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%ld", v);
	agent_buf_append(b, tmp, (size_t)n);
}

void jb_strn(agent_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	/* Worst case: every byte becomes \u00XX. Reserving once keeps the loop simple. */
	if (!agent_buf_reserve(b, n * 6 + 2))
		return;
	char *o = b->data + b->len;
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
	*o = '\0';
	b->len = (size_t)(o - b->data);
}

void jb_str(agent_buf *b, const char *s)
{
	s = s ? s : "";
	jb_strn(b, s, strlen(s));
}

void jb_json(agent_buf *b, const cJSON *v)
{
	char *s = cJSON_PrintUnformatted(v);
	if (!s) {
		b->oom = true;
		return;
	}
	agent_buf_puts(b, s);
	free(s);
}

bool jb_base64_image(agent_buf *b, const struct conv *c, const struct conv_image *img)
{
	if (img->path == NULL)
		return false;
	size_t len = 0;
	const uint8_t *png = conv_image_bytes(c, img, &len);
	if (png != NULL) {
		if (!agent_buf_reserve(b, (len + 2) / 3 * 4))
			return false;
		agent_base64_block(png, len, b->data + b->len);
		b->len += (len + 2) / 3 * 4;
		b->data[b->len] = '\0';
		return true;
	}
	char *file = conv_image_file(c, img);
	bool ok = file != NULL && jb_base64_file(b, file);
	free(file);
	return ok;
}

bool jb_base64_file(agent_buf *b, const char *path)
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
	if (!agent_buf_reserve(b, (size + 2) / 3 * 4)) {
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
				agent_buf_truncate(b, start);
				return false;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		if (got == 0)
			break;
		if (!agent_buf_reserve(b, (got + 2) / 3 * 4)) {
			close(fd);
			return false;
		}
		agent_base64_block(chunk, got, b->data + b->len);
		b->len += (got + 2) / 3 * 4;
		b->data[b->len] = '\0';
		if (got < CHUNK)
			break;
	}
	close(fd);
	return true;
}

/* ---- raw JSON spans: what vendors send is kept byte for byte ------------------ */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* The end of the JSON value starting at i (0 when malformed). */
static size_t value_end(const char *s, size_t n, size_t i)
{
	int depth = 0;
	bool in_str = false;
	for (; i < n; i++) {
		char ch = s[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
			if (!in_str && depth == 0)
				return i + 1;
			continue;
		}
		if (ch == '"')
			in_str = true;
		else if (ch == '{' || ch == '[')
			depth++;
		else if (ch == '}' || ch == ']') {
			if (--depth < 0)
				return i; /* a scalar ended by its container */
			if (depth == 0)
				return i + 1;
		} else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\n' || ch == '\r' ||
		                          ch == '\t'))
			return i;
	}
	return depth == 0 && !in_str ? n : 0;
}

bool json_member_span(const char *s, size_t n, size_t i, const char *key, size_t *off,
                        size_t *len)
{
	i = skip_ws(s, n, i);
	if (i >= n || s[i] != '{')
		return false;
	i++;
	size_t klen = strlen(key);
	while ((i = skip_ws(s, n, i)) < n && s[i] == '"') {
		size_t kend = value_end(s, n, i);
		if (!kend)
			return false;
		bool match = kend - i == klen + 2 && memcmp(s + i + 1, key, klen) == 0;
		i = skip_ws(s, n, kend);
		if (i >= n || s[i] != ':')
			return false;
		i = skip_ws(s, n, i + 1);
		size_t vend = value_end(s, n, i);
		if (!vend)
			return false;
		if (match) {
			*off = i;
			*len = vend - i;
			return true;
		}
		i = skip_ws(s, n, vend);
		if (i < n && s[i] == ',')
			i++;
	}
	return false;
}

bool json_element_span(const char *s, size_t n, size_t i, int k, size_t *off, size_t *len)
{
	i = skip_ws(s, n, i);
	if (i >= n || s[i] != '[')
		return false;
	i++;
	for (int at = 0;; at++) {
		i = skip_ws(s, n, i);
		if (i >= n || s[i] == ']')
			return false;
		size_t vend = value_end(s, n, i);
		if (!vend)
			return false;
		if (at == k) {
			*off = i;
			*len = vend - i;
			return true;
		}
		i = skip_ws(s, n, vend);
		if (i < n && s[i] == ',')
			i++;
	}
}
