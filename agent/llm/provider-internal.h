/*
 * The model side's inner door, private to agent/provider*.c, turn.c, sse.c,
 * jbuf.c, anthropic_tools.c, conv_file.c (the file is written with the text
 * builder too) and their tests: the JSON text builder, the server-sent-events
 * parser, the per-turn state the wire formats fill (turn.c), the table of
 * functions a wire format implements (struct provider_format), and the
 * pieces the retry logic is made of. Dependencies run one way: provider.c
 * and its HTTP exchange (http.c, http-internal.h) -> formats ->
 * turn/sse/jbuf; no format calls back into provider.c or http.c.
 */
#ifndef DESKHAND_AGENT_PROVIDER_INTERNAL_H
#define DESKHAND_AGENT_PROVIDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "agent/llm/conversation.h"
#include "agent/llm/family.h"
#include "agent/llm/provider.h"
#include "agent/util/textutil.h"

/* Sets provider_error() from a printf format. Always returns false. */
bool provider_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- JSON text written into the one buffer type (agent/util) -------------- */

/* A decimal number. */
void jb_long(agent_buf *b, long v);
/* The "," before every item of a list but the first (*first: none written yet). */
void jb_sep(agent_buf *b, bool *first);
/* A JSON string literal of s (quotes included); invalid UTF-8 becomes U+FFFD. */
void jb_str(agent_buf *b, const char *s);
void jb_strn(agent_buf *b, const char *s, size_t n);
/* A cJSON value, printed compactly. */
void jb_json(agent_buf *b, const cJSON *v);
/*
 * The base64 of a file's bytes, encoded straight into the buffer (no copy of
 * the file is kept). False (buffer unchanged) when the file cannot be read.
 */
bool jb_base64_file(agent_buf *b, const char *path);
/* The base64 of an image of c: from memory while it is the newest stored
 * (conv_image_bytes), else from its file. False (buffer unchanged) when it
 * cannot be had. */
bool jb_base64_image(agent_buf *b, const struct conv *c, const struct conv_image *img);

/*
 * Raw JSON spans, for what must go back byte for byte: the value of member
 * `key` of the object starting at s[i] (skipping blanks), or element k of
 * the array starting there, as an offset and length into s[0..n). False
 * when absent or malformed. The text is not validated beyond its nesting.
 */
bool json_member_span(const char *s, size_t n, size_t i, const char *key, size_t *off,
                      size_t *len);
bool json_element_span(const char *s, size_t n, size_t i, int k, size_t *off, size_t *len);

/* ---- server-sent events --------------------------------------------------- */

/*
 * Called per event: `event` is the event field ("message" when absent),
 * `data` the data lines joined by "\n" (NUL-terminated, len bytes). Returns
 * false to stop the stream.
 */
typedef bool (*sse_event_fn)(void *user, const char *event, const char *data, size_t len);

struct sse_parser {
	sse_event_fn fn;
	void *user;
	agent_buf line, data;
	char event[64];
	bool have_data, after_cr, started, stopped;
	size_t max_event; /* bytes; a larger event fails the stream */
};

void sse_init(struct sse_parser *s, sse_event_fn fn, void *user);
void sse_clear(struct sse_parser *s);
/*
 * Feeds bytes as they come off the network, split anywhere (lines may end in
 * LF, CRLF or CR, even with the CR and LF in different chunks). Returns false
 * once the callback refused an event or an event exceeded max_event.
 */
bool sse_feed(struct sse_parser *s, const char *bytes, size_t n);
/* End of stream: a last event without its blank line is still dispatched. */
bool sse_finish(struct sse_parser *s);

/* ---- newline-delimited JSON (Ollama's stream) ----------------------------- */

/* Called per line that is not blank (NUL-terminated, len bytes, no line end). */
typedef bool (*ndjson_line_fn)(void *user, const char *line, size_t len);

struct ndjson_parser {
	ndjson_line_fn fn;
	void *user;
	agent_buf line;
	bool stopped;
	size_t max_line; /* bytes; a longer line fails the stream */
};

void ndjson_init(struct ndjson_parser *n, ndjson_line_fn fn, void *user);
void ndjson_clear(struct ndjson_parser *n);
/* Feeds bytes split anywhere (lines end in LF or CRLF). False once the
 * callback refused a line or a line exceeded max_line. */
bool ndjson_feed(struct ndjson_parser *n, const char *bytes, size_t len);
/* End of stream: a last line without its newline is still dispatched. */
bool ndjson_finish(struct ndjson_parser *n);

/* ---- a turn in progress ---------------------------------------------------- */

