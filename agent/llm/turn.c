/*
 * The pieces every wire format shares (agent/llm/provider-internal.h): the
 * answer assembled from events or a whole body (struct turn), the JSON
 * field readers, the pairing of tool calls with their results, and the
 * server's error text made fit for a terminal. Knows no format and no HTTP.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"

/* ---- assembling an answer ------------------------------------------------- */

void turn_init(struct turn *t, const char *who, const struct provider_events *ev)
{
	memset(t, 0, sizeof(*t));
	t->who = who;
	t->ev = ev;
	t->text_block = -1;
	t->usage.input_tokens = t->usage.output_tokens = -1;
	t->usage.cache_read_tokens = t->usage.cache_write_tokens = -1;
	t->usage.stop = PROVIDER_STOP_END;
}

static void acc_clear(struct tool_acc *a)
{
	agent_buf_finish(&a->id);
	agent_buf_finish(&a->name);
	agent_buf_finish(&a->args);
	cJSON_Delete(a->start_input);
	cJSON_Delete(a->raw);
}

void turn_clear(struct turn *t)
{
	for (size_t i = 0; i < t->n_calls; i++)
		acc_clear(&t->calls[i]);
	free(t->calls);
	agent_buf_finish(&t->text);
	cJSON_Delete(t->vblock);
	t->vblock = NULL;
	agent_buf_finish(&t->vthink);
	agent_buf_finish(&t->vsig);
	agent_buf_finish(&t->gparts);
	conv_message_destroy(t->msg);
	t->msg = NULL;
	t->calls = NULL;
	t->n_calls = 0;
}

bool turn_fail(struct turn *t, const char *fmt, ...)
{
	if (t->failed)
		return false; /* the first reason is the one worth telling */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
	t->failed = true;
	return false;
}

cJSON *turn_parse_body(struct turn *t, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	if (root != NULL && cJSON_IsObject(root))
		return root;
	cJSON_Delete(root);
	char snippet[80];
	provider_error_text(body, len < 60 ? len : 60, snippet, sizeof(snippet));
	turn_fail(t, "the response is not JSON: \"%s\"", snippet);
	return NULL;
}

/* How many bytes at the end of s[0..n) start a UTF-8 character not yet complete. */
static size_t incomplete_tail(const char *s, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = (unsigned char)s[n - back];
		if ((c & 0xC0) == 0x80)
			continue;
		size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		return need > back ? back : 0;
	}
	return 0;
}

void turn_text(struct turn *t, const char *s, size_t n)
{
	if (n == 0)
		return;
	agent_buf_append(&t->text, s, n);
	if (!t->ev || !t->ev->text) {
		t->delivered = true;
		return;
	}
	/* Show whole characters only: a multi-byte one may straddle two deltas. */
	char small[256];
	size_t total = t->n_hold + n;
	char *buf = total <= sizeof(small) ? small : malloc(total);
	if (!buf)
		return;
	memcpy(buf, t->hold, t->n_hold);
	memcpy(buf + t->n_hold, s, n);
	size_t tail = incomplete_tail(buf, total);
	size_t show = total - tail;
	memcpy(t->hold, buf + show, tail);
	t->n_hold = tail;
	if (show) {
		t->delivered = true;
		t->ev->text(t->ev->user, buf, show);
	}
	if (buf != small)
		free(buf);
}

static bool ensure_msg(struct turn *t)
{
	if (!t->msg && !(t->msg = calloc(1, sizeof(*t->msg))))
		return turn_fail(t, "out of memory");
	t->msg->role = CONV_ASSISTANT;
	return true;
}

void turn_thinking(struct turn *t, const char *s, size_t n)
{
	if (n && t->ev && t->ev->thinking)
		t->ev->thinking(t->ev->user, s, n);
}

bool turn_add_vendor(struct turn *t, const char *vendor, const char *raw, const char *shown)
{
	if (!turn_commit_text(t) || !ensure_msg(t))
		return false;
	/* It could not go back unchanged: refused here rather than mangled. */
	if (!agent_utf8_valid(raw, strlen(raw)))
		return turn_fail(t, "a %s block is not valid UTF-8", vendor);
	if (!conv_msg_add_vendor(t->msg, vendor, raw, shown))
		return turn_fail(t, "out of memory");
	t->delivered = true;
	return true;
}

/*
 * The call's raw block with its input as the arguments parsed, printed:
 * what the server would have sent whole. NULL when there is none or the
 * arguments are not an object (the call is then rebuilt, not echoed).
 */
static char *raw_call(const struct tool_acc *a, const char *args)
{
	if (!a->raw)
		return NULL;
	cJSON *input = cJSON_Parse(args && *args ? args : "{}");
	if (!cJSON_IsObject(input)) {
		cJSON_Delete(input);
		return NULL;
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(a->raw, "input", input)) {
		cJSON_Delete(input);
		return NULL;
	}
	return cJSON_PrintUnformatted(a->raw);
}

