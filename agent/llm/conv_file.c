/*
 * agent/llm/conv_file — the conversation on disk: its JSON file, written
 * atomically, read strictly (every toolset made its dialect once); its
 * screenshots beside it, the newest kept in memory for the next request;
 * the default directory and the listing behind --conversations.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/llm/conv-internal.h"
#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

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

/* The file replaced whole, durably: never a mix of old and new (base/'s). */
static bool write_atomic(const char *path, const void *data, size_t len)
{
	if (base_atomic_replace(path, data, len, 0600))
		return true;
	return conv_fail("cannot save %s: %s", path, base_error());
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

/* The file's names of the roles and the block types, by the enum. */
static const char *const role_names[] = {
	[CONV_USER] = "user", [CONV_ASSISTANT] = "assistant", [CONV_TOOL] = "tool",
};
static const char *const block_names[] = {
	[CONV_TEXT] = "text", [CONV_IMAGE] = "image", [CONV_TOOL_CALL] = "tool_call",
	[CONV_TOOL_RESULT] = "tool_result", [CONV_VENDOR] = "vendor",
};

/*
 * The file's JSON is written as text straight into one buffer, not built
 * as a cJSON tree first: a save came twice a step, and a tree of the whole
 * conversation each time (millions of small allocations over a long run)
 * fragmented the heap; resident memory grew ~4.7 KiB a step where the
 * conversation itself grows ~1.2 (tests/session/test_soak.py).
 */

/* ,"key": before a value. */
static void j_key(agent_buf *o, bool *first, const char *key)
{
	jb_sep(o, first);
	jb_str(o, key);
	agent_buf_append(o, ":", 1);
}

/* ,"key":"s" ("" for NULL). */
static void j_str(agent_buf *o, bool *first, const char *key, const char *s)
{
	j_key(o, first, key);
	jb_str(o, s);
}

/* ,"key":"s" when s is set; nothing otherwise. */
static void j_opt(agent_buf *o, bool *first, const char *key, const char *s)
{
	if (s != NULL)
		j_str(o, first, key, s);
}

/* ,"path":..,"width":..,"height":.. */
static void j_image(agent_buf *o, bool *first, const struct conv_image *img)
{
	j_str(o, first, "path", img->path);
	j_key(o, first, "width");
	jb_long(o, img->width);
	j_key(o, first, "height");
	jb_long(o, img->height);
}

static void block_json(agent_buf *o, const struct conv_block *b)
{
	bool first = true;
	agent_buf_append(o, "{", 1);
	j_str(o, &first, "type", base_name_of(BASE_NAMES(block_names), (int)b->type, "?"));
	switch (b->type) {
	case CONV_TEXT:
		j_str(o, &first, "text", b->text);
		break;
	case CONV_IMAGE:
		j_image(o, &first, &b->image);
		break;
	case CONV_TOOL_CALL:
		j_str(o, &first, "id", b->id);
		j_str(o, &first, "name", b->name);
		j_str(o, &first, "arguments", b->arguments);
		j_opt(o, &first, "toolset", b->dialect->name);
		j_opt(o, &first, "vendor", b->vendor);
		j_opt(o, &first, "raw", b->raw);
		j_opt(o, &first, "checks", b->checks);
		break;
	case CONV_VENDOR:
		j_str(o, &first, "vendor", b->vendor);
		j_str(o, &first, "raw", b->raw);
		j_str(o, &first, "text", b->text);
		break;
	case CONV_TOOL_RESULT:
		j_str(o, &first, "call_id", b->call_id);
		j_str(o, &first, "text", b->text);
		j_key(o, &first, "is_error");
		agent_buf_puts(o, b->is_error ? "true" : "false");
		j_opt(o, &first, "ack", b->ack);
		if (b->image.path) {
			bool inner = true;
			j_key(o, &first, "image");
			agent_buf_append(o, "{", 1);
			j_image(o, &inner, &b->image);
			agent_buf_append(o, "}", 1);
		}
		break;
	}
	agent_buf_append(o, "}", 1);
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

/* The file's text, NUL-terminated, malloc'ed for the caller; NULL when
 * out of memory. */
static char *conv_to_json(const struct conv *c)
{
	char created[32], updated[32];
	format_time(c->created, created);
	format_time(c->updated, updated);
	agent_buf o;
	agent_buf_init(&o);
	bool first = true;
	agent_buf_append(&o, "{", 1);
	j_str(&o, &first, "format", "deskhand-conversation");
	j_key(&o, &first, "version");
	jb_long(&o, format_version(c));
	j_str(&o, &first, "created", created);
	j_str(&o, &first, "updated", updated);
	j_key(&o, &first, "messages");
	agent_buf_append(&o, "[", 1);
	for (size_t i = 0; i < c->n_messages; i++) {
		const struct conv_message *m = c->messages[i];
		bool mfirst = true;
		if (i > 0)
			agent_buf_append(&o, ",", 1);
		agent_buf_append(&o, "{", 1);
		j_str(&o, &mfirst, "role", base_name_of(BASE_NAMES(role_names), (int)m->role, "tool"));
		j_key(&o, &mfirst, "content");
		agent_buf_append(&o, "[", 1);
		for (size_t j = 0; j < m->n_blocks; j++) {
			if (j > 0)
				agent_buf_append(&o, ",", 1);
			block_json(&o, &m->blocks[j]);
		}
		agent_buf_append(&o, "]}", 2);
	}
	agent_buf_append(&o, "]}", 2);
	if (o.oom) {
		agent_buf_finish(&o);
		return NULL;
	}
	return agent_buf_steal(&o);
}

bool conv_save_witnessed(struct conv *c, conv_witness vouch, void *user)
{
	if (!c->path)
		return conv_fail("the conversation has no file");
	c->updated = time(NULL);
	char *text = conv_to_json(c);
	if (!text)
		return conv_fail("out of memory");
	size_t len = strlen(text);
	text[len] = '\n'; /* replaces the NUL: the file ends with a newline */
	bool ok = vouch == NULL || vouch(user, c->path, text, len + 1) ||
	          conv_fail("not saved: its record could not be made");
	ok = ok && write_atomic(c->path, text, len + 1);
	free(text);
	return ok;
}

bool conv_save(struct conv *c)
{
	return conv_save_witnessed(c, NULL, NULL);
}


char *conv_dir(const struct conv *c)
{
	return c->path != NULL ? path_dirname(c->path) : NULL;
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

/*
 * A copy of the newest image's bytes, kept for the request that sends it
 * next, in pages of their own: held across a step inside
 * malloc's heap, a buffer this size keeps the heap from shrinking back
 * (about 3 MB more resident at the agent's step). Without memory for them
 * the image is read back from its file, as older ones are.
 */
static void keep_newest(struct conv *c, const char *rel, const void *png, size_t len)
{
	conv_forget_newest(c);
	void *kept = len > 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                            -1, 0) : MAP_FAILED;
	c->newest.path = kept != MAP_FAILED ? strdup(rel) : NULL;
	if (c->newest.path != NULL) {
		memcpy(kept, png, len);
		c->newest.png = kept;
		c->newest.len = len;
	} else if (kept != MAP_FAILED) {
		munmap(kept, len);
	}
}

void conv_forget_newest(struct conv *c)
{
	if (c->newest.png != NULL)
		munmap(c->newest.png, c->newest.len);
	free(c->newest.path);
	c->newest.path = NULL;
	c->newest.png = NULL;
	c->newest.len = 0;
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
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	memset(img, 0, sizeof(*img));
	bool is_png = len >= 8 && memcmp(png, sig, 8) == 0, sized = width > 0 && height > 0;
	if (!c->path || !is_png || !sized) {
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
	if (!conv_image_path_safe(rel)) {
		conv_fail("the conversation's name '%s' cannot carry images (use letters, digits, . _ -)",
		          stem);
		goto out;
	}
	if (!write_atomic(full, png, len))
		goto out;
	c->next_image++;
	keep_newest(c, rel, png, len);
	img->path = rel;
	img->width = width;
	img->height = height;
	rel = NULL;
	ok = true;
out:
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
	char *text = base_read_file(path, CONV_FILE_MAX, len_out);
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
	int t = base_name_index(BASE_NAMES(block_names), type);
	if (t == CONV_TEXT) {
		const char *text = jstr(bo, "text");
		if (!text)
			return conv_fail("message %zu: a text block without text", mi + 1);
		ok = conv_msg_add_text(m, text);
	} else if (t == CONV_IMAGE) {
		if (!jimage(bo, &img))
			return conv_fail("message %zu: an image block without a path", mi + 1);
		ok = conv_msg_add_image(m, &img);
	} else if (t == CONV_TOOL_CALL) {
		const char *id = jstr(bo, "id"), *name = jstr(bo, "name"), *args = jstr(bo, "arguments");
		if (!id || !name || !args)
			return conv_fail("message %zu: a tool call without id, name or arguments", mi + 1);
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(bo, "toolset");
		const char *toolset = cJSON_GetStringValue(ts);
		struct conv_call_extra x = {agent_dialect_find(toolset), jstr(bo, "vendor"),
		                            jstr(bo, "raw"), jstr(bo, "checks")};
		/* A toolset names the call's vocabulary: one deskhand does not speak
		 * (or no name at all) is not read as deskhand's own. */
		if (ts != NULL && toolset == NULL)
			return conv_fail("message %zu: a tool call whose toolset is not a name", mi + 1);
		if (x.dialect == NULL)
			return conv_fail("message %zu: a tool call of an unknown toolset \"%.40s\"",
			                 mi + 1, toolset);
		ok = conv_msg_add_tool_call_ex(m, id, name, args, &x);
	} else if (t == CONV_VENDOR) {
		const char *v = jstr(bo, "vendor"), *raw = jstr(bo, "raw");
		if (!v || !raw)
			return conv_fail("message %zu: a vendor block without vendor or raw", mi + 1);
		ok = conv_msg_add_vendor(m, v, raw, jstr(bo, "text"));
	} else if (t == CONV_TOOL_RESULT) {
		const char *id = jstr(bo, "call_id"), *text = jstr(bo, "text");
		const cJSON *io = cJSON_GetObjectItemCaseSensitive(bo, "image");
		if (!id)
			return conv_fail("message %zu: a tool result without call_id", mi + 1);
		if (io && !jimage(io, &img))
			return conv_fail("message %zu: a tool result image without a path", mi + 1);
		ok = conv_msg_add_tool_result_ex(
			m, id, text ? text : "", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bo, "is_error")),
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
	conv_error_clear();
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
	conv_error_clear();
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
		int r = base_name_index(BASE_NAMES(role_names), role);
		if (r < 0) {
			conv_fail("%s: message %zu has no known role", path, mi + 1);
			goto fail;
		}
		if (!cJSON_IsArray(content)) {
			conv_fail("%s: message %zu has no content array", path, mi + 1);
			goto fail;
		}
		struct conv_message *m = conv_add_message(c, (enum conv_role)r);
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
		if (base_name_index(BASE_NAMES(role_names), role) != CONV_USER)
			continue;
		cJSON_ArrayForEach(bo, cJSON_GetObjectItemCaseSensitive(mo, "content")) {
			const char *type = jstr(bo, "type");
			if (base_name_index(BASE_NAMES(block_names), type) == CONV_TEXT &&
			    jstr(bo, "text")) {
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
