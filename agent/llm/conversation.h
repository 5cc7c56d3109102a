/*
 * agent/llm/conversation — the provider-neutral conversation: messages made of
 * content blocks (text, images, tool calls, tool results), its JSON file
 * written atomically after every message, the screenshots stored as PNG
 * files beside it, the listing behind --conversations, a token estimate and
 * the pruning rule that fits a request into the context window.
 *
 * Nothing here knows a wire format or libcurl: agent/provider turns a
 * conversation into a request. The system prompt is not a message: it is
 * handed to every request by the caller, so pruning can never drop it and it
 * always describes the current screen.
 *
 * The file never holds an API key: a conversation has no field that could
 * carry one.
 *
 * File format (version 1, JSON, UTF-8):
 *   {"format": "deskhand-conversation", "version": 1,
 *    "created": "2025-01-31T10:00:00Z", "updated": "...",
 *    "messages": [
 *      {"role": "user", "content": [{"type": "text", "text": "..."},
 *                                   {"type": "image", "path": "...", "width": W, "height": H}]},
 *      {"role": "assistant", "content": [{"type": "text", "text": "..."},
 *          {"type": "tool_call", "id": "...", "name": "...", "arguments": "<raw JSON text>"}]},
 *      {"role": "tool", "content": [{"type": "tool_result", "call_id": "...",
 *          "text": "...", "is_error": false,
 *          "image": {"path": "NAME.images/0001.png", "width": W, "height": H}}]}]}
 *
 * Version 2 adds what the 2026 vendor APIs need kept exactly; a file uses
 * it only when it holds one of them (so older deskhands still read the rest):
 *  - {"type": "vendor", "vendor": "anthropic", "raw": "<JSON text>", "text": "..."}
 *    in assistant messages: an item only its own wire format understands and
 *    that must go back byte for byte (thinking, redacted_thinking, reasoning
 *    with encrypted_content); "text" is what the user was shown of it;
 *  - on tool calls: "toolset" (the vendor's tool group the call's name
 *    belongs to: Anthropic's computer toolset names each action as a tool),
 *    "vendor" + "raw" (the call exactly as received, echoed to that vendor
 *    instead of being rebuilt), "checks" (the vendor's pending safety checks,
 *    a JSON array, each put to the human);
 *  - on tool results: "ack" (the checks the human acknowledged, a JSON array).
 * Image paths are relative to the conversation's directory and must stay
 * inside it (conv_load refuses "..", absolute paths and odd characters: a
 * crafted file must not send an arbitrary file of the user's to the model).
 */
#ifndef DESKHAND_AGENT_CONVERSATION_H
#define DESKHAND_AGENT_CONVERSATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "agent/tools/tools.h"

#define CONV_FORMAT_VERSION 2

/*
 * Token estimate: text costs ceil(bytes / 4); every image sent costs
 * CONV_IMAGE_TOKENS (a 1280x800 screenshot is about 1,370 tokens for
 * Anthropic and 1,105 for OpenAI at high detail: 1,600 bounds both for the
 * sizes deskhand sends); an image replaced by its note costs the note's text;
 * every message costs CONV_MESSAGE_TOKENS of framing, every tool call or
 * result block CONV_BLOCK_TOKENS.
 */
#define CONV_IMAGE_TOKENS 1600
#define CONV_MESSAGE_TOKENS 4
#define CONV_BLOCK_TOKENS 8

/* The note that stands for an image older than the newest keep_images. */
#define CONV_IMAGE_OMITTED "[screenshot omitted]"

enum conv_role {
	CONV_USER,      /* the human (text, images) */
	CONV_ASSISTANT, /* the model (text, tool calls) */
	CONV_TOOL,      /* results of the previous assistant message's tool calls */
};

enum conv_block_type {
	CONV_TEXT,
	CONV_IMAGE,       /* user messages */
	CONV_TOOL_CALL,   /* assistant messages */
	CONV_TOOL_RESULT, /* tool messages */
	CONV_VENDOR,      /* assistant messages: kept for one wire format only (see above) */
};

/* A PNG beside the conversation file, and its size in the model's pixels. */
struct conv_image {
	char *path; /* relative to the conversation's directory; NULL: none */
	int width, height;
};

struct conv_block {
	enum conv_block_type type;
	/* CONV_TEXT: the text. CONV_TOOL_RESULT: the result text ("" if none). */
	char *text;
	/* CONV_TOOL_CALL */
	char *id;
	char *name;
	char *arguments;  /* the raw text the model sent (valid UTF-8) */
	cJSON *args;      /* arguments parsed; NULL when they are not a JSON object */
	char *args_error; /* why args is NULL ("" otherwise) */
	/* Whose vocabulary the call is in: its "toolset" in the file, made
	 * the dialect once when the block is built; deskhand's own tools:
	 * agent_dialect_deskhand. Never NULL. */
	const agent_dialect *dialect;
	char *checks;     /* pending safety checks (JSON array text); NULL: none */
	/* CONV_VENDOR, and optionally CONV_TOOL_CALL: the item as received */
	char *vendor;     /* the wire format it belongs to ("anthropic", "openai-responses") */
	char *raw;        /* its JSON text, byte for byte */
	/* CONV_TOOL_RESULT */
	char *call_id;
	bool is_error;
	char *ack;        /* acknowledged safety checks (JSON array text); NULL: none */
	/* CONV_IMAGE, and the optional screenshot of a CONV_TOOL_RESULT */
	struct conv_image image;
};

