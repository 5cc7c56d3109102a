/*
 * The provider's common part: settings and keys, the HTTP exchange over
 * libcurl (streamed or whole), the assembly of an answer from events,
 * retries with backoff, cancellation and error texts. The wire formats live
 * in provider_openai.c and provider_anthropic.c, the replayed script in
 * provider_script.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "agent/curl-dl.h"
#include "agent/provider-internal.h"
#include "agent/textutil.h"
#include "config.h"

static _Thread_local char provider_err_buf[1024];

const char *provider_error(void)
{
	return provider_err_buf;
}

bool provider_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(provider_err_buf, sizeof(provider_err_buf), fmt, ap);
	va_end(ap);
	return false;
}

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

struct provider {
	enum provider_kind kind;
	char *model;
	char *url;      /* the endpoint */
	char *api_key;  /* NULL: none sent */
	bool stream;
	bool openai_max_completion;
	CURL *curl;     /* reused: keeps the connection alive between turns */
	struct script *script;
	long retry_base_ms;
	long idle_timeout_s;
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
	free(p->model);
	free(p->url);
	free(p);
}

struct provider *provider_create(const struct provider_settings *s)
{
	static bool curl_ready;
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

	if (s->kind == PROVIDER_SCRIPT) {
		if (!s->script) {
			provider_fail("script: no script file given (--script FILE)");
			goto fail;
		}
		if (!(p->script = script_load(s->script)) || !(p->url = strdup(s->script)) ||
		    !(p->model = strdup("script")))
			goto fail;
		return p;
	}

	const char *def_base, *env_base, *key_env, *suffix, *def_model;
	switch (s->kind) {
	case PROVIDER_ANTHROPIC:
		def_base = "https://api.anthropic.com";
		env_base = "ANTHROPIC_BASE_URL";
		key_env = "ANTHROPIC_API_KEY";
		suffix = "/v1/messages";
		def_model = "claude-sonnet-4-20250514";
		break;
	case PROVIDER_OLLAMA:
		def_base = "http://localhost:11434";
		env_base = NULL;
		key_env = NULL;
		suffix = "/v1/chat/completions";
		def_model = "llama3.1";
		break;
	default:
		def_base = "https://api.openai.com/v1";
		env_base = "OPENAI_BASE_URL";
		key_env = "OPENAI_API_KEY";
		suffix = "/chat/completions";
		def_model = "gpt-4o";
		break;
	}
	const char *base = s->base_url;
	if ((!base || !*base) && env_base)
		base = getenv(env_base);
	if (!base || !*base)
		base = def_base;
	if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0) {
		provider_fail("%s: base URL '%s' must start with http:// or https://", who, base);
		goto fail;
	}
	if (!header_safe(base) || strchr(base, ' ')) {
		provider_fail("%s: base URL contains spaces or control characters", who);
		goto fail;
	}
	size_t blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	if (asprintf(&p->url, "%.*s%s", (int)blen, base, suffix) < 0) {
		p->url = NULL;
		provider_fail("%s: out of memory", who);
		goto fail;
	}
	bool vendor = strcmp(base, def_base) == 0 && s->kind != PROVIDER_OLLAMA;
	p->openai_max_completion = s->kind == PROVIDER_OPENAI && strstr(base, "//api.openai.com");

	const char *key = s->api_key;
	if ((!key || !*key) && key_env)
		key = getenv(key_env);
	if (key && *key) {
		if (!header_safe(key)) {
			provider_fail("%s: the API key contains control characters", who);
			goto fail;
		}
		if (!(p->api_key = strdup(key))) {
			provider_fail("%s: out of memory", who);
			goto fail;
		}
	} else if (vendor) {
		provider_fail("%s: no API key (pass --api-key or set %s)", who, key_env);
		goto fail;
	}
	if (!(p->model = strdup(s->model && *s->model ? s->model : def_model))) {
		provider_fail("%s: out of memory", who);
		goto fail;
	}
	if (!curl_ready) {
		const char *why = NULL;
		if (!agent_curl_load(&why)) {
			provider_fail("%s: %s", who, why);
			goto fail;
		}
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			provider_fail("%s: cannot initialise libcurl", who);
			goto fail;
		}
		curl_ready = true;
	}
	if (!(p->curl = curl_easy_init())) {
		provider_fail("%s: cannot initialise libcurl", who);
		goto fail;
	}
	return p;
