/*
 * agent/llm/provider — one model turn: the conversation goes out as a request in
 * the provider's wire format (OpenAI Responses, OpenAI Chat Completions, Anthropic Messages,
 * Google Gemini's generateContent, Ollama's native /api/chat, or a replayed
 * script), the answer comes back streamed (server-sent events, or Ollama's
 * newline-delimited JSON) or whole, and is delivered as events and as one
 * assistant message appended to the conversation.
 *
 * Open models (agent/llm/family.h) through Chat Completions or Ollama: the
 * calls Qwen writes as <tool_call> text and UI-TARS's "Action: ..." text
 * become calls of the message (toolsets "qwen" and "uitars"), so they pass
 * the gate like any other; UI-TARS's go back as text, their results as a
 * user message.
 *
 * The only part of deskhand that knows libcurl and the wire formats. For
 * Anthropic it also picks the computer tool version for the model
 * (anthropic_tools.h; --computer-tool overrides), steps down once per
 * HTTP 400 that refuses the tool type (the notice event says which worked),
 * keeps thinking blocks byte for byte as vendor blocks and shows their
 * summary through the thinking event. For Gemini it keeps the model's
 * content (thought signatures included) byte for byte and marks Google's
 * computer-use functions as toolset "gemini" (0..999 coordinates).
 *
 * How the loop uses it:
 *
 *   struct provider_settings s = {.kind = PROVIDER_OPENAI, .model = opt_model, ...};
 *   struct provider *p = provider_create(&s);          // NULL: provider_error()
 *   conv_add_user_text(c, line); conv_save(c);
 *   switch (provider_turn(p, c, &req, &events, &usage)) {
 *   case PROVIDER_OK:        conv_save(c); then run the tool calls of
 *                            conv_last(c) (blocks of type CONV_TOOL_CALL;
 *                            args == NULL: answer with an error result
 *                            quoting args_error), add ONE CONV_TOOL message
 *                            with a result per call, declined ones included
 *                            (conv_msg_add_tool_result; a screenshot is
 *                            stored first with conv_store_png and passed as
 *                            the image), conv_save, and call provider_turn
 *                            again while the last message has tool calls;
 *   case PROVIDER_FAILED:    print provider_error(); the conversation is unchanged;
 *   case PROVIDER_CANCELLED: Ctrl-C; the conversation is unchanged;
 *   case PROVIDER_EXHAUSTED: the script has no more turns.
 *   }
 *
 * Tool calls are executed from the appended message, never from the
 * tool_call event: a response cut after a call was announced is not appended.
 */
#ifndef DESKHAND_AGENT_PROVIDER_H
#define DESKHAND_AGENT_PROVIDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/llm/anthropic_tools.h"
#include "agent/llm/conversation.h"
#include "agent/llm/family.h"

/*
 * The settings' names (--provider, --api, --think and the config file's)
 * are one table each, by the value, read through base's helper (base.h):
 * parse and name below, the table for the lists in messages.
 */
enum provider_kind {
	PROVIDER_OPENAI,
	PROVIDER_ANTHROPIC,
	PROVIDER_OLLAMA,
	PROVIDER_SCRIPT,
	PROVIDER_GEMINI,
	PROVIDER_KIND_COUNT
};

/* "openai", "anthropic", "ollama", "script", "gemini". */
extern const char *const provider_kind_names[PROVIDER_KIND_COUNT];
/* A name -> the kind. False for anything else. */
bool provider_kind_parse(const char *name, enum provider_kind *out);
/* "?" for no kind. */
const char *provider_kind_name(enum provider_kind kind);

/*
 * Which OpenAI API: Responses at OpenAI's own endpoint (the default base
 * URL), Chat Completions at any other base (llama.cpp, vLLM, LM Studio and
 * Ollama's /v1 serve only that); --api overrides either way.
 */
enum provider_api {
	PROVIDER_API_AUTO,      /* by the endpoint; has no name */
	PROVIDER_API_RESPONSES,
	PROVIDER_API_CHAT,
	PROVIDER_API_COUNT
};

/* "responses", "chat" (--api). */
extern const char *const provider_api_names[PROVIDER_API_COUNT];
bool provider_api_parse(const char *name, enum provider_api *out);
const char *provider_api_name(enum provider_api api); /* "?" for AUTO */

/* Ollama's "think": not sent, true, false, or a level. */
enum provider_think {
	PROVIDER_THINK_NONE,    /* not sent; has no name */
	PROVIDER_THINK_TRUE,
	PROVIDER_THINK_FALSE,
	PROVIDER_THINK_LOW,
	PROVIDER_THINK_MEDIUM,
	PROVIDER_THINK_HIGH,
	PROVIDER_THINK_COUNT
};

