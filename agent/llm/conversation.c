/*
 * agent/llm/conversation — the conversation in memory: messages of blocks,
 * built, undone and reset, and what a request asks of a message. Its file,
 * screenshots and listing are conv_file.c's, the token estimate and the
 * pruning rule conv_prune.c's (conv-internal.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/conv-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

BASE_ERROR_TEXT(, conv_err, conv_error, conv_fail)

void conv_error_clear(void)
{
	conv_err.text[0] = '\0';
}

static char *dup_utf8(const char *s)
{
	s = s ? s : "";
	return agent_utf8_sanitize(s, strlen(s), NULL);
}

/*
 * A copy of an optional vendor field, which must go back unchanged: invalid
 * UTF-8 is refused, not repaired. *ok turns false on refusal or no memory.
 */
static char *dup_exact(const char *s, bool *ok)
{
	if (s == NULL || !*ok)
		return NULL;
	if (!agent_utf8_valid(s, strlen(s))) {
		*ok = conv_fail("a vendor item is not valid UTF-8");
		return NULL;
	}
	char *d = strdup(s);
	if (d == NULL)
		*ok = false;
	return d;
}

/*
 * The same for a vendor's JSON, which is copied into requests as it is: it
 * must be one JSON value of the expected type (a file may have been edited:
 * a broken item would break every later request).
 */
static char *dup_json(const char *s, int type, bool *ok)
{
	if (s == NULL || !*ok)
		return NULL;
	const char *end = NULL;
	cJSON *v = cJSON_ParseWithOpts(s, &end, true);
	bool good = v != NULL && (v->type & 0xff) == type;
	cJSON_Delete(v);
	if (!good) {
		*ok = conv_fail("a vendor item is not a JSON %s", type == cJSON_Object ? "object"
		                                                                        : "array");
		return NULL;
	}
	return dup_exact(s, ok);
}

/* ---- memory model -------------------------------------------------------- */

struct conv *conv_create(const char *path)
{
	struct conv *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (path && !(c->path = strdup(path))) {
		free(c);
		return NULL;
	}
	c->created = c->updated = time(NULL);
	c->next_image = 1;
	return c;
}

void conv_image_clear(struct conv_image *img)
{
	if (!img)
		return;
	free(img->path);
	img->path = NULL;
	img->width = img->height = 0;
}

static void block_clear(struct conv_block *b)
{
	free(b->text);
	free(b->id);
	free(b->name);
	free(b->arguments);
	cJSON_Delete(b->args);
	free(b->args_error);
	free(b->call_id);
	free(b->checks);
	free(b->vendor);
	free(b->raw);
	free(b->ack);
	conv_image_clear(&b->image);
}

void conv_message_destroy(struct conv_message *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_blocks; i++)
		block_clear(&m->blocks[i]);
	free(m->blocks);
	free(m);
}

static void truncate_messages(struct conv *c, size_t keep)
{
	while (c->n_messages > keep)
		conv_message_destroy(c->messages[--c->n_messages]);
}

void conv_destroy(struct conv *c)
{
	if (!c)
		return;
	truncate_messages(c, 0);
	free(c->messages);
	free(c->path);
	conv_forget_newest(c);
	free(c);
}

struct conv_message *conv_add_message(struct conv *c, enum conv_role role)
{
	struct conv_message *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	struct conv_message **grown = realloc(c->messages, (c->n_messages + 1) * sizeof(*grown));
	if (!grown) {
		free(m);
		return NULL;
	}
	c->messages = grown;
	m->role = role;
	c->messages[c->n_messages++] = m;
	return m;
}

struct conv_message *conv_last(const struct conv *c)
{
	return c->n_messages ? c->messages[c->n_messages - 1] : NULL;
}

static struct conv_block *add_block(struct conv_message *m, enum conv_block_type type)
{
	struct conv_block *grown = realloc(m->blocks, (m->n_blocks + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	m->blocks = grown;
	struct conv_block *b = &m->blocks[m->n_blocks];
	memset(b, 0, sizeof(*b));
	b->type = type;
	return b;
}

/* Commits the block add_block returned when ok, else frees its fields. */
static bool commit_block(struct conv_message *m, struct conv_block *b, bool ok)
{
	if (!ok) {
		block_clear(b);
		return false;
	}
	m->n_blocks++;
	return true;
}

/*
 * An image path must name a file inside the conversation's directory:
 * relative, no "..", no "//", only [A-Za-z0-9._/-], and a .png name.
 */
bool conv_image_path_safe(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	if (n == 0 || n > 255 || p[0] == '/' || p[0] == '.' || strstr(p, "..") || strstr(p, "//") ||
	    strstr(p, "/.") || n < 5 || strcmp(p + n - 4, ".png") != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '.' || ch == '_' || ch == '-' || ch == '/'))
			return false;
	}
	return true;
}

static bool copy_image(struct conv_image *dst, const struct conv_image *src)
{
	if (!src || !src->path)
		return true;
	if (!conv_image_path_safe(src->path))
		return conv_fail("image path '%s' is not a file beside the conversation", src->path);
	if (src->width <= 0 || src->height <= 0 || src->width > 100000 || src->height > 100000)
		return conv_fail("image size %dx%d is not valid", src->width, src->height);
	if (!(dst->path = strdup(src->path)))
		return conv_fail("out of memory");
	dst->width = src->width;
	dst->height = src->height;
	return true;
}