struct conv_message {
	enum conv_role role;
	size_t n_blocks;
	struct conv_block *blocks;
};

struct conv {
	char *path;            /* the JSON file; NULL: in memory only */
	time_t created, updated;
	size_t n_messages;
	struct conv_message **messages; /* pointers stay valid until removed */
	unsigned next_image;   /* number of the next stored PNG */
	/* The newest stored PNG, kept: the request after it sends it. */
	struct {
		char *path;        /* as in its conv_image; NULL: none */
		uint8_t *png;
		size_t len;
	} newest;
};

/* Why the last conv_* call failed. Thread-local; overwritten by the next failure. */
const char *conv_error(void);

/*
 * A new, empty conversation bound to `path` (NULL: in memory only; save and
 * image storage then fail). Nothing is written until conv_save. Returns NULL
 * only when out of memory. Free with conv_destroy.
 */
struct conv *conv_create(const char *path);
void conv_destroy(struct conv *c); /* NULL: no-op */

/*
 * Reads a conversation file. Returns NULL with conv_error() set when the
 * file cannot be read, is not JSON, is not a deskhand conversation, has a
 * newer format version, or holds an image path outside its directory.
 */
struct conv *conv_load(const char *path);
/*
 * The same from the file's text (NUL-terminated); `path` names it in
 * messages and anchors its image paths. Ownership as conv_load.
 */
struct conv *conv_parse(const char *path, const char *text);

/*
 * Writes the conversation to c->path atomically: a temporary file in the
 * same directory (mode 0600), fsync, rename over the old file, fsync of the
 * directory. After a crash the file is either the old or the new version,
 * never a mix; no temporary file is left behind on failure. Sets `updated`.
 */
bool conv_save(struct conv *c);
/*
 * conv_save with a witness: vouch(user, path, text, len) is handed the
 * exact bytes before they replace the file (text is borrowed for the
 * call). A record made there is never behind the file: after a crash the
 * file is what the last record vouched for, or what the one before did.
 * vouch returning false saves nothing (conv_error() says only that; the
 * witness keeps its own reason).
 */
typedef bool (*conv_witness)(void *user, const char *path, const char *text, size_t len);
bool conv_save_witnessed(struct conv *c, conv_witness vouch, void *user);

/*
 * Stores a PNG beside the conversation file ("STEM.images/NNNN.png", mode
 * 0600, written atomically and fsynced before this returns, so a message
 * that references it can be saved next) and fills *img with its relative
 * path (owned by *img: conv_image_clear) and the given size. The newest
 * image's bytes stay in memory too (the next request sends them:
 * conv_image_bytes); older ones are read back from their files.
 */
bool conv_store_png(struct conv *c, const void *png, size_t len, int width, int height,
                    struct conv_image *img);
void conv_image_clear(struct conv_image *img);

/* The directory the conversation's file is in ("." for a bare name): malloc'd,
 * NULL when out of memory or in memory only. */
char *conv_dir(const struct conv *c);
/* The absolute (or cwd-relative) path of an image: malloc'd, NULL when out of memory. */
char *conv_image_file(const struct conv *c, const struct conv_image *img);
/* The bytes of img while it is the newest image stored and its file is
 * still there: borrowed, valid until the next conv_store_png or
 * conv_destroy; NULL otherwise (read the file). */
const uint8_t *conv_image_bytes(const struct conv *c, const struct conv_image *img, size_t *len);

/*
 * Appends an empty message; returns it (owned by the conversation, valid
 * until conv_undo/conv_reset/conv_destroy) or NULL when out of memory.
 */
struct conv_message *conv_add_message(struct conv *c, enum conv_role role);
/* Frees a message that was never added to a conversation. NULL: no-op. */
void conv_message_destroy(struct conv_message *m);
/* The last message, or NULL when the conversation is empty. */
struct conv_message *conv_last(const struct conv *c);

/*
 * Block builders. Each copies its strings and returns false only when out of
 * memory (or, for images, when the path is not a safe relative path).
 * conv_msg_add_tool_call parses `arguments`: invalid UTF-8 is replaced by
 * U+FFFD first; when the text is not a JSON object the block keeps args NULL
 * and says why in args_error, so the caller can answer the model with an
 * error result. "" counts as {} (a call without arguments).
 */
bool conv_msg_add_text(struct conv_message *m, const char *text);
bool conv_msg_add_image(struct conv_message *m, const struct conv_image *img);
bool conv_msg_add_tool_call(struct conv_message *m, const char *id, const char *name,
                            const char *arguments);
/* img may be NULL (no screenshot); its path is copied. */
bool conv_msg_add_tool_result(struct conv_message *m, const char *call_id, const char *text,
                              bool is_error, const struct conv_image *img);