bool turn_commit_text(struct turn *t)
{
	if (t->n_hold && t->ev && t->ev->text) {
		/* A character the stream never completed: show what there is. */
		t->ev->text(t->ev->user, t->hold, t->n_hold);
		t->n_hold = 0;
	}
	if (t->text.len == 0)
		return true;
	if (t->text.oom)
		return turn_fail(t, "out of memory");
	if (!ensure_msg(t) || !conv_msg_add_text(t->msg, agent_buf_cstr(&t->text)))
		return turn_fail(t, "out of memory");
	agent_buf_reset(&t->text);
	return true;
}

struct tool_acc *turn_call(struct turn *t, long key)
{
	for (size_t i = 0; i < t->n_calls; i++)
		if (t->calls[i].key == key && !t->calls[i].done)
			return &t->calls[i];
	struct tool_acc *grown = realloc(t->calls, (t->n_calls + 1) * sizeof(*grown));
	if (!grown) {
		turn_fail(t, "out of memory");
		return NULL;
	}
	t->calls = grown;
	struct tool_acc *a = &t->calls[t->n_calls++];
	memset(a, 0, sizeof(*a));
	a->key = key;
	return a;
}

bool turn_finish_call(struct turn *t, struct tool_acc *a)
{
	if (a->done)
		return true;
	a->done = true;
	if (!turn_commit_text(t) || !ensure_msg(t))
		return false;
	if (a->id.oom || a->name.oom || a->args.oom)
		return turn_fail(t, "out of memory");
	const char *args = agent_buf_cstr(&a->args);
	char *printed = NULL;
	if (a->args.len == 0 && a->start_input && cJSON_GetArraySize(a->start_input) > 0)
		args = printed = cJSON_PrintUnformatted(a->start_input);
	if (a->name.len == 0) {
		free(printed);
		return turn_fail(t, "the model sent a tool call without a name");
	}
	char gen[32];
	const char *id = agent_buf_cstr(&a->id);
	if (!*id) {
		/* Some OpenAI-compatible servers omit ids; both formats need one. */
		snprintf(gen, sizeof(gen), "call_%zu", t->msg->n_blocks);
		id = gen;
	}
	char *raw = raw_call(a, args);
	struct conv_call_extra x = {.dialect = a->dialect, .vendor = raw ? a->vendor : NULL,
	                            .raw = raw};
	bool ok = conv_msg_add_tool_call_ex(t->msg, id, agent_buf_cstr(&a->name), args ? args : "",
	                                    &x);
	free(raw);
	free(printed);
	if (!ok)
		return turn_fail(t, "out of memory");
	t->delivered = true;
	if (t->ev && t->ev->tool_call)
		t->ev->tool_call(t->ev->user, &t->msg->blocks[t->msg->n_blocks - 1]);
	return true;
}

bool turn_add_call(struct turn *t, const char *id, const char *name, const char *args,
                   const struct conv_call_extra *x)
{
	if (!turn_commit_text(t) || !ensure_msg(t))
		return false;
	if (!conv_msg_add_tool_call_ex(t->msg, id, name, args ? args : "", x))
		return turn_fail(t, "out of memory or a call that is not valid UTF-8");
	t->delivered = true;
	if (t->ev && t->ev->tool_call)
		t->ev->tool_call(t->ev->user, &t->msg->blocks[t->msg->n_blocks - 1]);
	return true;
}

bool turn_finish_calls(struct turn *t)
{
	for (size_t i = 0; i < t->n_calls; i++)
		if (!turn_finish_call(t, &t->calls[i]))
			return false;
	return turn_commit_text(t);
}

void turn_set_stop(struct turn *t, const char *raw)
{
	if (!raw)
		return;
	snprintf(t->usage.stop_raw, sizeof(t->usage.stop_raw), "%s", raw);
	if (!strcmp(raw, "stop") || !strcmp(raw, "end_turn") || !strcmp(raw, "stop_sequence"))
		t->usage.stop = PROVIDER_STOP_END;
	else if (!strcmp(raw, "tool_calls") || !strcmp(raw, "tool_use") ||
	         !strcmp(raw, "function_call"))
		t->usage.stop = PROVIDER_STOP_TOOL_USE;
	else if (!strcmp(raw, "length") || !strcmp(raw, "max_tokens"))
		t->usage.stop = PROVIDER_STOP_MAX_TOKENS;
	else
		t->usage.stop = PROVIDER_STOP_OTHER;
}

/* What both wire formats accept as an id (Anthropic's pattern, its length
 * bound), and what may become part of a file name. */
static bool call_id_safe(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 64)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

static bool call_id_in(const struct conv_message *m, size_t upto, const char *id)
{
	for (size_t i = 0; i < upto && i < m->n_blocks; i++) {
		const struct conv_block *b = &m->blocks[i];
		if ((b->type == CONV_TOOL_CALL && strcmp(b->id, id) == 0) ||
		    (b->type == CONV_TOOL_RESULT && strcmp(b->call_id, id) == 0))
			return true;
	}
	return false;
}

static bool call_id_taken(const struct conv *c, const struct conv_message *m, size_t upto,
                          const char *id)
{
	for (size_t k = 0; k < c->n_messages; k++)
		if (call_id_in(c->messages[k], SIZE_MAX, id))
			return true;
	return call_id_in(m, upto, id);
}

