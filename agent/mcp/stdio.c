/*
 * agent/mcp/stdio — MCP's stdio transport: one message per line in, one
 * per line out, nothing else on the way out. A line longer than
 * MCP_MAX_MESSAGE is refused as it streams past (never buffered whole);
 * the end of input ends the server, withdrawing a call still waiting.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/mcp/mcp-internal.h"
#include "base/base.h"

/* The one sink of the stream: every line is written whole under its lock. */
typedef struct stdio_sink {
	mcp_sink base;
	int fd;
	bool broken;
	pthread_mutex_t lock;
} stdio_sink;

static void stdio_send(mcp_sink *k, char *line)
{
	stdio_sink *o = (stdio_sink *)k;
	size_t n = strlen(line);
	line[n] = '\n'; /* over the NUL: the line ends with its newline */
	pthread_mutex_lock(&o->lock);
	if (!o->broken && !base_write_all(o->fd, line, n + 1)) {
		o->broken = true;
		fprintf(stderr, "deskhand mcp: cannot write to the client: %s\n", strerror(errno));
	}
	pthread_mutex_unlock(&o->lock);
	free(line);
}

static void stdio_nothing(mcp_sink *k)
{
	(void)k;
}

/* Reads the stream, handing each whole line on; a too long one is answered once. */
struct reader {
	char *buf;
	size_t len, cap;
	bool skipping;          /* inside a line that was too long */
};

static void line_done(mcp_server *s, struct reader *r, mcp_sink *k)
{
	if (r->skipping) {
		mcp_send(k, mcp_line_error(NULL, MCP_INVALID_REQUEST, "the message is too large "
		                           "(deskhand reads messages up to 8 MiB)", NULL));
		r->skipping = false;
	} else if (r->len > 0) {
		mcp_server_message(s, r->buf, r->len, NULL, k);
	}
	r->len = 0;
}

static bool feed(mcp_server *s, struct reader *r, const char *p, size_t n, mcp_sink *k)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl != NULL ? (size_t)(nl - p) : n;
		if (!r->skipping && r->len + take > MCP_MAX_MESSAGE) {
			r->skipping = true;
			r->len = 0;
		}
		if (!r->skipping) {
			if (r->len + take + 1 > r->cap) {
				size_t cap = r->cap ? r->cap : 65536;
				while (cap < r->len + take + 1)
					cap *= 2;
				char *grown = realloc(r->buf, cap);
				if (grown == NULL)
					return false;
				r->buf = grown;
				r->cap = cap;
			}
			memcpy(r->buf + r->len, p, take);
			r->len += take;
		}
		if (nl == NULL)
			return true;
		line_done(s, r, k);
		p = nl + 1;
		n -= take + 1;
	}
	return true;
}

int mcp_stdio_serve(mcp_server *s, int in_fd, int out_fd)
{
	stdio_sink out = {
		.base = {.send = stdio_send, .done = stdio_nothing, .hold = stdio_nothing,
		         .release = stdio_nothing},
		.fd = out_fd,
	};
	pthread_mutex_init(&out.lock, NULL);
	s->track_ids = true;
	mcp_server_start(s);
	struct reader r = {0};
	char chunk[65536];
	int status = 0;
	while (!mcp_server_ended(s)) {
		struct pollfd pfd = {.fd = in_fd, .events = POLLIN};
		/* Looked at again every second: the gate may end the run meanwhile. */
		int ready = poll(&pfd, 1, 1000);
		if (ready < 0 && errno != EINTR)
			break;
		if (ready <= 0)
			continue;
		ssize_t n = read(in_fd, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (!feed(s, &r, chunk, (size_t)n, &out.base)) {
			fprintf(stderr, "deskhand mcp: out of memory reading a message\n");
			status = 1;
			break;
		}
	}
	/* A last line without its newline is still a message. */
	if (r.len > 0 || r.skipping)
		line_done(s, &r, &out.base);
	if (mcp_server_ended(s))
		status = 1;
	mcp_server_stop(s);
	free(r.buf);
	pthread_mutex_destroy(&out.lock);
	return status;
}
