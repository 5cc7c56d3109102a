/*
 * Calls that open models write into their text instead of a tool call
 * field: Qwen's <tool_call>{"name": ..., "arguments": {...}}</tool_call>
 * (when the server did not parse them) and UI-TARS's "Action: click(...)".
 * They become calls of the assembled answer, so they reach the gate like
 * any other; what cannot be read becomes a call the gate answers with an
 * error, never a guess. Knows no wire format (provider-internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"

#define TAG_OPEN "<tool_call>"
#define TAG_CLOSE "</tool_call>"

/* Moves block b (by value) to the end of m; false when out of memory. */
static bool push_block(struct conv_message *m, struct conv_block *b)
{
	struct conv_block *grown = realloc(m->blocks, (m->n_blocks + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	m->blocks = grown;
	m->blocks[m->n_blocks++] = *b;
	memset(b, 0, sizeof(*b));
	return true;
}

/* Text that is more than blanks, as a text block of m. */
static bool add_text(struct conv_message *m, const char *s, size_t n)
{
	size_t lead = 0;
	while (lead < n && strchr(" \t\r\n", s[lead]))
		lead++;
	while (n > lead && strchr(" \t\r\n", s[n - 1]))
		n--;
	if (n == lead)
		return true;
	char *copy = strndup(s + lead, n - lead);
	bool ok = copy != NULL && conv_msg_add_text(m, copy);
	free(copy);
	return ok;
}

static bool add_call(struct conv_message *m, const char *name, const char *args,
                     const agent_dialect *dialect, const char *why)
{
	char id[32];
	snprintf(id, sizeof(id), "call_%zu", m->n_blocks);
	struct conv_call_extra x = {.dialect = dialect};
	if (!conv_msg_add_tool_call_ex(m, id, name, args, &x))
		return false;
	struct conv_block *b = &m->blocks[m->n_blocks - 1];
	if (why != NULL && b->args == NULL) {
		/* Say what was wrong with the text, not with a JSON object. */
		char *w = strdup(why);
		if (w == NULL)
			return false;
		free(b->args_error);
		b->args_error = w;
	}
	return true;
}

/* One <tool_call> body: the call it names, or one the gate refuses. */
static bool qwen_call(struct conv_message *m, const char *s, size_t n)
{
	char *body = strndup(s, n);
	if (body == NULL)
		return false;
	cJSON *o = cJSON_Parse(body);
	const char *name = json_str(o, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "arguments");
	bool ok;
	if (cJSON_IsObject(o) && name != NULL && *name && cJSON_IsObject(args)) {
		char *printed = cJSON_PrintUnformatted(args);
		ok = printed != NULL && add_call(m, name, printed, NULL, NULL);
		free(printed);
	} else {
		/* Not JSON text on purpose: the call keeps no arguments and the
		 * model is told why. */
		agent_buf raw = {0};
		agent_buf_printf(&raw, "%s%s", TAG_OPEN, body);
		ok = !raw.oom && add_call(m, "computer_use", agent_buf_cstr(&raw), NULL,
		                          "the <tool_call> text is not a JSON object "
		                          "{\"name\": \"computer_use\", \"arguments\": {...}}");
		agent_buf_finish(&raw);
	}
	cJSON_Delete(o);
	free(body);
	return ok;
}

/* A text block holding <tool_call> tags: its text and calls, in order. */
static bool qwen_split(struct conv_message *m, const char *text)
{
	const char *p = text;
	for (;;) {
		const char *open = strstr(p, TAG_OPEN);
		if (open == NULL)
			return add_text(m, p, strlen(p));
		if (!add_text(m, p, (size_t)(open - p)))
			return false;
		const char *body = open + strlen(TAG_OPEN);
		const char *close = strstr(body, TAG_CLOSE);
		/* An unclosed tag (the answer was cut): the rest is its body. */
		size_t n = close != NULL ? (size_t)(close - body) : strlen(body);
		if (!qwen_call(m, body, n))
			return false;
		if (close == NULL)
			return true;
		p = close + strlen(TAG_CLOSE);
	}
}

/* The end of one UI-TARS action starting at p: after its closing
 * parenthesis (quotes and nesting respected), or the end of the text. */
static const char *action_end(const char *p)
{
	int depth = 0;
	char quote = 0;
	for (; *p; p++) {
		if (quote) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth <= 0) {
			return p + 1;
		}
	}
	return p;
}

static bool uitars_action(struct conv_message *m, const char *s, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	char *a = strndup(s, n);
	char *printed = NULL;
	bool ok = o && a && cJSON_AddStringToObject(o, "action", a) &&
	          (printed = cJSON_PrintUnformatted(o)) &&
	          add_call(m, "uitars", printed, &agent_dialect_uitars, NULL);
	free(printed);
	free(a);
	cJSON_Delete(o);
	return ok;
}

/* The actions after the last "Action:" of a text, each a call of m. */
static bool uitars_split(struct conv_message *m, const char *text)
{
	const char *at = NULL;
	for (const char *p = strstr(text, "Action:"); p; p = strstr(p + 1, "Action:"))
		at = p;
	if (at == NULL)
		return true;
	const char *p = at + strlen("Action:");
	size_t made = 0;
	for (;;) {
		p += strspn(p, " \t\r\n");
		if (*p == '\0')
			break;
		const char *end = action_end(p);
		if (!uitars_action(m, p, (size_t)(end - p)))
			return false;
		made++;
		p = end;
	}
	/* "Action:" with nothing after it: the gate says it cannot be read. */
	return made > 0 || uitars_action(m, "", 0);
}

/* Calls of the vendor's own computer function are in its dialect. */
static void mark_qwen(struct conv_message *m)
{
	for (size_t i = 0; i < m->n_blocks; i++) {
		struct conv_block *b = &m->blocks[i];
		if (b->type == CONV_TOOL_CALL && b->dialect == &agent_dialect_deskhand &&
		    strcmp(b->name, "computer_use") == 0)
			b->dialect = &agent_dialect_qwen;
	}
}

bool turn_text_calls(struct turn *t, enum model_family f)
{
	bool qwen = model_family_qwen(f), uitars = f == MODEL_FAMILY_UITARS;
	if ((!qwen && !uitars) || t->msg == NULL)
		return true;
	struct conv_message *old = t->msg, *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return turn_fail(t, "out of memory");
	m->role = CONV_ASSISTANT;
	bool ok = true;
	for (size_t i = 0; ok && i < old->n_blocks; i++) {
		struct conv_block *b = &old->blocks[i];
		bool split = b->type == CONV_TEXT && qwen && strstr(b->text, TAG_OPEN) != NULL;
		if (split)
			ok = qwen_split(m, b->text);
		else if (b->type == CONV_TEXT && uitars)
			ok = push_block(m, b) && uitars_split(m, m->blocks[m->n_blocks - 1].text);
		else
			ok = push_block(m, b);
	}
	if (ok && qwen)
		mark_qwen(m);
	if (!ok) {
		conv_message_destroy(m);
		return turn_fail(t, "out of memory");
	}
	t->msg = m;
	conv_message_destroy(old); /* what was moved out of it is zeroed */
	return true;
}

bool provider_call_in_text(const struct conv_block *b)
{
	return b->type == CONV_TOOL_CALL && b->dialect->in_text;
}

bool provider_has_wire_calls(const struct conv_message *m)
{
	for (size_t i = 0; m && i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL && !provider_call_in_text(&m->blocks[i]))
			return true;
	return false;
}
