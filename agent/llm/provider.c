/*
 * The provider's common part: the vendors and their keys, the HTTP exchange
 * over libcurl (streamed or whole), retries with backoff, cancellation and
 * error texts. What differs between APIs is a struct provider_format (one
 * file per format: provider_openai.c, provider_responses.c, provider_anthropic.c), chosen through
 * the vendor table below; the answer is assembled by turn.c; the replayed
 * script is provider_script.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "agent/llm/curl-dl.h"
#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"
#include "config.h"

AGENT_ERROR_TEXT(, provider_err, provider_error, provider_fail)

static const char *const kind_names[] = {
	[PROVIDER_OPENAI] = "openai",
	[PROVIDER_ANTHROPIC] = "anthropic",
	[PROVIDER_OLLAMA] = "ollama",
	[PROVIDER_SCRIPT] = "script",
};

bool provider_kind_parse(const char *name, enum provider_kind *out)
{
	for (size_t i = 0; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (strcmp(name, kind_names[i]) == 0) {
			*out = (enum provider_kind)i;
			return true;
		}
	return false;
}

const char *provider_kind_name(enum provider_kind kind)
{
	return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

/*
 * The vendors, registered in this one place: where each one's API lives,
 * where its key comes from, and the wire format it speaks. Nothing else in
 * this file names a format.
 */
struct vendor {
	const struct provider_format *format;
	const char *def_base, *env_base, *key_env, *suffix, *def_model;
	bool key_optional;             /* a local server: no key even at its default address */
	const char *max_completion_at; /* this host wants max_completion_tokens */
};

static const struct vendor vendors[] = {
	[PROVIDER_OPENAI] = {&provider_format_openai, "https://api.openai.com/v1", "OPENAI_BASE_URL",
	                     "OPENAI_API_KEY", "/chat/completions", "gpt-5.4", false,
	                     "//api.openai.com"},
	[PROVIDER_ANTHROPIC] = {&provider_format_anthropic, "https://api.anthropic.com",
	                        "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "/v1/messages",
	                        "claude-sonnet-5-5", false, NULL},
	[PROVIDER_OLLAMA] = {&provider_format_ollama, "http://localhost:11434", NULL, NULL,
	                     "/api/chat", "llama3.1", true, NULL},
};

/* OpenAI's own API, where computer use lives (gpt-5.4 and later). */
static const struct vendor openai_responses = {
	&provider_format_responses, "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY",
	"/responses", "gpt-5.4", false, NULL,
};

struct provider {
	enum provider_kind kind;
	const struct provider_format *format; /* NULL for the script provider */
	char *model;
	char *url;      /* the endpoint */
	char *api_key;  /* NULL: none sent */
	bool stream;
	bool openai_max_completion;
	CURL *curl;     /* reused: keeps the connection alive between turns */
	struct script *script;
	long retry_base_ms;
	long idle_timeout_s;
	/* --store: the last response kept at the vendor, and how many messages
	 * the conversation held with it (the next request sends the rest). */
	bool store;
	char *last_response_id;
	size_t last_n_messages;
	int tool_version;  /* the format's computer tool version in use (0: none) */
	bool tool_forced;  /* given by the user: never stepped down */
	long last_status;  /* the HTTP status of the last exchange */
	enum model_family family; /* open models: their calls in text (turn_text_calls) */
	char *think;       /* Ollama's think, as given */
};

void provider_tools_clear(struct provider_tools *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->tools[i].name);
		free(t->tools[i].description);
		free(t->tools[i].schema_json);
	}
	free(t->tools);
	memset(t, 0, sizeof(*t));
}

static long env_long(const char *name, long def, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return def;
	errno = 0;
	long r = strtol(v, &end, 10);
	if (errno || *end || r < min || r > max)
		return def;
	return r;
}

