/*
 * A call's dialect in a conversation file (agent/llm/conversation): the
 * "toolset" a call is saved with is its dialect's name, deskhand's own
 * calls have none, and a file read back gives every call the very dialect
 * it was made in — so a resumed conversation's calls are proposed in the
 * vocabulary the model used. A toolset deskhand does not know refuses the
 * file, naming it: a file cannot invent a vocabulary.
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

#include "agent/llm/conversation.h"
#include "agent/tools/tools.h"

static char dir[64];
static char file[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/deskhand-dialect-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(file, sizeof(file), "%s/c.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(file);
	return rmdir(dir);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* One call of every dialect, as the providers record them. */
static const struct {
	const agent_dialect *d;
	const char *name, *arguments;
} calls[] = {
	{&agent_dialect_deskhand, "execute", "{\"language\":\"shell\",\"code\":\"ls\"}"},
	{&agent_dialect_deskhand, "computer", "{\"action\":\"screenshot\"}"},
	{&agent_dialect_anthropic, "left_click", "{\"coordinate\":[1,2]}"},
	{&agent_dialect_openai, "computer_call", "{\"type\":\"screenshot\"}"},
	{&agent_dialect_gemini, "click_at", "{\"x\":500,\"y\":500}"},
	{&agent_dialect_qwen, "computer_use", "{\"action\":\"answer\",\"text\":\"42\"}"},
	{&agent_dialect_uitars, "uitars", "{\"action\":\"finished(content='done')\"}"},
};
#define N_CALLS (sizeof(calls) / sizeof(calls[0]))

static struct conv *every_dialect(void)
{
	struct conv *c = conv_create(file);
	assert_non_null(c);
	assert_true(conv_add_user_text(c, "go"));
	struct conv_message *m = conv_add_message(c, CONV_ASSISTANT);
	assert_non_null(m);
	struct conv_message *r = conv_add_message(c, CONV_TOOL);
	assert_non_null(r);
	for (size_t i = 0; i < N_CALLS; i++) {
		char id[16];
		snprintf(id, sizeof(id), "call_%zu", i);
		/* deskhand's own calls are made without a dialect, as the providers do. */
		struct conv_call_extra x = {calls[i].d == &agent_dialect_deskhand ? NULL : calls[i].d,
		                            NULL, NULL, NULL};
		assert_true(conv_msg_add_tool_call_ex(m, id, calls[i].name, calls[i].arguments, &x));
		assert_ptr_equal(m->blocks[i].dialect, calls[i].d);
		assert_true(conv_msg_add_tool_result(r, id, "ok", false, NULL));
	}
	return c;
}

static void expect_dialects(const struct conv *c)
{
	assert_int_equal(c->n_messages, 3);
	const struct conv_message *m = c->messages[1];
	assert_int_equal(m->n_blocks, N_CALLS);
	for (size_t i = 0; i < N_CALLS; i++) {
		const struct conv_block *b = &m->blocks[i];
		assert_int_equal(b->type, CONV_TOOL_CALL);
		assert_string_equal(b->name, calls[i].name);
		/* The very struct: nothing compares the name again later. */
		if (b->dialect != calls[i].d)
			fail_msg("call %zu (%s): dialect %s", i, calls[i].name,
			         b->dialect && b->dialect->name ? b->dialect->name : "deskhand/NULL");
	}
}

/* Saved and loaded, every call keeps its dialect; the file names it as
 * the toolset, and deskhand's own calls carry no toolset at all. */
static void dialects_survive_save_and_load(void **state)
{
	(void)state;
	struct conv *c = every_dialect();
	assert_true(conv_save(c));
	char *text = read_all(file);
	cJSON *root = cJSON_Parse(text);
	assert_non_null(root);
	/* Vendors' toolsets need version 2; older deskhands refuse, never misread. */
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "version")->valueint, 2);
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "messages"), 1), "content");
	assert_int_equal(cJSON_GetArraySize(content), N_CALLS);
	for (size_t i = 0; i < N_CALLS; i++) {
		const cJSON *bo = cJSON_GetArrayItem(content, (int)i);
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(bo, "toolset");
		if (calls[i].d->name == NULL) {
			if (ts != NULL)
				fail_msg("deskhand's %s saved with a toolset", calls[i].name);
		} else {
			assert_true(cJSON_IsString(ts));
			assert_string_equal(ts->valuestring, calls[i].d->name);
		}
	}
	cJSON_Delete(root);

	struct conv *d = conv_load(file);
	if (d == NULL)
		fail_msg("%s", conv_error());
	expect_dialects(d);
	/* The same from the text, and saved again: the file does not drift. */
	struct conv *e = conv_parse(file, text);
	assert_non_null(e);
	expect_dialects(e);
	assert_true(conv_save(e));
	char *again = read_all(file);
	cJSON *a = cJSON_Parse(text), *b = cJSON_Parse(again);
	cJSON_DeleteItemFromObjectCaseSensitive(a, "updated");
	cJSON_DeleteItemFromObjectCaseSensitive(b, "updated");
	assert_true(cJSON_Compare(a, b, true));
	cJSON_Delete(a);
	cJSON_Delete(b);
	free(again);
	free(text);
	conv_destroy(c);
	conv_destroy(d);
	conv_destroy(e);
}

/* Only deskhand's own calls: version 1 and no toolset, so an older
 * deskhand still reads the file. */
