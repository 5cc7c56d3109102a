/*
 * Request bodies for both wire formats built from conversations (pairing of
 * calls and results, images kept or replaced by a note, pruning that never
 * orphans a call or drops the system prompt or the newest user message),
 * and answers assembled from events (tool arguments in awkward fragments,
 * text deltas split inside a character).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/session/prompt.h"
#include "agent/llm/anthropic_tools.h"
#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"

static char dir[64];
static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 1, 2, 3, 250};

static int setup(void **state)
{
	strcpy(dir, "/tmp/deskhand-req-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct conv *new_conv(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	struct conv *c = conv_create(path);
	assert_non_null(c);
	return c;
}

static struct conv_image shot(struct conv *c)
{
	struct conv_image img;
	assert_true(conv_store_png(c, png, sizeof(png), 640, 400, &img));
	return img;
}

/* A step: an assistant message with `calls` calls and a tool message answering them. */
static void step(struct conv *c, int *next_id, int calls, bool images, bool answer)
{
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	char ids[4][16];
	assert_true(conv_msg_add_text(a, "Working on it."));
	for (int k = 0; k < calls; k++) {
		snprintf(ids[k], sizeof(ids[k]), "call_%d", (*next_id)++);
		assert_true(conv_msg_add_tool_call(a, ids[k], "computer", "{\"action\":\"screenshot\"}"));
	}
	if (!answer)
		return;
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	/* Results in reverse order: pairing must follow the calls' order. */
	for (int k = calls - 1; k >= 0; k--) {
		struct conv_image img = {0};
		if (images)
			img = shot(c);
		assert_true(conv_msg_add_tool_result(t, ids[k], "ok", false, images ? &img : NULL));
		conv_image_clear(&img);
	}
}

static cJSON *build_with(bool anthropic, const struct conv *c, long budget, int keep,
                         const struct provider_tools *tools, size_t *dropped, bool cache)
{
	struct conv_view v;
	assert_true(conv_view_plan(c, budget, keep, &v));
	struct provider_request r = {.system = "SYSTEM PROMPT", .tools = tools, .max_tokens = 1000,
	                             .keep_images = keep, .prompt_cache = cache};
	/* The single computer_20250124 tool: what these tests were written for. */
	struct request_ctx rc = {.conv = c, .view = &v, .req = &r, .model = "m", .stream = true,
	                         .tool_version = ANTHROPIC_TOOL_20250124};
	agent_buf b = {0};
	assert_true(anthropic ? provider_format_anthropic.build(&rc, &b) : provider_format_openai.build(&rc, &b));
	cJSON *j = cJSON_ParseWithLength(b.data, b.len);
	if (!j)
		fail_msg("not JSON: %.*s", (int)(b.len < 400 ? b.len : 400), b.data);
	if (dropped)
		*dropped = v.dropped;
	agent_buf_finish(&b);
	conv_view_clear(&v);
	return j;
}

static cJSON *build(bool anthropic, const struct conv *c, long budget, int keep,
                    const struct provider_tools *tools, size_t *dropped)
{
	return build_with(anthropic, c, budget, keep, tools, dropped, false);
}

static const char *s(const cJSON *o, const char *k)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static bool contains(const cJSON *j, const char *needle)
{
	char *txt = cJSON_PrintUnformatted(j);
	bool r = strstr(txt, needle) != NULL;
	free(txt);
	return r;
}

static int count(const cJSON *j, const char *needle)
{
	char *txt = cJSON_PrintUnformatted(j);
	int n = 0;
	for (const char *p = txt; (p = strstr(p, needle)); p++)
		n++;
	free(txt);
	return n;
}

/* ---- OpenAI ----------------------------------------------------------------- */

static void test_openai_pairs_results_and_images(void **state)
{
	struct conv *c = new_conv("oa");
	int id = 1;
	assert_true(conv_add_user_text(c, "first question"));
	step(c, &id, 2, true, true);  /* call_1, call_2 with images (old) */
	step(c, &id, 1, true, true);  /* call_3 with image (newest) */
	cJSON *j = build(false, c, 0, 1, NULL, NULL);
	const cJSON *m = get(j, "messages");
	assert_string_equal(s(cJSON_GetArrayItem(m, 0), "role"), "system");
	assert_string_equal(s(cJSON_GetArrayItem(m, 0), "content"), "SYSTEM PROMPT");
	assert_string_equal(s(cJSON_GetArrayItem(m, 1), "content"), "first question");
	const cJSON *a = cJSON_GetArrayItem(m, 2);
	assert_string_equal(s(a, "role"), "assistant");
	assert_int_equal(cJSON_GetArraySize(get(a, "tool_calls")), 2);
	/* tool messages in the calls' order, though recorded in reverse */
	assert_string_equal(s(cJSON_GetArrayItem(m, 3), "tool_call_id"), "call_1");
	assert_string_equal(s(cJSON_GetArrayItem(m, 4), "tool_call_id"), "call_2");
	assert_string_equal(s(cJSON_GetArrayItem(m, 3), "content"), "ok\n" CONV_IMAGE_OMITTED);
	/* no image user message for the old step: next is the second assistant */
	assert_string_equal(s(cJSON_GetArrayItem(m, 5), "role"), "assistant");
	assert_string_equal(s(cJSON_GetArrayItem(m, 6), "tool_call_id"), "call_3");
	assert_string_equal(s(cJSON_GetArrayItem(m, 6), "content"), "ok");
	const cJSON *u = cJSON_GetArrayItem(m, 7);
	assert_string_equal(s(u, "role"), "user");
	const cJSON *img = cJSON_GetArrayItem(get(u, "content"), 1);
	assert_string_equal(s(img, "type"), "image_url");
	/* the file's bytes, base64: 89 50 4E 47 0D 0A 1A 0A 01 02 03 FA */
	assert_string_equal(s(get(img, "image_url"), "url"), "data:image/png;base64,iVBORw0KGgoBAgP6");
	assert_int_equal(cJSON_GetArraySize(m), 8);
	assert_int_equal(count(j, "data:image/png;base64,"), 1);
	cJSON_Delete(j);

	/* keep 3: every image goes, in one user message per step */
	j = build(false, c, 0, 3, NULL, NULL);
	assert_int_equal(count(j, "data:image/png;base64,"), 3);
	assert_false(contains(j, CONV_IMAGE_OMITTED));
	cJSON_Delete(j);
	conv_destroy(c);
}

