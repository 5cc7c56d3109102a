/*
 * Ollama's native chat API (POST /api/chat): the request body, the
 * streamed lines (newline-delimited JSON, one object per line) and the
 * whole response.
 *
 * Differences from Chat Completions that matter here: images travel as raw
 * base64 in the message's "images" (no data: URL), tool call arguments are
 * JSON objects both ways, a tool result names its tool ("tool_name"; there
 * are no call ids), the screenshots follow the tool results in a user
 * message, and "think" is sent as --think gave it. An error is
 * {"error": "..."}: the whole body of a failed request, or a line of a
 * stream that broke.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"

/* Appends one image's base64 to "images" (opened on first use); false when
 * the file cannot be read (nothing added). */
static bool image(agent_buf *b, const struct conv *c, const struct conv_image *img, bool *first)
{
	size_t mark = b->len;
	bool was = *first;
	agent_buf_puts(b, *first ? ",\"images\":[\"" : ",\"");
	*first = false;
	if (jb_base64_image(b, c, img)) {
		agent_buf_puts(b, "\"");
		return true;
	}
	agent_buf_truncate(b, mark);
	*first = was;
	return false;
}

/* {"role":"user","content":TEXT,"images":[...]} from the text and the
 * images (opened by image()) gathered; both are released. */
static void user_out(agent_buf *b, agent_buf *text, agent_buf *imgs)
{
	agent_buf_puts(b, "{\"role\":\"user\",\"content\":");
	jb_strn(b, text->data ? text->data : "", text->len);
	if (imgs->len) {
		agent_buf_append(b, imgs->data, imgs->len);
		agent_buf_puts(b, "]");
	}
	agent_buf_puts(b, "}");
	b->oom |= text->oom || imgs->oom;
	agent_buf_finish(text);
	agent_buf_finish(imgs);
}

/* A user message: text blocks joined, images as base64 (an image not sent
 * or not readable becomes a note in the text). */
static void user_message(agent_buf *b, const struct conv *c, const struct conv_message *m,
                         const bool *keep)
{
	agent_buf text = {0}, imgs = {0};
	bool first = true;
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		const char *note = NULL;
		if (bl->type == CONV_TEXT)
			note = bl->text;
		else if (bl->type == CONV_IMAGE && !keep[j])
			note = CONV_IMAGE_OMITTED;
		else if (bl->type == CONV_IMAGE && !image(&imgs, c, &bl->image, &first))
			note = PROVIDER_IMAGE_MISSING;
		if (note != NULL)
			agent_buf_printf(&text, "%s%s", text.len ? "\n" : "", note);
	}
	user_out(b, &text, &imgs);
}

static void assistant_message(agent_buf *b, const struct conv_message *m)
{
	agent_buf text = {0};
	for (size_t j = 0; j < m->n_blocks; j++)
		if (m->blocks[j].type == CONV_TEXT)
			agent_buf_printf(&text, "%s%s", text.len ? "\n" : "", m->blocks[j].text);
	agent_buf_puts(b, "{\"role\":\"assistant\",\"content\":");
	jb_strn(b, text.data ? text.data : "", text.len);
	b->oom |= text.oom;
	agent_buf_finish(&text);
	if (conv_has_wire_calls(m)) {
		bool first = true;
		agent_buf_puts(b, ",\"tool_calls\":[");
		for (size_t j = 0; j < m->n_blocks; j++) {
			const struct conv_block *call = &m->blocks[j];
			if (call->type != CONV_TOOL_CALL || conv_call_in_text(call))
				continue;
			jb_sep(b, &first);
			agent_buf_puts(b, "{\"function\":{\"name\":");
			jb_str(b, call->name);
			agent_buf_puts(b, ",\"arguments\":");
			/* Objects only: arguments that were not one go back empty. */
			if (call->args)
				jb_json(b, call->args);
			else
				agent_buf_puts(b, "{}");
			agent_buf_puts(b, "}}");
		}
		agent_buf_puts(b, "]");
	}
	agent_buf_puts(b, "}");
}

