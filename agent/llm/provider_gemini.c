/*
 * Google Gemini's wire format (POST {base}/v1beta/models/{model}:generateContent,
 * or :streamGenerateContent?alt=sse): the request body, the streamed
 * chunks and the whole response.
 *
 * What the model sends back is its `content` (role "model", parts: text,
 * thoughts, function calls, each maybe carrying a thoughtSignature). It is
 * kept as one CONV_VENDOR block ("gemini") holding the content exactly as
 * received (a whole response's content object byte for byte; a stream's
 * parts byte for byte, in order, in a {"role":"model","parts":[...]}
 * wrapper) and sent back unchanged on every later request: Google refuses
 * a history whose thought signatures were dropped or altered. Its text
 * parts are also kept as text blocks (shown, and for other formats) and
 * each functionCall becomes one tool call (raw: the functionCall object),
 * toolset "gemini" for Google's predefined computer-use functions (either
 * set), so that the gate translates it (agent/tools/gemini_actions.h);
 * deskhand's own functions (execute, find_text) stay plain calls. A call
 * whose args hold a safety_decision other than an allowed one carries it
 * as its safety check ({code: decision, message: explanation}), which the
 * gate puts to the human.
 *
 * The results go back in one user content after the model's: one
 * functionResponse part per call, in the calls' order, with the call's id
 * when it had one, response {"output": text} or {"error": text},
 * "safety_acknowledgement": true when the human acknowledged the call's
 * safety decision, and the screenshot as an inline PNG part of the
 * functionResponse. Declined: a call whose safety decision the human did
 * not acknowledge did not run, and Google refuses a call answered without
 * the acknowledgement; so that model content and its answers are left out
 * of every later request and a user text says what became of each call.
 *
 * An assistant message made by another format is rebuilt (text parts,
 * functionCall parts with Google's documented placeholder signature for
 * history it did not sign). Tools: deskhand's functions as
 * functionDeclarations (parametersJsonSchema); the computer tool as
 * {"computer_use":{"environment":"ENVIRONMENT_DESKTOP"}} with no display
 * size (coordinates are 0..999), browser-only functions excluded for the
 * models that still use Gemini 2.5's names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/llm/provider-internal.h"

#define VENDOR "gemini"
/* Google's documented stand-in for a signature on history the model did not write. */
#define SKIP_SIGNATURE "skip_thought_signature_validator"

/* Google's predefined computer-use functions, both sets: these calls are the computer's. */
static const char *const predefined[] = {
	"click", "double_click", "triple_click", "middle_click", "right_click", "mouse_down",
	"mouse_up", "move", "type", "drag_and_drop", "scroll", "press_key", "key_down", "key_up",
	"hotkey", "take_screenshot", "wait", "click_at", "hover_at", "type_text_at",
	"key_combination", "scroll_document", "scroll_at", "wait_5_seconds", "navigate", "go_back",
	"go_forward", "search", "open_web_browser",
};

static bool is_predefined(const char *name)
{
	for (size_t i = 0; i < sizeof(predefined) / sizeof(predefined[0]); i++)
		if (strcmp(name, predefined[i]) == 0)
			return true;
	return false;
}

/* The models that answer in Gemini 2.5's names (Google's agent.py): 3 Flash and 3.1 Pro previews. */
static bool legacy_names(const char *model)
{
	return strncmp(model, "gemini-3-flash-preview", 22) == 0 ||
	       strncmp(model, "gemini-3.1-pro-preview", 22) == 0 ||
	       strncmp(model, "gemini-2.5-computer-use", 23) == 0;
}

static bool is_vendor(const struct conv_block *bl)
{
	return bl->type == CONV_VENDOR && provider_raw(bl, VENDOR) != NULL;
}

/* ---- the request ------------------------------------------------------------ */

