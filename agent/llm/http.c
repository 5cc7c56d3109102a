/*
 * agent/llm/http — the HTTP exchange over libcurl, the one file that knows
 * it: libcurl loaded when the first connection opens, the easy handle kept
 * between turns, the request's headers, the callbacks that feed the answer
 * to the wire format as it arrives (and notice Ctrl-C and a silent server),
 * and what the transfer came to. See http-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The type-checking macros wrap the functions' names; calls go through pointers. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "agent/llm/http-internal.h"
#include "base/base.h"
#include "config.h"

/* ---- libcurl, loaded at the first connection ---------------------------- */

/*
 * Only the agent talks to a model, but libcurl and what it pulls in (TLS,
 * Kerberos, LDAP, HTTP/2, ...) cost about 3 ms at every process start:
 * more than half of what `deskhand screenshot` or `deskhand click` would
 * otherwise spend. So deskhand does not link it: the curl_* names below
 * call through pointers that load_curl() fills.
 */
#define AGENT_CURL_FUNCS(X, p) \
	X(p, curl_easy_cleanup) X(p, curl_easy_getinfo) X(p, curl_easy_init) \
	X(p, curl_easy_perform) X(p, curl_easy_reset) X(p, curl_easy_setopt) \
	X(p, curl_easy_strerror) X(p, curl_getdate) X(p, curl_global_init) \
	X(p, curl_slist_append) X(p, curl_slist_free_all)

AGENT_CURL_FUNCS(BASE_DLIB_STATIC, agent_dl_)
static const base_dlib_sym curl_syms[] = { AGENT_CURL_FUNCS(BASE_DLIB_SYM, agent_dl_) };
static void *curl_handle;
static const base_dlib curl_lib = BASE_DLIB(DESKHAND_CURL_SONAME, "libcurl4", &curl_handle, curl_syms);

/* Loads libcurl once; false with *why pointing at base's reason when it cannot. */
static bool load_curl(const char **why)
{
	if (base_dlib_load(&curl_lib))
		return true;
	*why = base_error();
	return false;
}

bool provider_http_ready(const char **why)
{
	return load_curl(why);
}

/* From here on the curl_* names call the loaded library. curl.h wraps
 * these two in macros of its own. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (*agent_dl_curl_easy_cleanup)
#define curl_easy_getinfo (*agent_dl_curl_easy_getinfo)
#define curl_easy_init (*agent_dl_curl_easy_init)
#define curl_easy_perform (*agent_dl_curl_easy_perform)
#define curl_easy_reset (*agent_dl_curl_easy_reset)
#define curl_easy_setopt (*agent_dl_curl_easy_setopt)
#define curl_easy_strerror (*agent_dl_curl_easy_strerror)
#define curl_getdate (*agent_dl_curl_getdate)
#define curl_global_init (*agent_dl_curl_global_init)
#define curl_slist_append (*agent_dl_curl_slist_append)
#define curl_slist_free_all (*agent_dl_curl_slist_free_all)

/* ---- connections -------------------------------------------------------- */

struct http {
	CURL *curl;     /* reused: keeps the connection alive between turns */
};

struct http *http_open(const char *who)
{
	static bool curl_ready;
	if (!curl_ready) {
		const char *why = NULL;
		if (!load_curl(&why)) {
			provider_fail("%s: %s", who, why);
			return NULL;
		}
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			provider_fail("%s: cannot initialise libcurl", who);
			return NULL;
		}
		curl_ready = true;
	}
	struct http *h = calloc(1, sizeof(*h));
	if (!h) {
		provider_fail("%s: out of memory", who);
		return NULL;
	}
	if (!(h->curl = curl_easy_init())) {
		free(h);
		provider_fail("%s: cannot initialise libcurl", who);
		return NULL;
	}
	return h;
}

void http_close(struct http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	free(h);
}

time_t http_date(const char *text)
{
	const char *why = NULL;
	if (!load_curl(&why))
		return -1;
	return curl_getdate(text, NULL);
}

/* ---- headers ------------------------------------------------------------ */

struct http_headers {
	struct curl_slist *list;
};

