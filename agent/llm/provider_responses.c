/*
 * The OpenAI Responses wire format (POST {base}/responses): the request
 * body, the streamed events and the whole response.
 *
 * What the model sends comes back as output items, kept in the
 * conversation as received and echoed unchanged, in order, on every later
 * request (store:false, the whole input each time; --store continues from
 * previous_response_id instead):
 *  - reasoning items (encrypted_content, asked for with include) and
 *    assistant messages (with their phase) become CONV_VENDOR blocks
 *    ("openai-responses") holding the item's JSON text byte for byte, taken
 *    from response.output_item.done (the copy in .added may be partial);
 *    a message's text is also kept as a CONV_TEXT block before it, for the
 *    user and for other formats, and is not sent twice;
 *  - a function_call becomes one tool call (its raw item kept);
 *  - a computer_call becomes one tool call per action (toolset "openai",
 *    the action object as arguments, ids call_id, call_id_1, ...), so that
 *    the gate confirms and runs each action on its own; the first carries
 *    the raw item and the pending safety checks.
 * The results of a computer_call are folded back into one
 * computer_call_output: the batch's settled screenshot (a 1x1 placeholder
 * when it is gone or was pruned: the API accepts no output without an
 * image), the checks the human acknowledged, and, when an action failed
 * or was refused, a user message after it saying what happened (the
 * output itself holds only the screenshot).
 *
 * A call whose safety check the human declined was not run, and the API
 * refuses it answered with an unacknowledged check: the call and the
 * reasoning items right before it (bound to it) are left out of every
 * later request, and a user message says that it was not run and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"

#define VENDOR "openai-responses"
/* A 1x1 grey PNG: the screenshot of an answer whose own is gone. */
#define PLACEHOLDER_PNG                                                                    \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5E" \
	"rkJggg=="

static bool is_vendor(const struct conv_block *bl)
{
	return provider_raw(bl, VENDOR) != NULL;
}

static bool is_openai_action(const struct conv_block *bl)
{
	return bl->type == CONV_TOOL_CALL && bl->dialect == &agent_dialect_openai;
}

/* The legacy tool (one action per call, display size, truncation:auto). */
static bool legacy_model(const char *model)
{
	return strncmp(model, "computer-use-preview", 20) == 0;
}

/* ---- the request ------------------------------------------------------------ */

/* "data:image/png;base64,..." of the image, or of the placeholder. */
static void image_url(agent_buf *b, const struct conv *c, const struct conv_image *img)
{
	size_t mark = b->len;
	agent_buf_puts(b, "\"data:image/png;base64,");
	if (img == NULL || !jb_base64_image(b, c, img)) {
		agent_buf_truncate(b, mark);
		agent_buf_puts(b, "\"data:image/png;base64," PLACEHOLDER_PNG);
	}
	agent_buf_puts(b, "\"");
}

static void user_text_item(agent_buf *b, const char *text, bool *first)
{
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":");
	jb_str(b, text);
	agent_buf_puts(b, "}]}");
}

static void user_item(agent_buf *b, const struct conv *c, const struct conv_message *m,
                      const bool *keep, bool *first)
{
	bool part_first = true;
	jb_sep(b, first);
	agent_buf_puts(b, "{\"role\":\"user\",\"content\":[");
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (bl->type != CONV_TEXT && bl->type != CONV_IMAGE)
			continue;
		jb_sep(b, &part_first);
		if (bl->type == CONV_IMAGE && keep[j]) {
			agent_buf_puts(b, "{\"type\":\"input_image\",\"detail\":\"auto\",\"image_url\":");
			image_url(b, c, &bl->image);
			agent_buf_puts(b, "}");
			continue;
		}
		agent_buf_puts(b, "{\"type\":\"input_text\",\"text\":");
		jb_str(b, bl->type == CONV_TEXT ? bl->text : CONV_IMAGE_OMITTED);
		agent_buf_puts(b, "}");
	}
	if (part_first)
		agent_buf_puts(b, "{\"type\":\"input_text\",\"text\":\"\"}");
	agent_buf_puts(b, "]}");
}