static void own_calls_need_no_toolset(void **state)
{
	(void)state;
	struct conv *c = conv_create(file);
	assert_true(conv_add_user_text(c, "go"));
	struct conv_message *m = conv_add_message(c, CONV_ASSISTANT);
	assert_true(conv_msg_add_tool_call(m, "a", "execute", "{\"language\":\"shell\",\"code\":\"ls\"}"));
	struct conv_call_extra none = {NULL, NULL, NULL, NULL};
	assert_true(conv_msg_add_tool_call_ex(m, "b", "computer", "{\"action\":\"screenshot\"}", &none));
	assert_ptr_equal(m->blocks[0].dialect, &agent_dialect_deskhand);
	assert_ptr_equal(m->blocks[1].dialect, &agent_dialect_deskhand);
	assert_true(conv_save(c));
	char *text = read_all(file);
	assert_null(strstr(text, "toolset"));
	cJSON *root = cJSON_Parse(text);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "version")->valueint, 1);
	cJSON_Delete(root);
	struct conv *d = conv_load(file);
	assert_non_null(d);
	assert_ptr_equal(d->messages[1]->blocks[0].dialect, &agent_dialect_deskhand);
	assert_ptr_equal(d->messages[1]->blocks[1].dialect, &agent_dialect_deskhand);
	free(text);
	conv_destroy(c);
	conv_destroy(d);
}

static char *file_with_toolset(const char *toolset_json)
{
	static const char fmt[] =
		"{\"format\":\"deskhand-conversation\",\"version\":2,"
		"\"created\":\"2026-01-31T10:00:00Z\",\"updated\":\"2026-01-31T10:00:00Z\","
		"\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"go\"}]},"
		"{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_call\",\"id\":\"t1\","
		"\"name\":\"left_click\",\"arguments\":\"{\\\"coordinate\\\":[1,2]}\"%s%s}]}]}";
	size_t n = sizeof(fmt) + strlen(toolset_json) + 16;
	char *s = malloc(n);
	assert_non_null(s);
	snprintf(s, n, fmt, toolset_json[0] ? ",\"toolset\":" : "", toolset_json);
	return s;
}

/* A toolset deskhand never declared refuses the whole file, and the
 * message names it; so do near misses of the real names. */
static void unknown_toolset_refused(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
		{"\"nope\"", "nope"},
		{"\"Computer\"", "Computer"},
		{"\"openai \"", "openai "},
		{"\"\"", "\"\""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = file_with_toolset(bad[i][0]);
		struct conv *c = conv_parse(file, text);
		if (c != NULL)
			fail_msg("toolset %s accepted", bad[i][0]);
		const char *err = conv_error();
		if (strstr(err, "unknown toolset") == NULL || strstr(err, bad[i][1]) == NULL ||
		    strstr(err, "message 2") == NULL)
			fail_msg("toolset %s: \"%s\"", bad[i][0], err);
		free(text);
	}
	/* A toolset that is no name is not read as deskhand's own tools. */
	static const char *const odd[] = {"5", "null", "[\"computer\"]", "{}"};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		char *t = file_with_toolset(odd[i]);
		struct conv *d = conv_parse(file, t);
		if (d != NULL)
			fail_msg("toolset %s accepted", odd[i]);
		if (strstr(conv_error(), "toolset is not a name") == NULL)
			fail_msg("toolset %s: \"%s\"", odd[i], conv_error());
		free(t);
	}
	/* The same file with a toolset deskhand knows is read, in its dialect. */
	char *text = file_with_toolset("\"computer\"");
	struct conv *c = conv_parse(file, text);
	if (c == NULL)
		fail_msg("%s", conv_error());
	assert_ptr_equal(c->messages[1]->blocks[0].dialect, &agent_dialect_anthropic);
	conv_destroy(c);
	free(text);
	/* ... and without one the call is deskhand's own. */
	text = file_with_toolset("");
	c = conv_parse(file, text);
	assert_non_null(c);
	assert_ptr_equal(c->messages[1]->blocks[0].dialect, &agent_dialect_deskhand);
	conv_destroy(c);
	free(text);
}

/* The dialect read from a file is what the proposal is made in: a resumed
 * UI-TARS or Qwen conversation still ends with its final call. */
static void loaded_calls_propose_in_their_dialect(void **state)
{
	(void)state;
	struct conv *c = every_dialect();
	assert_true(conv_save(c));
	conv_destroy(c);
	struct conv *d = conv_load(file);
	assert_non_null(d);
	agent_tools_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	vision_shot_opts_init(&cfg.shot);
	agent_tools *t = agent_tools_create(&cfg);
	assert_non_null(t);
	for (size_t i = 0; i < N_CALLS; i++) {
		const struct conv_block *b = &d->messages[1]->blocks[i];
		/* As agent/session/loop.c hands a block over. */
		agent_tool_call call = {b->id, b->name, b->arguments, b->args, b->args_error,
		                        b->dialect, b->checks};
		agent_proposal p;
		agent_tools_propose(t, &call, &p);
		if (calls[i].d == &agent_dialect_qwen) {
			assert_int_equal(p.kind, AGENT_PROPOSAL_FINAL);
			assert_string_equal(p.text, "42");
		} else if (calls[i].d == &agent_dialect_uitars) {
			assert_int_equal(p.kind, AGENT_PROPOSAL_FINAL);
			assert_string_equal(p.text, "done");
		} else if (strcmp(calls[i].name, "execute") == 0) {
			assert_int_equal(p.kind, AGENT_PROPOSAL_CODE);
		} else {
			/* The computer tool is off here: every other call is its refusal. */
			assert_int_equal(p.kind, AGENT_PROPOSAL_REFUSED);
			assert_non_null(strstr(p.text, "the computer tool is not enabled"));
			assert_true(p.computer);
		}
		agent_proposal_finish(&p);
	}
	agent_tools_destroy(t);
	conv_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(dialects_survive_save_and_load, setup, teardown),
		cmocka_unit_test_setup_teardown(own_calls_need_no_toolset, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_toolset_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(loaded_calls_propose_in_their_dialect, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