static void test_openai_missing_result_and_orphans(void **state)
{
	struct conv *c = new_conv("orph");
	int id = 1;
	struct conv_message *t = conv_add_message(c, CONV_TOOL); /* orphan result first */
	assert_true(conv_msg_add_tool_result(t, "call_x", "stray", false, NULL));
	assert_true(conv_add_user_text(c, "go"));
	step(c, &id, 1, false, false); /* a call whose result was never recorded */
	assert_true(conv_add_user_text(c, "and now?"));
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_tool_call(a, "call_bad", "execute", "{\"code\": \"x"));
	t = conv_add_message(c, CONV_TOOL);
	assert_true(conv_msg_add_tool_result(t, "call_bad", "bad args", true, NULL));
	cJSON *j = build(false, c, 0, 3, NULL, NULL);
	const cJSON *m = get(j, "messages");
	assert_false(contains(j, "stray"));
	assert_string_equal(s(cJSON_GetArrayItem(m, 1), "content"), "go");
	assert_string_equal(s(cJSON_GetArrayItem(m, 3), "tool_call_id"), "call_1");
	assert_string_equal(s(cJSON_GetArrayItem(m, 3), "content"), "[error] " PROVIDER_NO_RESULT);
	/* invalid arguments go back as {} so no server chokes on them */
	const cJSON *bad = cJSON_GetArrayItem(m, 5);
	assert_string_equal(s(get(cJSON_GetArrayItem(get(bad, "tool_calls"), 0), "function"), "arguments"),
	                    "{}");
	assert_string_equal(s(cJSON_GetArrayItem(m, 6), "content"), "[error] bad args");
	cJSON_Delete(j);
	conv_destroy(c);
}

static void test_openai_tools_and_user_images(void **state)
{
	const char *langs[] = {"python", "shell"};
	struct prompt_env env = {.languages = langs, .n_languages = 2, .computer = true,
	                         .screen_width = 1280, .screen_height = 800};
	struct provider_tools tools;
	assert_true(prompt_tools(&env, &tools));
	struct conv *c = new_conv("tools");
	struct conv_message *u = conv_add_message(c, CONV_USER);
	struct conv_image img = shot(c);
	assert_true(conv_msg_add_text(u, "what is this?"));
	assert_true(conv_msg_add_image(u, &img));
	conv_image_clear(&img);
	cJSON *j = build(false, c, 0, 3, &tools, NULL);
	const cJSON *tl = get(j, "tools");
	/* execute, computer, and find_text, elements, click_element as tools of their own */
	assert_int_equal(cJSON_GetArraySize(tl), 5);
	assert_string_equal(s(get(cJSON_GetArrayItem(tl, 2), "function"), "name"), "find_text");
	assert_string_equal(s(get(cJSON_GetArrayItem(tl, 3), "function"), "name"), "elements");
	assert_string_equal(s(get(cJSON_GetArrayItem(tl, 4), "function"), "name"), "click_element");
	const cJSON *fn = get(cJSON_GetArrayItem(tl, 1), "function");
	assert_string_equal(s(fn, "name"), "computer");
	const cJSON *actions = get(get(get(get(fn, "parameters"), "properties"), "action"), "enum");
	assert_int_equal(cJSON_GetArraySize(actions), (int)prompt_n_computer_actions);
	assert_string_equal(cJSON_GetArrayItem(actions, 20)->valuestring, "zoom");
	const cJSON *parts = get(cJSON_GetArrayItem(get(j, "messages"), 1), "content");
	assert_string_equal(s(cJSON_GetArrayItem(parts, 1), "type"), "image_url");
	cJSON_Delete(j);
	conv_destroy(c);
	provider_tools_clear(&tools);
}

/* ---- Anthropic ---------------------------------------------------------------- */

/* The tools of an --os run with python, on a 1024x768 model view. */
static void computer_tools(struct provider_tools *tools)
{
	const char *langs[] = {"python"};
	struct prompt_env env = {.languages = langs, .n_languages = 1, .computer = true,
	                         .screen_width = 1024, .screen_height = 768};
	assert_true(prompt_tools(&env, tools));
}