/* A computer_call and its actions: blocks [first, first + n) of a message. */
struct group {
	size_t first, n;
	char call_id[128];
	bool declined; /* a pending check was not acknowledged: the call did not run */
};

/* The call's id from its raw item (the blocks' ids may have been renamed). */
static void raw_call_id(const char *raw, char *out, size_t size)
{
	cJSON *o = cJSON_Parse(raw);
	const char *id = json_str(o, "call_id");
	snprintf(out, size, "%s", id ? id : "");
	cJSON_Delete(o);
}

/* Whether every check in `checks` is in `ack` (both JSON arrays of {id,...}). */
static bool all_acknowledged(const char *checks, const char *ack)
{
	cJSON *pending = checks ? cJSON_Parse(checks) : NULL;
	cJSON *acked = ack ? cJSON_Parse(ack) : NULL;
	bool all = true;
	const cJSON *p, *a;
	cJSON_ArrayForEach(p, pending) {
		bool found = false;
		const char *id = json_str(p, "id");
		cJSON_ArrayForEach(a, acked) {
			const char *aid = json_str(a, "id");
			found = found || (id && aid && strcmp(id, aid) == 0);
		}
		all = all && found;
	}
	cJSON_Delete(pending);
	cJSON_Delete(acked);
	return all;
}

/* The computer_call starting at block j of m (raw computer_call item), or false. */
static bool group_at(const struct conv_message *m, size_t j, const struct conv_message *res,
                     struct group *g)
{
	const struct conv_block *bl = &m->blocks[j];
	if (!is_openai_action(bl) || !is_vendor(bl))
		return false;
	memset(g, 0, sizeof(*g));
	g->first = j;
	g->n = 1;
	while (j + g->n < m->n_blocks && is_openai_action(&m->blocks[j + g->n]) &&
	       !is_vendor(&m->blocks[j + g->n]))
		g->n++;
	raw_call_id(bl->raw, g->call_id, sizeof(g->call_id));
	if (bl->checks && strcmp(bl->checks, "[]") != 0) {
		const struct conv_block *r = provider_find_result(res, bl->id);
		g->declined = !r || !all_acknowledged(bl->checks, r->ack);
	}
	return true;
}

/* Reasoning items right before block j: bound to the item at j. */
static bool reasoning_bound_to(const struct conv_message *m, size_t j, size_t upto)
{
	for (size_t k = j + 1; k < upto; k++)
		if (!(m->blocks[k].type == CONV_VENDOR && is_vendor(&m->blocks[k]) &&
		      strstr(m->blocks[k].raw, "\"reasoning\"")))
			return false;
	return true;
}

/* Which blocks of an assistant message are left out (declined calls and their reasoning). */
static bool *left_out(const struct conv_message *m, const struct conv_message *res)
{
	bool *skip = calloc(m->n_blocks ? m->n_blocks : 1, sizeof(*skip));
	if (!skip)
		return NULL;
	for (size_t j = 0; j < m->n_blocks; j++) {
		struct group g;
		if (!group_at(m, j, res, &g) || !g.declined)
			continue;
		for (size_t k = 0; k < g.n; k++)
			skip[j + k] = true;
		for (size_t k = j; k-- > 0;) {
			const struct conv_block *bl = &m->blocks[k];
			if (bl->type != CONV_VENDOR || !is_vendor(bl) || !reasoning_bound_to(m, k, j))
				break;
			skip[k] = true;
		}
	}
	return skip;
}

static bool produced_here(const struct conv_message *m)
{
	for (size_t j = 0; j < m->n_blocks; j++)
		if (m->blocks[j].type == CONV_VENDOR && is_vendor(&m->blocks[j]))
			return true;
	return false;
}