void http_headers_free(struct http_headers *l)
{
	if (!l)
		return;
	for (struct curl_slist *i = l->list; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(l->list);
	free(l);
}

static bool add_header(void *user, const char *line)
{
	struct curl_slist **l = user, *n = curl_slist_append(*l, line);
	if (n)
		*l = n;
	return n != NULL;
}

struct http_headers *http_headers_make(const struct provider_format *f,
                                       const struct request_ctx *rc, const char *api_key)
{
	struct http_headers *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	bool ok = add_header(&l->list, "Content-Type: application/json") &&
	          add_header(&l->list, "Expect:") && /* no 100-continue round trip for large bodies */
	          add_header(&l->list, rc->stream ? "Accept: text/event-stream"
	                                          : "Accept: application/json") &&
	          f->headers(rc, api_key, add_header, &l->list);
	if (!ok) {
		http_headers_free(l);
		return NULL;
	}
	return l;
}

/* ---- one HTTP exchange -------------------------------------------------- */

struct exchange {
	struct http *h;
	const struct http_request *rq;
	struct turn *t;
	struct sse_parser sse;
	struct ndjson_parser nd;
	enum { BODY_UNKNOWN, BODY_SSE, BODY_NDJSON, BODY_WHOLE } mode;
	agent_buf body;     /* whole responses and error bodies */
	long status;
	long retry_after_ms;
	bool too_big;
	bool idle;               /* aborted: nothing arrived for idle_timeout_s */
	int64_t last_io;        /* when bytes last moved either way (base_now_ns) */
	curl_off_t last_dn, last_up;
};

#define BODY_MAX (32u << 20)
#define ERROR_BODY_MAX (64u << 10)

static bool on_sse_event(void *user, const char *event, const char *data, size_t len)
{
	struct exchange *x = user;
	return x->rq->format->event(x->t, event, data, len);
}

static bool on_ndjson_line(void *user, const char *line, size_t len)
{
	struct exchange *x = user;
	return x->rq->format->event(x->t, NULL, line, len);
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *user)
{
	struct exchange *x = user;
	size_t n = size * nitems;
	if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0)
		x->retry_after_ms = -1; /* a new response (after 100 Continue, say) */
	else if (n > 12 && strncasecmp(buf, "retry-after:", 12) == 0) {
		char v[64];
		size_t k = n - 12 < sizeof(v) - 1 ? n - 12 : sizeof(v) - 1;
		memcpy(v, buf + 12, k);
		v[k] = '\0';
		x->retry_after_ms = provider_parse_retry_after(v, time(NULL));
	}
	return n;
}

static void decide_mode(struct exchange *x, const char *first, size_t n)
{
	char *ctype = NULL;
	curl_easy_getinfo(x->h->curl, CURLINFO_RESPONSE_CODE, &x->status);
	curl_easy_getinfo(x->h->curl, CURLINFO_CONTENT_TYPE, &ctype);
	if (x->status < 200 || x->status >= 300)
		x->mode = BODY_WHOLE;
	else if (x->rq->format->ndjson && ctype && strstr(ctype, "ndjson"))
		x->mode = BODY_NDJSON;
	else if (ctype && strstr(ctype, "event-stream"))
		x->mode = BODY_SSE;
	else if (ctype && strstr(ctype, "json"))
		x->mode = BODY_WHOLE;
	else {
		/* No useful type: look at the first byte that is not blank. */
		size_t i = 0;
		while (i < n && (first[i] == ' ' || first[i] == '\n' || first[i] == '\r'))
			i++;
		x->mode = i < n && (first[i] == '{' || first[i] == '[') ? BODY_WHOLE
		          : i < n ? BODY_SSE : BODY_UNKNOWN;
	}
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *user)
{
	struct exchange *x = user;
	size_t n = size * nmemb;
	if (x->mode == BODY_UNKNOWN)
		decide_mode(x, buf, n);
	if (x->mode == BODY_SSE)
		return sse_feed(&x->sse, buf, n) ? n : 0;
	if (x->mode == BODY_NDJSON)
		return ndjson_feed(&x->nd, buf, n) ? n : 0;
	size_t max = x->status >= 200 && x->status < 300 ? BODY_MAX : ERROR_BODY_MAX;
	if (x->body.len + n > max) {
		if (max == ERROR_BODY_MAX) /* enough of an error text: ignore the rest */
			return n;
		x->too_big = true;
		return 0;
	}
	agent_buf_append(&x->body, buf, n);
	return x->body.oom ? 0 : n;
}

/*
 * Called by curl at least once a second: the place to notice Ctrl-C and a
 * server that went silent (curl's own low-speed check averages over several
 * seconds, which blurs short limits).
 */
static int on_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct exchange *x = user;
	if (x->rq->cancel && *x->rq->cancel)
		return 1;
	int64_t now = base_now_ns();
	if (dn != x->last_dn || un != x->last_up) {
		x->last_dn = dn;
		x->last_up = un;
		x->last_io = now;
		return 0;
	}
	if ((now - x->last_io) / BASE_NS_PER_MS >= (int64_t)x->rq->idle_timeout_s * 1000) {
		x->idle = true;
		return 1;
	}
	return 0;
}

static bool curl_retriable(CURLcode rc)
{
	switch (rc) {
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

/* The request on the provider's reused handle; the callbacks fill x. */
static void exchange_setopts(CURL *h, const struct http_request *rq, struct exchange *x,
                             char *errbuf)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body->data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers->list);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "deskhand/" DESKHAND_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
}

/* The turn failed with its own reason: retried when nothing was shown yet. */
static enum http_outcome turn_failed(const struct turn *t)
{
	provider_fail("%s: %s", t->who, t->error);
	return t->retriable && !t->delivered ? HTTP_OUT_RETRY : HTTP_OUT_FAIL;
}

