/*
 * The conversation: its memory model, its atomic JSON file, its screenshots
 * beside it, the listing, the token estimate and the pruning rule.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/llm/conversation.h"
#include "agent/util/textutil.h"

AGENT_ERROR_TEXT(static, conv_err, conv_error, conv_fail)

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
	free(c->newest.path);
	free(c->newest.png);
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
static bool image_path_safe(const char *p)
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
	if (!image_path_safe(src->path))
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

static bool is_human(const struct conv_message *m)
{
	return m->role == CONV_USER && message_has_text(m);
}

size_t conv_undo(struct conv *c)
{
	for (size_t i = c->n_messages; i-- > 0;) {
		if (is_human(c->messages[i])) {
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

/* ---- token estimate and pruning ------------------------------------------ */

long conv_text_tokens(const char *text)
{
	return text ? (long)((strlen(text) + 3) / 4) : 0;
}

static long image_tokens(const struct conv_image *img, bool sent)
{
	if (!img->path)
		return 0;
	return sent ? CONV_IMAGE_TOKENS : conv_text_tokens(CONV_IMAGE_OMITTED);
}

static long block_tokens(const struct conv_block *b, bool image_sent)
{
	switch (b->type) {
	case CONV_TEXT:
		return conv_text_tokens(b->text);
	case CONV_IMAGE:
		return image_tokens(&b->image, image_sent);
	case CONV_TOOL_CALL:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->id) + conv_text_tokens(b->name) +
		       conv_text_tokens(b->arguments);
	case CONV_TOOL_RESULT:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->call_id) + conv_text_tokens(b->text) +
		       image_tokens(&b->image, image_sent);
	case CONV_VENDOR:
		return CONV_BLOCK_TOKENS + conv_text_tokens(b->raw);
	}
	return 0;
}

long conv_tokens(const struct conv *c)
{
	long t = 0;
	for (size_t i = 0; i < c->n_messages; i++) {
		const struct conv_message *m = c->messages[i];
		t += CONV_MESSAGE_TOKENS;
		for (size_t j = 0; j < m->n_blocks; j++)
			t += block_tokens(&m->blocks[j], true);
	}
	return t;
}

void conv_view_clear(struct conv_view *v)
{
	if (!v)
		return;
	if (v->image_keep)
		for (size_t i = 0; i < v->n; i++)
			free(v->image_keep[i]);
	free(v->image_keep);
	free(v->index);
	memset(v, 0, sizeof(*v));
}

/* The working state of conv_view_plan, per message of c. Ownership: plan_free. */
struct plan {
	size_t n;
	bool **keep;     /* keep[i][j]: block j of message i sends its image */
	long *cost;      /* estimated tokens */
	bool *drop;
	long total;      /* estimate of the messages not dropped */
};

static void plan_free(struct plan *pl)
{
	for (size_t i = 0; pl->keep && i < pl->n; i++)
		free(pl->keep[i]);
	free(pl->keep);
	free(pl->cost);
	free(pl->drop);
}

/* Which images travel as pixels (the newest keep_images), and what each
 * message costs with them. */
static bool plan_costs(const struct conv *c, int keep_images, struct plan *pl)
{
	size_t n = pl->n;
	pl->keep = calloc(n ? n : 1, sizeof(*pl->keep));
	pl->cost = calloc(n ? n : 1, sizeof(*pl->cost));
	pl->drop = calloc(n ? n : 1, sizeof(*pl->drop));
	if (!pl->keep || !pl->cost || !pl->drop)
		return false;
	long left = keep_images < 0 ? LONG_MAX : keep_images;
	for (size_t i = n; i-- > 0;) {
		const struct conv_message *m = c->messages[i];
		if (!(pl->keep[i] = calloc(m->n_blocks ? m->n_blocks : 1, sizeof(bool))))
			return false;
		pl->cost[i] = CONV_MESSAGE_TOKENS;
		for (size_t j = m->n_blocks; j-- > 0;) {
			if (m->blocks[j].image.path && left > 0) {
				pl->keep[i][j] = true;
				left--;
			}
			pl->cost[i] += block_tokens(&m->blocks[j], pl->keep[i][j]);
		}
	}
	for (size_t i = 0; i < n; i++)
		pl->total += pl->cost[i];
	return true;
}