/* Header values must not smuggle a second header in. */
static bool header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void wipe(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void provider_destroy(struct provider *p)
{
	if (!p)
		return;
	if (p->curl)
		curl_easy_cleanup(p->curl);
	script_destroy(p->script);
	wipe(p->api_key);
	free(p->last_response_id);
	free(p->think);
	free(p->model);
	free(p->url);
	free(p);
}

/* The script provider: replies read from a file, no network. */
static bool script_setup(struct provider *p, const struct provider_settings *s)
{
	if (!s->script)
		return provider_fail("script: no script file given (--script FILE)");
	return (p->script = script_load(s->script)) && (p->url = strdup(s->script)) &&
	       (p->model = strdup("script"));
}

/* The endpoint: the base URL given, else the vendor's variable, else its
 * default; *base is the one used. */
static bool vendor_url(struct provider *p, const struct provider_settings *s,
                       const struct vendor *v, const char *who, const char **base)
{
	const char *b = s->base_url;
	if ((!b || !*b) && v->env_base)
		b = getenv(v->env_base);
	if (!b || !*b)
		b = v->def_base;
	*base = b;
	if (strncmp(b, "http://", 7) != 0 && strncmp(b, "https://", 8) != 0)
		return provider_fail("%s: base URL '%s' must start with http:// or https://", who, b);
	if (!header_safe(b) || strchr(b, ' '))
		return provider_fail("%s: base URL contains spaces or control characters", who);
	size_t blen = strlen(b);
	while (blen > 0 && b[blen - 1] == '/')
		blen--;
	if (asprintf(&p->url, "%.*s%s", (int)blen, b, v->suffix) < 0) {
		p->url = NULL;
		return provider_fail("%s: out of memory", who);
	}
	return true;
}

/* The key given, else the vendor's variable; the vendor's own address
 * (at_vendor) does not answer without one. */
static bool vendor_key(struct provider *p, const struct provider_settings *s,
                       const struct vendor *v, const char *who, bool at_vendor)
{
	const char *key = s->api_key;
	if ((!key || !*key) && v->key_env)
		key = getenv(v->key_env);
	if (key && *key) {
		if (!header_safe(key))
			return provider_fail("%s: the API key contains control characters", who);
		if (!(p->api_key = strdup(key)))
			return provider_fail("%s: out of memory", who);
	} else if (at_vendor) {
		return provider_fail("%s: no API key (pass --api-key or set %s)", who, v->key_env);
	}
	return true;
}

/* libcurl, loaded and initialised once per process, and this provider's handle. */
static bool curl_setup(struct provider *p, const char *who)
{
	static bool curl_ready;
	if (!curl_ready) {
		const char *why = NULL;
		if (!agent_curl_load(&why))
			return provider_fail("%s: %s", who, why);
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return provider_fail("%s: cannot initialise libcurl", who);
		curl_ready = true;
	}
	if (!(p->curl = curl_easy_init()))
		return provider_fail("%s: cannot initialise libcurl", who);
	return true;
}

/* The OpenAI API to speak at base b: see enum provider_api. */
static bool wants_responses(const struct provider_settings *s, const char *b)
{
	if (s->kind != PROVIDER_OPENAI || s->api == PROVIDER_API_CHAT)
		return false;
	if (s->api == PROVIDER_API_RESPONSES)
		return true;
	size_t n = strlen(openai_responses.def_base);
	return strncmp(b, openai_responses.def_base, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static bool vendor_setup(struct provider *p, const struct provider_settings *s, const char *who)
{
	if ((size_t)s->kind >= sizeof(vendors) / sizeof(vendors[0]) || !vendors[s->kind].format)
		return provider_fail("%s: not a provider deskhand knows", who);
	if (s->api == PROVIDER_API_RESPONSES && s->kind != PROVIDER_OPENAI)
		return provider_fail("%s: --api responses is OpenAI's API (--provider openai)", who);
	const struct vendor *v = &vendors[s->kind];
	const char *b = s->base_url && *s->base_url ? s->base_url
	                : v->env_base && getenv(v->env_base) && *getenv(v->env_base)
	                ? getenv(v->env_base) : v->def_base;
	if (wants_responses(s, b))
		v = &openai_responses;
	p->store = s->store;
	p->format = v->format;
	const char *base;
	if (!vendor_url(p, s, v, who, &base))
		return false;
	bool at_vendor = strcmp(base, v->def_base) == 0 && !v->key_optional;
	p->openai_max_completion = v->max_completion_at && strstr(base, v->max_completion_at);
	if (!vendor_key(p, s, v, who, at_vendor))
		return false;
	if (!(p->model = strdup(s->model && *s->model ? s->model : v->def_model)))
		return provider_fail("%s: out of memory", who);
	if (p->format->open_models)
		p->family = model_family_of(p->model);
	if (s->think && *s->think && !(p->think = strdup(s->think)))
		return provider_fail("%s: out of memory", who);
	if (p->format->tool_pick) {
		p->tool_forced = s->computer_tool && *s->computer_tool;
		p->tool_version = p->format->tool_pick(p->model, p->tool_forced ? s->computer_tool : NULL);
		if (p->tool_version < 0)
			return provider_fail("%s: unknown computer tool version '%s'", who,
			                     s->computer_tool);
	}
	return curl_setup(p, who);
}

struct provider *provider_create(const struct provider_settings *s)
{
	const char *who = provider_kind_name(s->kind);
	struct provider *p = calloc(1, sizeof(*p));
	if (!p) {
		provider_fail("%s: out of memory", who);
		return NULL;
	}
	p->kind = s->kind;
	p->stream = !s->no_stream;
	p->retry_base_ms = env_long("DESKHAND_RETRY_BASE_MS", PROVIDER_RETRY_BASE_MS, 0, 60000);
	p->idle_timeout_s = env_long("DESKHAND_HTTP_IDLE_TIMEOUT", 300, 1, 86400);
	if (s->kind == PROVIDER_SCRIPT ? script_setup(p, s) : vendor_setup(p, s, who))
		return p;
	provider_destroy(p);
	return NULL;
}

enum provider_kind provider_kind_of(const struct provider *p)
{
	return p->kind;
}

enum model_family provider_family(const struct provider *p)
{
	return p->family;
}

const char *provider_model(const struct provider *p)
{
	return p->model;
}

const char *provider_format_name(const struct provider *p)
{
	return p->format ? p->format->name : "script";
}

const char *provider_endpoint(const struct provider *p)
{
	return p->url;
}

/* ---- retries ---------------------------------------------------------------- */

long provider_retry_delay_ms(int attempt, long base_ms, long cap_ms, long retry_after_ms,
                             uint32_t rnd)
{
	long e = base_ms < 0 ? 0 : base_ms;
	for (int i = 1; i < attempt && e < cap_ms; i++)
		e *= 2;
	if (e > cap_ms)
		e = cap_ms;
	long half = e / 2;
	long d = half + (long)(rnd % (uint32_t)(e - half + 1));
	return retry_after_ms > d ? retry_after_ms : d;
}

long provider_parse_retry_after(const char *value, time_t now)
{
	if (!value)
		return -1;
	while (*value == ' ' || *value == '\t')
		value++;
	size_t n = strlen(value);
	while (n && (value[n - 1] == ' ' || value[n - 1] == '\r' || value[n - 1] == '\n' ||
	             value[n - 1] == '\t'))
		n--;
	if (n == 0)
		return -1;
	if (strspn(value, "0123456789") >= n) {
		if (n > 9)
			return PROVIDER_RETRY_AFTER_MAX_MS + 1;
		return strtol(value, NULL, 10) * 1000;
	}
	char date[64];
	if (n >= sizeof(date))
		return -1;
	memcpy(date, value, n);
	date[n] = '\0';
	const char *why = NULL;
	if (!agent_curl_load(&why))
		return -1;
	time_t when = curl_getdate(date, NULL);
	if (when == -1)
		return -1;
	return when <= now ? 0 : (long)(when - now) * 1000;
}

/* ---- one HTTP exchange ------------------------------------------------------ */

struct exchange {
	struct provider *p;
	struct turn *t;
	const struct provider_request *req;
	struct sse_parser sse;
	struct ndjson_parser nd;
	enum { BODY_UNKNOWN, BODY_SSE, BODY_NDJSON, BODY_WHOLE } mode;
	agent_buf body;     /* whole responses and error bodies */
	long status;
	long retry_after_ms;
	bool too_big;
	bool idle;               /* aborted: nothing arrived for idle_timeout_s */
	struct timespec last_io; /* when bytes last moved either way */
	curl_off_t last_dn, last_up;
};

#define BODY_MAX (32u << 20)
#define ERROR_BODY_MAX (64u << 10)

static bool on_sse_event(void *user, const char *event, const char *data, size_t len)
{
	struct exchange *x = user;
	return x->p->format->event(x->t, event, data, len);
}

static bool on_ndjson_line(void *user, const char *line, size_t len)
{
	struct exchange *x = user;
	return x->p->format->event(x->t, NULL, line, len);
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
	curl_easy_getinfo(x->p->curl, CURLINFO_RESPONSE_CODE, &x->status);
	curl_easy_getinfo(x->p->curl, CURLINFO_CONTENT_TYPE, &ctype);
	if (x->status < 200 || x->status >= 300)
		x->mode = BODY_WHOLE;
	else if (x->p->format->ndjson && ctype && strstr(ctype, "ndjson"))
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
	struct timespec now;
	if (x->req->cancel && *x->req->cancel)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (dn != x->last_dn || un != x->last_up) {
		x->last_dn = dn;
		x->last_up = un;
		x->last_io = now;
		return 0;
	}
	long quiet_ms = (long)(now.tv_sec - x->last_io.tv_sec) * 1000 +
	                (now.tv_nsec - x->last_io.tv_nsec) / 1000000L;
	if (quiet_ms >= x->p->idle_timeout_s * 1000) {
		x->idle = true;
		return 1;
	}
	return 0;
}

enum outcome {
	OUT_OK,
	OUT_RETRY,     /* worth another attempt; provider_error() says why */
	OUT_FAIL,      /* provider_error() says why */
	OUT_CANCELLED,
};

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
static void exchange_setopts(CURL *h, const struct provider *p, const agent_buf *body,
                             struct curl_slist *headers, struct exchange *x, char *errbuf)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, p->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
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
static enum outcome turn_failed(const struct turn *t)
{
	provider_fail("%s: %s", t->who, t->error);
	return t->retriable && !t->delivered ? OUT_RETRY : OUT_FAIL;
}

static enum outcome finish_calls(struct turn *t)
{
	if (!turn_finish_calls(t) || !turn_text_calls(t, t->family)) {
		provider_fail("%s: %s", t->who, t->error);
		return OUT_FAIL;
	}
	return OUT_OK;
}

/* curl reported an error after a response began, or none began. */
static enum outcome transfer_broke(struct exchange *x, CURLcode rc, const char *errbuf)
{
	struct turn *t = x->t;
	const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
	if (x->status >= 200 && x->status < 300 &&
	    (t->done || x->mode == BODY_SSE || x->mode == BODY_NDJSON)) {
		if (t->done && !t->failed) /* everything arrived; only the goodbye broke */
			return finish_calls(t);
		provider_fail("%s: the stream was cut before the answer was complete (%s)", t->who,
		              detail);
		return t->delivered ? OUT_FAIL : OUT_RETRY;
	}
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY) {
		provider_fail("%s: cannot reach %s: %s", t->who, x->p->url, detail);
		return OUT_FAIL;
	}
	provider_fail("%s: request to %s failed: %s", t->who, x->p->url, detail);
	return curl_retriable(rc) && !t->delivered ? OUT_RETRY : OUT_FAIL;
}

/* A successful response: the stream's end or the whole body, read. */
static enum outcome body_outcome(struct exchange *x)
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
			return t->delivered ? OUT_FAIL : OUT_RETRY;
		}
	} else if (!x->p->format->body(t, x->body.data, x->body.len)) {
		provider_fail("%s: %s", t->who, t->error);
		return OUT_FAIL;
	}
	return finish_calls(t);
}