/* "true", "false", "low", "medium", "high" (--think; also the wire's values). */
extern const char *const provider_think_names[PROVIDER_THINK_COUNT];
bool provider_think_parse(const char *name, enum provider_think *out);
const char *provider_think_name(enum provider_think think); /* "?" for NONE */

/* What the command line gives; NULL fields fall back to the environment and defaults. */
struct provider_settings {
	enum provider_kind kind;
	const char *model;    /* NULL: gpt-5.4, claude-sonnet-5-5, llama3.1, gemini-3.5-flash */
	/*
	 * NULL: OPENAI_BASE_URL or https://api.openai.com/v1 (openai),
	 * ANTHROPIC_BASE_URL or https://api.anthropic.com (anthropic),
	 * http://localhost:11434 (ollama), GOOGLE_GEMINI_BASE_URL or
	 * https://generativelanguage.googleapis.com (gemini). Requests go to
	 * {base}/chat/completions, {base}/v1/messages, {base}/api/chat and
	 * {base}/v1beta/models/{model}:generateContent (streamed:
	 * :streamGenerateContent?alt=sse) respectively ({base}/responses for the
	 * Responses API).
	 */
	const char *base_url;
	/*
	 * NULL: OPENAI_API_KEY / ANTHROPIC_API_KEY / GOOGLE_API_KEY, else
	 * GEMINI_API_KEY (Google's SDKs' order; sent as x-goog-api-key, never
	 * in the URL). Required only for the
	 * vendors' own default base URLs (a local OpenAI-compatible server or
	 * Ollama needs none). Held in memory only, wiped on destroy.
	 */
	const char *api_key;
	const char *script; /* PROVIDER_SCRIPT: the JSON file of recorded turns */
	bool no_stream;     /* ask for whole responses instead of events */
	enum provider_api api; /* PROVIDER_OPENAI only (another kind refuses responses) */
	/* Responses: keep responses at the vendor (store:true) and continue
	 * from previous_response_id; default store:false, the whole input sent. */
	bool store;
	/*
	 * Anthropic: the computer tool version (agent/llm/anthropic_tools.h);
	 * ANTHROPIC_TOOL_AUTO: picked from the model, and on an HTTP 400 that
	 * refuses the tool type the turn is retried once with the next older
	 * version, which is kept for the session (the notice event says
	 * which). Given: never changed.
	 */
	enum anthropic_tool computer_tool;
	/* Ollama: "think"; PROVIDER_THINK_NONE: not sent. */
	enum provider_think think;
	/*
	 * Seconds without a byte from the server (or to it) before an
	 * exchange is given up (retried only when nothing was shown yet);
	 * 0: DESKHAND_HTTP_IDLE_TIMEOUT, else 300.
	 */
	long idle_timeout_s;
};

/*
 * Resolves the settings and prepares the connection (nothing is sent yet).
 * Returns NULL with provider_error() set when a key is required and missing,
 * a URL or key is malformed, or the script file cannot be read or parsed.
 * Free with provider_destroy.
 */
struct provider *provider_create(const struct provider_settings *s);
void provider_destroy(struct provider *p); /* NULL: no-op */

enum provider_kind provider_kind_of(const struct provider *p);
/* The open model family (agent/llm/family.h) when the wire format serves
 * open models (Chat Completions, Ollama); MODEL_FAMILY_OTHER otherwise. */
enum model_family provider_family(const struct provider *p);
const char *provider_model(const struct provider *p);
/* "openai-responses", "openai-chat", "anthropic", "ollama", "gemini", "script": the wire format spoken. */
const char *provider_format_name(const struct provider *p);
/* The URL requests go to (never holds the key); the script's path for scripts. */
const char *provider_endpoint(const struct provider *p);

/*
 * Why the last call failed, "<provider>: ..." — e.g. "openai: HTTP 401:
 * Incorrect API key provided", "anthropic: cannot reach URL: ...". Thread-local.
 */
const char *provider_error(void);

/* A tool the model may call: name, description and a JSON Schema object. */
struct provider_tool {
	char *name;
	char *description;
	char *schema_json; /* {"type":"object","properties":{...},"required":[...]} */
};