static void test_anthropic_results_images_merging(void **state)
{
	struct provider_tools tools;
	computer_tools(&tools);
	struct conv *c = new_conv("an");
	int id = 1;
	assert_true(conv_add_user_text(c, "do it"));
	step(c, &id, 2, true, true);
	assert_true(conv_add_user_text(c, "")); /* empty text: no empty block */
	assert_true(conv_add_user_text(c, "also this")); /* merged after the results */
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_tool_call(a, "call_e", "execute", "{\"language\":\"python\",\"code\":\"1/0\"}"));
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	assert_true(conv_msg_add_tool_result(t, "call_e", "ZeroDivisionError", true, NULL));

	cJSON *j = build(true, c, 0, 1, &tools, NULL);
	assert_string_equal(s(j, "system"), "SYSTEM PROMPT");
	const cJSON *tl = get(j, "tools");
	const cJSON *comp = cJSON_GetArrayItem(tl, 1);
	assert_string_equal(s(comp, "type"), "computer_20250124");
	assert_int_equal(get(comp, "display_width_px")->valueint, 1024);
	assert_int_equal(get(comp, "display_height_px")->valueint, 768);
	assert_non_null(get(cJSON_GetArrayItem(tl, 0), "input_schema"));
	/* find_text cannot be an action of the native tool: it is a tool of its own */
	assert_string_equal(s(cJSON_GetArrayItem(tl, 2), "name"), "find_text");
	assert_non_null(get(cJSON_GetArrayItem(tl, 2), "input_schema"));

	const cJSON *m = get(j, "messages");
	assert_int_equal(cJSON_GetArraySize(m), 5); /* user, assistant, user(merged), assistant, user */
	for (int i = 0; i < 5; i++)
		assert_string_equal(s(cJSON_GetArrayItem(m, i), "role"), i % 2 ? "assistant" : "user");
	const cJSON *use = cJSON_GetArrayItem(get(cJSON_GetArrayItem(m, 1), "content"), 1);
	assert_string_equal(s(use, "type"), "tool_use");
	assert_string_equal(s(get(use, "input"), "action"), "screenshot");
	const cJSON *res = get(cJSON_GetArrayItem(m, 2), "content");
	assert_int_equal(cJSON_GetArraySize(res), 3);
	const cJSON *r1 = cJSON_GetArrayItem(res, 0), *r2 = cJSON_GetArrayItem(res, 1);
	assert_string_equal(s(r1, "tool_use_id"), "call_1");
	assert_string_equal(s(r2, "tool_use_id"), "call_2");
	/* keep 1: the newest image is call_1's (results were recorded in reverse) */
	assert_string_equal(s(cJSON_GetArrayItem(get(r2, "content"), 0), "text"), "ok\n" CONV_IMAGE_OMITTED);
	const cJSON *img = cJSON_GetArrayItem(get(r1, "content"), 1);
	assert_string_equal(s(img, "type"), "image");
	assert_string_equal(s(get(img, "source"), "data"), "iVBORw0KGgoBAgP6");
	assert_string_equal(s(get(img, "source"), "media_type"), "image/png");
	assert_string_equal(s(cJSON_GetArrayItem(res, 2), "text"), "also this");
	const cJSON *err = cJSON_GetArrayItem(get(cJSON_GetArrayItem(m, 4), "content"), 0);
	assert_true(cJSON_IsTrue(get(err, "is_error")));
	assert_false(contains(j, "\"text\":\"\""));
	cJSON_Delete(j);
	conv_destroy(c);
	provider_tools_clear(&tools);
}

/* The last block of the last message, whatever its type. */
static const cJSON *last_block(const cJSON *j)
{
	const cJSON *m = get(j, "messages");
	const cJSON *content = get(cJSON_GetArrayItem(m, cJSON_GetArraySize(m) - 1), "content");
	return cJSON_GetArrayItem(content, cJSON_GetArraySize(content) - 1);
}

static void test_anthropic_prompt_cache_breakpoints(void **state)
{
	struct provider_tools tools;
	computer_tools(&tools);
	struct conv *c = new_conv("cache");
	int id = 1;
	assert_true(conv_add_user_text(c, "do it"));
	/* Each shape the newest message takes: a question, tool results with
	 * a screenshot, results without one, a text after the results. */
	for (int shape = 0; shape < 4; shape++) {
		if (shape == 1)
			step(c, &id, 1, true, true);
		else if (shape == 2)
			step(c, &id, 2, false, true);
		else if (shape == 3)
			assert_true(conv_add_user_text(c, "and then"));
		cJSON *j = build_with(true, c, 0, 3, &tools, NULL, true);
		/* tools + system prompt, then everything up to the newest block */
		assert_int_equal(count(j, "\"cache_control\""), 2);
		const cJSON *sys = get(j, "system");
		assert_true(cJSON_IsArray(sys));
		assert_int_equal(cJSON_GetArraySize(sys), 1);
		assert_string_equal(s(cJSON_GetArrayItem(sys, 0), "text"), "SYSTEM PROMPT");
		const cJSON *cc = get(cJSON_GetArrayItem(sys, 0), "cache_control");
		assert_string_equal(s(cc, "type"), "ephemeral");
		const cJSON *last = last_block(j);
		assert_string_equal(s(get(last, "cache_control"), "type"), "ephemeral");
		assert_string_equal(s(last, "type"), shape == 1 || shape == 2 ? "tool_result" : "text");
		cJSON_Delete(j);
		/* Off: the request is as before, byte for byte in its parts. */
		j = build_with(true, c, 0, 3, &tools, NULL, false);
		assert_int_equal(count(j, "cache_control"), 0);
		assert_string_equal(s(j, "system"), "SYSTEM PROMPT");
		cJSON_Delete(j);
		/* OpenAI-compatible servers cache by themselves: nothing added. */
		j = build_with(false, c, 0, 3, &tools, NULL, true);
		assert_int_equal(count(j, "cache_control"), 0);
		cJSON_Delete(j);
	}
	conv_destroy(c);
	provider_tools_clear(&tools);
}