fail:
	provider_destroy(p);
	return NULL;
}

enum provider_kind provider_kind_of(const struct provider *p)
{
	return p->kind;
}

const char *provider_model(const struct provider *p)
{
	return p->model;
}

const char *provider_endpoint(const struct provider *p)
{
	return p->url;
}

/* ---- assembling an answer ------------------------------------------------- */

void turn_init(struct turn *t, const char *who, const struct provider_events *ev)
{
	memset(t, 0, sizeof(*t));
	t->who = who;
	t->ev = ev;
	t->text_block = -1;
	t->usage.input_tokens = t->usage.output_tokens = -1;
	t->usage.cache_read_tokens = t->usage.cache_write_tokens = -1;
	t->usage.stop = PROVIDER_STOP_END;
}

static void acc_clear(struct tool_acc *a)
{
	jb_free(&a->id);
	jb_free(&a->name);
	jb_free(&a->args);
	cJSON_Delete(a->start_input);
}

void turn_clear(struct turn *t)
{
	for (size_t i = 0; i < t->n_calls; i++)
		acc_clear(&t->calls[i]);
	free(t->calls);
	jb_free(&t->text);
	conv_message_destroy(t->msg);
	t->msg = NULL;
	t->calls = NULL;
	t->n_calls = 0;
}

bool turn_fail(struct turn *t, const char *fmt, ...)
{
	if (t->failed)
		return false; /* the first reason is the one worth telling */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
	t->failed = true;
	return false;
}

cJSON *turn_parse_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	if (root != NULL && cJSON_IsObject(root))
		return root;
	cJSON_Delete(root);
	char snippet[80];
	provider_error_text(body, len < 60 ? len : 60, snippet, sizeof(snippet));
	turn_fail(t, "the response is not JSON: \"%s\"", snippet);
	return NULL;
}

/* How many bytes at the end of s[0..n) start a UTF-8 character not yet complete. */
static size_t incomplete_tail(const char *s, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = (unsigned char)s[n - back];
		if ((c & 0xC0) == 0x80)
			continue;
		size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		return need > back ? back : 0;
	}
	return 0;
}

void turn_text(struct turn *t, const char *s, size_t n)
{
	if (n == 0)
		return;
	jb_put(&t->text, s, n);
	if (!t->ev || !t->ev->text) {
		t->delivered = true;
		return;
	}
	/* Show whole characters only: a multi-byte one may straddle two deltas. */
	char small[256];
	size_t total = t->n_hold + n;
	char *buf = total <= sizeof(small) ? small : malloc(total);
	if (!buf)
		return;
	memcpy(buf, t->hold, t->n_hold);
	memcpy(buf + t->n_hold, s, n);
	size_t tail = incomplete_tail(buf, total);
	size_t show = total - tail;
	memcpy(t->hold, buf + show, tail);
	t->n_hold = tail;
	if (show) {
		t->delivered = true;
		t->ev->text(t->ev->user, buf, show);
	}
	if (buf != small)
		free(buf);
}

static bool ensure_msg(struct turn *t)
{
	if (!t->msg && !(t->msg = calloc(1, sizeof(*t->msg))))
		return turn_fail(t, "out of memory");
	t->msg->role = CONV_ASSISTANT;
	return true;
}

bool turn_commit_text(struct turn *t)
{
	if (t->n_hold && t->ev && t->ev->text) {
		/* A character the stream never completed: show what there is. */
		t->ev->text(t->ev->user, t->hold, t->n_hold);
		t->n_hold = 0;
	}
	if (t->text.len == 0)
		return true;
	if (t->text.oom)
		return turn_fail(t, "out of memory");
	if (!ensure_msg(t) || !conv_msg_add_text(t->msg, jb_cstr(&t->text)))
		return turn_fail(t, "out of memory");
	jb_reset(&t->text);
	return true;
}

struct tool_acc *turn_call(struct turn *t, long key)
{
	for (size_t i = 0; i < t->n_calls; i++)
		if (t->calls[i].key == key && !t->calls[i].done)
			return &t->calls[i];
	struct tool_acc *grown = realloc(t->calls, (t->n_calls + 1) * sizeof(*grown));
	if (!grown) {
		turn_fail(t, "out of memory");
		return NULL;
	}
	t->calls = grown;
	struct tool_acc *a = &t->calls[t->n_calls++];
	memset(a, 0, sizeof(*a));
	a->key = key;
	return a;
}