struct tool_acc {
	long key;             /* OpenAI: tool_calls[].index; Anthropic: content block index */
	agent_buf id, name, args;
	cJSON *start_input;   /* Anthropic: the input given in content_block_start */
	const agent_dialect *dialect; /* the vendor's tool group the name belongs to; NULL: none */
	cJSON *raw;           /* the block as received (input filled in when done); NULL: none */
	const char *vendor;   /* whose raw it is (static) */
	bool done;
};

struct turn {
	const struct provider_events *ev;
	const char *who;              /* provider name for messages */
	struct conv_message *msg;     /* the answer being assembled (not in the conversation) */
	agent_buf text;             /* the current text block */
	char hold[4];                 /* an incomplete UTF-8 character not yet shown */
	size_t n_hold;
	struct tool_acc *calls;
	size_t n_calls;
	bool delivered;               /* something reached ev->text or ev->tool_call */
	bool done;                    /* the protocol's end marker was seen */
	bool failed;                  /* the stream said something fatal: error holds it */
	bool retriable;               /* ... and trying again may help (overload) */
	char error[512];
	struct provider_usage usage;
	long text_block;              /* Anthropic: index of the open text block, -1 none */
	bool streamed_text;           /* Responses: the open message's text came as deltas */
	char response_id[128];        /* Responses: the response's id ("" none) */
	/* Anthropic: the thinking block being streamed (blocks arrive one at a
	 * time), its index, and its thinking and signature deltas so far. */
	cJSON *vblock;
	long vblock_index;
	agent_buf vthink, vsig;
	enum model_family family;     /* open models: calls in the text are read (turn_text_calls) */
	/* Gemini: the content's parts so far, each as received, joined by commas. */
	agent_buf gparts;
};

void turn_init(struct turn *t, const char *who, const struct provider_events *ev);
void turn_clear(struct turn *t);
/* Text arriving: shown through ev->text (whole characters only) and kept. */
void turn_text(struct turn *t, const char *s, size_t n);
/* Thinking text arriving: shown through ev->thinking, not kept (the vendor block keeps it). */
void turn_thinking(struct turn *t, const char *s, size_t n);
/* A vendor block (text committed first, so it keeps its place). False: out of
 * memory, or raw is not valid UTF-8 and could not go back unchanged (t->error). */
bool turn_add_vendor(struct turn *t, const char *vendor, const char *raw, const char *shown);
/* Ends the current text block: adds it to the message when not empty. */
bool turn_commit_text(struct turn *t);
/* The accumulator for `key`, created on first use; NULL when out of memory. */
struct tool_acc *turn_call(struct turn *t, long key);
/* Parses, appends and announces a finished call (text committed first). */
bool turn_finish_call(struct turn *t, struct tool_acc *a);
/*
 * A whole call as received (formats whose items arrive complete), with the
 * vendor's extras: appended after the text so far, announced. False: out of
 * memory or invalid UTF-8 in raw (t->error says so).
 */
bool turn_add_call(struct turn *t, const char *id, const char *name, const char *args,
                   const struct conv_call_extra *x);
/* Finishes every call not yet finished, in the order they started. */
bool turn_finish_calls(struct turn *t);
__attribute__((format(printf, 2, 3)))
bool turn_fail(struct turn *t, const char *fmt, ...);
/*
 * A whole (non-streamed) response parsed as a JSON object; NULL after
 * turn_fail with a snippet of what came instead. The caller deletes it.
 */
cJSON *turn_parse_body(struct turn *t, const char *body, size_t len);
void turn_set_stop(struct turn *t, const char *raw);
/*
 * Open models' calls written into the text (agent/llm/family.h): for the
 * Qwen families <tool_call> blocks become calls and every computer_use
 * call gets toolset "qwen"; for UI-TARS the actions after "Action:" become
 * calls of toolset "uitars" while the text stays as it is (the model reads
 * its own "Thought/Action" text back). Other families: nothing changes.
 * False: out of memory (t->error).
 */
bool turn_text_calls(struct turn *t, enum model_family f);
/* Moves the assembled answer (if it has any block) into the conversation. False: out of memory. */
bool turn_append(struct turn *t, struct conv *c);

/* ---- wire formats --------------------------------------------------------- */

struct request_ctx {
	const struct conv *conv;
	const struct conv_view *view;
	const struct provider_request *req;
	const char *model;
	bool stream;
	/* Responses: keep the response at the vendor (--store) and continue
	 * from previous_response_id (NULL: send the whole input), sending only
	 * the messages from first_message on. */
	bool store;
	const char *previous_response_id;
	size_t first_message;
	bool openai_max_completion; /* api.openai.com wants max_completion_tokens */
	int tool_version;           /* the format's computer tool version (tool_pick); 0: none */
	enum provider_think think;  /* Ollama: --think (PROVIDER_THINK_NONE: not sent) */
};

