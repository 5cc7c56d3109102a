/*
 * The Anthropic Messages wire format: the request body (with the native
 * computer tool when asked), the streamed events and the whole response.
 *
 * The computer tool's version comes from the model (anthropic_tools.c):
 * the GA toolset is one tools[] entry with no name, display size or beta
 * header, whose actions arrive as tool_use blocks named after the member
 * with toolset_name "computer" (kept on the call, with the block as
 * received) and are answered by tool_results carrying the same
 * toolset_name; the single tools (computer_20251124 with enable_zoom,
 * computer_20250124) take the display size and their beta header.
 *
 * Thinking: models that think are asked for {type: adaptive, display:
 * summarized} (never disabled, never budget_tokens: the 5.5 models refuse
 * both, as they refuse tool_choice any/tool, which is never sent). thinking
 * and redacted_thinking blocks are kept as vendor blocks in their place
 * among the text and tool calls and go back byte for byte. The 5.5
 * generation binds them to the history before them: when this request's
 * history was edited (screenshots past --keep-images replaced by a note, or
 * messages pruned), it sends the documented remedy, thinking.block_binding
 * {prefix_mismatch_behavior: drop_block} with the beta
 * thinking-binding-controls-2026-08-01, so the server drops the stale blocks
 * instead of refusing the request.
 *
 * Tool results travel as tool_result blocks (tool_use_id matching the call)
 * holding a text block and, for kept screenshots, a base64 image block.
 * Consecutive messages of one role are merged into one: the API wants roles
 * to alternate, and tool results must open the user message that follows
 * the calls.
 *
 * Prompt caching (req->prompt_cache): two of the four breakpoints the API
 * allows. One on the system prompt caches the tools and the system prompt,
 * which never change within a conversation; one on the last block of the
 * newest message lets the next turn read everything up to it from the
 * cache, since a turn only appends. Screenshots that fall out of
 * --keep-images change the prefix from that point on, so the cache then
 * serves the part before the oldest screenshot that changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/anthropic_tools.h"
#include "agent/llm/provider-internal.h"

#define CACHE_CONTROL "\"cache_control\":{\"type\":\"ephemeral\"}"
#define VENDOR "anthropic"
#define BINDING_BETA "thinking-binding-controls-2026-08-01"

/* Writes messages, merging those of one role into one. */
struct writer {
	agent_buf *b;
	int role;       /* -1: none open; 0 user; 1 assistant */
	bool any_msg;   /* a message was written before */
	bool any_block; /* the open message has a block */
	bool last_raw;  /* the last block was echoed as received (takes no cache marker) */
};

static void block_begin(struct writer *w, int role)
{
	if (w->role != role) {
		if (w->role >= 0)
			agent_buf_puts(w->b, "]}");
		if (w->any_msg)
			agent_buf_append(w->b, ",", 1);
		agent_buf_puts(w->b, role ? "{\"role\":\"assistant\",\"content\":["
		                   : "{\"role\":\"user\",\"content\":[");
		w->role = role;
		w->any_msg = true;
		w->any_block = false;
	}
	if (w->any_block)
		agent_buf_append(w->b, ",", 1);
	w->any_block = true;
	w->last_raw = false;
}

static void text_block(struct writer *w, int role, const char *text)
{
	if (!text || !*text)
		return; /* the API rejects empty text blocks */
	block_begin(w, role);
	agent_buf_puts(w->b, "{\"type\":\"text\",\"text\":");
	jb_str(w->b, text);
	agent_buf_puts(w->b, "}");
}

/* An image block inside the open content array; false if the file is unreadable. */
static bool image_block(agent_buf *b, const struct conv *c, const struct conv_image *img)
{
	size_t mark = b->len;
	agent_buf_puts(b, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
	           "\"data\":\"");
	bool ok = jb_base64_image(b, c, img);
	if (ok)
		agent_buf_puts(b, "\"}}");
	else
		agent_buf_truncate(b, mark);
	return ok;
}

static void user_message(struct writer *w, const struct conv *c, const struct conv_message *m,
                         const bool *keep)
{
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT) {
			text_block(w, 0, bl->text);
		} else if (bl->type == CONV_IMAGE) {
			bool sent = false;
			if (keep[j]) {
				/* Roll back the opened block if the file cannot be read. */
				struct writer saved = *w;
				size_t mark = w->b->len;
				block_begin(w, 0);
				if (!(sent = image_block(w->b, c, &bl->image))) {
					*w = saved;
					agent_buf_truncate(w->b, mark);
				}
			}
			if (!sent)
				text_block(w, 0, keep[j] ? PROVIDER_IMAGE_MISSING : CONV_IMAGE_OMITTED);
		}
	}
}