bool turn_finish_call(struct turn *t, struct tool_acc *a)
{
	if (a->done)
		return true;
	a->done = true;
	if (!turn_commit_text(t) || !ensure_msg(t))
		return false;
	if (a->id.oom || a->name.oom || a->args.oom)
		return turn_fail(t, "out of memory");
	const char *args = jb_cstr(&a->args);
	char *printed = NULL;
	if (a->args.len == 0 && a->start_input && cJSON_GetArraySize(a->start_input) > 0)
		args = printed = cJSON_PrintUnformatted(a->start_input);
	if (a->name.len == 0) {
		free(printed);
		return turn_fail(t, "the model sent a tool call without a name");
	}
	char gen[32];
	const char *id = jb_cstr(&a->id);
	if (!*id) {
		/* Some OpenAI-compatible servers omit ids; both formats need one. */
		snprintf(gen, sizeof(gen), "call_%zu", t->msg->n_blocks);
		id = gen;
	}
	bool ok = conv_msg_add_tool_call(t->msg, id, jb_cstr(&a->name), args ? args : "");
	free(printed);
	if (!ok)
		return turn_fail(t, "out of memory");
	t->delivered = true;
	if (t->ev && t->ev->tool_call)
		t->ev->tool_call(t->ev->user, &t->msg->blocks[t->msg->n_blocks - 1]);
	return true;
}

bool turn_finish_calls(struct turn *t)
{
	for (size_t i = 0; i < t->n_calls; i++)
		if (!turn_finish_call(t, &t->calls[i]))
			return false;
	return turn_commit_text(t);
}

void turn_set_stop(struct turn *t, const char *raw)
{
	if (!raw)
		return;
	snprintf(t->usage.stop_raw, sizeof(t->usage.stop_raw), "%s", raw);
	if (!strcmp(raw, "stop") || !strcmp(raw, "end_turn") || !strcmp(raw, "stop_sequence"))
		t->usage.stop = PROVIDER_STOP_END;
	else if (!strcmp(raw, "tool_calls") || !strcmp(raw, "tool_use") ||
	         !strcmp(raw, "function_call"))
		t->usage.stop = PROVIDER_STOP_TOOL_USE;
	else if (!strcmp(raw, "length") || !strcmp(raw, "max_tokens"))
		t->usage.stop = PROVIDER_STOP_MAX_TOKENS;
	else
		t->usage.stop = PROVIDER_STOP_OTHER;
}

bool turn_append(struct turn *t, struct conv *c)
{
	if (!t->msg || t->msg->n_blocks == 0)
		return true;
	struct conv_message *m = conv_add_message(c, CONV_ASSISTANT);
	if (!m)
		return false;
	/* Hand the assembled blocks over instead of copying them. */
	m->blocks = t->msg->blocks;
	m->n_blocks = t->msg->n_blocks;
	t->msg->blocks = NULL;
	t->msg->n_blocks = 0;
	return true;
}

/* ---- shared by the formats ------------------------------------------------- */

const struct conv_block *provider_find_result(const struct conv_message *m, const char *call_id)
{
	if (!m || m->role != CONV_TOOL)
		return NULL;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_RESULT && strcmp(m->blocks[i].call_id, call_id) == 0)
			return &m->blocks[i];
	return NULL;
}

const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

long json_long(const cJSON *o, const char *key, long def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(it) || isnan(it->valuedouble))
		return def;
	/* Converting a double outside long's range is undefined: clamp first. */
	double d = it->valuedouble;
	if (d >= 9.2e18)
		return LONG_MAX;
	if (d <= -9.2e18)
		return LONG_MIN;
	return (long)d;
}