/* What the exchange came to; provider_error() says why when not OUT_OK. */
static enum outcome exchange_outcome(struct exchange *x, CURLcode rc, const char *errbuf)
{
	struct turn *t = x->t;
	const char *who = t->who;
	if (x->req->cancel && *x->req->cancel) {
		provider_fail("%s: cancelled", who);
		return OUT_CANCELLED;
	}
	if (rc == CURLE_WRITE_ERROR && (t->failed || x->sse.stopped || x->nd.stopped)) {
		if (!t->failed)
			turn_fail(t, "an event in the stream is too large");
		return turn_failed(t);
	}
	if (rc == CURLE_WRITE_ERROR && x->too_big) {
		provider_fail("%s: the response is larger than %u MB", who, BODY_MAX >> 20);
		return OUT_FAIL;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT || (rc == CURLE_ABORTED_BY_CALLBACK && x->idle)) {
		provider_fail("%s: no data from %s for %ld s", who, x->p->url, x->p->idle_timeout_s);
		return t->delivered ? OUT_FAIL : OUT_RETRY;
	}
	if (x->status >= 300 || (x->status > 0 && x->status < 200)) {
		char text[400];
		provider_error_text(x->body.data, x->body.len, text, sizeof(text));
		provider_fail("%s: HTTP %ld%s%s", who, x->status, text[0] ? ": " : "", text);
		return x->status == 408 || x->status == 429 || x->status >= 500 ? OUT_RETRY : OUT_FAIL;
	}
	if (rc != CURLE_OK)
		return transfer_broke(x, rc, errbuf);
	return body_outcome(x);
}

