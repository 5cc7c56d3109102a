/*
 * executors/exec — the block protocol: fresh markers, frame headers, and
 * reading the driver's end-of-block reports.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/base.h"
#include "executors/exec-internal.h"

BASE_ERROR_TEXT(, exec_err, exec_error, exec_fail)

bool exec_marker_new(char out[EXEC_MARKER_LEN + 1])
{
	unsigned char raw[EXEC_MARKER_LEN / 2];
	size_t got = 0;
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return exec_fail("getrandom: %s", strerror(errno));
		}
		got += (size_t)n;
	}
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[EXEC_MARKER_LEN] = '\0';
	return true;
}

size_t exec_frame_header(char *buf, size_t size, const char *marker, size_t code_len)
{
	int n = snprintf(buf, size, "%s %zu\n", marker, code_len);
	return n < 0 ? 0 : (size_t)n;
}

/* "MARKER STATUS" with STATUS a decimal in 0..255 and nothing else. */
static bool parse_line(const char *line, size_t len, const char *marker, int *status)
{
	size_t m = strlen(marker);
	if (len < m + 2 || memcmp(line, marker, m) != 0 || line[m] != ' ')
		return false;
	int v = 0;
	size_t digits = 0;
	for (size_t i = m + 1; i < len; i++) {
		if (line[i] < '0' || line[i] > '9' || ++digits > 3)
			return false;
		v = v * 10 + (line[i] - '0');
	}
	if (digits == 0 || v > 255)
		return false;
	*status = v;
	return true;
}

bool exec_ctl_feed(exec_ctl_reader *r, const char *marker, const char *data,
                   size_t len, int *status)
{
	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (c == '\n') {
			bool ok = !r->overflow && parse_line(r->buf, r->len, marker, status);
			r->len = 0;
			r->overflow = false;
			if (ok)
				return true;
			continue;
		}
		if (r->overflow)
			continue;
		if (r->len == sizeof(r->buf)) {
			r->overflow = true;
			r->len = 0;
			continue;
		}
		r->buf[r->len++] = c;
	}
	return false;
}