/* The model's items, as received; what another format left, rebuilt. */
static void assistant_items(agent_buf *b, const struct conv_message *m, const bool *skip,
                            bool *first)
{
	bool here = produced_here(m);
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		if (skip[j])
			continue;
		if (bl->type == CONV_TEXT && !here && bl->text[0]) {
			jb_sep(b, first);
			agent_buf_puts(b, "{\"role\":\"assistant\",\"content\":");
			jb_str(b, bl->text);
			agent_buf_puts(b, "}");
		} else if ((bl->type == CONV_VENDOR || bl->type == CONV_TOOL_CALL) && is_vendor(bl)) {
			jb_sep(b, first);
			agent_buf_puts(b, bl->raw);
		} else if (bl->type == CONV_TOOL_CALL && !is_openai_action(bl)) {
			jb_sep(b, first);
			agent_buf_puts(b, "{\"type\":\"function_call\",\"call_id\":");
			jb_str(b, bl->id);
			agent_buf_puts(b, ",\"name\":");
			jb_str(b, bl->name);
			agent_buf_puts(b, ",\"arguments\":");
			jb_str(b, bl->args ? bl->arguments : "{}");
			agent_buf_puts(b, "}");
		}
	}
}

/* The screenshot answering a group: its last kept image, else the tool message's last. */
static const struct conv_image *group_image(const struct conv_message *m, const struct group *g,
                                            const struct conv_message *res, const bool *keep)
{
	const struct conv_image *img = NULL;
	for (size_t k = 0; k < g->n; k++) {
		const struct conv_block *r = provider_find_result(res, m->blocks[g->first + k].id);
		if (r && r->image.path && keep[r - res->blocks])
			img = &r->image;
	}
	for (size_t k = 0; !img && res && k < res->n_blocks; k++)
		if (res->blocks[k].image.path && keep[k])
			img = &res->blocks[k].image;
	return img;
}

/* What the actions of a group came to, when one failed or was refused; NULL otherwise. */
static char *group_note(const struct conv_message *m, const struct group *g,
                        const struct conv_message *res)
{
	agent_buf t = {0};
	bool bad = false;
	for (size_t k = 0; k < g->n; k++) {
		const struct conv_block *call = &m->blocks[g->first + k];
		const struct conv_block *r = provider_find_result(res, call->id);
		bad = bad || !r || r->is_error;
		agent_buf_printf(&t, "\naction %zu (%s): %s%s", k + 1, call->name,
		                 r && r->is_error ? "[error] " : "", r ? r->text : PROVIDER_NO_RESULT);
	}
	if (!bad) {
		agent_buf_finish(&t);
		return NULL;
	}
	agent_buf out = {0};
	agent_buf_printf(&out, "%s computer_call %s: not every action ran.%s",
	                 g->declined ? "[not run]" : "[error]", g->call_id, agent_buf_cstr(&t));
	agent_buf_finish(&t);
	return agent_buf_steal(&out);
}

static void computer_output(agent_buf *b, const struct conv *c, const struct conv_message *m,
                            const struct group *g, const struct conv_message *res,
                            const bool *keep, bool *first)
{
	const struct conv_block *r = provider_find_result(res, m->blocks[g->first].id);
	jb_sep(b, first);
	agent_buf_puts(b, "{\"type\":\"computer_call_output\",\"call_id\":");
	jb_str(b, g->call_id);
	agent_buf_puts(b, ",\"output\":{\"type\":\"computer_screenshot\",\"image_url\":");
	image_url(b, c, group_image(m, g, res, keep));
	agent_buf_puts(b, "}");
	if (r && r->ack && strcmp(r->ack, "[]") != 0) {
		agent_buf_puts(b, ",\"acknowledged_safety_checks\":");
		agent_buf_puts(b, r->ack);
	}
	agent_buf_puts(b, "}");
}

static void function_output(agent_buf *b, const struct conv_block *call,
                            const struct conv_message *res, bool *first)
{
	const struct conv_block *r = provider_find_result(res, call->id);
	agent_buf t = {0};
	if (!r || r->is_error)
		agent_buf_puts(&t, "[error] ");
	agent_buf_puts(&t, r ? r->text : PROVIDER_NO_RESULT);
	jb_sep(b, first);
	agent_buf_puts(b, "{\"type\":\"function_call_output\",\"call_id\":");
	jb_str(b, call->id);
	agent_buf_puts(b, ",\"output\":");
	jb_strn(b, t.data ? t.data : "", t.len);
	agent_buf_puts(b, "}");
	b->oom |= t.oom;
	agent_buf_finish(&t);
}