/* {"inlineData":{...}} of a PNG; false (buffer unchanged) when the file is gone. */
static bool inline_png(agent_buf *b, const struct conv *c, const struct conv_image *img)
{
	size_t mark = b->len;
	agent_buf_puts(b, "{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"");
	if (!jb_base64_image(b, c, img)) {
		agent_buf_truncate(b, mark);
		return false;
	}
	agent_buf_puts(b, "\"}}");
	return true;
}

static void text_part(agent_buf *b, const char *text, bool *first)
{
	jb_sep(b, first);
	agent_buf_puts(b, "{\"text\":");
	jb_str(b, text);
	agent_buf_puts(b, "}");
}

static void user_content(agent_buf *b, const struct conv *c, const struct conv_message *m,
                         const bool *keep, bool *first)
{
	bool part_first = true;
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"user\",\"parts\":[");
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT) {
			text_part(b, bl->text, &part_first);
		} else if (bl->type == CONV_IMAGE) {
			bool was_first = part_first;
			size_t mark = b->len;
			jb_sep(b, &part_first);
			if (keep[j] && inline_png(b, c, &bl->image))
				continue;
			agent_buf_truncate(b, mark);
			part_first = was_first;
			text_part(b, keep[j] ? PROVIDER_IMAGE_MISSING : CONV_IMAGE_OMITTED, &part_first);
		}
	}
	if (part_first)
		text_part(b, "", &part_first);
	agent_buf_puts(b, "]}");
}

/* Whether a call's safety decision went unacknowledged: it did not run. */
static bool declined(const struct conv_block *call, const struct conv_message *res)
{
	if (call->type != CONV_TOOL_CALL || !call->checks || strcmp(call->checks, "[]") == 0)
		return false;
	const struct conv_block *r = provider_find_result(res, call->id);
	return !r || !r->ack || strcmp(r->ack, "[]") == 0;
}

static bool any_declined(const struct conv_message *m, const struct conv_message *res)
{
	for (size_t j = 0; j < m->n_blocks; j++)
		if (declined(&m->blocks[j], res))
			return true;
	return false;
}

/* The model's content as received; what another format left, rebuilt. */
static void model_content(agent_buf *b, const struct conv_message *m, bool *first)
{
	for (size_t j = 0; j < m->n_blocks; j++)
		if (is_vendor(&m->blocks[j])) {
			jb_sep(b, first);
			agent_buf_puts(b, m->blocks[j].raw);
			return;
		}
	bool part_first = true, was_first = *first;
	size_t mark = b->len;
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"model\",\"parts\":[");
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type == CONV_TEXT && bl->text[0]) {
			text_part(b, bl->text, &part_first);
		} else if (bl->type == CONV_TOOL_CALL) {
			jb_sep(b, &part_first);
			agent_buf_puts(b, "{\"functionCall\":{\"name\":");
			jb_str(b, bl->name);
			agent_buf_puts(b, ",\"args\":");
			if (bl->args) /* printed from the parse: "" counts as {} */
				jb_json(b, bl->args);
			else
				agent_buf_puts(b, "{}");
			agent_buf_puts(b, "},\"thoughtSignature\":\"" SKIP_SIGNATURE "\"}");
		}
	}
	if (part_first) { /* nothing Gemini could take */
		agent_buf_truncate(b, mark);
		*first = was_first;
	} else
		agent_buf_puts(b, "]}");
}

/* The call's own id, from its raw functionCall; NULL when it had none. */
static char *gemini_call_id(const struct conv_block *call)
{
	const char *raw = provider_raw(call, VENDOR);
	cJSON *o = raw != NULL ? cJSON_Parse(raw) : NULL;
	const char *id = json_str(o, "id");
	char *out = id && *id ? strdup(id) : NULL;
	cJSON_Delete(o);
	return out;
}