static enum http_outcome finish_calls(struct turn *t)
{
	/* Only open models write calls into their text (turn_text_calls). */
	if (!turn_finish_calls(t) ||
	    (t->family != MODEL_FAMILY_OTHER && !turn_text_calls(t, t->family))) {
		provider_fail("%s: %s", t->who, t->error);
		return HTTP_OUT_FAIL;
	}
	return HTTP_OUT_OK;
}

/* curl reported an error after a response began, or none began. */
static enum http_outcome transfer_broke(struct exchange *x, CURLcode rc, const char *errbuf)
{
	struct turn *t = x->t;
	const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
	if (x->status >= 200 && x->status < 300 &&
	    (t->done || x->mode == BODY_SSE || x->mode == BODY_NDJSON)) {
		if (t->done && !t->failed) /* everything arrived; only the goodbye broke */
			return finish_calls(t);
		provider_fail("%s: the stream was cut before the answer was complete (%s)", t->who,
		              detail);
		return t->delivered ? HTTP_OUT_FAIL : HTTP_OUT_RETRY;
	}
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY) {
		provider_fail("%s: cannot reach %s: %s", t->who, x->rq->url, detail);
		return HTTP_OUT_FAIL;
	}
	provider_fail("%s: request to %s failed: %s", t->who, x->rq->url, detail);
	return curl_retriable(rc) && !t->delivered ? HTTP_OUT_RETRY : HTTP_OUT_FAIL;
}

/* A successful response: the stream's end or the whole body, read. */
static enum http_outcome body_outcome(struct exchange *x)
{
	struct turn *t = x->t;
	if (x->mode == BODY_SSE || x->mode == BODY_NDJSON) {
		if (x->mode == BODY_SSE)
			sse_finish(&x->sse);
		else
			ndjson_finish(&x->nd);
		if (t->failed)
			return turn_failed(t);
		if (!t->done) {
			provider_fail("%s: the stream ended before the answer was complete", t->who);
			return t->delivered ? HTTP_OUT_FAIL : HTTP_OUT_RETRY;
		}
	} else if (!x->rq->format->body(t, x->body.data, x->body.len)) {
		provider_fail("%s: %s", t->who, t->error);
		return HTTP_OUT_FAIL;
	}
	return finish_calls(t);
}

/* What the exchange came to; provider_error() says why when not HTTP_OUT_OK. */
static enum http_outcome exchange_outcome(struct exchange *x, CURLcode rc, const char *errbuf)
{
	struct turn *t = x->t;
	const char *who = t->who;
	if (x->rq->cancel && *x->rq->cancel) {
		provider_fail("%s: cancelled", who);
		return HTTP_OUT_CANCELLED;
	}
	if (rc == CURLE_WRITE_ERROR && (t->failed || x->sse.stopped || x->nd.stopped)) {
		if (!t->failed)
			turn_fail(t, "an event in the stream is too large");
		return turn_failed(t);
	}
	if (rc == CURLE_WRITE_ERROR && x->too_big) {
		provider_fail("%s: the response is larger than %u MB", who, BODY_MAX >> 20);
		return HTTP_OUT_FAIL;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT || (rc == CURLE_ABORTED_BY_CALLBACK && x->idle)) {
		provider_fail("%s: no data from %s for %ld s", who, x->rq->url, x->rq->idle_timeout_s);
		return t->delivered ? HTTP_OUT_FAIL : HTTP_OUT_RETRY;
	}
	if (x->status >= 300 || (x->status > 0 && x->status < 200)) {
		char text[400];
		provider_error_text(x->body.data, x->body.len, text, sizeof(text));
		provider_fail("%s: HTTP %ld%s%s", who, x->status, text[0] ? ": " : "", text);
		return x->status == 408 || x->status == 429 || x->status >= 500 ? HTTP_OUT_RETRY : HTTP_OUT_FAIL;
	}
	if (rc != CURLE_OK)
		return transfer_broke(x, rc, errbuf);
	return body_outcome(x);
}

enum http_outcome http_exchange(struct http *hp, const struct http_request *rq, struct turn *t,
                                long *status, long *retry_after_ms)
{
	struct exchange x = {.h = hp, .rq = rq, .t = t, .retry_after_ms = -1};
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *h = hp->curl;
	sse_init(&x.sse, on_sse_event, &x);
	ndjson_init(&x.nd, on_ndjson_line, &x);
	x.last_io = base_now_ns();
	exchange_setopts(h, rq, &x, errbuf);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x.status);
	*retry_after_ms = x.retry_after_ms;
	*status = x.status;
	enum http_outcome out = exchange_outcome(&x, rc, errbuf);
	sse_clear(&x.sse);
	ndjson_clear(&x.nd);
	agent_buf_finish(&x.body);
	/* The handle keeps these pointers until the next reset. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	return out;
}
