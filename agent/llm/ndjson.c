/*
 * Newline-delimited JSON as it comes off the network (Ollama's streamed
 * /api/chat): bytes split anywhere are joined into lines, each handed on
 * whole. Knows nothing of what the lines mean.
 */
#include <string.h>

#include "agent/llm/provider-internal.h"

#define NDJSON_MAX_LINE (8u << 20)

void ndjson_init(struct ndjson_parser *n, ndjson_line_fn fn, void *user)
{
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->user = user;
	n->max_line = NDJSON_MAX_LINE;
}

void ndjson_clear(struct ndjson_parser *n)
{
	agent_buf_finish(&n->line);
}

/* The line gathered so far, handed on unless blank; then forgotten. */
static bool dispatch(struct ndjson_parser *n)
{
	size_t len = n->line.len;
	if (len && n->line.data[len - 1] == '\r')
		len--;
	bool blank = strspn(n->line.data ? n->line.data : "", " \t\r") >= len;
	bool ok = true;
	if (!blank) {
		n->line.data[len] = '\0';
		ok = n->fn(n->user, n->line.data, len);
	}
	agent_buf_reset(&n->line);
	if (!ok)
		n->stopped = true;
	return ok;
}

bool ndjson_feed(struct ndjson_parser *n, const char *bytes, size_t len)
{
	while (len > 0 && !n->stopped) {
		const char *nl = memchr(bytes, '\n', len);
		size_t take = nl != NULL ? (size_t)(nl - bytes) : len;
		if (n->line.len + take > n->max_line) {
			n->stopped = true;
			break;
		}
		agent_buf_append(&n->line, bytes, take);
		if (n->line.oom) {
			n->stopped = true;
			break;
		}
		if (nl == NULL)
			break;
		bytes += take + 1;
		len -= take + 1;
		if (!dispatch(n))
			break;
	}
	return !n->stopped;
}

bool ndjson_finish(struct ndjson_parser *n)
{
	if (n->stopped)
		return false;
	return n->line.len == 0 || dispatch(n);
}