static bool starts_step(const struct conv_message *m)
{
	return m->role == CONV_ASSISTANT;
}

/*
 * While over budget, drops the messages from i up to limit, oldest first,
 * in whole units: a unit runs from its first message to the next message
 * that `starts` one.
 */
static void drop_oldest(const struct conv *c, struct plan *pl, size_t i, size_t limit,
                        long budget, bool (*starts)(const struct conv_message *))
{
	while (pl->total > budget && i < limit) {
		size_t end = i + 1;
		while (end < limit && !starts(c->messages[end]))
			end++;
		for (size_t k = i; k < end; k++) {
			pl->drop[k] = true;
			pl->total -= pl->cost[k];
		}
		i = end;
	}
}

static void plan_prune(const struct conv *c, long budget, struct plan *pl)
{
	size_t n = pl->n;
	/* The newest human message: it and everything after it stay. */
	size_t newest = 0;
	for (size_t i = n; i-- > 0;)
		if (is_human(c->messages[i])) {
			newest = i;
			break;
		}
	/* First whole turns (a human message up to the next one), oldest first. */
	drop_oldest(c, pl, 0, newest, budget, is_human);
	/*
	 * Then the steps of the newest turn, oldest first: an assistant
	 * message and the tool message answering it go together; the last
	 * step stays so the model knows what it just did.
	 */
	size_t last_step = n;
	for (size_t k = n; k-- > newest + 1;)
		if (starts_step(c->messages[k])) {
			last_step = k;
			break;
		}
	drop_oldest(c, pl, newest + 1, last_step, budget, starts_step);
}

/* The view of the messages kept; their image choices move into it. */
static bool plan_view(struct plan *pl, struct conv_view *v)
{
	size_t kept = 0;
	for (size_t i = 0; i < pl->n; i++)
		kept += !pl->drop[i];
	if (!(v->index = calloc(kept ? kept : 1, sizeof(size_t))) ||
	    !(v->image_keep = calloc(kept ? kept : 1, sizeof(bool *))))
		return false;
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->drop[i]) {
			v->dropped++;
			continue;
		}
		v->index[v->n] = i;
		v->image_keep[v->n++] = pl->keep[i];
		pl->keep[i] = NULL;
	}
	v->tokens = pl->total;
	return true;
}

bool conv_view_plan(const struct conv *c, long budget, int keep_images, struct conv_view *v)
{
	struct plan pl = {.n = c->n_messages};
	memset(v, 0, sizeof(*v));
	bool ok = plan_costs(c, keep_images, &pl);
	if (ok && budget > 0)
		plan_prune(c, budget, &pl);
	ok = ok && plan_view(&pl, v);
	if (!ok) {
		conv_view_clear(v);
		conv_fail("out of memory");
	}
	plan_free(&pl);
	return ok;
}

/* ---- files --------------------------------------------------------------- */

static char *path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* The file name without directory and without a ".json" ending. */
static char *path_stem(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".json") == 0)
		n -= 5;
	return strndup(base, n);
}

static bool fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return conv_fail("cannot open directory %s: %s", dir, strerror(errno));
	bool ok = fsync(fd) == 0 || errno == EINVAL;
	int err = errno;
	close(fd);
	return ok || conv_fail("cannot sync directory %s: %s", dir, strerror(err));
}