static void test_missing_image_file_becomes_note(void **state)
{
	struct conv *c = new_conv("gone");
	int id = 1;
	assert_true(conv_add_user_text(c, "look"));
	step(c, &id, 1, true, true);
	char *file = conv_image_file(c, &c->messages[2]->blocks[0].image);
	assert_int_equal(unlink(file), 0);
	free(file);
	for (int an = 0; an < 2; an++) {
		cJSON *j = build(an, c, 0, 3, NULL, NULL);
		assert_true(contains(j, PROVIDER_IMAGE_MISSING));
		assert_false(contains(j, "base64,"));
		assert_false(contains(j, "\"base64\""));
		cJSON_Delete(j);
	}
	conv_destroy(c);
}

/* ---- pruning ------------------------------------------------------------------ */

static void check_openai(const cJSON *j, int keep)
{
	const cJSON *m = get(j, "messages");
	int n = cJSON_GetArraySize(m);
	assert_string_equal(s(cJSON_GetArrayItem(m, 0), "role"), "system");
	assert_string_equal(s(cJSON_GetArrayItem(m, 1), "role"), "user");
	for (int i = 1; i < n; i++) {
		const cJSON *a = cJSON_GetArrayItem(m, i);
		const cJSON *calls = get(a, "tool_calls");
		if (!calls) {
			/* a tool message is only ever right after its assistant's others */
			if (!strcmp(s(a, "role"), "tool"))
				assert_string_equal(s(cJSON_GetArrayItem(m, i - 1), "role"),
				                    cJSON_GetArraySize(get(cJSON_GetArrayItem(m, i - 1), "tool_calls"))
				                            ? "assistant" : "tool");
			continue;
		}
		int k = 0;
		const cJSON *call;
		cJSON_ArrayForEach(call, calls) {
			const cJSON *r = cJSON_GetArrayItem(m, i + 1 + k++);
			assert_non_null(r);
			assert_string_equal(s(r, "role"), "tool");
			assert_string_equal(s(r, "tool_call_id"), s(call, "id"));
		}
	}
	assert_true(count(j, "data:image/png") <= keep);
	assert_true(contains(j, "the newest question"));
}

static void check_anthropic(const cJSON *j, int keep)
{
	const cJSON *m = get(j, "messages");
	int n = cJSON_GetArraySize(m);
	assert_string_equal(s(j, "system"), "SYSTEM PROMPT");
	for (int i = 0; i < n; i++) {
		const cJSON *msg = cJSON_GetArrayItem(m, i);
		assert_string_equal(s(msg, "role"), i % 2 ? "assistant" : "user");
		assert_true(cJSON_GetArraySize(get(msg, "content")) > 0);
		const cJSON *b;
		cJSON_ArrayForEach(b, get(msg, "content")) {
			if (!strcmp(s(b, "type"), "tool_use")) {
				bool found = false;
				const cJSON *r;
				cJSON_ArrayForEach(r, get(cJSON_GetArrayItem(m, i + 1), "content"))
					found |= s(r, "tool_use_id") && !strcmp(s(r, "tool_use_id"), s(b, "id"));
				assert_true(found);
			}
			if (!strcmp(s(b, "type"), "tool_result")) {
				bool found = false;
				const cJSON *u;
				assert_true(i > 0);
				cJSON_ArrayForEach(u, get(cJSON_GetArrayItem(m, i - 1), "content"))
					found |= s(u, "id") && !strcmp(s(u, "id"), s(b, "tool_use_id"));
				assert_true(found);
			}
		}
	}
	assert_true(count(j, "\"media_type\"") <= keep);
	assert_true(contains(j, "the newest question"));
}

