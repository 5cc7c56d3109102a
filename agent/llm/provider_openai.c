/*
 * The OpenAI Chat Completions wire format (also Ollama's and every
 * OpenAI-compatible server's): the request body, the streamed chunks and the
 * whole response.
 *
 * Tool results travel as one "tool" message per call (tool_call_id matching
 * the call), followed by one user message carrying the kept screenshots as
 * image_url data URLs: the tool role cannot hold images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"

/*
 * An image part: the file as a data URL, or when it cannot be read a text
 * part saying so (an old screenshot deleted by hand must not end the talk).
 */
static void image_part(agent_buf *b, const struct conv *c, const struct conv_image *img,
                       bool *first)
{
	size_t mark = b->len;
	bool was_first = *first;
	jb_sep(b, first);
	agent_buf_puts(b, "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,");
	if (jb_base64_image(b, c, img)) {
		agent_buf_puts(b, "\"}}");
	} else {
		agent_buf_truncate(b, mark);
		*first = was_first;
		jb_sep(b, first);
		agent_buf_puts(b, "{\"type\":\"text\",\"text\":");
		jb_str(b, PROVIDER_IMAGE_MISSING);
		agent_buf_puts(b, "}");
	}
}

static void text_part(agent_buf *b, const char *text, bool *first)
{
	jb_sep(b, first);
	agent_buf_puts(b, "{\"type\":\"text\",\"text\":");
	jb_str(b, text);
	agent_buf_puts(b, "}");
}

static void user_message(agent_buf *b, const struct conv *c, const struct conv_message *m,
                         const bool *keep)
{
	/* Plain text stays a plain string: every compatible server reads that. */
	if (m->n_blocks == 1 && m->blocks[0].type == CONV_TEXT) {
		agent_buf_puts(b, "{\"role\":\"user\",\"content\":");
		jb_str(b, m->blocks[0].text);
		agent_buf_puts(b, "}");
		return;
	}
	bool first = true;
	agent_buf_puts(b, "{\"role\":\"user\",\"content\":[");
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT)
			text_part(b, bl->text, &first);
		else if (bl->type == CONV_IMAGE && keep[j])
			image_part(b, c, &bl->image, &first);
		else if (bl->type == CONV_IMAGE)
			text_part(b, CONV_IMAGE_OMITTED, &first);
	}
	if (first)
		text_part(b, "", &first);
	agent_buf_puts(b, "]}");
}

static void assistant_message(agent_buf *b, const struct conv_message *m)
{
	agent_buf text = {0};
	bool first = true;
	for (size_t j = 0; j < m->n_blocks; j++)
		if (m->blocks[j].type == CONV_TEXT) {
			if (text.len)
				agent_buf_append(&text, "\n", 1);
			agent_buf_puts(&text, m->blocks[j].text);
		}
	agent_buf_puts(b, "{\"role\":\"assistant\",\"content\":");
	if (text.len)
		jb_strn(b, text.data, text.len);
	else
		agent_buf_puts(b, "null");
	if (text.oom)
		b->oom = true;
	agent_buf_finish(&text);
	if (provider_has_wire_calls(m)) {
		agent_buf_puts(b, ",\"tool_calls\":[");
		for (size_t j = 0; j < m->n_blocks; j++) {
			const struct conv_block *call = &m->blocks[j];
			if (call->type != CONV_TOOL_CALL || provider_call_in_text(call))
				continue;
			jb_sep(b, &first);
			agent_buf_puts(b, "{\"id\":");
			jb_str(b, call->id);
			agent_buf_puts(b, ",\"type\":\"function\",\"function\":{\"name\":");
			jb_str(b, call->name);
			agent_buf_puts(b, ",\"arguments\":");
			bool raw = call->args && call->arguments[strspn(call->arguments, " \t\r\n")];
			jb_str(b, raw ? call->arguments : "{}");
			agent_buf_puts(b, "}}");
		}
		agent_buf_puts(b, "]");
	}
	agent_buf_puts(b, "}");
}

/* A result's text for the model: "[error] " first when it failed, the
 * note for a screenshot that is not sent last. */
static void result_text(agent_buf *b, const struct conv_block *r, bool sent)
{
	agent_buf t = {0};
	if (r->is_error)
		agent_buf_puts(&t, "[error] ");
	agent_buf_puts(&t, r->text);
	if (r->image.path && !sent)
		agent_buf_puts(&t, t.len ? "\n" CONV_IMAGE_OMITTED : CONV_IMAGE_OMITTED);
	jb_strn(b, t.data ? t.data : "", t.len);
	b->oom |= t.oom;
	agent_buf_finish(&t);
}

