/*
 * The provider's common part: the vendors and their keys, the settings, the
 * request built from the conversation, retries with backoff, cancellation
 * and error texts, and the turn that takes the answer into the
 * conversation. The HTTP exchange itself (streamed or whole) is http.c.
 * What differs between APIs is a struct provider_format (one file per
 * format: provider_openai.c, provider_responses.c, provider_anthropic.c,
 * provider_gemini.c, provider_ollama.c), chosen through the vendor table
 * below; the answer is assembled by turn.c; the replayed script is
 * provider_script.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "agent/llm/http-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

BASE_ERROR_TEXT(, provider_err, provider_error, provider_fail)

const char *const provider_kind_names[PROVIDER_KIND_COUNT] = {
	[PROVIDER_OPENAI] = "openai",
	[PROVIDER_ANTHROPIC] = "anthropic",
	[PROVIDER_OLLAMA] = "ollama",
	[PROVIDER_SCRIPT] = "script",
	[PROVIDER_GEMINI] = "gemini",
};
BASE_NAME_FUNCTIONS(enum provider_kind, provider_kind_names, provider_kind_parse,
                    provider_kind_name, "?")

const char *const provider_api_names[PROVIDER_API_COUNT] = {
	[PROVIDER_API_RESPONSES] = "responses",
	[PROVIDER_API_CHAT] = "chat",
};
BASE_NAME_FUNCTIONS(enum provider_api, provider_api_names, provider_api_parse,
                    provider_api_name, "?")

const char *const provider_think_names[PROVIDER_THINK_COUNT] = {
	[PROVIDER_THINK_TRUE] = "true",
	[PROVIDER_THINK_FALSE] = "false",
	[PROVIDER_THINK_LOW] = "low",
	[PROVIDER_THINK_MEDIUM] = "medium",
	[PROVIDER_THINK_HIGH] = "high",
};
BASE_NAME_FUNCTIONS(enum provider_think, provider_think_names, provider_think_parse,
                    provider_think_name, "?")

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
	const char *key_env_alt;       /* read when key_env is unset */
	bool model_in_path;            /* {base}{suffix}{model}:method (Google) */
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
	/* Google's SDKs read these variables, GOOGLE_API_KEY first when both are set. */
	[PROVIDER_GEMINI] = {&provider_format_gemini, "https://generativelanguage.googleapis.com",
	                     "GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY", "/v1beta/models/",
	                     "gemini-3.5-flash", false, NULL, "GEMINI_API_KEY", true},
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
	struct http *http; /* reused: keeps the connection alive between turns */
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
	enum provider_think think; /* Ollama's think */
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
	http_close(p->http);
	script_destroy(p->script);
	wipe(p->api_key);
	free(p->last_response_id);
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
	/* Google names the model and the method in the path. */
	const char *model = v->model_in_path ? p->model : "";
	const char *method = !v->model_in_path ? "" : p->stream ? ":streamGenerateContent?alt=sse"
	                     : ":generateContent";
	if (v->model_in_path && (!*model || strspn(model, "abcdefghijklmnopqrstuvwxyz"
	                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
	                         strlen(model)))
		return provider_fail("%s: model name '%s' is not a model id (letters, digits, . - _)",
		                     who, model);
	if (asprintf(&p->url, "%.*s%s%s%s", (int)blen, b, v->suffix, model, method) < 0) {
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
	if ((!key || !*key) && v->key_env_alt)
		key = getenv(v->key_env_alt);
	if (key && *key) {
		if (!header_safe(key))
			return provider_fail("%s: the API key contains control characters", who);
		if (!(p->api_key = strdup(key)))
			return provider_fail("%s: out of memory", who);
	} else if (at_vendor) {
		return provider_fail("%s: no API key (pass --api-key or set %s%s%s)", who, v->key_env,
		                     v->key_env_alt ? " or " : "", v->key_env_alt ? v->key_env_alt : "");
	}
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
	if (!(p->model = strdup(s->model && *s->model ? s->model : v->def_model)))
		return provider_fail("%s: out of memory", who);
	const char *base;
	if (!vendor_url(p, s, v, who, &base))
		return false;
	bool at_vendor = strcmp(base, v->def_base) == 0 && !v->key_optional;
	p->openai_max_completion = v->max_completion_at && strstr(base, v->max_completion_at);
	if (!vendor_key(p, s, v, who, at_vendor))
		return false;
	if (p->format->open_models)
		p->family = model_family_of(p->model);
	p->think = s->think;
	if (p->format->tool_pick) {
		p->tool_forced = s->computer_tool != ANTHROPIC_TOOL_AUTO;
		p->tool_version = p->format->tool_pick(p->model, (int)s->computer_tool);
		if (p->tool_version < 0)
			return provider_fail("%s: unknown computer tool version %d", who,
			                     (int)s->computer_tool);
	}
	return (p->http = http_open(who)) != NULL;
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
	p->idle_timeout_s = s->idle_timeout_s > 0 ? s->idle_timeout_s
	                    : env_long("DESKHAND_HTTP_IDLE_TIMEOUT", 300, 1, 86400);
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
	time_t when = http_date(date);
	if (when == -1)
		return -1;
	return when <= now ? 0 : (long)(when - now) * 1000;
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
		const struct conv_block *r = conv_find_result(res, b->id);
		if (!r || !r->ack)
			return true;
	}
	return false;
}

/* The request's body and headers for the part of c that fits (view), with
 * r the request as sent. Ownership: the caller clears view, body, *headers. */
static bool build_request(struct provider *p, struct conv *c, const struct provider_request *req,
                          struct provider_request *r, struct conv_view *view, agent_buf *body,
                          struct http_headers **headers)
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
	if (!built || body->oom || !(*headers = http_headers_make(p->format, &rc, p->api_key)))
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
                                         const struct http_headers *headers,
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
		struct http_request rq = {
			.url = p->url, .body = body, .headers = headers, .format = p->format,
			.idle_timeout_s = p->idle_timeout_s, .cancel = r->cancel,
		};
		enum http_outcome o = http_exchange(p->http, &rq, t, &p->last_status, &retry_after);
		if (o == HTTP_OUT_OK)
			return PROVIDER_OK;
		if (o == HTTP_OUT_CANCELLED)
			return PROVIDER_CANCELLED;
		if (o == HTTP_OUT_FAIL || !worth_another(attempt, retry_after))
			return PROVIDER_FAILED;
		long delay = provider_retry_delay_ms(attempt, p->retry_base_ms, PROVIDER_RETRY_CAP_MS,
		                                     retry_after, random32());
		if (ev && ev->retry)
			ev->retry(ev->user, attempt, delay, provider_error());
		if (!base_sleep_ms(delay, r->cancel)) {
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
	struct http_headers *headers = NULL;
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
	http_headers_free(headers);
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