bool provider_has_calls(const struct conv_message *m)
{
	for (size_t i = 0; m && i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			return true;
	return false;
}

/* Copies at most size-1 bytes of one line of text, control characters replaced. */
/*
 * A server's text made fit for one line of a terminal: whole UTF-8
 * characters only (an invalid byte becomes '?'), C0 and C1 controls as
 * spaces (no escape sequence survives), trimmed, cut at a character
 * boundary to fit `size`.
 */
static void clean_copy(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;
	while (n && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) {
		s++;
		n--;
	}
	for (size_t i = 0; i < n;) {
		size_t k = agent_utf8_seq(s + i, n - i);
		unsigned char c = (unsigned char)s[i];
		bool c1 = k == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0;
		if (k == 0 || k == 1 || c1) {
			if (o + 1 >= size)
				break;
			out[o++] = k == 0 ? '?' : (c < 0x20 || c == 0x7f || c1) ? ' ' : (char)c;
			i += k ? k : 1;
			continue;
		}
		if (o + k >= size)
			break;
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

void provider_error_text(const char *body, size_t len, char *out, size_t size)
{
	out[0] = '\0';
	if (!body || len == 0)
		return;
	cJSON *root = cJSON_ParseWithLength(body, len);
	const char *msg = NULL, *type = NULL;
	if (root) {
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
		if (cJSON_IsString(err))
			msg = err->valuestring;
		else if (cJSON_IsObject(err)) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(err, "message");
			const cJSON *ty = cJSON_GetObjectItemCaseSensitive(err, "type");
			msg = cJSON_IsString(m) ? m->valuestring : NULL;
			type = cJSON_IsString(ty) ? ty->valuestring : NULL;
		}
		for (const char *k = "message"; !msg && k; k = strcmp(k, "message") ? NULL : "detail") {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, k);
			msg = cJSON_IsString(m) ? m->valuestring : NULL;
		}
	}
	if (msg) {
		char tmp[400];
		if (type && *type && !strstr(msg, type))
			snprintf(tmp, sizeof(tmp), "%.300s (%.60s)", msg, type);
		else
			snprintf(tmp, sizeof(tmp), "%s", msg);
		clean_copy(tmp, strlen(tmp), out, size);
	} else {
		clean_copy(body, len < 300 ? len : 300, out, size);
	}
	cJSON_Delete(root);
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
	enum { BODY_UNKNOWN, BODY_SSE, BODY_WHOLE } mode;
	struct jbuf body;     /* whole responses and error bodies */
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
	if (x->p->kind == PROVIDER_ANTHROPIC)
		return anthropic_event(x->t, event, data, len);
	return openai_event(x->t, data, len);
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
	size_t max = x->status >= 200 && x->status < 300 ? BODY_MAX : ERROR_BODY_MAX;
	if (x->body.len + n > max) {
		if (max == ERROR_BODY_MAX) /* enough of an error text: ignore the rest */
			return n;
		x->too_big = true;
		return 0;
	}
	jb_put(&x->body, buf, n);
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

static enum outcome exchange_run(struct provider *p, struct turn *t,
                                 const struct provider_request *req, const struct jbuf *body,
                                 struct curl_slist *headers, long *retry_after_ms)
{
	const char *who = t->who;
	struct exchange x = {.p = p, .t = t, .req = req, .retry_after_ms = -1};
	char errbuf[CURL_ERROR_SIZE] = "";
	enum outcome out = OUT_FAIL;
	CURL *h = p->curl;
	sse_init(&x.sse, on_sse_event, &x);
	clock_gettime(CLOCK_MONOTONIC, &x.last_io);

	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, p->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->p);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "deskhand/" DESKHAND_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");

	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x.status);
	*retry_after_ms = x.retry_after_ms;

	if (req->cancel && *req->cancel) {
		out = OUT_CANCELLED;
		provider_fail("%s: cancelled", who);
		goto out;
	}
	if (rc == CURLE_WRITE_ERROR && (t->failed || x.sse.stopped)) {
		if (!t->failed)
			turn_fail(t, "an event in the stream is too large");
		provider_fail("%s: %s", who, t->error);
		out = t->retriable && !t->delivered ? OUT_RETRY : OUT_FAIL;
		goto out;
	}
	if (rc == CURLE_WRITE_ERROR && x.too_big) {
		provider_fail("%s: the response is larger than %u MB", who, BODY_MAX >> 20);
		goto out;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT || (rc == CURLE_ABORTED_BY_CALLBACK && x.idle)) {
		provider_fail("%s: no data from %s for %ld s", who, p->url, p->idle_timeout_s);
		out = t->delivered ? OUT_FAIL : OUT_RETRY;
		goto out;
	}
	if (x.status >= 300 || (x.status > 0 && x.status < 200)) {
		char text[400];
		provider_error_text(x.body.p, x.body.len, text, sizeof(text));
		provider_fail("%s: HTTP %ld%s%s", who, x.status, text[0] ? ": " : "", text);
		out = x.status == 408 || x.status == 429 || x.status >= 500 ? OUT_RETRY : OUT_FAIL;
		goto out;
	}
	if (rc != CURLE_OK) {
		const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
		if (x.status >= 200 && x.status < 300 && (t->done || x.mode == BODY_SSE)) {
			if (t->done && !t->failed) /* everything arrived; only the goodbye broke */
				goto complete;
			provider_fail("%s: the stream was cut before the answer was complete (%s)", who,
			              detail);
			out = t->delivered ? OUT_FAIL : OUT_RETRY;
		} else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
		           rc == CURLE_COULDNT_RESOLVE_PROXY) {
			provider_fail("%s: cannot reach %s: %s", who, p->url, detail);
		} else {
			provider_fail("%s: request to %s failed: %s", who, p->url, detail);
			out = curl_retriable(rc) && !t->delivered ? OUT_RETRY : OUT_FAIL;
		}
		goto out;
	}
	if (x.mode == BODY_SSE) {
		sse_finish(&x.sse);
		if (t->failed) {
			provider_fail("%s: %s", who, t->error);
			out = t->retriable && !t->delivered ? OUT_RETRY : OUT_FAIL;
			goto out;
		}
		if (!t->done) {
			provider_fail("%s: the stream ended before the answer was complete", who);
			out = t->delivered ? OUT_FAIL : OUT_RETRY;
			goto out;
		}
	} else {
		bool ok = p->kind == PROVIDER_ANTHROPIC ? anthropic_body(t, x.body.p, x.body.len)
		                                        : openai_body(t, x.body.p, x.body.len);
		if (!ok) {
			provider_fail("%s: %s", who, t->error);
			goto out;
		}
	}