static void test_pruning_never_orphans(void **state)
{
	uint32_t seed = 7;
	for (int conv_no = 0; conv_no < 12; conv_no++) {
		char name[32];
		snprintf(name, sizeof(name), "prune%d", conv_no);
		struct conv *c = new_conv(name);
		int id = 1;
		for (int turn = 0; turn < 6; turn++) {
			char text[600];
			seed = seed * 1103515245u + 12345u;
			memset(text, 'q', sizeof(text));
			text[100 + (seed >> 16) % 400] = '\0';
			assert_true(conv_add_user_text(c, turn == 5 ? "the newest question" : text));
			int steps = (int)((seed >> 8) % 4);
			for (int k = 0; k < steps; k++)
				step(c, &id, 1 + (int)((seed >> (k + 3)) % 3), (seed >> k) & 1, true);
			if (turn < 5) {
				struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
				assert_true(conv_msg_add_text(a, "Finished that."));
			}
		}
		step(c, &id, 2, true, true); /* the newest turn is an OS loop in progress */
		step(c, &id, 1, true, true);
		long full = conv_tokens(c);
		for (long budget = 1; budget < full + 4000; budget += 397) {
			for (int keep = 0; keep <= 3; keep += 3) {
				size_t dropped_o, dropped_a;
				cJSON *j = build(false, c, budget, keep, NULL, &dropped_o);
				check_openai(j, keep);
				cJSON_Delete(j);
				j = build(true, c, budget, keep, NULL, &dropped_a);
				check_anthropic(j, keep);
				cJSON_Delete(j);
				assert_int_equal(dropped_o, dropped_a);
				if (budget == 1)
					assert_true(dropped_o > 0);
			}
		}
		/* With no budget nothing goes; with a tiny one the newest turn's last step stays. */
		struct conv_view v;
		assert_true(conv_view_plan(c, 0, 3, &v));
		assert_int_equal(v.dropped, 0);
		conv_view_clear(&v);
		assert_true(conv_view_plan(c, 1, 3, &v));
		assert_int_equal(v.index[v.n - 1], c->n_messages - 1);
		assert_int_equal(v.index[v.n - 2], c->n_messages - 2);
		assert_string_equal(c->messages[v.index[0]]->blocks[0].text, "the newest question");
		conv_view_clear(&v);
		conv_destroy(c);
	}
}

/* ---- assembling answers -------------------------------------------------------- */

struct got {
	char text[512];
	size_t len;
	int calls;
	int splits_inside_char;
};

static void on_text(void *user, const char *t, size_t n)
{
	struct got *g = user;
	/* Whole characters only: a delta never ends inside one. */
	size_t k = 0;
	while (k < n) {
		size_t l = agent_utf8_seq(t + k, n - k);
		if (l == 0) {
			g->splits_inside_char++;
			break;
		}
		k += l;
	}
	memcpy(g->text + g->len, t, n);
	g->len += n;
	g->text[g->len] = '\0';
}

static void on_call(void *user, const struct conv_block *b)
{
	((struct got *)user)->calls++;
}

/* The JSON string literal of raw bytes, as a careless server writes it. */
static void lit(char *out, const char *raw, size_t n)
{
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (raw[i] == '"' || raw[i] == '\\')
			out[o++] = '\\';
		out[o++] = raw[i];
	}
	out[o++] = '"';
	out[o] = '\0';
}

static const char args_raw[] = "{\"language\":\"python\",\"code\":\"print(\\\"h\\u00e9llo\\\") # \xC3\xA9\xE2\x9C\x93\"}";

static void test_openai_fragments_every_split(void **state)
{
	size_t n = strlen(args_raw);
	for (size_t cut1 = 1; cut1 < n; cut1++) {
		size_t cut2 = cut1 + (n - cut1) / 2;
		size_t cuts[] = {0, cut1, cut2, n};
		struct got g = {0};
		struct provider_events ev = {.user = &g, .text = on_text, .tool_call = on_call};
		struct turn t;
		turn_init(&t, "openai", &ev);
		char ev_json[512], frag[256];
		snprintf(ev_json, sizeof(ev_json),
		         "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\","
		         "\"type\":\"function\",\"function\":{\"name\":\"execute\",\"arguments\":\"\"}}]}}]}");
		assert_true(provider_format_openai.event(&t, NULL, ev_json, strlen(ev_json)));
		for (int k = 0; k < 3; k++) {
			if (cuts[k + 1] == cuts[k])
				continue;
			lit(frag, args_raw + cuts[k], cuts[k + 1] - cuts[k]);
			snprintf(ev_json, sizeof(ev_json),
			         "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
			         "\"function\":{\"arguments\":%s}}]}}]}", frag);
			assert_true(provider_format_openai.event(&t, NULL, ev_json, strlen(ev_json)));
		}
		const char *fin = "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}";
		assert_true(provider_format_openai.event(&t, NULL, fin, strlen(fin)));
		assert_true(provider_format_openai.event(&t, NULL, "[DONE]", 6));
		assert_true(t.done);
		assert_true(turn_finish_calls(&t));
		assert_int_equal(g.calls, 1);
		const struct conv_block *b = &t.msg->blocks[0];
		assert_string_equal(b->arguments, args_raw);
		assert_non_null(b->args);
		assert_string_equal(cJSON_GetObjectItem(b->args, "code")->valuestring,
		                    "print(\"h\xC3\xA9llo\") # \xC3\xA9\xE2\x9C\x93");
		assert_int_equal(t.usage.stop, PROVIDER_STOP_TOOL_USE);
		turn_clear(&t);
	}
}