static void function_response(agent_buf *b, const struct conv *c, const struct conv_block *call,
                              const struct conv_message *res, const bool *keep, bool *first)
{
	const struct conv_block *r = provider_find_result(res, call->id);
	char *id = gemini_call_id(call);
	jb_sep(b, first);
	agent_buf_puts(b, "{\"functionResponse\":{");
	if (id) {
		agent_buf_puts(b, "\"id\":");
		jb_str(b, id);
		agent_buf_puts(b, ",");
	}
	free(id);
	agent_buf_puts(b, "\"name\":");
	jb_str(b, call->name);
	agent_buf_puts(b, !r || r->is_error ? ",\"response\":{\"error\":" : ",\"response\":{\"output\":");
	jb_str(b, r ? r->text : PROVIDER_NO_RESULT);
	if (r && r->ack && strcmp(r->ack, "[]") != 0)
		agent_buf_puts(b, ",\"safety_acknowledgement\":true");
	agent_buf_puts(b, "}");
	if (r && r->image.path && keep[r - res->blocks]) {
		size_t mark = b->len;
		agent_buf_puts(b, ",\"parts\":[");
		if (inline_png(b, c, &r->image))
			agent_buf_puts(b, "]");
		else
			agent_buf_truncate(b, mark);
	}
	agent_buf_puts(b, "}}");
}

static void responses(agent_buf *b, const struct conv *c, const struct conv_message *m,
                      const struct conv_message *res, const bool *keep, bool *first)
{
	bool part_first = true;
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"user\",\"parts\":[");
	for (size_t j = 0; j < m->n_blocks; j++)
		if (m->blocks[j].type == CONV_TOOL_CALL)
			function_response(b, c, &m->blocks[j], res, keep, &part_first);
	agent_buf_puts(b, "]}");
}

/* Instead of a declined content and its answers: what became of each call. */
static void declined_note(agent_buf *b, const struct conv_message *m,
                          const struct conv_message *res, bool *first)
{
	agent_buf t = {0};
	agent_buf_puts(&t, "[not run] The user declined a safety confirmation, so your last "
	               "function calls were not all carried out:");
	for (size_t j = 0, k = 0; j < m->n_blocks; j++) {
		const struct conv_block *call = &m->blocks[j];
		if (call->type != CONV_TOOL_CALL)
			continue;
		const struct conv_block *r = provider_find_result(res, call->id);
		agent_buf_printf(&t, "\ncall %zu (%s): %s%s", ++k, call->name,
		                 r && r->is_error ? "[error] " : "", r ? r->text : PROVIDER_NO_RESULT);
	}
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"user\",\"parts\":[");
	bool part_first = true;
	text_part(b, agent_buf_cstr(&t), &part_first);
	agent_buf_puts(b, "]}");
	b->oom |= t.oom;
	agent_buf_finish(&t);
}

static const bool no_keep[1] = {false};

static void contents(agent_buf *b, const struct request_ctx *rc)
{
	const struct conv *c = rc->conv;
	const struct conv_view *v = rc->view;
	bool first = true;
	for (size_t i = 0; i < v->n; i++) {
		const struct conv_message *m = c->messages[v->index[i]];
		if (m->role == CONV_USER && m->n_blocks)
			user_content(b, c, m, v->image_keep[i], &first);
		if (m->role != CONV_ASSISTANT || m->n_blocks == 0)
			continue;
		bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
		const struct conv_message *res = next ? c->messages[v->index[i + 1]] : NULL;
		const bool *keep = next ? v->image_keep[i + 1] : no_keep;
		if (any_declined(m, res)) {
			declined_note(b, m, res, &first);
		} else {
			model_content(b, m, &first);
			if (provider_has_calls(m))
				responses(b, c, m, res, keep, &first);
		}
		i += next;
	}
}