/* Temporary file in the same directory, fsync, rename, fsync of the directory. */
static bool write_atomic(const char *path, const void *data, size_t len)
{
	char *dir = path_dirname(path);
	char *stem = path_stem(path);
	char *tmp = NULL;
	int fd = -1;
	bool ok = false;
	if (!dir || !stem || asprintf(&tmp, "%s/.%s.tmp.XXXXXX", dir, stem) < 0) {
		tmp = NULL;
		conv_fail("out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		conv_fail("cannot create a file in %s: %s", dir, strerror(errno));
		goto out_free;
	}
	const char *p = data;
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			conv_fail("cannot write %s: %s", path, strerror(errno));
			goto out_unlink;
		}
		done += (size_t)w;
	}
	if (fsync(fd) != 0) {
		conv_fail("cannot sync %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	if (close(fd) != 0) {
		fd = -1;
		conv_fail("cannot write %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		conv_fail("cannot replace %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	ok = fsync_dir(dir);
	goto out_free;
out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out_free:
	free(tmp);
out:
	free(dir);
	free(stem);
	return ok;
}

static void format_time(time_t t, char out[32])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static time_t parse_time(const char *s)
{
	struct tm tm = {0};
	if (!s)
		return 0;
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return 0;
	return timegm(&tm);
}

static const char *role_name(enum conv_role r)
{
	return r == CONV_USER ? "user" : r == CONV_ASSISTANT ? "assistant" : "tool";
}

static cJSON *image_json(const struct conv_image *img)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "path", img->path) ||
	    !cJSON_AddNumberToObject(o, "width", img->width) ||
	    !cJSON_AddNumberToObject(o, "height", img->height)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Adds key: s when s is set; true when it was added or had nothing to add. */
static bool add_opt(cJSON *o, const char *key, const char *s)
{
	return s == NULL || cJSON_AddStringToObject(o, key, s) != NULL;
}

static cJSON *block_json(const struct conv_block *b)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;
	switch (b->type) {
	case CONV_TEXT:
		ok = ok && cJSON_AddStringToObject(o, "type", "text") &&
		     cJSON_AddStringToObject(o, "text", b->text);
		break;
	case CONV_IMAGE: {
		cJSON *img = image_json(&b->image);
		ok = ok && img && cJSON_AddStringToObject(o, "type", "image");
		if (ok) {
			cJSON_AddItemToObject(o, "path", cJSON_DetachItemFromObject(img, "path"));
			cJSON_AddItemToObject(o, "width", cJSON_DetachItemFromObject(img, "width"));
			cJSON_AddItemToObject(o, "height", cJSON_DetachItemFromObject(img, "height"));
		}
		cJSON_Delete(img);
		break;
	}
	case CONV_TOOL_CALL:
		ok = ok && cJSON_AddStringToObject(o, "type", "tool_call") &&
		     cJSON_AddStringToObject(o, "id", b->id) &&
		     cJSON_AddStringToObject(o, "name", b->name) &&
		     cJSON_AddStringToObject(o, "arguments", b->arguments) &&
		     add_opt(o, "toolset", b->dialect->name) && add_opt(o, "vendor", b->vendor) &&
		     add_opt(o, "raw", b->raw) && add_opt(o, "checks", b->checks);
		break;
	case CONV_VENDOR:
		ok = ok && cJSON_AddStringToObject(o, "type", "vendor") &&
		     cJSON_AddStringToObject(o, "vendor", b->vendor) &&
		     cJSON_AddStringToObject(o, "raw", b->raw) &&
		     cJSON_AddStringToObject(o, "text", b->text);
		break;
	case CONV_TOOL_RESULT:
		ok = ok && cJSON_AddStringToObject(o, "type", "tool_result") &&
		     cJSON_AddStringToObject(o, "call_id", b->call_id) &&
		     cJSON_AddStringToObject(o, "text", b->text) &&
		     cJSON_AddBoolToObject(o, "is_error", b->is_error) && add_opt(o, "ack", b->ack);
		if (ok && b->image.path) {
			cJSON *img = image_json(&b->image);
			ok = img && cJSON_AddItemToObject(o, "image", img);
		}
		break;
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Version 2 only when something needs it, so older deskhands read the rest. */
static int format_version(const struct conv *c)
{
	for (size_t i = 0; i < c->n_messages; i++)
		for (size_t j = 0; j < c->messages[i]->n_blocks; j++) {
			const struct conv_block *b = &c->messages[i]->blocks[j];
			if (b->type == CONV_VENDOR || b->raw || b->checks || b->ack ||
			    (b->type == CONV_TOOL_CALL && b->dialect->name != NULL))
				return 2;
		}
	return 1;
}

static char *conv_to_json(const struct conv *c)
{
	char created[32], updated[32];
	format_time(c->created, created);
	format_time(c->updated, updated);
	cJSON *root = cJSON_CreateObject();
	cJSON *msgs = NULL;
	char *text = NULL;
	if (!root || !cJSON_AddStringToObject(root, "format", "deskhand-conversation") ||
	    !cJSON_AddNumberToObject(root, "version", format_version(c)) ||
	    !cJSON_AddStringToObject(root, "created", created) ||
	    !cJSON_AddStringToObject(root, "updated", updated) ||
	    !(msgs = cJSON_AddArrayToObject(root, "messages")))
		goto out;
	for (size_t i = 0; i < c->n_messages; i++) {
		const struct conv_message *m = c->messages[i];
		cJSON *mo = cJSON_CreateObject();
		cJSON *content = NULL;
		if (!mo || !cJSON_AddItemToArray(msgs, mo) ||
		    !cJSON_AddStringToObject(mo, "role", role_name(m->role)) ||
		    !(content = cJSON_AddArrayToObject(mo, "content")))
			goto out;
		for (size_t j = 0; j < m->n_blocks; j++) {
			cJSON *bo = block_json(&m->blocks[j]);
			if (!bo || !cJSON_AddItemToArray(content, bo)) {
				cJSON_Delete(bo);
				goto out;
			}
		}
	}
	text = cJSON_PrintUnformatted(root);
out:
	cJSON_Delete(root);
	return text;
}

bool conv_save(struct conv *c)
{
	if (!c->path)
		return conv_fail("the conversation has no file");
	c->updated = time(NULL);
	char *text = conv_to_json(c);
	if (!text)
		return conv_fail("out of memory");
	size_t len = strlen(text);
	text[len] = '\n'; /* replaces the NUL: the file ends with a newline */
	bool ok = write_atomic(c->path, text, len + 1);
	free(text);
	return ok;
}


char *conv_image_file(const struct conv *c, const struct conv_image *img)
{
	char *dir = path_dirname(c->path ? c->path : "./x");
	char *out = NULL;
	if (dir && asprintf(&out, "%s/%s", dir, img->path) < 0)
		out = NULL;
	free(dir);
	return out;
}

/* The newest image's bytes (owned: consumed), for the request that sends
 * it next; without memory for its name it is read back from its file, as
 * older ones are. */
static void keep_newest(struct conv *c, const char *rel, uint8_t *png, size_t len)
{
	free(c->newest.path);
	free(c->newest.png);
	c->newest.path = strdup(rel);
	c->newest.png = c->newest.path != NULL ? png : NULL;
	c->newest.len = len;
	if (c->newest.path == NULL)
		free(png);
}

const uint8_t *conv_image_bytes(const struct conv *c, const struct conv_image *img, size_t *len)
{
	if (c->newest.path == NULL || img->path == NULL || strcmp(img->path, c->newest.path) != 0)
		return NULL;
	/* What is sent is what the conversation holds: an image whose file is
	 * gone (or no longer the one stored) is not sent from memory either. */
	char *file = conv_image_file(c, img);
	struct stat st;
	bool same = file != NULL && stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
	            (size_t)st.st_size == c->newest.len;
	free(file);
	if (!same)
		return NULL;
	*len = c->newest.len;
	return c->newest.png;
}

bool conv_store_png(struct conv *c, const void *png, size_t len, int width, int height,
                    struct conv_image *img)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);
	if (copy == NULL) {
		memset(img, 0, sizeof(*img));
		return conv_fail("out of memory");
	}
	memcpy(copy, png, len);
	return conv_store_png_owned(c, copy, len, width, height, img);
}