static void test_anthropic_fragments_and_text_split_in_char(void **state)
{
	const char text[] = "caf\xC3\xA9 \xE2\x9C\x93 done";
	size_t tn = strlen(text), an = strlen(args_raw);
	for (size_t cut = 1; cut < tn; cut++) {
		struct got g = {0};
		struct provider_events ev = {.user = &g, .text = on_text, .tool_call = on_call};
		struct turn t;
		char e[512], frag[256];
		turn_init(&t, "anthropic", &ev);
		const char *start = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}";
		assert_true(provider_format_anthropic.event(&t, "content_block_start", start, strlen(start)));
		lit(frag, text, cut);
		snprintf(e, sizeof(e), "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}", frag);
		assert_true(provider_format_anthropic.event(&t, "content_block_delta", e, strlen(e)));
		lit(frag, text + cut, tn - cut);
		snprintf(e, sizeof(e), "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}", frag);
		assert_true(provider_format_anthropic.event(&t, "content_block_delta", e, strlen(e)));
		const char *stop0 = "{\"type\":\"content_block_stop\",\"index\":0}";
		assert_true(provider_format_anthropic.event(&t, "content_block_stop", stop0, strlen(stop0)));
		const char *tool = "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"execute\",\"input\":{}}}";
		assert_true(provider_format_anthropic.event(&t, "content_block_start", tool, strlen(tool)));
		size_t acut = cut % an ? cut % an : 1;
		size_t parts[] = {0, acut, an};
		for (int k = 0; k < 2; k++) {
			lit(frag, args_raw + parts[k], parts[k + 1] - parts[k]);
			snprintf(e, sizeof(e), "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}", frag);
			assert_true(provider_format_anthropic.event(&t, "content_block_delta", e, strlen(e)));
		}
		const char *stop1 = "{\"type\":\"content_block_stop\",\"index\":1}";
		assert_true(provider_format_anthropic.event(&t, "content_block_stop", stop1, strlen(stop1)));
		assert_int_equal(g.calls, 1);
		const char *md = "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}";
		assert_true(provider_format_anthropic.event(&t, "message_delta", md, strlen(md)));
		assert_true(provider_format_anthropic.event(&t, "message_stop", "{\"type\":\"message_stop\"}", 23));
		assert_true(t.done);
		assert_int_equal(g.splits_inside_char, 0);
		assert_string_equal(g.text, text);
		assert_int_equal(t.msg->n_blocks, 2);
		assert_string_equal(t.msg->blocks[0].text, text);
		assert_string_equal(t.msg->blocks[1].arguments, args_raw);
		assert_non_null(t.msg->blocks[1].args);
		assert_int_equal(t.usage.output_tokens, 42);
		assert_int_equal(t.usage.stop, PROVIDER_STOP_TOOL_USE);
		turn_clear(&t);
	}
}

