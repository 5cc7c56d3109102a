/*
 * The one action table (agent/tools/actions.h). This test is built with one
 * extra line, AGENT_ACTIONS_EXTRA (tests/tools/meson.build), and checks
 * that the line alone reaches every list: the enum, the policy's class and
 * name lookup, the prompt's descriptions, the parser's list of names. The
 * parser has no runner for it, so it is refused, never run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/tools/computer.h"
#include "agent/safety/policy.h"
#include "agent/session/prompt.h"

static void test_one_line_reaches_every_list(void **state)
{
	(void)state;
	agent_action a;
	agent_policy_kind k;
	assert_true(agent_policy_action_lookup("fake_probe", &a, &k));
	assert_int_equal(a, AGENT_ACTION_FAKE_PROBE);
	assert_int_equal(k, AGENT_POLICY_OS_INPUT);
	assert_string_equal(agent_action_name(a), "fake_probe");
	assert_int_equal(AGENT_ACTION_COUNT, 25);
	assert_int_equal(prompt_n_computer_actions, AGENT_ACTION_COUNT);
	bool described = false;
	for (size_t i = 0; i < prompt_n_computer_actions; i++)
		described |= strcmp(prompt_computer_actions[i].name, "fake_probe") == 0 &&
		             strcmp(prompt_computer_actions[i].description, "a test action") == 0;
	assert_true(described);
	assert_non_null(strstr(agent_action_list(), ", fake_probe"));
}

static void test_the_lists_agree(void **state)
{
	(void)state;
	/* Every name the prompt offers is one the policy knows, in the same order. */
	for (size_t i = 0; i < prompt_n_computer_actions; i++) {
		agent_action a;
		assert_true(agent_policy_action_lookup(prompt_computer_actions[i].name, &a, NULL));
		assert_int_equal(a, (agent_action)i);
	}
}

static void test_an_action_without_a_runner_is_refused(void **state)
{
	(void)state;
	vision_view v = {0, 0, 1920, 1080, 1280, 720};
	cJSON *args = cJSON_Parse("{\"action\":\"fake_probe\"}");
	agent_computer_action act;
	char err[256];
	assert_false(agent_computer_parse(args, &v, &act, err, sizeof(err)));
	assert_non_null(strstr(err, "not supported"));
	cJSON_Delete(args);
}

static bool parse(const char *json, agent_computer_action *act, char *err, size_t n)
{
	vision_view v = {0, 0, 1920, 1080, 1280, 720};
	cJSON *args = cJSON_Parse(json);
	bool ok = agent_computer_parse(args, &v, act, err, n);
	cJSON_Delete(args);
	return ok;
}

/* key's repeat (the toolset's 1-100), and the 300 s bound of hold_key and wait. */
static void test_key_repeat_and_durations(void **state)
{
	(void)state;
	agent_computer_action act;
	char err[256];
	assert_true(parse("{\"action\":\"key\",\"text\":\"Down\",\"repeat\":5}", &act, err,
	                  sizeof(err)));
	assert_int_equal(act.repeat, 5);
	char *d = agent_computer_describe(&act);
	assert_non_null(strstr(d, "5 times"));
	free(d);
	char *j = agent_computer_to_json(&act);
	assert_non_null(strstr(j, "\"repeat\":5"));
	free(j);
	agent_computer_action_finish(&act);
	assert_true(parse("{\"action\":\"key\",\"text\":\"a\"}", &act, err, sizeof(err)));
	assert_int_equal(act.repeat, 1);
	agent_computer_action_finish(&act);
	const char *bad[] = {"0", "101", "2.5", "\"3\""};
	for (size_t i = 0; i < 4; i++) {
		char json[128];
		snprintf(json, sizeof(json), "{\"action\":\"key\",\"text\":\"a\",\"repeat\":%s}", bad[i]);
		assert_false(parse(json, &act, err, sizeof(err)));
		assert_non_null(strstr(err, "repeat must be a whole number from 1 to 100"));
	}
	assert_true(parse("{\"action\":\"hold_key\",\"text\":\"shift\",\"duration\":300}", &act,
	                  err, sizeof(err)));
	assert_int_equal(act.duration_ms, 300000);
	agent_computer_action_finish(&act);
	assert_false(parse("{\"action\":\"wait\",\"duration\":301}", &act, err, sizeof(err)));
	assert_true(parse("{\"action\":\"wait\",\"duration\":120}", &act, err, sizeof(err)));
	agent_computer_action_finish(&act);
}

/* element: refused where it means nothing, with a coordinate, or before any list. */
static void test_element_targets_are_checked(void **state)
{
	(void)state;
	agent_computer_action act;
	char err[256];
	assert_false(parse("{\"action\":\"left_click\",\"element\":3}", &act, err, sizeof(err)));
	assert_non_null(strstr(err, "call the elements action first"));
	assert_false(parse("{\"action\":\"left_click\",\"element\":3,\"coordinate\":[1,2]}",
	                   &act, err, sizeof(err)));
	assert_non_null(strstr(err, "not both"));
	assert_false(parse("{\"action\":\"key\",\"text\":\"a\",\"element\":3}", &act, err,
	                   sizeof(err)));
	assert_non_null(strstr(err, "does not take"));
	const char *bad[] = {"0", "-1", "2.5", "\"3\"", "[3]"};
	for (size_t i = 0; i < 5; i++) {
		char json[128];
		snprintf(json, sizeof(json), "{\"action\":\"double_click\",\"element\":%s}", bad[i]);
		assert_false(parse(json, &act, err, sizeof(err)));
		assert_non_null(strstr(err, "element must be an element ID"));
	}
	/* null is no element: a click where the pointer is. */
	assert_true(parse("{\"action\":\"left_click\",\"element\":null}", &act, err,
	                  sizeof(err)));
	assert_int_equal(act.element, 0);
	assert_false(act.has_point);
	agent_computer_action_finish(&act);
	assert_true(parse("{\"action\":\"elements\"}", &act, err, sizeof(err)));
	assert_int_equal(act.kind, AGENT_ACTION_ELEMENTS);
	agent_computer_action_finish(&act);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line_reaches_every_list),
		cmocka_unit_test(test_the_lists_agree),
		cmocka_unit_test(test_an_action_without_a_runner_is_refused),
		cmocka_unit_test(test_key_repeat_and_durations),
		cmocka_unit_test(test_element_targets_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