static enum outcome exchange_run(struct provider *p, struct turn *t,
                                 const struct provider_request *req, const agent_buf *body,
                                 struct curl_slist *headers, long *retry_after_ms)
{
	struct exchange x = {.p = p, .t = t, .req = req, .retry_after_ms = -1};
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *h = p->curl;
	sse_init(&x.sse, on_sse_event, &x);
	ndjson_init(&x.nd, on_ndjson_line, &x);
	clock_gettime(CLOCK_MONOTONIC, &x.last_io);
	exchange_setopts(h, p, body, headers, &x, errbuf);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x.status);
	*retry_after_ms = x.retry_after_ms;
	p->last_status = x.status;
	enum outcome out = exchange_outcome(&x, rc, errbuf);
	sse_clear(&x.sse);
	ndjson_clear(&x.nd);
	agent_buf_finish(&x.body);
	/* The handle keeps these pointers until the next reset. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	return out;
}

static void free_headers(struct curl_slist *l)
{
	for (struct curl_slist *i = l; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(l);
}

static bool add_header(void *user, const char *line)
{
	struct curl_slist **l = user, *n = curl_slist_append(*l, line);
	if (n)
		*l = n;
	return n != NULL;
}

static struct curl_slist *make_headers(const struct provider *p, const struct request_ctx *rc)
{
	struct curl_slist *l = NULL;
	bool ok = add_header(&l, "Content-Type: application/json") &&
	          add_header(&l, "Expect:") && /* no 100-continue round trip for large bodies */
	          add_header(&l, p->stream ? "Accept: text/event-stream" : "Accept: application/json") &&
	          p->format->headers(rc, p->api_key, add_header, &l);
	if (!ok) {
		free_headers(l);
		return NULL;
	}
	return l;
}