static void test_invalid_arguments_reported(void **state)
{
	struct got g = {0};
	struct provider_events ev = {.user = &g, .tool_call = on_call};
	struct turn t;
	turn_init(&t, "openai", &ev);
	const char *body = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,"
	                   "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	                   "{\"name\":\"execute\",\"arguments\":\"{\\\"code\\\": \\\"unterminated\"}},"
	                   "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"execute\",\"arguments\":\"[1,2]\"}},"
	                   "{\"id\":\"c3\",\"type\":\"function\",\"function\":{\"name\":\"computer\",\"arguments\":\"\"}}]},"
	                   "\"finish_reason\":\"tool_calls\"}]}";
	assert_true(provider_format_openai.body(&t, body, strlen(body)));
	assert_true(turn_finish_calls(&t));
	assert_int_equal(g.calls, 3);
	assert_null(t.msg->blocks[0].args);
	assert_non_null(strstr(t.msg->blocks[0].args_error, "not valid JSON"));
	assert_null(t.msg->blocks[1].args);
	assert_string_equal(t.msg->blocks[1].args_error, "arguments are not a JSON object");
	assert_non_null(t.msg->blocks[2].args); /* no arguments = {} */
	turn_clear(&t);
}

static void test_garbage_and_stream_errors(void **state)
{
	struct turn t;
	turn_init(&t, "openai", NULL);
	assert_false(provider_format_openai.event(&t, NULL, "<html>oops</html>", 17));
	assert_non_null(strstr(t.error, "not JSON"));
	turn_clear(&t);
	turn_init(&t, "openai", NULL);
	assert_false(provider_format_openai.body(&t, "Bad Gateway", 11));
	assert_non_null(strstr(t.error, "not JSON"));
	turn_clear(&t);
	turn_init(&t, "anthropic", NULL);
	const char *err = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
	assert_false(provider_format_anthropic.event(&t, "error", err, strlen(err)));
	assert_true(t.retriable);
	assert_non_null(strstr(t.error, "Overloaded"));
	turn_clear(&t);
	/* The same tool_use block started twice (found by fuzz_stream: the
	 * second start leaked the first one's input). */
	turn_init(&t, "anthropic", NULL);
	const char *tool = "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
	                   "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"execute\",\"input\":{}}}";
	assert_true(provider_format_anthropic.event(&t, "content_block_start", tool, strlen(tool)));
	assert_false(provider_format_anthropic.event(&t, "content_block_start", tool, strlen(tool)));
	assert_non_null(strstr(t.error, "started twice"));
	turn_clear(&t);
}


/* ---- Anthropic 2026: the toolset, thinking, binding ------------------------------ */

struct built {
	cJSON *body;
	char headers[512];
};

static bool collect_header(void *user, const char *line)
{
	char *h = user;
	size_t n = strlen(h);
	snprintf(h + n, 512 - n, "%s\n", line);
	return true;
}

/* The body and headers of an Anthropic request for `model` with computer tool `version`. */
static struct built build_anthropic(const struct conv *c, int keep, const char *model,
                                    int version, const struct provider_tools *tools, bool cache)
{
	struct built out = {0};
	struct conv_view v;
	assert_true(conv_view_plan(c, 0, keep, &v));
	struct provider_request r = {.system = "SYSTEM PROMPT", .tools = tools, .max_tokens = 1000,
	                             .keep_images = keep, .prompt_cache = cache};
	struct request_ctx rc = {.conv = c, .view = &v, .req = &r, .model = model, .stream = true,
	                         .tool_version = version};
	agent_buf b = {0};
	assert_true(provider_format_anthropic.build(&rc, &b));
	assert_true(provider_format_anthropic.headers(&rc, NULL, collect_header, out.headers));
	out.body = cJSON_ParseWithLength(b.data, b.len);
	if (!out.body)
		fail_msg("not JSON: %.*s", (int)(b.len < 400 ? b.len : 400), b.data);
	agent_buf_finish(&b);
	conv_view_clear(&v);
	return out;
}

static void test_anthropic_toolset_entry(void **state)
{
	(void)state;
	struct provider_tools tools;
	computer_tools(&tools);
	struct conv *c = new_conv("ts");
	assert_true(conv_add_user_text(c, "go"));
	struct built bt = build_anthropic(c, 3, "claude-sonnet-5-5", ANTHROPIC_TOOL_TOOLSET, &tools,
	                                  false);
	const cJSON *tl = get(bt.body, "tools");
	assert_int_equal(cJSON_GetArraySize(tl), 5);
	/* Only the type: no name, no display size, no enable_zoom. */
	char *entry = cJSON_PrintUnformatted(cJSON_GetArrayItem(tl, 1));
	assert_string_equal(entry, "{\"type\":\"computer_toolset_20260801\"}");
	free(entry);
	assert_string_equal(s(cJSON_GetArrayItem(tl, 0), "name"), "execute");
	assert_string_equal(s(cJSON_GetArrayItem(tl, 2), "name"), "find_text");
	assert_null(strstr(bt.headers, "anthropic-beta"));
	/* Thinking asked for as the 5.5 models take it; nothing they refuse. */
	const cJSON *th = get(bt.body, "thinking");
	assert_string_equal(s(th, "type"), "adaptive");
	assert_string_equal(s(th, "display"), "summarized");
	assert_null(get(th, "budget_tokens"));
	assert_null(get(th, "block_binding"));
	assert_null(get(bt.body, "tool_choice"));
	cJSON_Delete(bt.body);

	bt = build_anthropic(c, 3, "claude-opus-4-6", ANTHROPIC_TOOL_20251124, &tools, false);
	const cJSON *one = cJSON_GetArrayItem(get(bt.body, "tools"), 1);
	assert_string_equal(s(one, "type"), "computer_20251124");
	assert_string_equal(s(one, "name"), "computer");
	assert_true(cJSON_IsTrue(get(one, "enable_zoom")));
	assert_int_equal(get(one, "display_width_px")->valueint, 1024);
	assert_non_null(strstr(bt.headers, "anthropic-beta: computer-use-2025-11-24\n"));
	assert_null(get(bt.body, "thinking"));
	cJSON_Delete(bt.body);
	conv_destroy(c);
	provider_tools_clear(&tools);
}

static const char think_raw[] =
	"{\"type\":\"thinking\",\"thinking\":\"Look \\u00e9 \\\"first\\\"\\n\",\"signature\":\"c2ln+/=\"}";
static const char redacted_raw[] = "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgB==\"}";
static const char use_raw[] =
	"{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"left_click\",\"input\":{\"coordinate\":[5,6]},"
	"\"toolset_name\":\"computer\"}";

/* An assistant turn of the toolset with thinking, and its answered batch. */
static void toolset_turn(struct conv *c, bool with_image)
{
	struct conv_message *a = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_vendor(a, "anthropic", think_raw, "Look"));
	assert_true(conv_msg_add_text(a, "Clicking."));
	assert_true(conv_msg_add_vendor(a, "anthropic", redacted_raw, NULL));
	struct conv_call_extra x = {.dialect = &agent_dialect_anthropic, .vendor = "anthropic",
	                            .raw = use_raw};
	assert_true(conv_msg_add_tool_call_ex(a, "toolu_1", "left_click", "{\"coordinate\":[5,6]}",
	                                      &x));
	struct conv_call_extra y = {.dialect = &agent_dialect_anthropic};
	assert_true(conv_msg_add_tool_call_ex(a, "toolu_2", "key", "{\"text\":\"a\"}", &y));
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	assert_true(conv_msg_add_tool_result(t, "toolu_1", "done", false, NULL));
	struct conv_image img = {0};
	if (with_image)
		img = shot(c);
	assert_true(conv_msg_add_tool_result(t, "toolu_2", "Not executed: an earlier computer action in this turn failed.", true,
	                                     with_image ? &img : NULL));
	conv_image_clear(&img);
}