bool conv_store_png_owned(struct conv *c, uint8_t *png, size_t len, int width, int height,
                          struct conv_image *img)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	memset(img, 0, sizeof(*img));
	bool is_png = len >= 8 && memcmp(png, sig, 8) == 0, sized = width > 0 && height > 0;
	if (!c->path || !is_png || !sized) {
		free(png);
		if (!c->path)
			return conv_fail("the conversation has no file to store images beside");
		if (!is_png)
			return conv_fail("the image is not a PNG");
		return conv_fail("image size %dx%d is not valid", width, height);
	}
	char *dir = path_dirname(c->path);
	char *stem = path_stem(c->path);
	char *imgdir = NULL, *rel = NULL, *full = NULL;
	bool ok = false;
	if (!dir || !stem || asprintf(&imgdir, "%s/%s.images", dir, stem) < 0) {
		imgdir = NULL;
		conv_fail("out of memory");
		goto out;
	}
	if (mkdir(imgdir, 0700) != 0 && errno != EEXIST) {
		conv_fail("cannot create %s: %s", imgdir, strerror(errno));
		goto out;
	}
	for (;; c->next_image++) {
		free(rel);
		free(full);
		full = NULL;
		if (asprintf(&rel, "%s.images/%04u.png", stem, c->next_image) < 0 ||
		    asprintf(&full, "%s/%s", dir, rel) < 0) {
			rel = NULL;
			conv_fail("out of memory");
			goto out;
		}
		if (access(full, F_OK) != 0)
			break;
	}
	if (!image_path_safe(rel)) {
		conv_fail("the conversation's name '%s' cannot carry images (use letters, digits, . _ -)",
		          stem);
		goto out;
	}
	if (!write_atomic(full, png, len))
		goto out;
	c->next_image++;
	keep_newest(c, rel, png, len);
	png = NULL;
	img->path = rel;
	img->width = width;
	img->height = height;
	rel = NULL;
	ok = true;