static uint32_t random32(void)
{
	uint32_t r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)clock();
	return r;
}

/* No figures yet: -1 where the server has not said. */
static void usage_reset(struct provider_usage *usage)
{
	memset(usage, 0, sizeof(*usage));
	usage->input_tokens = usage->output_tokens = -1;
	usage->cache_read_tokens = usage->cache_write_tokens = -1;
}

/* Tokens the conversation may take: the window less what every request
 * carries (system prompt, tools, the answer's room); 0 = no limit. */
static long context_budget(const struct provider_request *req, int max_tokens)
{
	if (req->context_window <= 0)
		return 0;
	long fixed = conv_text_tokens(req->system) + max_tokens;
	for (size_t i = 0; req->tools && i < req->tools->n; i++)
		fixed += conv_text_tokens(req->tools->tools[i].description) +
		         conv_text_tokens(req->tools->tools[i].schema_json);
	long budget = req->context_window - fixed;
	return budget < 1 ? 1 : budget;
}

/*
 * Whether message `at` (an assistant message) holds a call whose safety
 * checks were not all acknowledged: the vendor still waits for that call,
 * so --store cannot continue from the response that made it.
 */
static bool declined_check_at(const struct conv *c, size_t at)
{
	if (at >= c->n_messages || c->messages[at]->role != CONV_ASSISTANT)
		return false;
	const struct conv_message *m = c->messages[at];
	const struct conv_message *res = at + 1 < c->n_messages ? c->messages[at + 1] : NULL;
	for (size_t i = 0; i < m->n_blocks; i++) {
		const struct conv_block *b = &m->blocks[i];
		if (b->type != CONV_TOOL_CALL || !b->checks || strcmp(b->checks, "[]") == 0)
			continue;
		const struct conv_block *r = provider_find_result(res, b->id);
		if (!r || !r->ack)
			return true;
	}
	return false;
}