/* The id of a raw block, compared with the call's (ids may be renamed: turn.c). */
static bool raw_id_is(const char *raw, const char *id)
{
	cJSON *o = cJSON_Parse(raw);
	const char *rid = json_str(o, "id");
	bool same = rid && strcmp(rid, id) == 0;
	cJSON_Delete(o);
	return same;
}

static void tool_use_block(struct writer *w, const struct conv_block *bl)
{
	block_begin(w, 1);
	if (provider_raw(bl, VENDOR) != NULL && raw_id_is(bl->raw, bl->id)) {
		agent_buf_puts(w->b, bl->raw);
		w->last_raw = true;
		return;
	}
	agent_buf_puts(w->b, "{\"type\":\"tool_use\",\"id\":");
	jb_str(w->b, bl->id);
	agent_buf_puts(w->b, ",\"name\":");
	jb_str(w->b, bl->name);
	agent_buf_puts(w->b, ",\"input\":");
	if (bl->args)
		jb_json(w->b, bl->args);
	else
		agent_buf_puts(w->b, "{}");
	if (bl->dialect->name) {
		agent_buf_puts(w->b, ",\"toolset_name\":");
		jb_str(w->b, bl->dialect->name);
	}
	agent_buf_puts(w->b, "}");
}

static void assistant_message(struct writer *w, const struct conv_message *m)
{
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT) {
			text_block(w, 1, bl->text);
		} else if (bl->type == CONV_TOOL_CALL) {
			tool_use_block(w, bl);
		} else if (bl->type == CONV_VENDOR && provider_raw(bl, VENDOR) != NULL) {
			/* Thinking goes back exactly as it came, in its place. */
			block_begin(w, 1);
			agent_buf_puts(w->b, bl->raw);
			w->last_raw = true;
		}
		/* Another vendor's blocks mean nothing here. */
	}
}

static void result_block(struct writer *w, const struct conv *c, const struct conv_block *call,
                         const struct conv_block *r, bool keep)
{
	block_begin(w, 0);
	agent_buf *b = w->b;
	agent_buf_puts(b, "{\"type\":\"tool_result\",\"tool_use_id\":");
	jb_str(b, call->id);
	if (call->dialect->name) {
		/* A toolset member's result names its toolset, or it is refused. */
		agent_buf_puts(b, ",\"toolset_name\":");
		jb_str(b, call->dialect->name);
	}
	if (!r || r->is_error)
		agent_buf_puts(b, ",\"is_error\":true");
	const char *text = r ? r->text : PROVIDER_NO_RESULT;
	const char *note = NULL;
	bool image = r && r->image.path && keep;
	if (r && r->image.path && !keep)
		note = CONV_IMAGE_OMITTED;
	if (!*text && !image && !note) {
		agent_buf_puts(b, "}");
		return;
	}
	agent_buf_puts(b, ",\"content\":[");
	bool first = true;
	if (*text || note) {
		agent_buf t = {0};
		agent_buf_puts(&t, text);
		if (note)
			agent_buf_puts(&t, *text ? "\n" CONV_IMAGE_OMITTED : CONV_IMAGE_OMITTED);
		agent_buf_puts(b, "{\"type\":\"text\",\"text\":");
		jb_strn(b, t.data ? t.data : "", t.len);
		agent_buf_puts(b, "}");
		b->oom |= t.oom;
		agent_buf_finish(&t);
		first = false;
	}
	if (image) {
		size_t mark = b->len;
		if (!first)
			agent_buf_append(b, ",", 1);
		if (!image_block(b, c, &r->image)) {
			agent_buf_truncate(b, mark);
			agent_buf_puts(b, first ? "" : ",");
			agent_buf_puts(b, "{\"type\":\"text\",\"text\":\"" PROVIDER_IMAGE_MISSING "\"}");
		}
	}
	agent_buf_puts(b, "]}");
}

static void results(struct writer *w, const struct conv *c, const struct conv_message *call_msg,
                    const struct conv_message *res_msg, const bool *keep)
{
	for (size_t j = 0; j < call_msg->n_blocks; j++) {
		const struct conv_block *call = &call_msg->blocks[j];
		if (call->type != CONV_TOOL_CALL)
			continue;
		const struct conv_block *r = conv_find_result(res_msg, call->id);
		result_block(w, c, call, r, r && keep[r - res_msg->blocks]);
	}
}