out:
	free(png);
	free(dir);
	free(stem);
	free(imgdir);
	free(rel);
	free(full);
	return ok;
}

/* Far more than any conversation holds: its screenshots are files beside it. */
#define CONV_FILE_MAX (256u << 20)

static char *read_file(const char *path, size_t *len_out)
{
	char *text = agent_read_file(path, CONV_FILE_MAX, len_out);
	if (text == NULL)
		conv_fail("cannot read %s: %s", path, strerror(errno));
	return text;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static bool jimage(const cJSON *o, struct conv_image *img)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "width");
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "height");
	img->path = (char *)jstr(o, "path");
	img->width = cJSON_IsNumber(w) ? w->valueint : 0;
	img->height = cJSON_IsNumber(h) ? h->valueint : 0;
	return img->path != NULL;
}

/* Highest NNNN of the images a message refers to, so new ones never reuse one. */
static unsigned image_number(const struct conv_image *img)
{
	const char *slash = img->path ? strrchr(img->path, '/') : NULL;
	return slash ? (unsigned)strtoul(slash + 1, NULL, 10) : 0;
}

static bool load_block(struct conv *c, struct conv_message *m, const cJSON *bo, size_t mi)
{
	const char *type = jstr(bo, "type");
	struct conv_image img = {0};
	bool ok;
	if (!type)
		return conv_fail("message %zu: a block without a type", mi + 1);
	if (strcmp(type, "text") == 0) {
		const char *t = jstr(bo, "text");
		if (!t)
			return conv_fail("message %zu: a text block without text", mi + 1);
		ok = conv_msg_add_text(m, t);
	} else if (strcmp(type, "image") == 0) {
		if (!jimage(bo, &img))
			return conv_fail("message %zu: an image block without a path", mi + 1);
		ok = conv_msg_add_image(m, &img);
	} else if (strcmp(type, "tool_call") == 0) {
		const char *id = jstr(bo, "id"), *name = jstr(bo, "name"), *args = jstr(bo, "arguments");
		if (!id || !name || !args)
			return conv_fail("message %zu: a tool call without id, name or arguments", mi + 1);
		const char *toolset = jstr(bo, "toolset");
		struct conv_call_extra x = {agent_dialect_find(toolset), jstr(bo, "vendor"),
		                            jstr(bo, "raw"), jstr(bo, "checks")};
		if (x.dialect == NULL)
			return conv_fail("message %zu: a tool call of an unknown toolset \"%.40s\"",
			                 mi + 1, toolset);
		ok = conv_msg_add_tool_call_ex(m, id, name, args, &x);
	} else if (strcmp(type, "vendor") == 0) {
		const char *v = jstr(bo, "vendor"), *raw = jstr(bo, "raw");
		if (!v || !raw)
			return conv_fail("message %zu: a vendor block without vendor or raw", mi + 1);
		ok = conv_msg_add_vendor(m, v, raw, jstr(bo, "text"));
	} else if (strcmp(type, "tool_result") == 0) {
		const char *id = jstr(bo, "call_id"), *t = jstr(bo, "text");
		const cJSON *io = cJSON_GetObjectItemCaseSensitive(bo, "image");
		if (!id)
			return conv_fail("message %zu: a tool result without call_id", mi + 1);
		if (io && !jimage(io, &img))
			return conv_fail("message %zu: a tool result image without a path", mi + 1);
		ok = conv_msg_add_tool_result_ex(
			m, id, t ? t : "", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bo, "is_error")),
			img.path ? &img : NULL, jstr(bo, "ack"));
	} else {
		return conv_fail("message %zu: unknown block type '%s'", mi + 1, type);
	}
	if (!ok) {
		char why[256];
		snprintf(why, sizeof(why), "%s", conv_error()[0] ? conv_error() : "out of memory");
		return conv_fail("message %zu: %s", mi + 1, why);
	}
	unsigned num = image_number(&img);
	if (num >= c->next_image)
		c->next_image = num + 1;
	return true;
}

