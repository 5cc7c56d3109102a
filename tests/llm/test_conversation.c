/*
 * The conversation: save/load round trip, atomic writes that leave nothing
 * behind, images beside the file, what conv_load refuses (paths escaping the
 * directory, newer versions, foreign JSON), undo and reset, the listing, the
 * default directory, the token estimate and UTF-8 repair.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/llm/conversation.h"
#include "agent/util/textutil.h"

static char dir[64];
static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0};

static int setup(void **state)
{
	strcpy(dir, "/tmp/deskhand-conv-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *path_in(const char *name)
{
	static char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int entries(const char *d)
{
	DIR *dd = opendir(d);
	int n = 0;
	struct dirent *e;
	assert_non_null(dd);
	while ((e = readdir(dd)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(dd);
	return n;
}

static struct conv *sample(const char *path)
{
	struct conv *c = conv_create(path);
	assert_non_null(c);
	assert_true(conv_add_user_text(c, "Open the editor, s'il vous pla\xC3\xAEt \xF0\x9F\x98\x80"));
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_text(a, "Sure.\nLine two \"quoted\""));
	assert_true(conv_msg_add_tool_call(a, "call_1", "computer", "{\"action\":\"screenshot\"}"));
	assert_true(conv_msg_add_tool_call(a, "call_2", "execute", "{\"code\": \"broken"));
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	struct conv_image img;
	assert_true(conv_store_png(c, png, sizeof(png), 1280, 800, &img));
	assert_true(conv_msg_add_tool_result(t, "call_1", "", false, &img));
	conv_image_clear(&img);
	assert_true(conv_msg_add_tool_result(t, "call_2", "invalid arguments", true, NULL));
	return c;
}

static void test_round_trip(void **state)
{
	const char *p = path_in("round.json");
	struct conv *c = sample(p);
	assert_true(conv_save(c));
	struct conv *d = conv_load(p);
	assert_non_null(d);
	assert_int_equal(d->n_messages, 3);
	for (size_t i = 0; i < 3; i++) {
		struct conv_message *x = c->messages[i], *y = d->messages[i];
		assert_int_equal(x->role, y->role);
		assert_int_equal(x->n_blocks, y->n_blocks);
		for (size_t j = 0; j < x->n_blocks; j++) {
			struct conv_block *a = &x->blocks[j], *b = &y->blocks[j];
			assert_int_equal(a->type, b->type);
			if (a->text)
				assert_string_equal(a->text, b->text);
			if (a->arguments) {
				assert_string_equal(a->arguments, b->arguments);
				assert_string_equal(a->id, b->id);
				assert_string_equal(a->name, b->name);
				assert_int_equal(a->args == NULL, b->args == NULL);
			}
			if (a->call_id) {
				assert_string_equal(a->call_id, b->call_id);
				assert_int_equal(a->is_error, b->is_error);
			}
			if (a->image.path) {
				assert_string_equal(a->image.path, b->image.path);
				assert_int_equal(a->image.width, b->image.width);
				assert_int_equal(a->image.height, b->image.height);
			}
		}
	}
	assert_string_equal(d->messages[2]->blocks[0].image.path, "round.images/0001.png");
	/* a new image after loading never reuses a number in use */
	struct conv_image img;
	assert_true(conv_store_png(d, png, sizeof(png), 10, 10, &img));
	assert_string_equal(img.path, "round.images/0002.png");
	conv_image_clear(&img);
	conv_destroy(c);
	conv_destroy(d);
}

/* The file's "version" field, read back. */
static int file_version(const char *p)
{
	size_t len = 0;
	char *text = base_read_file(p, 1 << 20, &len);
	assert_non_null(text);
	cJSON *root = cJSON_Parse(text);
	assert_non_null(root);
	int v = cJSON_GetObjectItemCaseSensitive(root, "version")->valueint;
	cJSON_Delete(root);
	free(text);
	return v;
}

/*
 * Vendor items go back byte for byte: thinking with its signature, spacing
 * and escapes the server chose; a call's toolset, raw item and safety
 * checks; a result's acknowledged checks. Version 2 only when they exist.
 */