/* Screenshots of function results (find_text...): a user message after the outputs. */
static void function_images(agent_buf *b, const struct conv *c, const struct conv_message *m,
                            const struct conv_message *res, const bool *keep, bool *first)
{
	bool open = false, part_first = true;
	for (size_t j = 0; res && j < m->n_blocks; j++) {
		const struct conv_block *call = &m->blocks[j];
		const struct conv_block *r = call->type == CONV_TOOL_CALL && !is_openai_action(call)
		                             ? provider_find_result(res, call->id) : NULL;
		if (!r || !r->image.path || !keep[r - res->blocks])
			continue;
		if (!open) {
			jb_sep(b, first);
			agent_buf_puts(b, "{\"role\":\"user\",\"content\":[");
			open = true;
		}
		jb_sep(b, &part_first);
		agent_buf_puts(b, "{\"type\":\"input_text\",\"text\":");
		agent_buf label = {0};
		agent_buf_printf(&label, "Screenshot after tool call %s:", call->id);
		jb_str(b, agent_buf_cstr(&label));
		agent_buf_finish(&label);
		agent_buf_puts(b, "},{\"type\":\"input_image\",\"detail\":\"auto\",\"image_url\":");
		image_url(b, c, &r->image);
		agent_buf_puts(b, "}");
	}
	if (open)
		agent_buf_puts(b, "]}");
}

/* The answers to m's calls, then the notes on what did not run. */
static void results(agent_buf *b, const struct conv *c, const struct conv_message *m,
                    const struct conv_message *res, const bool *keep, bool *first)
{
	agent_buf notes = {0};
	for (size_t j = 0; j < m->n_blocks; j++) {
		const struct conv_block *bl = &m->blocks[j];
		struct group g;
		if (group_at(m, j, res, &g)) {
			if (!g.declined)
				computer_output(b, c, m, &g, res, keep, first);
			char *note = group_note(m, &g, res);
			if (note)
				agent_buf_printf(&notes, "%s%s", notes.len ? "\n\n" : "", note);
			free(note);
			j += g.n - 1;
		} else if (bl->type == CONV_TOOL_CALL && !is_openai_action(bl)) {
			function_output(b, bl, res, first);
		}
	}
	function_images(b, c, m, res, keep, first);
	if (notes.len)
		user_text_item(b, agent_buf_cstr(&notes), first);
	b->oom |= notes.oom;
	agent_buf_finish(&notes);
}

static const bool no_keep[1] = {false};

static void input_items(agent_buf *b, const struct request_ctx *rc)
{
	const struct conv *c = rc->conv;
	const struct conv_view *v = rc->view;
	bool first = true;
	for (size_t i = 0; i < v->n; i++) {
		size_t at = v->index[i];
		const struct conv_message *m = c->messages[at];
		if (m->role == CONV_USER && m->n_blocks && at >= rc->first_message)
			user_item(b, c, m, v->image_keep[i], &first);
		if (m->role != CONV_ASSISTANT || m->n_blocks == 0)
			continue;
		bool next = i + 1 < v->n && c->messages[v->index[i + 1]]->role == CONV_TOOL;
		const struct conv_message *res = next ? c->messages[v->index[i + 1]] : NULL;
		const bool *keep = next ? v->image_keep[i + 1] : no_keep;
		bool *skip = left_out(m, res);
		if (!skip) {
			b->oom = true;
			return;
		}
		if (at >= rc->first_message)
			assistant_items(b, m, skip, &first);
		free(skip);
		if (provider_has_calls(m) && (!next || v->index[i + 1] >= rc->first_message))
			results(b, c, m, res, keep, &first);
		i += next;
	}
}