struct conv *conv_load(const char *path)
{
	conv_err.text[0] = '\0';
	char *text = read_file(path, NULL);
	if (!text)
		return NULL;
	struct conv *c = conv_parse(path, text);
	free(text);
	return c;
}

struct conv *conv_parse(const char *path, const char *text)
{
	struct conv *c = NULL;
	conv_err.text[0] = '\0';
	cJSON *root = cJSON_Parse(text);
	if (!root) {
		conv_fail("%s is not valid JSON", path);
		return NULL;
	}
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
	const char *format = jstr(root, "format");
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
	if (!format || strcmp(format, "deskhand-conversation") != 0 || !cJSON_IsNumber(ver) ||
	    !cJSON_IsArray(msgs)) {
		conv_fail("%s is not a deskhand conversation", path);
		goto fail;
	}
	if (ver->valueint > CONV_FORMAT_VERSION || ver->valueint < 1) {
		conv_fail("%s: format version %d is not one this deskhand reads (%d)", path,
		          ver->valueint, CONV_FORMAT_VERSION);
		goto fail;
	}
	if (!(c = conv_create(path))) {
		conv_fail("out of memory");
		goto fail;
	}
	c->created = parse_time(jstr(root, "created"));
	c->updated = parse_time(jstr(root, "updated"));
	size_t mi = 0;
	const cJSON *mo;
	cJSON_ArrayForEach(mo, msgs) {
		const char *role = jstr(mo, "role");
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(mo, "content");
		enum conv_role r;
		if (role && strcmp(role, "user") == 0)
			r = CONV_USER;
		else if (role && strcmp(role, "assistant") == 0)
			r = CONV_ASSISTANT;
		else if (role && strcmp(role, "tool") == 0)
			r = CONV_TOOL;
		else {
			conv_fail("%s: message %zu has no known role", path, mi + 1);
			goto fail;
		}
		if (!cJSON_IsArray(content)) {
			conv_fail("%s: message %zu has no content array", path, mi + 1);
			goto fail;
		}
		struct conv_message *m = conv_add_message(c, r);
		if (!m) {
			conv_fail("out of memory");
			goto fail;
		}
		const cJSON *bo;
		cJSON_ArrayForEach(bo, content) {
			if (!load_block(c, m, bo, mi)) {
				char why[400];
				snprintf(why, sizeof(why), "%s", conv_error());
				conv_fail("%s: %s", path, why);
				goto fail;
			}
		}
		mi++;
	}
	cJSON_Delete(root);
	return c;
fail:
	cJSON_Delete(root);
	conv_destroy(c);
	return NULL;
}

