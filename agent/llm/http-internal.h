/*
 * agent/llm/http — the HTTP exchange, private to provider.c and http.c:
 * one POST of a request body and its answer, read into a turn by the wire
 * format as it arrives (server-sent events, newline-delimited JSON) or
 * whole, with what it came to. http.c is the one file that knows libcurl,
 * which it loads when the first connection opens (so that deskhand's other
 * commands never pay for it); nothing here names one of its types.
 */
#ifndef DESKHAND_AGENT_HTTP_INTERNAL_H
#define DESKHAND_AGENT_HTTP_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "agent/llm/provider-internal.h"

/* A connection, reused between turns so that it stays alive. */
struct http;

/*
 * Opens one, loading and initialising libcurl the first time (the loading
 * is not thread-safe: the agent calls it from one thread). NULL with
 * provider_error() saying why, `who` first. Ownership: the caller closes
 * it with http_close (NULL is a no-op).
 */
struct http *http_open(const char *who);
void http_close(struct http *h);

/*
 * A request's headers: JSON both ways (rc's stream flag picks the Accept
 * header), no 100-continue, then the format's own with the key (NULL:
 * none). NULL when out of memory. Ownership: the caller frees them with
 * http_headers_free, which wipes them first (they carry the key); NULL is
 * a no-op.
 */
struct http_headers;
struct http_headers *http_headers_make(const struct provider_format *f,
                                       const struct request_ctx *rc, const char *api_key);
void http_headers_free(struct http_headers *l);

/* One exchange; borrowed for the call. */
struct http_request {
	const char *url;
	const agent_buf *body;
	const struct http_headers *headers;
	const struct provider_format *format; /* reads the answer into the turn */
	long idle_timeout_s;                  /* nothing moved for this long: aborted */
	volatile sig_atomic_t *cancel;        /* set (Ctrl-C): aborted; may be NULL */
};

enum http_outcome {
	HTTP_OUT_OK,
	HTTP_OUT_RETRY,     /* worth another attempt; provider_error() says why */
	HTTP_OUT_FAIL,      /* provider_error() says why */
	HTTP_OUT_CANCELLED,
};

/*
 * Posts the request and reads the answer into t (which the caller has
 * initialised). *status: the HTTP status (0: none came); *retry_after_ms:
 * the server's Retry-After (-1: none).
 */
enum http_outcome http_exchange(struct http *h, const struct http_request *rq, struct turn *t,
                                long *status, long *retry_after_ms);

/* An HTTP-date (RFC 9110, and the obsolete forms) as a time; -1 when unparsable. */
time_t http_date(const char *text);

#endif