/* The request's body and headers for the part of c that fits (view), with
 * r the request as sent. Ownership: the caller clears view, body, *headers. */
static bool build_request(struct provider *p, struct conv *c, const struct provider_request *req,
                          struct provider_request *r, struct conv_view *view, agent_buf *body,
                          struct curl_slist **headers)
{
	const char *who = provider_kind_name(p->kind);
	int max_tokens = req->max_tokens > 0 ? req->max_tokens : 4096;
	if (!conv_view_plan(c, context_budget(req, max_tokens), req->keep_images, view))
		return provider_fail("%s: out of memory", who);
	*r = *req;
	r->max_tokens = max_tokens;
	struct request_ctx rc = {
		.conv = c, .view = view, .req = r, .model = p->model, .stream = p->stream,
		.openai_max_completion = p->openai_max_completion, .store = p->store,
		.tool_version = req->tools && req->tools->computer_width > 0 ? p->tool_version : 0,
		.think = p->think,
	};
	/* --store: continue from the kept response while the conversation only
	 * grew since and nothing was pruned; else the whole input again. */
	if (p->store && p->last_response_id && view->dropped == 0 &&
	    c->n_messages > p->last_n_messages && p->last_n_messages > 0 &&
	    !declined_check_at(c, p->last_n_messages - 1)) {
		rc.previous_response_id = p->last_response_id;
		rc.first_message = p->last_n_messages;
	}
	bool built = p->format->build(&rc, body);
	if (!built || body->oom || !(*headers = make_headers(p, &rc)))
		return provider_fail("%s: out of memory building the request", who);
	return true;
}

/* Whether one more attempt is worth it; when not, provider_error() says why. */
static bool worth_another(int attempt, long retry_after)
{
	if (retry_after > PROVIDER_RETRY_AFTER_MAX_MS) {
		char why[700];
		snprintf(why, sizeof(why), "%s", provider_error());
		provider_fail("%s (the server asks to wait %ld s; not waiting that long)", why,
		              retry_after / 1000);
		return false;
	}
	if (attempt == PROVIDER_MAX_ATTEMPTS) {
		char why[900];
		snprintf(why, sizeof(why), "%s", provider_error());
		provider_fail("%s (gave up after %d attempts)", why, attempt);
		return false;
	}
	return true;
}

/* Exchanges until one succeeds, fails for good or is cancelled. */
static enum provider_status attempt_turn(struct provider *p, struct turn *t,
                                         const struct provider_request *r, const agent_buf *body,
                                         struct curl_slist *headers,
                                         const struct provider_events *ev,
                                         struct provider_usage *usage)
{
	const char *who = provider_kind_name(p->kind);
	for (int attempt = 1;; attempt++) {
		long retry_after = -1;
		turn_clear(t);
		turn_init(t, who, ev);
		t->family = p->family;
		usage->attempts = attempt;
		enum outcome o = exchange_run(p, t, r, body, headers, &retry_after);
		if (o == OUT_OK)
			return PROVIDER_OK;
		if (o == OUT_CANCELLED)
			return PROVIDER_CANCELLED;
		if (o == OUT_FAIL || !worth_another(attempt, retry_after))
			return PROVIDER_FAILED;
		long delay = provider_retry_delay_ms(attempt, p->retry_base_ms, PROVIDER_RETRY_CAP_MS,
		                                     retry_after, random32());
		if (ev && ev->retry)
			ev->retry(ev->user, attempt, delay, provider_error());
		if (!agent_sleep_ms(delay, r->cancel)) {
			provider_fail("%s: cancelled", who);
			return PROVIDER_CANCELLED;
		}
	}
}