char *conv_default_dir(void)
{
	char base[PATH_MAX - 16], dir[PATH_MAX];
	if (!agent_own_dir(AGENT_DIR_DATA, base, sizeof(base))) {
		conv_fail("neither XDG_DATA_HOME nor HOME is set to an absolute path");
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s/conversations", base);
	if (!agent_make_dirs(dir)) {
		conv_fail("cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	char *out = strdup(dir);
	if (out == NULL)
		conv_fail("out of memory");
	return out;
}

char *conv_new_path(const char *dir)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
	for (int k = 1; k < 1000; k++) {
		char *p = NULL;
		int r = k == 1 ? asprintf(&p, "%s/%s.json", dir, stamp)
		               : asprintf(&p, "%s/%s-%d.json", dir, stamp, k);
		if (r < 0)
			return NULL;
		if (access(p, F_OK) != 0)
			return p;
		free(p);
	}
	conv_fail("too many conversations started this second");
	return NULL;
}

/* One line of at most ~80 characters, cut at a character boundary. */
static char *one_line(const char *s)
{
	size_t n = strlen(s);
	size_t cut = n > 80 ? 80 : n;
	while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
		cut--;
	char *r = malloc(cut + 4);
	if (!r)
		return NULL;
	memcpy(r, s, cut);
	for (size_t i = 0; i < cut; i++)
		if (r[i] == '\n' || r[i] == '\r' || r[i] == '\t')
			r[i] = ' ';
	strcpy(r + cut, cut < n ? "..." : "");
	return r;
}

static int summary_cmp(const void *a, const void *b)
{
	const struct conv_summary *x = a, *y = b;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return strcmp(y->path, x->path);
}

static bool summarize(const char *path, struct conv_summary *s)
{
	char *text = read_file(path, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	free(text);
	const char *format = jstr(root, "format");
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
	if (!format || strcmp(format, "deskhand-conversation") != 0 || !cJSON_IsArray(msgs)) {
		cJSON_Delete(root);
		return false;
	}
	memset(s, 0, sizeof(*s));
	s->updated = parse_time(jstr(root, "updated"));
	s->n_messages = (size_t)cJSON_GetArraySize(msgs);
	const char *first = "";
	const cJSON *mo;
	cJSON_ArrayForEach(mo, msgs) {
		const char *role = jstr(mo, "role");
		const cJSON *bo;
		if (!role || strcmp(role, "user") != 0)
			continue;
		cJSON_ArrayForEach(bo, cJSON_GetObjectItemCaseSensitive(mo, "content")) {
			const char *type = jstr(bo, "type");
			if (type && strcmp(type, "text") == 0 && jstr(bo, "text")) {
				first = jstr(bo, "text");
				goto found;
			}
		}
	}
found:
	s->path = strdup(path);
	s->first_user = one_line(first);
	cJSON_Delete(root);
	if (!s->path || !s->first_user) {
		free(s->path);
		free(s->first_user);
		return false;
	}
	return true;
}

bool conv_list(const char *dir, struct conv_summary **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return true;
		return conv_fail("cannot read %s: %s", dir, strerror(errno));
	}
	struct conv_summary *list = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct conv_summary *grown = realloc(list, ncap * sizeof(*grown));
			if (!grown)
				break;
			list = grown;
			cap = ncap;
		}
		char *path = NULL;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			break;
		if (summarize(path, &list[count]))
			count++;
		free(path);
	}
	closedir(d);
	if (count)
		qsort(list, count, sizeof(*list), summary_cmp);
	*out = list;
	*n = count;
	return true;
}

void conv_summaries_free(struct conv_summary *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].path);
		free(s[i].first_user);
	}
	free(s);
}