complete:
	if (!turn_finish_calls(t)) {
		provider_fail("%s: %s", who, t->error);
		goto out;
	}
	out = OUT_OK;
out:
	sse_clear(&x.sse);
	jb_free(&x.body);
	/* The handle keeps these pointers until the next reset. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	return out;
}

static struct curl_slist *make_headers(const struct provider *p, const struct provider_request *req)
{
	struct curl_slist *l = NULL, *n;
	char *line = NULL;
#define ADD(s)                                   \
	do {                                     \
		if (!(n = curl_slist_append(l, s))) \
			goto oom;                \
		l = n;                           \
	} while (0)
	ADD("Content-Type: application/json");
	ADD("Expect:"); /* no 100-continue round trip for large bodies */
	ADD(p->stream ? "Accept: text/event-stream" : "Accept: application/json");
	if (p->kind == PROVIDER_ANTHROPIC) {
		ADD("anthropic-version: 2023-06-01");
		if (req->tools && req->tools->computer_width > 0)
			ADD("anthropic-beta: computer-use-2025-01-24");
		if (p->api_key) {
			if (asprintf(&line, "x-api-key: %s", p->api_key) < 0)
				goto oom;
			ADD(line);
		}
	} else if (p->api_key) {
		if (asprintf(&line, "Authorization: Bearer %s", p->api_key) < 0)
			goto oom;
		ADD(line);
	}
#undef ADD
	wipe(line);
	return l;
oom:
	wipe(line);
	curl_slist_free_all(l);
	return NULL;
}

static void free_headers(struct curl_slist *l)
{
	for (struct curl_slist *i = l; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(l);
}

/* Sleeps ms, in short slices so that a cancel is noticed. False: cancelled. */
static bool sleep_cancellable(long ms, volatile sig_atomic_t *cancel)
{
	struct timespec now, end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		if (cancel && *cancel)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long left_ns = (long long)(end.tv_sec - now.tv_sec) * 1000000000LL +
		                    (end.tv_nsec - now.tv_nsec);
		if (left_ns <= 0)
			return true;
		struct timespec ts = {0, (long)(left_ns < 50000000LL ? left_ns : 50000000LL)};
		nanosleep(&ts, NULL);
	}
}