/* The native computer tool entry of version v for a screen of w x h. */
static void computer_entry(agent_buf *b, int v, int w, int h)
{
	agent_buf_puts(b, "{\"type\":");
	jb_str(b, anthropic_tool_type((enum anthropic_tool)v));
	if (v == ANTHROPIC_TOOL_TOOLSET) {
		/* No name, no display fields: the toolset entry refuses them. */
		agent_buf_puts(b, "}");
		return;
	}
	agent_buf_puts(b, ",\"name\":\"computer\",\"display_width_px\":");
	jb_long(b, w);
	agent_buf_puts(b, ",\"display_height_px\":");
	jb_long(b, h);
	if (v == ANTHROPIC_TOOL_20251124)
		agent_buf_puts(b, ",\"enable_zoom\":true");
	agent_buf_puts(b, "}");
}

static void tools(agent_buf *b, const struct provider_tools *t, int version)
{
	bool first = true;
	agent_buf_puts(b, ",\"tools\":[");
	for (size_t i = 0; i < t->n; i++) {
		const struct provider_tool *tl = &t->tools[i];
		if (!first)
			agent_buf_append(b, ",", 1);
		first = false;
		if (t->computer_width > 0 && version > 0 && strcmp(tl->name, "computer") == 0) {
			computer_entry(b, version, t->computer_width, t->computer_height);
			continue;
		}
		agent_buf_puts(b, "{\"name\":");
		jb_str(b, tl->name);
		agent_buf_puts(b, ",\"description\":");
		jb_str(b, tl->description);
		agent_buf_puts(b, ",\"input_schema\":");
		agent_buf_puts(b, tl->schema_json);
		agent_buf_puts(b, "}");
	}
	agent_buf_puts(b, "]");
}

/*
 * Whether this request's history differs from what earlier requests sent:
 * messages pruned, or an image replaced by its note (each was sent as
 * pixels while it was among the newest).
 */
static bool history_edited(const struct conv *c, const struct conv_view *v)
{
	if (v->dropped > 0)
		return true;
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		for (size_t j = 0; j < m->n_blocks; j++) {
			const struct conv_block *bl = &m->blocks[j];
			bool image = bl->type == CONV_IMAGE ||
			             (bl->type == CONV_TOOL_RESULT && bl->image.path);
			if (image && !v->image_keep[i][j])
				return true;
		}
	}
	return false;
}

/* Whether the request asks for block binding control (body and beta header agree). */
static bool binding_wanted(const struct request_ctx *rc)
{
	return anthropic_model_lookup(rc->model).binds_thinking &&
	       history_edited(rc->conv, rc->view);
}

static void thinking_config(const struct request_ctx *rc, agent_buf *b)
{
	if (!anthropic_model_lookup(rc->model).thinks)
		return;
	agent_buf_puts(b, ",\"thinking\":{\"type\":\"adaptive\",\"display\":\"summarized\"");
	if (binding_wanted(rc))
		agent_buf_puts(b, ",\"block_binding\":{\"prefix_mismatch_behavior\":\"drop_block\"}");
	agent_buf_puts(b, "}");
}

static bool anthropic_build(const struct request_ctx *rc, agent_buf *b)
{
	const struct conv *c = rc->conv;
	const struct conv_view *v = rc->view;
	const struct provider_request *req = rc->req;
	struct writer w = {.b = b, .role = -1};

	agent_buf_puts(b, "{\"model\":");
	jb_str(b, rc->model);
	agent_buf_puts(b, ",\"max_tokens\":");
	jb_long(b, req->max_tokens);
	agent_buf_puts(b, rc->stream ? ",\"stream\":true" : ",\"stream\":false");
	if (req->system && *req->system) {
		if (req->prompt_cache) {
			agent_buf_puts(b, ",\"system\":[{\"type\":\"text\",\"text\":");
			jb_str(b, req->system);
			agent_buf_puts(b, "," CACHE_CONTROL "}]");
		} else {
			agent_buf_puts(b, ",\"system\":");
			jb_str(b, req->system);
		}
	}
	thinking_config(rc, b);
	if (req->tools && req->tools->n)
		tools(b, req->tools, rc->tool_version);
	agent_buf_puts(b, ",\"messages\":[");
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		if (m->role == CONV_USER) {
			user_message(&w, c, m, v->image_keep[i]);
		} else if (m->role == CONV_ASSISTANT) {
			assistant_message(&w, m);
			if (conv_has_calls(m)) {
				bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
				results(&w, c, m, next ? c->messages[v->index[i + 1]] : NULL,
				        next ? v->image_keep[i + 1] : NULL);
				i += next;
			}
		}
		/* A tool message without its call is left out: the API rejects it. */
	}
	if (w.role >= 0) {
		/*
		 * Every block ends with its own closing brace: reopen the last. Two
		 * breakpoints of the four allowed. The last block is the end of
		 * the batch's results (or the user's words), where a marker inside
		 * a batch would take effect anyway; a thinking block takes none.
		 */
		if (req->prompt_cache && w.any_block && !w.last_raw && !b->oom && b->len > 0 &&
		    b->data[b->len - 1] == '}') {
			agent_buf_truncate(b, b->len - 1);
			agent_buf_puts(b, "," CACHE_CONTROL "}");
		}
		agent_buf_puts(b, "]}");
	}
	agent_buf_puts(b, "]}");
	return !b->oom;
}