bool conv_msg_add_text(struct conv_message *m, const char *text)
{
	struct conv_block *b = add_block(m, CONV_TEXT);
	return b && commit_block(m, b, (b->text = dup_utf8(text)) != NULL);
}

bool conv_msg_add_image(struct conv_message *m, const struct conv_image *img)
{
	if (!img || !img->path)
		return conv_fail("an image block needs a path");
	struct conv_block *b = add_block(m, CONV_IMAGE);
	return b && commit_block(m, b, copy_image(&b->image, img));
}

static void parse_arguments(struct conv_block *b)
{
	const char *raw = b->arguments;
	const char *end = NULL;
	size_t i = strspn(raw, " \t\r\n");
	if (raw[i] == '\0') {
		b->args = cJSON_CreateObject();
		b->args_error = strdup("");
		return;
	}
	b->args = cJSON_ParseWithOpts(raw, &end, true);
	if (!b->args) {
		char msg[160];
		size_t at = end ? (size_t)(end - raw) : 0;
		snprintf(msg, sizeof(msg), "arguments are not valid JSON (error at byte %zu of %zu)", at,
		         strlen(raw));
		b->args_error = strdup(msg);
	} else if (!cJSON_IsObject(b->args)) {
		cJSON_Delete(b->args);
		b->args = NULL;
		b->args_error = strdup("arguments are not a JSON object");
	} else {
		b->args_error = strdup("");
	}
}

bool conv_msg_add_tool_call(struct conv_message *m, const char *id, const char *name,
                            const char *arguments)
{
	return conv_msg_add_tool_call_ex(m, id, name, arguments, NULL);
}

bool conv_msg_add_tool_call_ex(struct conv_message *m, const char *id, const char *name,
                               const char *arguments, const struct conv_call_extra *x)
{
	struct conv_block *b = add_block(m, CONV_TOOL_CALL);
	if (!b)
		return false;
	b->id = dup_utf8(id);
	b->name = dup_utf8(name);
	b->arguments = dup_utf8(arguments);
	bool ok = b->id && b->name && b->arguments;
	b->dialect = x != NULL && x->dialect != NULL ? x->dialect : &agent_dialect_deskhand;
	if (x != NULL) {
		b->vendor = dup_exact(x->vendor, &ok);
		b->raw = dup_json(x->raw, cJSON_Object, &ok);
		b->checks = dup_json(x->checks, cJSON_Array, &ok);
	}
	if (ok) {
		parse_arguments(b);
		ok = b->args_error != NULL;
	}
	return commit_block(m, b, ok);
}

bool conv_msg_add_tool_result(struct conv_message *m, const char *call_id, const char *text,
                              bool is_error, const struct conv_image *img)
{
	return conv_msg_add_tool_result_ex(m, call_id, text, is_error, img, NULL);
}

bool conv_msg_add_tool_result_ex(struct conv_message *m, const char *call_id, const char *text,
                                 bool is_error, const struct conv_image *img, const char *ack)
{
	struct conv_block *b = add_block(m, CONV_TOOL_RESULT);
	if (!b)
		return false;
	b->call_id = dup_utf8(call_id);
	b->text = dup_utf8(text);
	b->is_error = is_error;
	bool ok = b->call_id && b->text;
	b->ack = dup_json(ack, cJSON_Array, &ok);
	return commit_block(m, b, ok && copy_image(&b->image, img));
}

bool conv_msg_add_vendor(struct conv_message *m, const char *vendor, const char *raw,
                         const char *text)
{
	struct conv_block *b = add_block(m, CONV_VENDOR);
	if (!b)
		return false;
	bool ok = vendor != NULL && raw != NULL;
	b->vendor = dup_exact(vendor, &ok);
	b->raw = dup_json(raw, cJSON_Object, &ok);
	b->text = ok ? dup_utf8(text) : NULL;
	return commit_block(m, b, ok && b->text != NULL);
}

bool conv_add_user_text(struct conv *c, const char *text)
{
	struct conv_message *m = conv_add_message(c, CONV_USER);
	if (!m)
		return false;
	if (!conv_msg_add_text(m, text)) {
		c->n_messages--;
		conv_message_destroy(m);
		return false;
	}
	return true;
}

static bool message_has_text(const struct conv_message *m)
{
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TEXT)
			return true;
	return false;
}

bool conv_is_human(const struct conv_message *m)
{
	return m->role == CONV_USER && message_has_text(m);
}

size_t conv_undo(struct conv *c)
{
	for (size_t i = c->n_messages; i-- > 0;) {
		if (conv_is_human(c->messages[i])) {
			size_t gone = c->n_messages - i;
			truncate_messages(c, i);
			return gone;
		}
	}
	return 0;
}

void conv_reset(struct conv *c)
{
	truncate_messages(c, 0);
}

/* ---- questions a request asks of a message ------------------------------ */

const struct conv_block *conv_find_result(const struct conv_message *m, const char *call_id)
{
	if (!m || m->role != CONV_TOOL)
		return NULL;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_RESULT && strcmp(m->blocks[i].call_id, call_id) == 0)
			return &m->blocks[i];
	return NULL;
}

bool conv_has_calls(const struct conv_message *m)
{
	for (size_t i = 0; m && i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			return true;
	return false;
}

bool conv_call_in_text(const struct conv_block *b)
{
	return b->type == CONV_TOOL_CALL && b->dialect->in_text;
}

bool conv_has_wire_calls(const struct conv_message *m)
{
	for (size_t i = 0; m && i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL && !conv_call_in_text(&m->blocks[i]))
			return true;
	return false;
}