static void tools(agent_buf *b, const struct request_ctx *rc)
{
	const struct provider_tools *ts = rc->req->tools;
	bool first = true, fn_first = true;
	agent_buf_puts(b, ",\"tools\":[");
	if (ts->computer_width > 0) {
		jb_sep(b, &first);
		agent_buf_puts(b, "{\"computer_use\":{\"environment\":\"ENVIRONMENT_DESKTOP\"");
		if (legacy_names(rc->model))
			agent_buf_puts(b, ",\"excluded_predefined_functions\":[\"open_web_browser\","
			               "\"search\",\"navigate\",\"go_back\",\"go_forward\"]");
		agent_buf_puts(b, "}}");
	}
	for (size_t i = 0; i < ts->n; i++) {
		const struct provider_tool *tl = &ts->tools[i];
		if (strcmp(tl->name, "computer") == 0) /* computer_use stands for it */
			continue;
		if (fn_first) {
			jb_sep(b, &first);
			agent_buf_puts(b, "{\"functionDeclarations\":[");
		}
		jb_sep(b, &fn_first);
		agent_buf_puts(b, "{\"name\":");
		jb_str(b, tl->name);
		agent_buf_puts(b, ",\"description\":");
		jb_str(b, tl->description);
		agent_buf_puts(b, ",\"parametersJsonSchema\":");
		agent_buf_puts(b, tl->schema_json);
		agent_buf_puts(b, "}");
	}
	if (!fn_first)
		agent_buf_puts(b, "]}");
	agent_buf_puts(b, "]");
}

/* Thought summaries where the model thinks (not Gemini 1.x or 2.0). */
static bool thinks(const char *model)
{
	return strncmp(model, "gemini-1.", 9) != 0 && strncmp(model, "gemini-2.0", 10) != 0;
}

static bool gemini_build(const struct request_ctx *rc, agent_buf *b)
{
	const struct provider_request *req = rc->req;
	agent_buf_puts(b, "{\"contents\":[");
	contents(b, rc);
	agent_buf_puts(b, "]");
	if (req->system && *req->system) {
		agent_buf_puts(b, ",\"systemInstruction\":{\"parts\":[{\"text\":");
		jb_str(b, req->system);
		agent_buf_puts(b, "}]}");
	}
	if (req->tools && (req->tools->n || req->tools->computer_width > 0))
		tools(b, rc);
	agent_buf_puts(b, ",\"generationConfig\":{\"maxOutputTokens\":");
	jb_long(b, req->max_tokens);
	if (thinks(rc->model))
		agent_buf_puts(b, ",\"thinkingConfig\":{\"includeThoughts\":true}");
	agent_buf_puts(b, "}}");
	return !b->oom;
}

/* The key in its own header, never in the URL (where logs and proxies keep it). */
static bool gemini_headers(const struct request_ctx *rc, const char *api_key,
                           wire_header_fn add, void *user)
{
	(void)rc;
	return api_key == NULL || wire_header_secret(add, user, "x-goog-api-key:", api_key);
}

/* ---- the answer ----------------------------------------------------------- */

/* The safety decision in a call's args as its checks; NULL when there is none to ask. */
static char *safety_checks(const cJSON *args)
{
	const cJSON *sd = cJSON_GetObjectItemCaseSensitive(args, "safety_decision");
	if (sd == NULL || cJSON_IsNull(sd))
		return NULL;
	const char *decision = json_str(sd, "decision");
	if (decision && (strcasecmp(decision, "allowed") == 0 || strcasecmp(decision, "regular") == 0))
		return NULL;
	const char *why = json_str(sd, "explanation");
	cJSON *arr = cJSON_CreateArray(), *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "code", decision ? decision : "unknown");
	cJSON_AddStringToObject(o, "message", why ? why : "(no explanation given)");
	cJSON_AddItemToArray(arr, o);
	char *s = cJSON_PrintUnformatted(arr);
	cJSON_Delete(arr);
	return s;
}

static bool take_call(struct turn *t, const cJSON *fc, const char *raw)
{
	const char *name = json_str(fc, "name"), *id = json_str(fc, "id");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(fc, "args");
	if (!name || !*name)
		return turn_fail(t, "a functionCall without a name");
	char gen[32], *text = cJSON_IsObject(args) ? cJSON_PrintUnformatted(args) : NULL;
	char *checks = safety_checks(args);
	if (!id || !*id) {
		snprintf(gen, sizeof(gen), "gemini_call_%zu", t->msg ? t->msg->n_blocks : 0);
		id = gen;
	}
	struct conv_call_extra x = {.dialect = is_predefined(name) ? &agent_dialect_gemini : NULL,
	                            .vendor = VENDOR, .raw = raw, .checks = checks};
	bool ok = turn_add_call(t, id, name, args == NULL ? "{}" : text ? text : "[not an object]",
	                        &x);
	free(text);
	free(checks);
	return ok;
}