/* ---- responses -------------------------------------------------------------- */

static void take_usage(struct turn *t, const cJSON *u)
{
	if (!u)
		return;
	t->usage.input_tokens = json_long(u, "input_tokens", t->usage.input_tokens);
	t->usage.output_tokens = json_long(u, "output_tokens", t->usage.output_tokens);
	t->usage.cache_read_tokens = json_long(u, "cache_read_input_tokens",
	                                    t->usage.cache_read_tokens);
	t->usage.cache_write_tokens = json_long(u, "cache_creation_input_tokens",
	                                     t->usage.cache_write_tokens);
}

static bool stream_error(struct turn *t, const cJSON *root)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
	const char *type = json_str(err, "type");
	const char *msg = json_str(err, "message");
	/* Overload before anything was shown is what a 529 would have been. */
	t->retriable = type && (!strcmp(type, "overloaded_error") || !strcmp(type, "api_error") ||
	                        !strcmp(type, "rate_limit_error"));
	return turn_fail(t, "the server reported an error: %s%s%s%s", msg ? msg : "(no message)",
	                 type ? " (" : "", type ? type : "", type ? ")" : "");
}

/* ---- thinking ---------------------------------------------------------------- */

static bool is_thinking(const char *bt)
{
	return bt && (!strcmp(bt, "thinking") || !strcmp(bt, "redacted_thinking"));
}

/* A whole thinking block: kept as printed (cJSON keeps the server's key
 * order and every string's value), its summary shown. */
static bool thinking_whole(struct turn *t, const cJSON *cb)
{
	const char *text = json_str(cb, "thinking");
	if (text)
		turn_thinking(t, text, strlen(text));
	char *raw = cJSON_PrintUnformatted(cb);
	bool ok = raw ? turn_add_vendor(t, VENDOR, raw, text) : turn_fail(t, "out of memory");
	free(raw);
	return ok;
}

/*
 * Streamed thinking is kept exactly as the whole block would be: the block
 * of content_block_start (its keys in the server's order) with "thinking"
 * and "signature" set to their start values followed by every
 * thinking_delta and signature_delta, then printed the same way as a whole
 * block (thinking_whole) — so the same answer gives the same bytes, streamed
 * or not. Blocks stream one after another, so one is open at a time.
 */
static bool thinking_start(struct turn *t, const cJSON *cb, long index)
{
	if (t->vblock)
		return turn_fail(t, "content block %ld started while thinking block %ld was open",
		                 index, t->vblock_index);
	if (!(t->vblock = cJSON_Duplicate(cb, true)))
		return turn_fail(t, "out of memory");
	t->vblock_index = index;
	agent_buf_reset(&t->vthink);
	agent_buf_reset(&t->vsig);
	const char *think = json_str(cb, "thinking"), *sig = json_str(cb, "signature");
	agent_buf_puts(&t->vthink, think ? think : "");
	agent_buf_puts(&t->vsig, sig ? sig : "");
	if (think)
		turn_thinking(t, think, strlen(think));
	return true;
}

static bool thinking_delta(struct turn *t, const cJSON *d, const char *dt, long index)
{
	if (!t->vblock || t->vblock_index != index)
		return turn_fail(t, "%s for block %ld, which is not a thinking block", dt, index);
	bool sig = !strcmp(dt, "signature_delta");
	const char *part = json_str(d, sig ? "signature" : "thinking");
	if (part) {
		agent_buf_puts(sig ? &t->vsig : &t->vthink, part);
		if (!sig)
			turn_thinking(t, part, strlen(part));
	}
	return true;
}