/*
 * What a 2026 vendor API needs kept with a call or a result (see the file
 * format above): the call's dialect (the toolset), and the vendor's own
 * items. Every field may be NULL. raw must be a JSON object, checks
 * (and a result's ack) a JSON array, in valid UTF-8 (false otherwise: they
 * go into requests as they are); they are kept byte for byte.
 */
struct conv_call_extra {
	const agent_dialect *dialect;      /* NULL: deskhand's own tools */
	const char *vendor, *raw, *checks;
};
bool conv_msg_add_tool_call_ex(struct conv_message *m, const char *id, const char *name,
                               const char *arguments, const struct conv_call_extra *x);
bool conv_msg_add_tool_result_ex(struct conv_message *m, const char *call_id, const char *text,
                                 bool is_error, const struct conv_image *img, const char *ack);
/*
 * An item for one wire format only, kept byte for byte: `raw` must be a JSON
 * object in valid UTF-8 (false otherwise: the item could not go back
 * unchanged, or would break every later request); `text` is
 * what the user was shown of it (may be NULL).
 */
bool conv_msg_add_vendor(struct conv_message *m, const char *vendor, const char *raw,
                         const char *text);

/* ---- what a request asks of a message -------------------------------------- */

/* The result block answering `call_id` in `m` (a CONV_TOOL message; NULL
 * allowed), or NULL. */
const struct conv_block *conv_find_result(const struct conv_message *m, const char *call_id);
/* Whether m (may be NULL) holds a tool call. */
bool conv_has_calls(const struct conv_message *m);
/* A call that travels in its message's text (its dialect's in_text:
 * UI-TARS): no tool call on the wire, its result goes back in a user
 * message. */
bool conv_call_in_text(const struct conv_block *b);
/* The message holds a call that is sent as a tool call. */
bool conv_has_wire_calls(const struct conv_message *m);

/* Shorthand: a user message holding one text block. */
bool conv_add_user_text(struct conv *c, const char *text);

/*
 * Undo: removes the last user message that holds text (a human turn, not a
 * tool result) and everything after it. Returns how many messages went (0:
 * nothing to undo). PNG files stay on disk.
 */
size_t conv_undo(struct conv *c);
/* Removes every message. */
void conv_reset(struct conv *c);

/* ---- what a request carries ---------------------------------------------- */

/*
 * The part of a conversation a request sends: the messages kept after
 * pruning (indices into c->messages, oldest first) and which images travel
 * as pixels.
 */
struct conv_view {
	size_t n;
	size_t *index;      /* c->messages[index[i]] */
	size_t dropped;     /* how many messages pruning left out */
	long tokens;        /* estimate of the kept messages */
	/* image_keep[i][j]: block j of kept message i sends its image. */
	bool **image_keep;
};

/*
 * Plans a request:
 *  - the newest keep_images images (tool-result screenshots and user images)
 *    are sent; older ones are replaced by CONV_IMAGE_OMITTED (keep_images < 0:
 *    all are sent);
 *  - if budget > 0 and the estimate exceeds it, the oldest messages are
 *    dropped, always in whole units: an assistant message goes together with
 *    the tool-result message that answers it (both wire formats reject a call
 *    without its result and a result without its call), and a user text
 *    message goes with it when nothing of its turn remains. The view always
 *    starts with a user message, and the newest user text message and
 *    everything after it are never dropped — so the result may still exceed
 *    the budget (the server then says so).
 * Returns false only when out of memory. Free with conv_view_clear.
 */
bool conv_view_plan(const struct conv *c, long budget, int keep_images, struct conv_view *v);
void conv_view_clear(struct conv_view *v);

/* Token estimate of a text (see CONV_IMAGE_TOKENS for the rule). */
long conv_text_tokens(const char *text);
/* Estimate of the whole conversation with every image sent. */
long conv_tokens(const struct conv *c);

/* ---- files --------------------------------------------------------------- */

/*
 * The default directory, "$XDG_DATA_HOME/deskhand/conversations" (fallback
 * "$HOME/.local/share/deskhand/conversations"), created with mode 0700 when
 * missing. malloc'd; NULL with conv_error() when there is no HOME or it
 * cannot be created.
 */
char *conv_default_dir(void);

/*
 * A fresh file name in `dir` ("YYYY-MM-DD_HH-MM-SS.json", with "-2", "-3"...
 * when taken). malloc'd; NULL when out of memory.
 */
char *conv_new_path(const char *dir);

struct conv_summary {
	char *path;
	time_t updated;
	size_t n_messages;
	char *first_user; /* the first human message, one line, at most ~80 characters */
};

/*
 * Lists the conversations in `dir`, newest first. Unreadable or foreign
 * JSON files are skipped. A missing directory is an empty list. Returns
 * false with conv_error() when the directory cannot be read. Free with
 * conv_summaries_free.
 */
bool conv_list(const char *dir, struct conv_summary **out, size_t *n);
void conv_summaries_free(struct conv_summary *s, size_t n);

#endif