/* One part of the content (raw: its JSON text as received). */
static bool take_part(struct turn *t, const char *raw, size_t len)
{
	cJSON *part = cJSON_ParseWithLength(raw, len);
	if (!cJSON_IsObject(part)) {
		cJSON_Delete(part);
		return turn_fail(t, "a content part is not a JSON object: \"%.60s\"", raw);
	}
	bool ok = true;
	const char *text = json_str(part, "text");
	const cJSON *fc = cJSON_GetObjectItemCaseSensitive(part, "functionCall");
	if (text && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(part, "thought")))
		turn_thinking(t, text, strlen(text));
	else if (text)
		turn_text(t, text, strlen(text));
	if (cJSON_IsObject(fc)) {
		size_t off, n;
		ok = json_member_span(raw, len, 0, "functionCall", &off, &n);
		char *fraw = ok ? strndup(raw + off, n) : NULL;
		ok = fraw ? take_call(t, fc, fraw) : turn_fail(t, "out of memory");
		free(fraw);
	}
	/* Other parts (executableCode, ...) travel in the kept content only. */
	if (ok && t->gparts.len)
		agent_buf_append(&t->gparts, ",", 1);
	if (ok)
		agent_buf_append(&t->gparts, raw, len);
	cJSON_Delete(part);
	return ok && !t->failed;
}

/* The parts of candidates[0].content in s[0..n): each taken in order. */
static bool take_parts(struct turn *t, const char *s, size_t n, size_t *coff, size_t *clen)
{
	size_t aoff, alen, eoff, elen, poff, plen, off, len;
	*clen = 0;
	if (!json_member_span(s, n, 0, "candidates", &aoff, &alen) ||
	    !json_element_span(s, aoff + alen, aoff, 0, &eoff, &elen) ||
	    !json_member_span(s, eoff + elen, eoff, "content", coff, clen))
		return true;
	if (!json_member_span(s, *coff + *clen, *coff, "parts", &poff, &plen))
		return true;
	for (int k = 0; json_element_span(s, poff + plen, poff, k, &off, &len); k++)
		if (!take_part(t, s + off, len))
			return false;
	return true;
}

static void take_usage(struct turn *t, const cJSON *root)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "usageMetadata");
	if (!cJSON_IsObject(u))
		return;
	t->usage.input_tokens = json_long(u, "promptTokenCount", t->usage.input_tokens);
	long out = json_long(u, "candidatesTokenCount", 0) + json_long(u, "thoughtsTokenCount", 0);
	if (out > 0)
		t->usage.output_tokens = out;
	long cached = json_long(u, "cachedContentTokenCount", -1);
	if (cached >= 0)
		t->usage.cache_read_tokens = cached;
}

/* finishReason -> the turn's stop; true when the answer is complete. */
static bool take_finish(struct turn *t, const cJSON *root)
{
	const cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "candidates"), 0);
	const char *why = json_str(cand, "finishReason");
	if (!why)
		return false;
	if (provider_has_calls(t->msg))
		turn_set_stop(t, "tool_calls");
	else if (strcmp(why, "STOP") == 0)
		turn_set_stop(t, "stop");
	else if (strcmp(why, "MAX_TOKENS") == 0)
		turn_set_stop(t, "length");
	else
		turn_set_stop(t, why);
	return true;
}