/*
 * Each call's result is found by its id, so a model that repeats an id (in
 * one answer or from an earlier one) would have one call answered with
 * another's result: a denied click reported as run. Such ids, and ids that
 * are not plain names (they end up in file names and the audit log), are
 * replaced by fresh ones before anything sees the message, so the
 * conversation, the audit log and the next request all agree.
 */
static bool unique_call_ids(const struct conv *c, struct conv_message *m)
{
	for (size_t i = 0; i < m->n_blocks; i++) {
		struct conv_block *b = &m->blocks[i];
		if (b->type != CONV_TOOL_CALL ||
		    (call_id_safe(b->id) && !call_id_taken(c, m, i, b->id)))
			continue;
		char fresh[64];
		unsigned extra = 0;
		snprintf(fresh, sizeof(fresh), "dh_call_%zu_%zu", c->n_messages, i);
		while (call_id_taken(c, m, m->n_blocks, fresh) && ++extra < 1000000)
			snprintf(fresh, sizeof(fresh), "dh_call_%zu_%zu_%u", c->n_messages, i, extra);
		char *dup = strdup(fresh);
		if (dup == NULL)
			return false;
		free(b->id);
		b->id = dup;
	}
	return true;
}

bool turn_append(struct turn *t, struct conv *c)
{
	if (!t->msg || t->msg->n_blocks == 0)
		return true;
	if (!unique_call_ids(c, t->msg))
		return false;
	struct conv_message *m = conv_add_message(c, CONV_ASSISTANT);
	if (!m)
		return false;
	/* Hand the assembled blocks over instead of copying them. */
	m->blocks = t->msg->blocks;
	m->n_blocks = t->msg->n_blocks;
	t->msg->blocks = NULL;
	t->msg->n_blocks = 0;
	return true;
}

/* ---- shared by the formats ------------------------------------------------- */

const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

long json_long(const cJSON *o, const char *key, long def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(it) || isnan(it->valuedouble))
		return def;
	/* Converting a double outside long's range is undefined: clamp first. */
	double d = it->valuedouble;
	if (d >= 9.2e18)
		return LONG_MAX;
	if (d <= -9.2e18)
		return LONG_MIN;
	return (long)d;
}

const char *provider_raw(const struct conv_block *bl, const char *vendor)
{
	return bl->vendor != NULL && strcmp(bl->vendor, vendor) == 0 ? bl->raw : NULL;
}

/*
 * A server's text made fit for one line of a terminal: line breaks and tabs
 * as spaces, trimmed, every other control or invisible character shown as a
 * mark (agent_show_append), cut at a character boundary to fit `size`.
 */
static void clean_copy(const char *s, size_t n, char *out, size_t size)
{
	while (n && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) {
		s++;
		n--;
	}
	agent_buf flat, shown;
	agent_buf_init(&flat);
	agent_buf_init(&shown);
	for (size_t i = 0; i < n; i++) {
		char c = s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i];
		agent_buf_append(&flat, &c, 1);
	}
	agent_show_append(&shown, flat.data != NULL ? flat.data : "", flat.len, 0);
	const char *t = agent_buf_cstr(&shown);
	size_t o = 0, len = strlen(t);
	while (o < len) {
		size_t k = agent_utf8_seq(t + o, len - o);
		if (k == 0 || o + k >= size)
			break;
		o += k;
	}
	memcpy(out, t, o);
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	agent_buf_finish(&flat);
	agent_buf_finish(&shown);
}

void provider_error_text(const char *body, size_t len, char *out, size_t size)
{
	out[0] = '\0';
	if (!body || len == 0)
		return;
	cJSON *root = cJSON_ParseWithLength(body, len);
	const char *msg = NULL, *type = NULL;
	if (root) {
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
		if (cJSON_IsString(err))
			msg = err->valuestring;
		else if (cJSON_IsObject(err)) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(err, "message");
			const cJSON *ty = cJSON_GetObjectItemCaseSensitive(err, "type");
			msg = cJSON_IsString(m) ? m->valuestring : NULL;
			type = cJSON_IsString(ty) ? ty->valuestring : NULL;
		}
		for (const char *k = "message"; !msg && k; k = strcmp(k, "message") ? NULL : "detail") {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, k);
			msg = cJSON_IsString(m) ? m->valuestring : NULL;
		}
	}
	if (msg) {
		char tmp[400];
		if (type && *type && !strstr(msg, type))
			snprintf(tmp, sizeof(tmp), "%.300s (%.60s)", msg, type);
		else
			snprintf(tmp, sizeof(tmp), "%s", msg);
		clean_copy(tmp, strlen(tmp), out, size);
	} else {
		clean_copy(body, len < 300 ? len : 300, out, size);
	}
	cJSON_Delete(root);
}

bool wire_header_secret(wire_header_fn add, void *user, const char *name, const char *secret)
{
	char *line = NULL;
	if (asprintf(&line, "%s %s", name, secret) < 0)
		return false;
	bool ok = add(user, line);
	explicit_bzero(line, strlen(line));
	free(line);
	return ok;
}