/* What follows the tool messages: the results of calls made in text and
 * the screenshots that are sent, in the calls' order. */
static void results_user(agent_buf *b, const struct conv *c, const struct conv_message *call_msg,
                         const struct conv_message *res_msg, const bool *keep)
{
	bool first = true;
	agent_buf_puts(b, ",{\"role\":\"user\",\"content\":[");
	for (size_t j = 0; j < call_msg->n_blocks; j++) {
		const struct conv_block *call = &call_msg->blocks[j];
		if (call->type != CONV_TOOL_CALL)
			continue;
		const struct conv_block *r = provider_find_result(res_msg, call->id);
		bool sent = r && r->image.path && keep[r - res_msg->blocks];
		if (provider_call_in_text(call)) {
			jb_sep(b, &first);
			agent_buf_puts(b, "{\"type\":\"text\",\"text\":");
			if (r)
				result_text(b, r, sent);
			else
				jb_str(b, "[error] " PROVIDER_NO_RESULT);
			agent_buf_puts(b, "}");
		}
		if (!sent)
			continue;
		char label[200];
		snprintf(label, sizeof(label), "Screenshot after tool call %.100s (%dx%d):", call->id,
		         r->image.width, r->image.height);
		text_part(b, label, &first);
		image_part(b, c, &r->image, &first);
	}
	agent_buf_puts(b, "]}");
}

/*
 * The answers to the calls of `call_msg`: a tool message per call, in the
 * calls' order (a missing result is reported as one), then one user message
 * with the screenshots that are sent and the results of calls made in text
 * (which have no tool message: there was no tool call to answer).
 */
static void results(agent_buf *b, const struct conv *c, const struct conv_message *call_msg,
                    const struct conv_message *res_msg, const bool *keep)
{
	bool user = false;
	for (size_t j = 0; j < call_msg->n_blocks; j++) {
		const struct conv_block *call = &call_msg->blocks[j];
		if (call->type != CONV_TOOL_CALL)
			continue;
		const struct conv_block *r = provider_find_result(res_msg, call->id);
		bool sent = r && r->image.path && keep[r - res_msg->blocks];
		user |= sent || provider_call_in_text(call);
		if (provider_call_in_text(call))
			continue;
		agent_buf_puts(b, ",{\"role\":\"tool\",\"tool_call_id\":");
		jb_str(b, call->id);
		agent_buf_puts(b, ",\"content\":");
		if (!r)
			jb_str(b, "[error] " PROVIDER_NO_RESULT);
		else
			result_text(b, r, sent);
		agent_buf_puts(b, "}");
	}
	if (user)
		results_user(b, c, call_msg, res_msg, keep);
}

static bool openai_build(const struct request_ctx *rc, agent_buf *b)
{
	const struct conv *c = rc->conv;
	const struct conv_view *v = rc->view;
	const struct provider_request *req = rc->req;
	bool first = true;

	agent_buf_puts(b, "{\"model\":");
	jb_str(b, rc->model);
	agent_buf_puts(b, rc->openai_max_completion ? ",\"max_completion_tokens\":" : ",\"max_tokens\":");
	jb_long(b, req->max_tokens);
	agent_buf_puts(b, rc->stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"
	                      : ",\"stream\":false");
	agent_buf_puts(b, ",\"messages\":[");
	if (req->system && *req->system) {
		jb_sep(b, &first);
		agent_buf_puts(b, "{\"role\":\"system\",\"content\":");
		jb_str(b, req->system);
		agent_buf_puts(b, "}");
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		switch (m->role) {
		case CONV_USER:
			if (m->n_blocks == 0)
				break;
			jb_sep(b, &first);
			user_message(b, c, m, v->image_keep[i]);
			break;
		case CONV_ASSISTANT:
			if (m->n_blocks == 0)
				break;
			jb_sep(b, &first);
			assistant_message(b, m);
			if (provider_has_calls(m)) {
				bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
				results(b, c, m, next ? c->messages[v->index[i + 1]] : NULL,
				        next ? v->image_keep[i + 1] : NULL);
				i += next;
			}
			break;
		case CONV_TOOL:
			break; /* results without their call: both ends reject them */
		}
	}
	agent_buf_puts(b, "]");
	if (req->tools && req->tools->n) {
		first = true;
		agent_buf_puts(b, ",\"tools\":[");
		for (size_t i = 0; i < req->tools->n; i++) {
			const struct provider_tool *tl = &req->tools->tools[i];
			jb_sep(b, &first);
			agent_buf_puts(b, "{\"type\":\"function\",\"function\":{\"name\":");
			jb_str(b, tl->name);
			agent_buf_puts(b, ",\"description\":");
			jb_str(b, tl->description);
			agent_buf_puts(b, ",\"parameters\":");
			agent_buf_puts(b, tl->schema_json);
			agent_buf_puts(b, "}}");
		}
		agent_buf_puts(b, "]");
	}
	agent_buf_puts(b, "}");
	return !b->oom;
}