static void tools(agent_buf *b, const struct request_ctx *rc)
{
	const struct provider_tools *ts = rc->req->tools;
	bool first = true;
	agent_buf_puts(b, ",\"tools\":[");
	for (size_t i = 0; i < ts->n; i++) {
		const struct provider_tool *tl = &ts->tools[i];
		jb_sep(b, &first);
		if (strcmp(tl->name, "computer") == 0 && ts->computer_width > 0) {
			if (!legacy_model(rc->model)) {
				agent_buf_puts(b, "{\"type\":\"computer\"}");
				continue;
			}
			agent_buf_printf(b, "{\"type\":\"computer_use_preview\",\"display_width\":%d,"
			                 "\"display_height\":%d,\"environment\":\"linux\"}",
			                 ts->computer_width, ts->computer_height);
			continue;
		}
		/* strict:false: Responses defaults to strict, which refuses optional fields. */
		agent_buf_puts(b, "{\"type\":\"function\",\"name\":");
		jb_str(b, tl->name);
		agent_buf_puts(b, ",\"description\":");
		jb_str(b, tl->description);
		agent_buf_puts(b, ",\"parameters\":");
		agent_buf_puts(b, tl->schema_json);
		agent_buf_puts(b, ",\"strict\":false}");
	}
	agent_buf_puts(b, "]");
}

static bool responses_build(const struct request_ctx *rc, agent_buf *b)
{
	const struct provider_request *req = rc->req;
	agent_buf_puts(b, "{\"model\":");
	jb_str(b, rc->model);
	agent_buf_puts(b, ",\"max_output_tokens\":");
	jb_long(b, req->max_tokens);
	agent_buf_puts(b, rc->stream ? ",\"stream\":true" : ",\"stream\":false");
	/* Nothing of the user's screen stays at the vendor unless --store. */
	agent_buf_puts(b, rc->store ? ",\"store\":true" : ",\"store\":false");
	agent_buf_puts(b, ",\"include\":[\"reasoning.encrypted_content\"]");
	if (rc->previous_response_id) {
		agent_buf_puts(b, ",\"previous_response_id\":");
		jb_str(b, rc->previous_response_id);
	}
	if (legacy_model(rc->model))
		agent_buf_puts(b, ",\"truncation\":\"auto\"");
	if (req->system && *req->system) {
		agent_buf_puts(b, ",\"instructions\":");
		jb_str(b, req->system);
	}
	agent_buf_puts(b, ",\"input\":[");
	input_items(b, rc);
	agent_buf_puts(b, "]");
	if (req->tools && req->tools->n)
		tools(b, rc);
	agent_buf_puts(b, "}");
	return !b->oom;
}

/* ---- the answer ----------------------------------------------------------- */

static void take_usage(struct turn *t, const cJSON *resp)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(resp, "usage");
	t->usage.input_tokens = json_long(u, "input_tokens", t->usage.input_tokens);
	t->usage.output_tokens = json_long(u, "output_tokens", t->usage.output_tokens);
	const char *id = json_str(resp, "id");
	if (id)
		snprintf(t->response_id, sizeof(t->response_id), "%s", id);
}

static char *printed(const cJSON *v)
{
	return v ? cJSON_PrintUnformatted(v) : NULL;
}