static void test_vendor_items_round_trip(void **state)
{
	const char *p = path_in("vendor.json");
	static const char raw[] = "{\"type\": \"thinking\",\"thinking\":\"a\\u00e9 \u00e9\\n\","
	                          "  \"signature\":\"EqQB+/==\"}";
	static const char call_raw[] = "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"left_click\","
	                               "\"toolset_name\":\"computer\",\"input\":{\"coordinate\":[1,2]}}";
	struct conv *c = conv_create(p);
	assert_true(conv_add_user_text(c, "go"));
	assert_true(conv_save(c));
	assert_int_equal(file_version(p), 1);
	struct conv_message *m = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_vendor(m, "anthropic", raw, "thought"));
	struct conv_call_extra x = {agent_dialect_find("computer"), "anthropic", call_raw,
	                            "[{\"id\":\"c1\"}]"};
	assert_true(conv_msg_add_tool_call_ex(m, "toolu_1", "left_click", "{\"coordinate\":[1,2]}", &x));
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	assert_true(conv_msg_add_tool_result_ex(t, "toolu_1", "OK", false, NULL, "[{\"id\":\"c1\"}]"));
	/* an item that is not valid UTF-8 could not go back unchanged */
	assert_false(conv_msg_add_vendor(m, "anthropic", "{\"x\":\"\xff\"}", NULL));
	assert_int_equal(m->n_blocks, 2);
	assert_true(conv_save(c));
	assert_int_equal(file_version(p), 2);
	struct conv *d = conv_load(p);
	assert_non_null(d);
	const struct conv_block *v = &d->messages[1]->blocks[0], *k = &d->messages[1]->blocks[1];
	assert_int_equal(v->type, CONV_VENDOR);
	assert_string_equal(v->vendor, "anthropic");
	assert_memory_equal(v->raw, raw, sizeof(raw));
	assert_string_equal(v->text, "thought");
	assert_string_equal(k->dialect->name, "computer");
	assert_string_equal(k->vendor, "anthropic");
	assert_memory_equal(k->raw, call_raw, sizeof(call_raw));
	assert_string_equal(k->checks, "[{\"id\":\"c1\"}]");
	assert_string_equal(d->messages[2]->blocks[0].ack, "[{\"id\":\"c1\"}]");
	assert_null(d->messages[0]->blocks[0].raw);
	conv_destroy(c);
	conv_destroy(d);
}

static void test_atomic_save_leaves_nothing(void **state)
{
	char sub[200];
	snprintf(sub, sizeof(sub), "%s/atomic", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	char p[256];
	snprintf(p, sizeof(p), "%s/c.json", sub);
	struct conv *c = conv_create(p);
	for (int i = 0; i < 20; i++) {
		assert_true(conv_add_user_text(c, "again"));
		assert_true(conv_save(c));
		assert_int_equal(entries(sub), 1); /* no temporary file left behind */
	}
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A directory that cannot be written: save fails, the old file stays whole. */
	assert_int_equal(chmod(sub, 0500), 0);
	assert_true(conv_add_user_text(c, "lost"));
	bool saved = conv_save(c);
	assert_int_equal(chmod(sub, 0700), 0);
	if (geteuid() != 0) { /* root writes anyway */
		assert_false(saved);
		assert_non_null(strstr(conv_error(), "cannot create"));
		struct conv *d = conv_load(p);
		assert_int_equal(d->n_messages, 20);
		conv_destroy(d);
	}
	assert_int_equal(entries(sub), 1);
	conv_destroy(c);
	struct conv *m = conv_create(NULL);
	assert_false(conv_save(m));
	conv_destroy(m);
}

static void test_images(void **state)
{
	struct conv *c = conv_create(path_in("img.json"));
	struct conv_image img;
	assert_false(conv_store_png(c, "GIF89a..", 8, 10, 10, &img));
	assert_string_equal(conv_error(), "the image is not a PNG");
	assert_false(conv_store_png(c, png, sizeof(png), 0, 10, &img));
	assert_true(conv_store_png(c, png, sizeof(png), 10, 10, &img));
	char *file = conv_image_file(c, &img);
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, (off_t)sizeof(png));
	assert_int_equal(st.st_mode & 0777, 0600);
	free(file);
	conv_image_clear(&img);
	char evil_path[] = "../../etc/passwd.png";
	struct conv_image evil = {.path = evil_path, .width = 1, .height = 1};
	struct conv_message *m = conv_add_message(c, CONV_USER);
	assert_false(conv_msg_add_image(m, &evil));
	conv_destroy(c);
}

static void test_load_refuses(void **state)
{
	static const char *const bad[][2] = {
		{"{not json", "is not valid JSON"},
		{"{\"hello\":1}", "is not a deskhand conversation"},
		{"{\"format\":\"deskhand-conversation\",\"version\":99,\"messages\":[]}", "format version 99"},
		{"{\"format\":\"deskhand-conversation\",\"version\":1,\"messages\":[{\"role\":\"tool\",\"content\":"
		 "[{\"type\":\"tool_result\",\"call_id\":\"a\",\"text\":\"\",\"image\":{\"path\":\"/etc/shadow.png\","
		 "\"width\":1,\"height\":1}}]}]}", "not a file beside the conversation"},
		{"{\"format\":\"deskhand-conversation\",\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":"
		 "[{\"type\":\"image\",\"path\":\"x.images/../../../home/u/.ssh/id.png\",\"width\":1,\"height\":1}]}]}",
		 "not a file beside the conversation"},
		{"{\"format\":\"deskhand-conversation\",\"version\":1,\"messages\":[{\"role\":\"system\",\"content\":[]}]}",
		 "no known role"},
		{"{\"format\":\"deskhand-conversation\",\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":"
		 "[{\"type\":\"video\"}]}]}", "unknown block type"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = path_in("bad.json");
		write_text(p, bad[i][0]);
		assert_null(conv_load(p));
		if (!strstr(conv_error(), bad[i][1]))
			fail_msg("case %zu: '%s' lacks '%s'", i, conv_error(), bad[i][1]);
	}
	assert_null(conv_load(path_in("missing.json")));
	assert_non_null(strstr(conv_error(), "cannot read"));
}

static void test_undo_reset(void **state)
{
	struct conv *c = sample(path_in("undo.json"));
	assert_true(conv_add_user_text(c, "second"));
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_text(a, "ok"));
	assert_int_equal(conv_undo(c), 2);
	assert_int_equal(c->n_messages, 3);
	/* the tool message is not a human turn: undo goes back to the first question */
	assert_int_equal(conv_undo(c), 3);
	assert_int_equal(c->n_messages, 0);
	assert_int_equal(conv_undo(c), 0);
	assert_true(conv_add_user_text(c, "x"));
	conv_reset(c);
	assert_int_equal(c->n_messages, 0);
	assert_null(conv_last(c));
	conv_destroy(c);
}