static void result_text(agent_buf *t, const struct conv_block *r, bool sent)
{
	if (r == NULL) {
		agent_buf_puts(t, "[error] " PROVIDER_NO_RESULT);
		return;
	}
	agent_buf_printf(t, "%s%s", r->is_error ? "[error] " : "", r->text);
	if (r->image.path && !sent)
		agent_buf_puts(t, t->len ? "\n" CONV_IMAGE_OMITTED : CONV_IMAGE_OMITTED);
}

/* One tool message per call made as a tool call (named by its tool), then
 * one user message: the results of calls made in text and the screenshots. */
static void results(agent_buf *b, const struct conv *c, const struct conv_message *calls,
                    const struct conv_message *res, const bool *keep)
{
	agent_buf text = {0}, imgs = {0};
	bool first = true;
	for (size_t j = 0; j < calls->n_blocks; j++) {
		const struct conv_block *call = &calls->blocks[j];
		if (call->type != CONV_TOOL_CALL)
			continue;
		const struct conv_block *r = conv_find_result(res, call->id);
		bool sent = r && r->image.path && keep[r - res->blocks];
		if (sent && !image(&imgs, c, &r->image, &first))
			sent = false;
		agent_buf one = {0};
		result_text(&one, r, sent);
		if (conv_call_in_text(call)) {
			agent_buf_printf(&text, "%s%s", text.len ? "\n" : "", agent_buf_cstr(&one));
		} else {
			agent_buf_puts(b, ",{\"role\":\"tool\",\"tool_name\":");
			jb_str(b, call->name);
			agent_buf_puts(b, ",\"content\":");
			jb_strn(b, one.data ? one.data : "", one.len);
			agent_buf_puts(b, "}");
		}
		if (sent)
			agent_buf_printf(&text, "%sScreenshot after tool call %.100s (%dx%d).",
			                 text.len ? "\n" : "", call->id, r->image.width, r->image.height);
		b->oom |= one.oom;
		agent_buf_finish(&one);
	}
	if (text.len || imgs.len) {
		agent_buf_puts(b, ",");
		user_out(b, &text, &imgs);
	} else {
		agent_buf_finish(&text);
		agent_buf_finish(&imgs);
	}
}

static void tools(agent_buf *b, const struct provider_tools *t)
{
	bool first = true;
	agent_buf_puts(b, ",\"tools\":[");
	for (size_t i = 0; i < t->n; i++) {
		jb_sep(b, &first);
		agent_buf_puts(b, "{\"type\":\"function\",\"function\":{\"name\":");
		jb_str(b, t->tools[i].name);
		agent_buf_puts(b, ",\"description\":");
		jb_str(b, t->tools[i].description);
		agent_buf_puts(b, ",\"parameters\":");
		agent_buf_puts(b, t->tools[i].schema_json);
		agent_buf_puts(b, "}}");
	}
	agent_buf_puts(b, "]");
}

/* --think: true and false as JSON booleans, a level as a string (its name). */
static void think(agent_buf *b, enum provider_think v)
{
	if (v == PROVIDER_THINK_NONE)
		return;
	agent_buf_puts(b, ",\"think\":");
	if (v == PROVIDER_THINK_TRUE || v == PROVIDER_THINK_FALSE)
		agent_buf_puts(b, provider_think_name(v));
	else
		jb_str(b, provider_think_name(v));
}