/* The answer joins the conversation; usage takes the server's figures. */
static enum provider_status take_answer(struct turn *t, struct conv *c,
                                        struct provider_usage *usage)
{
	long est = usage->estimated_tokens;
	size_t dropped = usage->dropped_messages;
	int attempts = usage->attempts;
	*usage = t->usage;
	usage->estimated_tokens = est;
	usage->dropped_messages = dropped;
	usage->attempts = attempts;
	if (!turn_append(t, c)) {
		provider_fail("%s: out of memory", t->who);
		return PROVIDER_FAILED;
	}
	return PROVIDER_OK;
}

/* --store: the response to continue from next time. */
static void remember_response(struct provider *p, const struct turn *t, const struct conv *c)
{
	if (!p->store)
		return;
	free(p->last_response_id);
	p->last_response_id = t->response_id[0] ? strdup(t->response_id) : NULL;
	p->last_n_messages = c->n_messages;
}

/*
 * After a failed turn: when the server refused the computer tool version
 * (HTTP 400 naming its type) and the user did not choose it, the next older
 * version becomes the session's. True: worth one more turn.
 */
static bool step_down_tool(struct provider *p, const struct provider_request *req)
{
	if (!p->format->tool_fallback || p->tool_forced || p->last_status != 400 ||
	    !req->tools || req->tools->computer_width <= 0)
		return false;
	int older = p->format->tool_fallback(p->tool_version, provider_error());
	if (older <= 0)
		return false;
	p->tool_version = older;
	return true;
}

/* One request and its answer (see provider_turn). */
static enum provider_status one_turn(struct provider *p, struct conv *c,
                                     const struct provider_request *req,
                                     const struct provider_events *ev,
                                     struct provider_usage *usage)
{
	const char *who = provider_kind_name(p->kind);
	enum provider_status status = PROVIDER_FAILED;
	struct conv_view view = {0};
	agent_buf body = {0};
	struct curl_slist *headers = NULL;
	struct provider_request r;
	struct turn t;
	turn_init(&t, who, ev);
	if (build_request(p, c, req, &r, &view, &body, &headers)) {
		usage->estimated_tokens = view.tokens;
		usage->dropped_messages = view.dropped;
		status = attempt_turn(p, &t, &r, &body, headers, ev, usage);
		if (status == PROVIDER_OK)
			status = take_answer(&t, c, usage);
		if (status == PROVIDER_OK)
			remember_response(p, &t, c);
	}
	turn_clear(&t);
	free_headers(headers);
	agent_buf_finish(&body);
	conv_view_clear(&view);
	return status;
}

enum provider_status provider_turn(struct provider *p, struct conv *c,
                                   const struct provider_request *req,
                                   const struct provider_events *ev,
                                   struct provider_usage *usage)
{
	struct provider_usage local;
	usage = usage ? usage : &local;
	usage_reset(usage);
	provider_err.text[0] = '\0';
	if (p->kind == PROVIDER_SCRIPT)
		return script_turn(p->script, c, ev, usage);
	enum provider_status status = one_turn(p, c, req, ev, usage);
	bool stepped = false;
	/* Each refusal earns one retry with the next older version. */
	while (status == PROVIDER_FAILED && step_down_tool(p, req)) {
		stepped = true;
		status = one_turn(p, c, req, ev, usage);
	}
	if (stepped && status == PROVIDER_OK && ev && ev->notice) {
		char text[300];
		snprintf(text, sizeof(text),
		         "%s: model %s refused the newer computer tool; %s worked and is "
		         "used for the rest of this session",
		         provider_kind_name(p->kind), p->model, p->format->tool_name(p->tool_version));
		ev->notice(ev->user, text);
	}
	return status;
}