/* Google's error object ({code, message, status}); overload and outages are retried. */
static bool take_error(struct turn *t, const cJSON *err)
{
	const char *msg = json_str(err, "message"), *status = json_str(err, "status");
	char text[400] = "";
	if (msg)
		provider_error_text(msg, strlen(msg), text, sizeof(text));
	t->retriable = status && (strcmp(status, "UNAVAILABLE") == 0 ||
	                          strcmp(status, "RESOURCE_EXHAUSTED") == 0 ||
	                          strcmp(status, "INTERNAL") == 0);
	return turn_fail(t, "the server reported an error: %s%s%.40s%s", text[0] ? text
	                 : "(no message)", status ? " [" : "", status ? status : "", status ? "]" : "");
}

/* No candidate at all: the prompt itself was refused. */
static bool blocked_prompt(struct turn *t, const cJSON *root)
{
	const char *why = json_str(cJSON_GetObjectItemCaseSensitive(root, "promptFeedback"),
	                           "blockReason");
	if (why)
		return turn_fail(t, "the request was blocked (%.60s)", why);
	return true;
}

/* The content kept for the next request: the parts as received, wrapped. */
static bool keep_streamed_content(struct turn *t)
{
	if (t->gparts.len == 0)
		return true;
	if (t->gparts.oom)
		return turn_fail(t, "out of memory");
	agent_buf c = {0};
	agent_buf_puts(&c, "{\"role\":\"model\",\"parts\":[");
	agent_buf_append(&c, t->gparts.data, t->gparts.len);
	agent_buf_puts(&c, "]}");
	bool ok = !c.oom ? turn_add_vendor(t, VENDOR, agent_buf_cstr(&c), NULL)
	                 : turn_fail(t, "out of memory");
	agent_buf_finish(&c);
	agent_buf_reset(&t->gparts);
	return ok;
}

/* One chunk, as a whole GenerateContentResponse or one event of a stream. */
static bool take_chunk(struct turn *t, const char *s, size_t n, size_t *coff, size_t *clen)
{
	cJSON *root = cJSON_ParseWithLength(s, n);
	bool ok = true;
	if (!cJSON_IsObject(root)) {
		ok = turn_fail(t, "the answer holds something that is not JSON: \"%.60s\"", s);
	} else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "error"))) {
		ok = take_error(t, cJSON_GetObjectItemCaseSensitive(root, "error"));
	} else if (!cJSON_GetObjectItemCaseSensitive(root, "candidates")) {
		ok = blocked_prompt(t, root);
		take_usage(t, root);
		*clen = 0;
	} else {
		ok = take_parts(t, s, n, coff, clen);
		take_usage(t, root);
		if (ok && take_finish(t, root))
			t->done = true;
	}
	cJSON_Delete(root);
	return ok && !t->failed;
}

static bool gemini_event(struct turn *t, const char *event, const char *data, size_t len)
{
	(void)event;
	size_t coff, clen;
	if (t->done) /* after the finish: only usage may still come */
		return true;
	if (!take_chunk(t, data, len, &coff, &clen))
		return false;
	return !t->done || keep_streamed_content(t);
}

/* Whether the content span is a model content to keep byte for byte. */
static bool model_role(const char *s, size_t n)
{
	size_t off, len;
	return json_member_span(s, n, 0, "role", &off, &len) && len == 7 &&
	       memcmp(s + off, "\"model\"", 7) == 0;
}

static bool gemini_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = turn_parse_body(t, body, len);
	if (root == NULL)
		return false;
	cJSON_Delete(root);
	size_t coff = 0, clen = 0;
	if (!take_chunk(t, body, len, &coff, &clen))
		return false;
	t->done = true;
	if (t->gparts.len == 0)
		return true;
	if (!model_role(body + coff, clen))
		return keep_streamed_content(t);
	/* The content object exactly as it came. */
	char *raw = strndup(body + coff, clen);
	bool ok = raw ? turn_add_vendor(t, VENDOR, raw, NULL) : turn_fail(t, "out of memory");
	free(raw);
	agent_buf_reset(&t->gparts);
	return ok;
}

const struct provider_format provider_format_gemini = {
	.name = "gemini",
	.build = gemini_build,
	.headers = gemini_headers,
	.event = gemini_event,
	.body = gemini_body,
};