static bool ollama_build(const struct request_ctx *rc, agent_buf *b)
{
	const struct conv *c = rc->conv;
	const struct conv_view *v = rc->view;
	bool first = true;
	agent_buf_puts(b, "{\"model\":");
	jb_str(b, rc->model);
	agent_buf_puts(b, rc->stream ? ",\"stream\":true" : ",\"stream\":false");
	agent_buf_puts(b, ",\"options\":{\"num_predict\":");
	jb_long(b, rc->req->max_tokens);
	agent_buf_puts(b, "}");
	think(b, rc->think);
	agent_buf_puts(b, ",\"messages\":[");
	if (rc->req->system && *rc->req->system) {
		jb_sep(b, &first);
		agent_buf_puts(b, "{\"role\":\"system\",\"content\":");
		jb_str(b, rc->req->system);
		agent_buf_puts(b, "}");
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		if (m->role == CONV_TOOL || m->n_blocks == 0)
			continue; /* results travel with their calls */
		jb_sep(b, &first);
		if (m->role == CONV_USER) {
			user_message(b, c, m, v->image_keep[i]);
			continue;
		}
		assistant_message(b, m);
		if (conv_has_calls(m)) {
			bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
			results(b, c, m, next ? c->messages[v->index[i + 1]] : NULL,
			        next ? v->image_keep[i + 1] : NULL);
			i += next;
		}
	}
	agent_buf_puts(b, "]");
	if (rc->req->tools && rc->req->tools->n)
		tools(b, rc->req->tools);
	agent_buf_puts(b, "}");
	return !b->oom;
}

/* ---- answers ------------------------------------------------------------------ */

static bool take_calls(struct turn *t, const cJSON *calls)
{
	const cJSON *tc;
	cJSON_ArrayForEach(tc, calls) {
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const char *name = json_str(fn, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
		if (name == NULL || *name == '\0')
			return turn_fail(t, "the model sent a tool call without a name");
		/* Ollama gives objects; a string would be another server's habit. */
		char *printed = cJSON_IsString(args) ? strdup(args->valuestring)
		                : args != NULL ? cJSON_PrintUnformatted(args) : strdup("");
		char id[32];
		snprintf(id, sizeof(id), "call_%zu", t->n_calls + (t->msg ? t->msg->n_blocks : 0));
		bool ok = printed != NULL && turn_add_call(t, id, name, printed, NULL);
		free(printed);
		if (!ok)
			return printed == NULL ? turn_fail(t, "out of memory") : false;
	}
	return true;
}

static void take_usage(struct turn *t, const cJSON *o)
{
	t->usage.input_tokens = json_long(o, "prompt_eval_count", t->usage.input_tokens);
	t->usage.output_tokens = json_long(o, "eval_count", t->usage.output_tokens);
}

/* One object of the answer: a streamed line or the whole body. */
static bool take_object(struct turn *t, const cJSON *o, const char *data, size_t len)
{
	if (!openai_take_error(t, data, len, o))
		return false;
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
	const char *thinking = json_str(msg, "thinking");
	const char *content = json_str(msg, "content");
	if (thinking)
		turn_thinking(t, thinking, strlen(thinking));
	if (content)
		turn_text(t, content, strlen(content));
	if (!take_calls(t, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls")))
		return false;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "done"))) {
		const char *reason = json_str(o, "done_reason");
		turn_set_stop(t, reason ? reason : "stop");
		take_usage(t, o);
		t->done = true;
	}
	return true;
}

static bool ollama_event(struct turn *t, const char *event, const char *data, size_t len)
{
	(void)event; /* lines have no names */
	if (t->done)
		return turn_fail(t, "the stream goes on after its last object (\"done\": true)");
	cJSON *o = cJSON_ParseWithLength(data, len);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		char snippet[80];
		provider_error_text(data, len < 60 ? len : 60, snippet, sizeof(snippet));
		return turn_fail(t, "the stream holds a line that is not a JSON object: \"%s\"",
		                 snippet);
	}
	bool ok = take_object(t, o, data, len);
	cJSON_Delete(o);
	return ok && !t->failed;
}

static bool ollama_body(struct turn *t, const char *body, size_t len)
{
	cJSON *o = turn_parse_body(t, body, len);
	if (o == NULL)
		return false;
	bool ok = take_object(t, o, body, len);
	if (ok && !t->done)
		ok = turn_fail(t, "the response is not complete (no \"done\": true)");
	cJSON_Delete(o);
	return ok && !t->failed;
}

const struct provider_format provider_format_ollama = {
	.name = "ollama",
	.build = ollama_build,
	.headers = openai_bearer_headers, /* a key only for a proxy in front */
	.event = ollama_event,
	.body = ollama_body,
	.open_models = true,
	.ndjson = true,
};