/* ---- responses -------------------------------------------------------------- */

static void take_usage(struct turn *t, const cJSON *root)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "usage");
	t->usage.input_tokens = json_long(u, "prompt_tokens", t->usage.input_tokens);
	t->usage.output_tokens = json_long(u, "completion_tokens", t->usage.output_tokens);
}

bool openai_take_error(struct turn *t, const char *data, size_t len, const cJSON *root)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (!err || cJSON_IsNull(err))
		return true;
	char text[400];
	provider_error_text(data, len, text, sizeof(text));
	return turn_fail(t, "the server reported an error: %s", text[0] ? text : "(no message)");
}

/* One entry of tool_calls, streamed (fragments) or whole. */
static bool take_call(struct turn *t, const cJSON *tc, long position)
{
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
	const char *id = json_str(tc, "id");
	const char *name = json_str(fn, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
	long key = json_long(tc, "index", position);
	struct tool_acc *a = turn_call(t, key);
	if (!a)
		return false;
	if (id && *id && a->id.len && (a->id.len != strlen(id) || memcmp(a->id.data, id, a->id.len))) {
		/* A new call reusing an index: the previous one is complete. */
		if (!turn_finish_call(t, a) || !(a = turn_call(t, key)))
			return false;
	}
	if (id && *id && !a->id.len)
		agent_buf_puts(&a->id, id);
	if (name && *name && !a->name.len)
		agent_buf_puts(&a->name, name);
	if (cJSON_IsString(args))
		agent_buf_puts(&a->args, args->valuestring);
	else if (cJSON_IsObject(args)) /* some servers send the object itself */
		jb_json(&a->args, args);
	return true;
}

static bool take_calls(struct turn *t, const cJSON *calls)
{
	long pos = 0;
	const cJSON *tc;
	cJSON_ArrayForEach(tc, calls) {
		if (!take_call(t, tc, pos++))
			return false;
	}
	return true;
}

static void take_content(struct turn *t, const cJSON *content)
{
	if (cJSON_IsString(content)) {
		turn_text(t, content->valuestring, strlen(content->valuestring));
		return;
	}
	const cJSON *part;
	cJSON_ArrayForEach(part, content) {
		const char *text = json_str(part, "text");
		if (text)
			turn_text(t, text, strlen(text));
	}
}

static bool openai_event(struct turn *t, const char *event, const char *data, size_t len)
{
	(void)event; /* Chat Completions names no events */
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		t->done = true;
		return true;
	}
	cJSON *root = cJSON_ParseWithLength(data, len);
	if (!root || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return turn_fail(t, "the stream holds an event that is not JSON: \"%.60s\"", data);
	}
	bool ok = openai_take_error(t, data, len, root);
	const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
	const cJSON *delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");
	if (ok && delta) {
		take_content(t, cJSON_GetObjectItemCaseSensitive(delta, "content"));
		const char *refusal = json_str(delta, "refusal");
		if (refusal)
			turn_text(t, refusal, strlen(refusal));
		ok = take_calls(t, cJSON_GetObjectItemCaseSensitive(delta, "tool_calls"));
	}
	const char *finish = json_str(choice, "finish_reason");
	if (ok && finish) {
		turn_set_stop(t, finish);
		t->done = true;
	}
	take_usage(t, root);
	cJSON_Delete(root);
	return ok && !t->failed;
}

static bool openai_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = turn_parse_body(t, body, len);
	if (root == NULL)
		return false;
	bool ok = openai_take_error(t, body, len, root);
	const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	if (ok && !msg)
		ok = turn_fail(t, "the response has no choices[0].message");
	if (ok) {
		take_content(t, cJSON_GetObjectItemCaseSensitive(msg, "content"));
		ok = take_calls(t, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls"));
		turn_set_stop(t, json_str(choice, "finish_reason"));
		take_usage(t, root);
		t->done = true;
	}
	cJSON_Delete(root);
	return ok && !t->failed;
}

bool openai_bearer_headers(const struct request_ctx *rc, const char *api_key,
                           wire_header_fn add, void *user)
{
	(void)rc;
	return api_key == NULL || wire_header_secret(add, user, "Authorization: Bearer", api_key);
}

const struct provider_format provider_format_openai = {
	.name = "openai-chat",
	.build = openai_build,
	.headers = openai_bearer_headers,
	.event = openai_event,
	.body = openai_body,
	.open_models = true,
};
