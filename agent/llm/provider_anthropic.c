/*
 * The Anthropic Messages wire format: the request body (with the native
 * computer tool when asked), the streamed events and the whole response.
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

#include "agent/llm/provider-internal.h"

#define CACHE_CONTROL "\"cache_control\":{\"type\":\"ephemeral\"}"

/* Writes messages, merging those of one role into one. */
struct writer {
	agent_buf *b;
	int role;       /* -1: none open; 0 user; 1 assistant */
	bool any_msg;   /* a message was written before */
	bool any_block; /* the open message has a block */
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
	char *file = conv_image_file(c, img);
	agent_buf_puts(b, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
	           "\"data\":\"");
	bool ok = file && jb_base64_file(b, file);
	if (ok)
		agent_buf_puts(b, "\"}}");
	else
		agent_buf_truncate(b, mark);
	free(file);
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

static void assistant_message(struct writer *w, const struct conv_message *m)
{
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT) {
			text_block(w, 1, bl->text);
		} else if (bl->type == CONV_TOOL_CALL) {
			block_begin(w, 1);
			agent_buf_puts(w->b, "{\"type\":\"tool_use\",\"id\":");
			jb_str(w->b, bl->id);
			agent_buf_puts(w->b, ",\"name\":");
			jb_str(w->b, bl->name);
			agent_buf_puts(w->b, ",\"input\":");
			if (bl->args)
				jb_json(w->b, bl->args);
			else
				agent_buf_puts(w->b, "{}");
			agent_buf_puts(w->b, "}");
		}
	}
}

static void result_block(struct writer *w, const struct conv *c, const char *call_id,
                         const struct conv_block *r, bool keep)
{
	block_begin(w, 0);
	agent_buf *b = w->b;
	agent_buf_puts(b, "{\"type\":\"tool_result\",\"tool_use_id\":");
	jb_str(b, call_id);
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
		const struct conv_block *r = provider_find_result(res_msg, call->id);
		result_block(w, c, call->id, r, r && keep[r - res_msg->blocks]);
	}
}

static void tools(agent_buf *b, const struct provider_tools *t)
{
	bool first = true;
	agent_buf_puts(b, ",\"tools\":[");
	for (size_t i = 0; i < t->n; i++) {
		const struct provider_tool *tl = &t->tools[i];
		if (!first)
			agent_buf_append(b, ",", 1);
		first = false;
		if (t->computer_width > 0 && strcmp(tl->name, "computer") == 0) {
			agent_buf_puts(b, "{\"type\":\"computer_20250124\",\"name\":\"computer\",\"display_width_px\":");
			jb_long(b, t->computer_width);
			agent_buf_puts(b, ",\"display_height_px\":");
			jb_long(b, t->computer_height);
			agent_buf_puts(b, "}");
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
	if (req->tools && req->tools->n)
		tools(b, req->tools);
	agent_buf_puts(b, ",\"messages\":[");
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		if (m->role == CONV_USER) {
			user_message(&w, c, m, v->image_keep[i]);
		} else if (m->role == CONV_ASSISTANT) {
			assistant_message(&w, m);
			if (provider_has_calls(m)) {
				bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
				results(&w, c, m, next ? c->messages[v->index[i + 1]] : NULL,
				        next ? v->image_keep[i + 1] : NULL);
				i += next;
			}
		}
		/* A tool message without its call is left out: the API rejects it. */
	}
	if (w.role >= 0) {
		/* Every block ends with its own closing brace: reopen the last. */
		if (req->prompt_cache && w.any_block && !b->oom && b->len > 0 &&
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
		const cJSON *cb = cJSON_GetObjectItemCaseSensitive(root, "content_block");
		const char *bt = json_str(cb, "type");
		if (bt && !strcmp(bt, "text")) {
			const char *text = json_str(cb, "text");
			t->text_block = index;
			if (text)
				turn_text(t, text, strlen(text));
		} else if (bt && !strcmp(bt, "tool_use")) {
			/* Only content_block_start opens a call: one still open here
			 * means the server started the same block twice. */
			for (size_t i = 0; i < t->n_calls; i++)
				if (t->calls[i].key == index && !t->calls[i].done) {
					cJSON_Delete(root);
					return turn_fail(t, "content block %ld was started twice", index);
				}
			struct tool_acc *a = turn_call(t, index);
			ok = a != NULL;
			if (ok) {
				agent_buf_puts(&a->id, json_str(cb, "id") ? json_str(cb, "id") : "");
				agent_buf_puts(&a->name, json_str(cb, "name") ? json_str(cb, "name") : "");
				cJSON *input = cJSON_GetObjectItemCaseSensitive(cb, "input");
				if (cJSON_IsObject(input))
					a->start_input = cJSON_Duplicate(input, true);
			}
		}
		/* thinking and server-side blocks are not part of deskhand's answer */
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
		}
	} else if (!strcmp(type, "content_block_stop")) {
		for (size_t i = 0; i < t->n_calls; i++)
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
		} else if (bt && !strcmp(bt, "tool_use")) {
			struct tool_acc *a = turn_call(t, i);
			ok = a != NULL;
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

static bool anthropic_headers(const struct provider_request *req, const char *api_key,
                              wire_header_fn add, void *user)
{
	if (!add(user, "anthropic-version: 2023-06-01"))
		return false;
	if (req->tools && req->tools->computer_width > 0 &&
	    !add(user, "anthropic-beta: computer-use-2025-01-24"))
		return false;
	return api_key == NULL || wire_header_secret(add, user, "x-api-key:", api_key);
}

const struct provider_format provider_format_anthropic = {
	.name = "anthropic-messages",
	.build = anthropic_build,
	.headers = anthropic_headers,
	.event = anthropic_event,
	.body = anthropic_body,
};