/* A computer_call: one tool call per action, the first with the raw item and the checks. */
static bool take_computer_call(struct turn *t, const cJSON *item, const char *raw)
{
	const char *call_id = json_str(item, "call_id");
	const cJSON *actions = cJSON_GetObjectItemCaseSensitive(item, "actions");
	const cJSON *one = cJSON_GetObjectItemCaseSensitive(item, "action");
	const cJSON *checks = cJSON_GetObjectItemCaseSensitive(item, "pending_safety_checks");
	if (!call_id || !*call_id)
		return turn_fail(t, "a computer_call without call_id");
	cJSON *list = cJSON_IsArray(actions) ? cJSON_Duplicate(actions, 1) : cJSON_CreateArray();
	if (!list)
		return turn_fail(t, "out of memory");
	if (!cJSON_IsArray(actions) && cJSON_IsObject(one))
		cJSON_AddItemToArray(list, cJSON_Duplicate(one, 1));
	if (cJSON_GetArraySize(list) == 0) /* nothing to do but look */
		cJSON_AddItemToArray(list, cJSON_CreateRaw("{\"type\":\"screenshot\"}"));
	char *chk = cJSON_GetArraySize(checks) > 0 ? printed(checks) : NULL;
	bool ok = true;
	int k = 0;
	const cJSON *a;
	cJSON_ArrayForEach(a, list) {
		char id[160], *args = printed(a);
		const char *name = json_str(a, "type");
		if (k == 0)
			snprintf(id, sizeof(id), "%s", call_id);
		else
			snprintf(id, sizeof(id), "%.100s_%d", call_id, k);
		struct conv_call_extra x = {.dialect = &agent_dialect_openai};
		if (k == 0) {
			x.vendor = VENDOR;
			x.raw = raw;
			x.checks = chk;
		}
		ok = turn_add_call(t, id, name ? name : "unknown", args ? args : "{}", &x);
		free(args);
		k++;
		if (!ok)
			break;
	}
	free(chk);
	cJSON_Delete(list);
	return ok;
}

/* The text of a message item's parts, shown when it did not come as deltas. */
static void message_text(struct turn *t, const cJSON *item)
{
	if (t->streamed_text)
		return;
	const cJSON *part;
	cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(item, "content")) {
		const char *text = json_str(part, "text");
		if (!text)
			text = json_str(part, "refusal");
		if (text)
			turn_text(t, text, strlen(text));
	}
}

static char *summary_text(const cJSON *item)
{
	agent_buf s = {0};
	const cJSON *part;
	cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(item, "summary")) {
		const char *text = json_str(part, "text");
		if (text)
			agent_buf_printf(&s, "%s%s", s.len ? "\n" : "", text);
	}
	if (s.len)
		return agent_buf_steal(&s);
	agent_buf_finish(&s);
	return NULL;
}

/* One finished output item; raw is its JSON text exactly as it came. */
static bool take_item(struct turn *t, const char *raw, size_t len)
{
	char *copy = malloc(len + 1);
	if (!copy)
		return turn_fail(t, "out of memory");
	memcpy(copy, raw, len);
	copy[len] = '\0';
	cJSON *item = cJSON_Parse(copy);
	const char *type = json_str(item, "type");
	bool ok = true;
	if (!item || !type) {
		ok = turn_fail(t, "an output item is not a JSON object with a type: \"%.60s\"", copy);
	} else if (strcmp(type, "message") == 0) {
		message_text(t, item);
		t->streamed_text = false;
		ok = turn_add_vendor(t, VENDOR, copy, NULL);
	} else if (strcmp(type, "reasoning") == 0) {
		char *sum = summary_text(item);
		ok = turn_add_vendor(t, VENDOR, copy, sum);
		free(sum);
	} else if (strcmp(type, "function_call") == 0) {
		const char *id = json_str(item, "call_id"), *name = json_str(item, "name");
		struct conv_call_extra x = {.vendor = VENDOR, .raw = copy};
		ok = id && name ? turn_add_call(t, id, name, json_str(item, "arguments"), &x)
		                : turn_fail(t, "a function_call without call_id or name");
	} else if (strcmp(type, "computer_call") == 0) {
		ok = take_computer_call(t, item, copy);
	} else {
		/* Anything else the API may add is echoed back as it came. */
		ok = turn_add_vendor(t, VENDOR, copy, NULL);
	}
	cJSON_Delete(item);
	free(copy);
	return ok;
}

static void set_stop(struct turn *t, const cJSON *resp)
{
	const char *status = json_str(resp, "status");
	const char *why = json_str(cJSON_GetObjectItemCaseSensitive(resp, "incomplete_details"),
	                           "reason");
	if (status && strcmp(status, "incomplete") == 0)
		turn_set_stop(t, why && strcmp(why, "max_output_tokens") == 0 ? "length"
		                 : why ? why : "incomplete");
	else
		turn_set_stop(t, provider_has_calls(t->msg) ? "tool_calls" : "stop");
}