struct provider_tools {
	size_t n;
	struct provider_tool *tools;
	/*
	 * When > 0 and the provider is Anthropic, the tool named "computer" is
	 * declared as Anthropic's native computer tool for the model (the
	 * toolset, or computer_20251124/20250124 of this size with their beta
	 * header: provider_settings.computer_tool) instead of as a function.
	 */
	int computer_width, computer_height;
};
void provider_tools_clear(struct provider_tools *t); /* frees the strings and the array */

struct provider_request {
	const char *system;                  /* system prompt; never pruned */
	const struct provider_tools *tools;  /* NULL: none */
	int max_tokens;                      /* <= 0: 4096 */
	int keep_images;                     /* newest N images sent as pixels; < 0: all */
	long context_window;                 /* tokens; <= 0: no pruning */
	volatile sig_atomic_t *cancel;       /* set non-zero (Ctrl-C) to abort; may be NULL */
	/*
	 * Anthropic: mark the system prompt (with the tools before it) and the
	 * newest message as cache breakpoints, so that the next turn reads the
	 * unchanged prefix from the provider's prompt cache instead of paying
	 * for it again. OpenAI-compatible servers cache on their own.
	 */
	bool prompt_cache;
};

/* Every callback may be NULL. Pointers passed are valid during the call only. */
struct provider_events {
	void *user;
	/* A piece of the model's text as it arrives; never splits a UTF-8 character. */
	void (*text)(void *user, const char *text, size_t len);
	/*
	 * A tool call whose arguments are complete (for display). call->args is
	 * NULL and call->args_error says why when they are not a JSON object.
	 */
	void (*tool_call)(void *user, const struct conv_block *call);
	/* A failed attempt that will be retried after delay_ms. */
	void (*retry)(void *user, int attempt, long delay_ms, const char *why);
	/* Something the user should know (the computer tool version that worked). */
	void (*notice)(void *user, const char *text);
	/* A piece of the model's summarised thinking as it arrives (shown dimmed). */
	void (*thinking)(void *user, const char *text, size_t len);
};

enum provider_stop {
	PROVIDER_STOP_END,        /* the model finished its answer */
	PROVIDER_STOP_TOOL_USE,   /* it waits for tool results */
	PROVIDER_STOP_MAX_TOKENS, /* cut by max_tokens */
	PROVIDER_STOP_OTHER,      /* anything else (refusal, ...): see stop_raw */
};

struct provider_usage {
	long input_tokens, output_tokens; /* as reported; -1: not reported */
	/* Anthropic's prompt cache: input tokens read from it and written to
	 * it (not counted in input_tokens); -1: not reported. */
	long cache_read_tokens, cache_write_tokens;
	long estimated_tokens;            /* deskhand's estimate of what it sent */
	size_t dropped_messages;          /* left out by pruning */
	int attempts;                     /* HTTP requests made (1 without retries) */
	enum provider_stop stop;
	char stop_raw[32];
};

enum provider_status {
	PROVIDER_OK,        /* an assistant message was appended to the conversation */
	PROVIDER_FAILED,    /* provider_error() says why; conversation unchanged */
	PROVIDER_CANCELLED, /* *req->cancel was set; conversation unchanged */
	PROVIDER_EXHAUSTED, /* the script has no turn left; conversation unchanged */
};

/*
 * One model turn. Sends the conversation (pruned to context_window, with the
 * newest keep_images images; a tool call without a recorded result is sent
 * with an error result "[no result recorded]" so both wire formats accept
 * it), streams the answer through `ev`, and on success appends the complete
 * assistant message (text blocks and tool calls, in order; nothing when the
 * model said nothing) to `c`. Does not save: the caller calls conv_save.
 *
 * Retries (at most 5 attempts, exponential backoff with jitter from 500 ms,
 * or DESKHAND_RETRY_BASE_MS; Retry-After honoured): HTTP 408, 429, 5xx,
 * a connection dropped, and a stream that ends early or reports an overload
 * before anything was delivered. Never retried: other statuses, an
 * unreachable server, garbage, and a stream cut after text or a tool call was
 * delivered — that ends in PROVIDER_FAILED ("the stream was cut ...") and the
 * partial answer is NOT added to the conversation (the text was shown; the
 * caller may say it was interrupted).
 *
 * usage (may be NULL) is filled on every outcome.
 */
enum provider_status provider_turn(struct provider *p, struct conv *c,
                                   const struct provider_request *req,
                                   const struct provider_events *ev,
                                   struct provider_usage *usage);

/* Whether the HTTP library loads (it is loaded at run time); false with
 * *why, a static text naming the package to install. */
bool provider_http_ready(const char **why);

#endif