/* Adds one request header line ("Name: value"); false when out of memory. */
typedef bool (*wire_header_fn)(void *user, const char *line);

/*
 * A wire format: everything that differs between model APIs, as one table
 * of functions (one file per format implements it; provider.c registers
 * each with its vendors and never names a format otherwise). The shared
 * turn (above), SSE and HTTP code stay the same for all of them.
 */
struct provider_format {
	const char *name;
	/* The request body. False only when out of memory (the buffer is then unusable). */
	bool (*build)(const struct request_ctx *rc, agent_buf *body);
	/* The format's own headers (API version, feature flags, the key, which may be NULL). */
	bool (*headers)(const struct request_ctx *rc, const char *api_key,
	                wire_header_fn add, void *user);
	/* One event of a stream (`event`: its SSE event name). False: the stream is bad (t->error set). */
	bool (*event)(struct turn *t, const char *event, const char *data, size_t len);
	/* A whole (non-streamed) response body. */
	bool (*body)(struct turn *t, const char *body, size_t len);
	/*
	 * Optional, for formats with versions of a computer tool: the version
	 * for `model`, or `forced` (0: from the model); -1 when forced is no
	 * version. The older version to retry with after an HTTP 400 whose
	 * message is `why` (0: none, do not retry), and a version's name.
	 */
	int (*tool_pick)(const char *model, int forced);
	int (*tool_fallback)(int version, const char *why);
	const char *(*tool_name)(int version);
	/* Open models speak it: their calls written in text are read (turn_text_calls). */
	bool open_models;
	/* A stream is newline-delimited JSON: each line goes to event() with event NULL. */
	bool ndjson;
};

/* OpenAI's headers (the key as a bearer token), for both of its formats. */
bool openai_bearer_headers(const struct request_ctx *rc, const char *api_key,
                           wire_header_fn add, void *user);
/*
 * An "error" member of an answer object (root; data[0, len) its text), as
 * OpenAI's Chat Completions and Ollama send it: fails the turn with the
 * server's own text. True when there is none (or it is null).
 */
bool openai_take_error(struct turn *t, const char *data, size_t len, const cJSON *root);
extern const struct provider_format provider_format_openai;    /* Chat Completions */
extern const struct provider_format provider_format_anthropic; /* Messages */
extern const struct provider_format provider_format_responses; /* OpenAI Responses */
extern const struct provider_format provider_format_ollama;    /* Ollama's /api/chat */
extern const struct provider_format provider_format_gemini;    /* Google generateContent */

/* Adds "<name>: <secret>" through add and wipes the copy it made. */
bool wire_header_secret(wire_header_fn add, void *user, const char *name, const char *secret);

/* The text for the note that replaces a tool result image, or a missing one. */
#define PROVIDER_IMAGE_MISSING "[screenshot file missing]"
#define PROVIDER_NO_RESULT "[no result recorded: the call was interrupted]"

/* The block's item as received when it came from wire format `vendor`, else NULL. */
const char *provider_raw(const struct conv_block *bl, const char *vendor);

/* o[key] when it is a string, else NULL (o may be NULL). */
const char *json_str(const cJSON *o, const char *key);
/* o[key] as a whole number (fraction dropped, clamped to long), else def. */
long json_long(const cJSON *o, const char *key, long def);

/* The server's own error text from an error body: error.message, message, detail or the text. */
void provider_error_text(const char *body, size_t len, char *out, size_t size);

/* ---- retries --------------------------------------------------------------- */

#define PROVIDER_MAX_ATTEMPTS 5
#define PROVIDER_RETRY_BASE_MS 500
#define PROVIDER_RETRY_CAP_MS 30000
#define PROVIDER_RETRY_AFTER_MAX_MS 300000 /* a longer Retry-After ends the turn */

/*
 * Delay before retrying after failed attempt `attempt` (1-based):
 * e = min(cap, base * 2^(attempt-1)); a uniform value in [e/2, e] drawn from
 * `rnd`; never less than retry_after_ms (-1: none).
 */
long provider_retry_delay_ms(int attempt, long base_ms, long cap_ms, long retry_after_ms,
                             uint32_t rnd);
/* Retry-After as delay-seconds or an HTTP-date, in ms from `now`; -1 when unparsable. */
long provider_parse_retry_after(const char *value, time_t now);

/* ---- the script provider --------------------------------------------------- */

struct script;
struct script *script_load(const char *path); /* NULL: provider_error() */
void script_destroy(struct script *s);
enum provider_status script_turn(struct script *s, struct conv *c,
                                 const struct provider_events *ev, struct provider_usage *u);

#endif