static void test_list(void **state)
{
	char sub[200];
	snprintf(sub, sizeof(sub), "%s/list", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	char p[256];
	const char *firsts[] = {"oldest\nquestion", "middle", "newest one"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/c%d.json", sub, i);
		struct conv *c = conv_create(p);
		struct conv_message *t = conv_add_message(c, CONV_TOOL); /* not a human message */
		assert_true(conv_msg_add_tool_result(t, "z", "zz", false, NULL));
		assert_true(conv_add_user_text(c, firsts[i]));
		assert_true(conv_save(c));
		conv_destroy(c);
		/* updated is stored to the second: make the order unambiguous */
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "sed -i 's/\"updated\":\"[^\"]*\"/\"updated\":\"2024-01-0%dT00:00:00Z\"/' '%s'",
		         i + 1, p);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(p, sizeof(p), "%s/other.json", sub);
	write_text(p, "{\"something\":\"else\"}");
	snprintf(p, sizeof(p), "%s/.c9.json.tmp.abc", sub);
	write_text(p, "{}");
	struct conv_summary *s;
	size_t n;
	assert_true(conv_list(sub, &s, &n));
	assert_int_equal(n, 3);
	assert_string_equal(s[0].first_user, "newest one");
	assert_string_equal(s[2].first_user, "oldest question");
	assert_int_equal(s[0].n_messages, 2);
	assert_non_null(strstr(s[0].path, "c2.json"));
	conv_summaries_free(s, n);
	assert_true(conv_list(path_in("nope"), &s, &n));
	assert_int_equal(n, 0);
	conv_summaries_free(s, n);
}

static void test_default_dir_and_names(void **state)
{
	char xdg[256];
	snprintf(xdg, sizeof(xdg), "%s/xdg/data", dir);
	setenv("XDG_DATA_HOME", xdg, 1);
	char *d = conv_default_dir();
	assert_non_null(d);
	char want[300];
	snprintf(want, sizeof(want), "%s/deskhand/conversations", xdg);
	assert_string_equal(d, want);
	struct stat st;
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	char *p1 = conv_new_path(d);
	write_text(p1, "{}");
	char *p2 = conv_new_path(d);
	assert_string_not_equal(p1, p2);
	assert_non_null(strstr(p1, ".json"));
	free(p1);
	free(p2);
	free(d);
	setenv("XDG_DATA_HOME", "relative/ignored", 1);
	setenv("HOME", xdg, 1);
	d = conv_default_dir();
	snprintf(want, sizeof(want), "%s/.local/share/deskhand/conversations", xdg);
	assert_string_equal(d, want);
	free(d);
	unsetenv("XDG_DATA_HOME");
	unsetenv("HOME");
	assert_null(conv_default_dir());
}

static void test_tokens_and_utf8(void **state)
{
	assert_int_equal(conv_text_tokens("abcd"), 1);
	assert_int_equal(conv_text_tokens("abcde"), 2);
	assert_int_equal(conv_text_tokens(""), 0);
	struct conv *c = sample(path_in("tokens.json"));
	long with_image = conv_tokens(c);
	struct conv_view v;
	assert_true(conv_view_plan(c, 0, 0, &v));
	assert_true(v.tokens < with_image - CONV_IMAGE_TOKENS + 20);
	assert_false(v.image_keep[2][0]);
	conv_view_clear(&v);
	assert_true(conv_view_plan(c, 0, 3, &v));
	assert_int_equal(v.tokens, with_image);
	assert_true(v.image_keep[2][0]);
	conv_view_clear(&v);
	conv_destroy(c);

	char *r = agent_utf8_sanitize("a\xC3\x28" "b\xED\xA0\x80" "c\xF0\x9F\x98\x80", 12, NULL);
	assert_string_equal(r, "a\xEF\xBF\xBD(b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "c\xF0\x9F\x98\x80");
	free(r);
	c = conv_create(NULL);
	assert_true(conv_add_user_text(c, "bad \xFF byte"));
	assert_string_equal(c->messages[0]->blocks[0].text, "bad \xEF\xBF\xBD byte");
	conv_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_vendor_items_round_trip),
		cmocka_unit_test(test_atomic_save_leaves_nothing),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_load_refuses),
		cmocka_unit_test(test_undo_reset),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_default_dir_and_names),
		cmocka_unit_test(test_tokens_and_utf8),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