/* An error object ({code, message}) as the turn's failure; overload is retried. */
static bool take_error(struct turn *t, const cJSON *err, const char *what)
{
	const char *code = json_str(err, "code");
	/* The server's text goes through the one cleaner of error texts. */
	cJSON *wrap = cJSON_CreateObject();
	cJSON_AddItemToObject(wrap, "error", cJSON_IsObject(err) ? cJSON_Duplicate(err, 1)
	                                                         : cJSON_CreateObject());
	char *body = cJSON_PrintUnformatted(wrap);
	char text[400] = "";
	if (body)
		provider_error_text(body, strlen(body), text, sizeof(text));
	free(body);
	cJSON_Delete(wrap);
	t->retriable = code && (strcmp(code, "server_error") == 0 ||
	                        strcmp(code, "rate_limit_exceeded") == 0 ||
	                        strcmp(code, "server_is_overloaded") == 0);
	return turn_fail(t, "%s: %s%s%.60s%s", what, text[0] && strcmp(text, "{}") ? text
	                 : "(no message)", code ? " [" : "", code ? code : "", code ? "]" : "");
}

static bool item_event(struct turn *t, const char *data, size_t len)
{
	size_t off, n;
	if (!json_member_span(data, len, 0, "item", &off, &n))
		return turn_fail(t, "response.output_item.done without an item");
	return take_item(t, data + off, n);
}

static bool responses_event(struct turn *t, const char *event, const char *data, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(data, len);
	if (!root || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return turn_fail(t, "the stream holds an event that is not JSON: \"%.60s\"", data);
	}
	const char *type = json_str(root, "type");
	if (!type || (event && strcmp(event, "message") != 0 && strcmp(event, type) != 0))
		type = event;
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "response");
	bool ok = true;
	if (!type) {
		ok = turn_fail(t, "the stream holds an event without a type");
	} else if (strcmp(type, "response.output_text.delta") == 0 ||
	           strcmp(type, "response.refusal.delta") == 0) {
		const char *d = json_str(root, "delta");
		if (d && *d) {
			t->streamed_text = true;
			turn_text(t, d, strlen(d));
		}
	} else if (strcmp(type, "response.output_item.done") == 0) {
		ok = item_event(t, data, len);
	} else if (strcmp(type, "response.completed") == 0 ||
	           strcmp(type, "response.incomplete") == 0) {
		take_usage(t, resp);
		set_stop(t, resp);
		t->done = true;
	} else if (strcmp(type, "response.failed") == 0) {
		take_usage(t, resp);
		ok = take_error(t, cJSON_GetObjectItemCaseSensitive(resp, "error"),
		                "the response failed");
	} else if (strcmp(type, "error") == 0) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
		ok = take_error(t, cJSON_IsObject(e) ? e : root, "the server reported an error");
	}
	/* response.output_item.added, function_call_arguments.delta and the rest:
	 * the finished item in .done carries all of it. */
	cJSON_Delete(root);
	return ok && !t->failed;
}

static bool responses_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = turn_parse_body(t, body, len);
	if (root == NULL)
		return false;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
	const char *status = json_str(root, "status");
	bool ok = true;
	if (cJSON_IsObject(err) || (status && strcmp(status, "failed") == 0)) {
		ok = take_error(t, err, "the response failed");
	} else {
		size_t aoff, alen, off, n;
		bool have = json_member_span(body, len, 0, "output", &aoff, &alen);
		if (!have)
			ok = turn_fail(t, "the response has no output");
		for (int k = 0; ok && have && json_element_span(body, aoff + alen, aoff, k, &off, &n); k++)
			ok = take_item(t, body + off, n);
		if (ok) {
			take_usage(t, root);
			set_stop(t, root);
			t->done = true;
		}
	}
	cJSON_Delete(root);
	return ok && !t->failed;
}

const struct provider_format provider_format_responses = {
	.name = "openai-responses",
	.build = responses_build,
	.headers = openai_bearer_headers, /* the same key header as Chat Completions */
	.event = responses_event,
	.body = responses_body,
};