static void test_anthropic_thinking_and_toolset_echo(void **state)
{
	(void)state;
	struct provider_tools tools;
	computer_tools(&tools);
	struct conv *c = new_conv("echo");
	assert_true(conv_add_user_text(c, "go"));
	toolset_turn(c, false);
	agent_buf b = {0};
	struct conv_view v;
	assert_true(conv_view_plan(c, 0, 3, &v));
	struct provider_request r = {.system = "S", .tools = &tools, .max_tokens = 10,
	                             .keep_images = 3, .prompt_cache = true};
	struct request_ctx rc = {.conv = c, .view = &v, .req = &r, .model = "claude-sonnet-5-5",
	                         .stream = true, .tool_version = ANTHROPIC_TOOL_TOOLSET};
	assert_true(provider_format_anthropic.build(&rc, &b));
	const char *body = agent_buf_cstr(&b);
	/* Byte for byte and in order: thinking, text, redacted thinking, the call. */
	const char *p1 = strstr(body, think_raw), *p2 = strstr(body, "\"Clicking.\"");
	const char *p3 = strstr(body, redacted_raw), *p4 = strstr(body, use_raw);
	assert_non_null(p1);
	assert_non_null(p3);
	assert_non_null(p4);
	assert_true(p1 < p2 && p2 < p3 && p3 < p4);
	cJSON *j = cJSON_Parse(body);
	const cJSON *m = get(j, "messages");
	const cJSON *calls = get(cJSON_GetArrayItem(m, 1), "content");
	/* The call without a raw block is rebuilt with its toolset. */
	assert_string_equal(s(cJSON_GetArrayItem(calls, 4), "toolset_name"), "computer");
	const cJSON *res = get(cJSON_GetArrayItem(m, 2), "content");
	for (int k = 0; k < 2; k++)
		assert_string_equal(s(cJSON_GetArrayItem(res, k), "toolset_name"), "computer");
	/* Two breakpoints; the second closes the batch's results. */
	assert_int_equal(count(j, "cache_control"), 2);
	assert_non_null(get(cJSON_GetArrayItem(res, 1), "cache_control"));
	cJSON_Delete(j);
	agent_buf_finish(&b);
	conv_view_clear(&v);
	conv_destroy(c);
	provider_tools_clear(&tools);
}

/* Pruning a screenshot edits the history: the documented remedy goes with it. */
static void test_anthropic_binding_when_history_edited(void **state)
{
	(void)state;
	struct provider_tools tools;
	computer_tools(&tools);
	struct conv *c = new_conv("bind");
	assert_true(conv_add_user_text(c, "go"));
	toolset_turn(c, true);
	struct built bt = build_anthropic(c, 1, "claude-sonnet-5-5", ANTHROPIC_TOOL_TOOLSET, &tools,
	                                  false);
	assert_null(get(get(bt.body, "thinking"), "block_binding"));
	assert_null(strstr(bt.headers, "anthropic-beta"));
	cJSON_Delete(bt.body);
	bt = build_anthropic(c, 0, "claude-sonnet-5-5", ANTHROPIC_TOOL_TOOLSET, &tools, false);
	const cJSON *bb = get(get(bt.body, "thinking"), "block_binding");
	assert_string_equal(s(bb, "prefix_mismatch_behavior"), "drop_block");
	assert_non_null(strstr(bt.headers, "anthropic-beta: thinking-binding-controls-2026-08-01\n"));
	cJSON_Delete(bt.body);
	/* Models that do not bind their blocks are not sent the beta. */
	bt = build_anthropic(c, 0, "claude-sonnet-5", ANTHROPIC_TOOL_TOOLSET, &tools, false);
	assert_null(get(get(bt.body, "thinking"), "block_binding"));
	assert_null(strstr(bt.headers, "thinking-binding"));
	cJSON_Delete(bt.body);
	/* With an older tool both betas share the header. */
	bt = build_anthropic(c, 0, "claude-opus-5-5", ANTHROPIC_TOOL_20251124, &tools, false);
	assert_non_null(strstr(bt.headers, "anthropic-beta: computer-use-2025-11-24,"
	                                   "thinking-binding-controls-2026-08-01\n"));
	cJSON_Delete(bt.body);
	conv_destroy(c);
	provider_tools_clear(&tools);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openai_pairs_results_and_images),
		cmocka_unit_test(test_openai_missing_result_and_orphans),
		cmocka_unit_test(test_openai_tools_and_user_images),
		cmocka_unit_test(test_anthropic_results_images_merging),
		cmocka_unit_test(test_anthropic_prompt_cache_breakpoints),
		cmocka_unit_test(test_missing_image_file_becomes_note),
		cmocka_unit_test(test_pruning_never_orphans),
		cmocka_unit_test(test_openai_fragments_every_split),
		cmocka_unit_test(test_anthropic_fragments_and_text_split_in_char),
		cmocka_unit_test(test_invalid_arguments_reported),
		cmocka_unit_test(test_garbage_and_stream_errors),
		cmocka_unit_test(test_anthropic_toolset_entry),
		cmocka_unit_test(test_anthropic_thinking_and_toolset_echo),
		cmocka_unit_test(test_anthropic_binding_when_history_edited),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
