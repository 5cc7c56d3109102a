/*
 * An incremental parser of server-sent events (the WHATWG "event stream"
 * format) fed with whatever the network delivers: lines split anywhere,
 * LF, CRLF or lone CR endings, comments, multi-line data, a leading BOM.
 */
#include <string.h>

#include "agent/llm/provider-internal.h"

#define SSE_DEFAULT_MAX (64u << 20)

void sse_init(struct sse_parser *s, sse_event_fn fn, void *user)
{
	memset(s, 0, sizeof(*s));
	s->fn = fn;
	s->user = user;
	s->max_event = SSE_DEFAULT_MAX;
}

void sse_clear(struct sse_parser *s)
{
	agent_buf_finish(&s->line);
	agent_buf_finish(&s->data);
}

static bool dispatch(struct sse_parser *s)
{
	bool ok = true;
	if (s->have_data) {
		/* The data buffer ends with the "\n" of its last line: drop it. */
		size_t n = s->data.len ? s->data.len - 1 : 0;
		agent_buf_truncate(&s->data, n);
		ok = s->fn(s->user, s->event[0] ? s->event : "message", agent_buf_cstr(&s->data), n);
	}
	agent_buf_reset(&s->data);
	s->event[0] = '\0';
	s->have_data = false;
	if (!ok)
		s->stopped = true;
	return ok;
}

static bool process_line(struct sse_parser *s, const char *line, size_t n)
{
	/* The same limit as for a line still arriving: whether a line is too
	 * long must not depend on how the network cut it. */
	if (n > s->max_event)
		return false;
	if (n == 0)
		return dispatch(s);
	if (line[0] == ':')
		return true; /* comment: keep-alives, OpenRouter's ": PROCESSING" */
	const char *colon = memchr(line, ':', n);
	size_t flen = colon ? (size_t)(colon - line) : n;
	const char *val = colon ? colon + 1 : line + n;
	size_t vlen = n - (size_t)(val - line);
	if (vlen && val[0] == ' ') {
		val++;
		vlen--;
	}
	if (flen == 4 && memcmp(line, "data", 4) == 0) {
		agent_buf_append(&s->data, val, vlen);
		agent_buf_append(&s->data, "\n", 1);
		s->have_data = true;
		if (s->data.oom || s->data.len > s->max_event) {
			s->stopped = true;
			return false;
		}
	} else if (flen == 5 && memcmp(line, "event", 5) == 0) {
		size_t k = vlen < sizeof(s->event) - 1 ? vlen : sizeof(s->event) - 1;
		memcpy(s->event, val, k);
		s->event[k] = '\0';
	}
	/* id, retry and unknown fields mean nothing to a model stream. */
	return true;
}

bool sse_feed(struct sse_parser *s, const char *bytes, size_t n)
{
	if (s->stopped)
		return false;
	size_t i = 0;
	if (!s->started && n > 0) {
		/* A byte-order mark may arrive split too: hold it in the line buffer. */
		while (i < n && s->line.len < 3 && (unsigned char)bytes[i] == "\xEF\xBB\xBF"[s->line.len]) {
			agent_buf_append(&s->line, bytes + i, 1);
			i++;
		}
		if (s->line.len == 3) {
			agent_buf_reset(&s->line);
			s->started = true;
		} else if (i < n) {
			s->started = true; /* not a BOM: what was held is ordinary text */
		}
	}
	while (i < n) {
		if (s->after_cr) {
			s->after_cr = false;
			if (bytes[i] == '\n') {
				i++;
				continue;
			}
		}
		size_t j = i;
		while (j < n && bytes[j] != '\n' && bytes[j] != '\r')
			j++;
		if (j == n) {
			agent_buf_append(&s->line, bytes + i, n - i);
			if (s->line.oom || s->line.len > s->max_event) {
				s->stopped = true;
				return false;
			}
			return true;
		}
		bool ok;
		if (s->line.len) {
			agent_buf_append(&s->line, bytes + i, j - i);
			ok = !s->line.oom && process_line(s, s->line.data, s->line.len);
			agent_buf_reset(&s->line);
		} else {
			ok = process_line(s, bytes + i, j - i);
		}
		if (!ok) {
			s->stopped = true;
			return false;
		}
		s->after_cr = bytes[j] == '\r';
		i = j + 1;
	}
	return true;
}

bool sse_finish(struct sse_parser *s)
{
	if (s->stopped)
		return false;
	if (s->line.len) {
		bool ok = process_line(s, s->line.data, s->line.len);
		agent_buf_reset(&s->line);
		if (!ok)
			return false;
	}
	return dispatch(s);
}