static uint32_t random32(void)
{
	uint32_t r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)clock();
	return r;
}

enum provider_status provider_turn(struct provider *p, struct conv *c,
                                   const struct provider_request *req,
                                   const struct provider_events *ev,
                                   struct provider_usage *usage)
{
	const char *who = provider_kind_name(p->kind);
	struct provider_usage local;
	usage = usage ? usage : &local;
	memset(usage, 0, sizeof(*usage));
	usage->input_tokens = usage->output_tokens = -1;
	usage->cache_read_tokens = usage->cache_write_tokens = -1;
	provider_err_buf[0] = '\0';
	if (p->kind == PROVIDER_SCRIPT)
		return script_turn(p->script, c, ev, usage);

	enum provider_status status = PROVIDER_FAILED;
	struct conv_view view = {0};
	struct jbuf body = {0};
	struct curl_slist *headers = NULL;
	struct turn t;
	turn_init(&t, who, ev);

	int max_tokens = req->max_tokens > 0 ? req->max_tokens : 4096;
	long budget = 0;
	if (req->context_window > 0) {
		long fixed = conv_text_tokens(req->system) + max_tokens;
		for (size_t i = 0; req->tools && i < req->tools->n; i++)
			fixed += conv_text_tokens(req->tools->tools[i].description) +
			         conv_text_tokens(req->tools->tools[i].schema_json);
		budget = req->context_window - fixed;
		if (budget < 1)
			budget = 1;
	}
	if (!conv_view_plan(c, budget, req->keep_images, &view)) {
		provider_fail("%s: out of memory", who);
		goto out;
	}
	struct provider_request r = *req;
	r.max_tokens = max_tokens;
	struct request_ctx rc = {
		.conv = c, .view = &view, .req = &r, .model = p->model, .stream = p->stream,
		.openai_max_completion = p->openai_max_completion,
	};
	bool built = p->kind == PROVIDER_ANTHROPIC ? anthropic_build(&rc, &body)
	                                           : openai_build(&rc, &body);
	if (!built || body.oom || !(headers = make_headers(p, req))) {
		provider_fail("%s: out of memory building the request", who);
		goto out;
	}
	usage->estimated_tokens = view.tokens;
	usage->dropped_messages = view.dropped;

	for (int attempt = 1;; attempt++) {
		long retry_after = -1;
		turn_clear(&t);
		turn_init(&t, who, ev);
		usage->attempts = attempt;
		enum outcome o = exchange_run(p, &t, &r, &body, headers, &retry_after);
		if (o == OUT_OK) {
			status = PROVIDER_OK;
			break;
		}
		if (o == OUT_CANCELLED) {
			status = PROVIDER_CANCELLED;
			break;
		}
		if (o == OUT_FAIL)
			break;
		if (retry_after > PROVIDER_RETRY_AFTER_MAX_MS) {
			char why[700];
			snprintf(why, sizeof(why), "%s", provider_error());
			provider_fail("%s (the server asks to wait %ld s; not waiting that long)", why,
			              retry_after / 1000);
			break;
		}
		if (attempt == PROVIDER_MAX_ATTEMPTS) {
			char why[900];
			snprintf(why, sizeof(why), "%s", provider_error());
			provider_fail("%s (gave up after %d attempts)", why, attempt);
			break;
		}
		long delay = provider_retry_delay_ms(attempt, p->retry_base_ms, PROVIDER_RETRY_CAP_MS,
		                                     retry_after, random32());
		if (ev && ev->retry)
			ev->retry(ev->user, attempt, delay, provider_error());
		if (!sleep_cancellable(delay, req->cancel)) {
			provider_fail("%s: cancelled", who);
			status = PROVIDER_CANCELLED;
			break;
		}
	}
	if (status == PROVIDER_OK) {
		long est = usage->estimated_tokens;
		size_t dropped = usage->dropped_messages;
		int attempts = usage->attempts;
		*usage = t.usage;
		usage->estimated_tokens = est;
		usage->dropped_messages = dropped;
		usage->attempts = attempts;
		if (!turn_append(&t, c)) {
			provider_fail("%s: out of memory", who);
			status = PROVIDER_FAILED;
		}
	}
out:
	turn_clear(&t);
	free_headers(headers);
	jb_free(&body);
	conv_view_clear(&view);
	return status;
}