static bool set_string(cJSON *o, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);
	if (!v)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
	return cJSON_AddItemToObject(o, key, v);
}

static bool thinking_stop(struct turn *t)
{
	cJSON *blk = t->vblock;
	t->vblock = NULL;
	bool ok = !t->vthink.oom && !t->vsig.oom;
	if (ok && !strcmp(json_str(blk, "type"), "thinking"))
		ok = set_string(blk, "thinking", agent_buf_cstr(&t->vthink)) &&
		     set_string(blk, "signature", agent_buf_cstr(&t->vsig));
	char *raw = ok ? cJSON_PrintUnformatted(blk) : NULL;
	ok = raw ? turn_add_vendor(t, VENDOR, raw, json_str(blk, "thinking"))
	         : turn_fail(t, "out of memory");
	free(raw);
	cJSON_Delete(blk);
	return ok;
}

/* A tool_use block's toolset and the block itself, kept with the call. */
static bool call_keep(struct turn *t, struct tool_acc *a, const cJSON *cb)
{
	const char *ts = json_str(cb, "toolset_name");
	/* Only a toolset deskhand declared can name a call's vocabulary. */
	if (ts && !(a->dialect = agent_dialect_find(ts)))
		return turn_fail(t, "a tool call of an unknown toolset \"%.40s\"", ts);
	if (!(a->raw = cJSON_Duplicate(cb, true)))
		return turn_fail(t, "out of memory");
	a->vendor = VENDOR;
	return true;
}

/* content_block_start: a text block, thinking, or a call opens. */
static bool block_start(struct turn *t, const cJSON *cb, long index)
{
	const char *bt = json_str(cb, "type");
	if (bt && !strcmp(bt, "text")) {
		const char *text = json_str(cb, "text");
		t->text_block = index;
		if (text)
			turn_text(t, text, strlen(text));
		return true;
	}
	if (is_thinking(bt))
		return turn_commit_text(t) && thinking_start(t, cb, index);
	if (!bt || strcmp(bt, "tool_use") != 0)
		return true; /* server-side blocks are not part of deskhand's answer */
	/* Only content_block_start opens a call: one still open here means the
	 * server started the same block twice. */
	for (size_t i = 0; i < t->n_calls; i++)
		if (t->calls[i].key == index && !t->calls[i].done)
			return turn_fail(t, "content block %ld was started twice", index);
	struct tool_acc *a = turn_call(t, index);
	if (!a)
		return false;
	agent_buf_puts(&a->id, json_str(cb, "id") ? json_str(cb, "id") : "");
	agent_buf_puts(&a->name, json_str(cb, "name") ? json_str(cb, "name") : "");
	cJSON *input = cJSON_GetObjectItemCaseSensitive(cb, "input");
	if (cJSON_IsObject(input))
		a->start_input = cJSON_Duplicate(input, true);
	return call_keep(t, a, cb);
}

static bool anthropic_event(struct turn *t, const char *event, const char *data, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(data, len);
	if (!root || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return turn_fail(t, "the stream holds an event that is not JSON: \"%.60s\"", data);
	}
	const char *type = json_str(root, "type");
	if (!type)
		type = event;
	long index = json_long(root, "index", -1);
	bool ok = true;
	if (!strcmp(type, "message_start")) {
		take_usage(t, cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(root, "message"), "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		ok = block_start(t, cJSON_GetObjectItemCaseSensitive(root, "content_block"), index);
	} else if (!strcmp(type, "content_block_delta")) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
		const char *dt = json_str(d, "type");
		if (dt && !strcmp(dt, "text_delta")) {
			const char *text = json_str(d, "text");
			if (text)
				turn_text(t, text, strlen(text));
		} else if (dt && !strcmp(dt, "input_json_delta")) {
			const char *part = json_str(d, "partial_json");
			struct tool_acc *a = NULL;
			for (size_t i = 0; i < t->n_calls; i++)
				if (t->calls[i].key == index && !t->calls[i].done)
					a = &t->calls[i];
			if (!a)
				ok = turn_fail(t, "input_json_delta for block %ld, which is not a tool call",
				               index);
			else if (part)
				agent_buf_puts(&a->args, part);
		} else if (dt && (!strcmp(dt, "thinking_delta") || !strcmp(dt, "signature_delta"))) {
			ok = thinking_delta(t, d, dt, index);
		}
	} else if (!strcmp(type, "content_block_stop")) {
		if (t->vblock && t->vblock_index == index)
			ok = thinking_stop(t);
		for (size_t i = 0; ok && i < t->n_calls; i++)
			if (t->calls[i].key == index && !t->calls[i].done)
				ok = turn_finish_call(t, &t->calls[i]);
		if (ok && index == t->text_block) {
			ok = turn_commit_text(t);
			t->text_block = -1;
		}
	} else if (!strcmp(type, "message_delta")) {
		turn_set_stop(t, json_str(cJSON_GetObjectItemCaseSensitive(root, "delta"), "stop_reason"));
		take_usage(t, cJSON_GetObjectItemCaseSensitive(root, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		if (t->vblock)
			ok = turn_fail(t, "the message ended inside thinking block %ld", t->vblock_index);
		t->done = true;
	} else if (!strcmp(type, "error")) {
		ok = stream_error(t, root);
	}
	/* ping and event types added later: nothing to do */
	cJSON_Delete(root);
	return ok && !t->failed;
}

static bool anthropic_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = turn_parse_body(t, body, len);
	if (root == NULL)
		return false;
	bool ok = true;
	const char *type = json_str(root, "type");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(root, "content");
	if (type && !strcmp(type, "error"))
		ok = stream_error(t, root);
	else if (!cJSON_IsArray(content))
		ok = turn_fail(t, "the response has no content array");
	long i = 0;
	const cJSON *cb;
	if (!ok)
		content = NULL;
	cJSON_ArrayForEach(cb, content) {
		const char *bt = json_str(cb, "type");
		if (bt && !strcmp(bt, "text")) {
			const char *text = json_str(cb, "text");
			if (text)
				turn_text(t, text, strlen(text));
			ok = turn_commit_text(t);
		} else if (is_thinking(bt)) {
			ok = thinking_whole(t, cb);
		} else if (bt && !strcmp(bt, "tool_use")) {
			struct tool_acc *a = turn_call(t, i);
			ok = a != NULL && call_keep(t, a, cb);
			if (ok) {
				agent_buf_puts(&a->id, json_str(cb, "id") ? json_str(cb, "id") : "");
				agent_buf_puts(&a->name, json_str(cb, "name") ? json_str(cb, "name") : "");
				const cJSON *input = cJSON_GetObjectItemCaseSensitive(cb, "input");
				if (input)
					jb_json(&a->args, input);
				ok = turn_finish_call(t, a);
			}
		}
		if (!ok)
			break;
		i++;
	}
	if (ok) {
		turn_set_stop(t, json_str(root, "stop_reason"));
		take_usage(t, cJSON_GetObjectItemCaseSensitive(root, "usage"));
		t->done = true;
	}
	cJSON_Delete(root);
	return ok && !t->failed;
}

static bool anthropic_headers(const struct request_ctx *rc, const char *api_key,
                              wire_header_fn add, void *user)
{
	if (!add(user, "anthropic-version: 2023-06-01"))
		return false;
	const char *tool_beta = anthropic_tool_beta((enum anthropic_tool)rc->tool_version);
	bool binding = anthropic_model_lookup(rc->model).thinks && binding_wanted(rc);
	if (tool_beta || binding) {
		char line[160];
		snprintf(line, sizeof(line), "anthropic-beta: %s%s%s", tool_beta ? tool_beta : "",
		         tool_beta && binding ? "," : "", binding ? BINDING_BETA : "");
		if (!add(user, line))
			return false;
	}
	return api_key == NULL || wire_header_secret(add, user, "x-api-key:", api_key);
}

static int anthropic_tool_pick(const char *model, int forced)
{
	if (forced != ANTHROPIC_TOOL_AUTO)
		return forced > ANTHROPIC_TOOL_AUTO && forced < ANTHROPIC_TOOL_COUNT ? forced : -1;
	return (int)anthropic_model_lookup(model).tool;
}

static int anthropic_tool_fallback(int version, const char *why)
{
	enum anthropic_tool older;
	if (!anthropic_tool_refused((enum anthropic_tool)version, why) ||
	    !anthropic_tool_older((enum anthropic_tool)version, &older))
		return 0;
	return (int)older;
}

static const char *anthropic_format_tool_name(int version)
{
	return anthropic_tool_type((enum anthropic_tool)version);
}

const struct provider_format provider_format_anthropic = {
	.name = "anthropic-messages",
	.build = anthropic_build,
	.headers = anthropic_headers,
	.event = anthropic_event,
	.body = anthropic_body,
	.tool_pick = anthropic_tool_pick,
	.tool_fallback = anthropic_tool_fallback,
	.tool_name = anthropic_format_tool_name,
};
