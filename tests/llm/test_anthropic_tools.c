/*
 * The Anthropic model table (agent/llm/anthropic_tools.h): the computer
 * tool version each model family takes, the --computer-tool names, the
 * step down after a refusal, and which models are asked to think.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/llm/anthropic_tools.h"

static void expect_tool(const char *model, enum anthropic_tool tool, bool known)
{
	struct anthropic_model m = anthropic_model_lookup(model);
	if (m.tool != tool || m.known != known)
		fail_msg("%s: tool %d known %d, expected %d %d", model, m.tool, m.known, tool, known);
}

static void test_versions_by_family(void **state)
{
	(void)state;
	const char *toolset[] = {"claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-5",
	                         "claude-sonnet-5", "claude-fable-5", "claude-mythos-5",
	                         "claude-fable-5-1", "claude-mythos-5-1", "claude-opus-4-8"};
	for (size_t i = 0; i < sizeof(toolset) / sizeof(toolset[0]); i++)
		expect_tool(toolset[i], ANTHROPIC_TOOL_TOOLSET, true);
	const char *v1124[] = {"claude-opus-4-5", "claude-opus-4-5-20251101", "claude-opus-4-6",
	                       "claude-opus-4-7", "claude-sonnet-4-6"};
	for (size_t i = 0; i < sizeof(v1124) / sizeof(v1124[0]); i++)
		expect_tool(v1124[i], ANTHROPIC_TOOL_20251124, true);
	const char *v0124[] = {"claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
	                       "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1",
	                       "claude-opus-4-1-20250805"};
	for (size_t i = 0; i < sizeof(v0124) / sizeof(v0124[0]); i++)
		expect_tool(v0124[i], ANTHROPIC_TOOL_20250124, true);
}

static void test_unknown_models_get_the_newest(void **state)
{
	(void)state;
	/* Near misses are unknown too: a longer number is another model. */
	const char *unknown[] = {"claude-sonnet-6", "fake", "", "claude-sonnet-4-50",
	                         "claude-opus-4-5-2025", "claude-opus-4-5-latest",
	                         "claude-sonnet-5-5x"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		expect_tool(unknown[i], ANTHROPIC_TOOL_NEWEST, false);
	expect_tool(NULL, ANTHROPIC_TOOL_NEWEST, false);
	assert_false(anthropic_model_lookup("fake").thinks);
}

static void test_thinking_by_family(void **state)
{
	(void)state;
	assert_true(anthropic_model_lookup("claude-sonnet-5-5").thinks);
	assert_true(anthropic_model_lookup("claude-sonnet-5-5").binds_thinking);
	assert_true(anthropic_model_lookup("claude-opus-5-5").binds_thinking);
	assert_true(anthropic_model_lookup("claude-sonnet-5").thinks);
	assert_false(anthropic_model_lookup("claude-sonnet-5").binds_thinking);
	assert_false(anthropic_model_lookup("claude-opus-4-8").thinks);
	assert_false(anthropic_model_lookup("claude-sonnet-4-5").thinks);
}

static void test_names_headers_and_step_down(void **state)
{
	(void)state;
	enum anthropic_tool t;
	assert_true(anthropic_tool_parse("toolset", &t));
	assert_int_equal(t, ANTHROPIC_TOOL_TOOLSET);
	assert_true(anthropic_tool_parse("20251124", &t));
	assert_int_equal(t, ANTHROPIC_TOOL_20251124);
	assert_true(anthropic_tool_parse("20250124", &t));
	assert_int_equal(t, ANTHROPIC_TOOL_20250124);
	assert_false(anthropic_tool_parse("computer_20251124", &t));
	assert_false(anthropic_tool_parse(NULL, &t));
	assert_false(anthropic_tool_parse("", &t));
	assert_string_equal(anthropic_tool_name(ANTHROPIC_TOOL_20251124), "20251124");
	assert_string_equal(anthropic_tool_name(ANTHROPIC_TOOL_AUTO), "?"); /* from the model */
	assert_string_equal(anthropic_tool_type(ANTHROPIC_TOOL_TOOLSET), "computer_toolset_20260801");
	assert_null(anthropic_tool_beta(ANTHROPIC_TOOL_TOOLSET));
	assert_string_equal(anthropic_tool_beta(ANTHROPIC_TOOL_20251124), "computer-use-2025-11-24");
	assert_string_equal(anthropic_tool_beta(ANTHROPIC_TOOL_20250124), "computer-use-2025-01-24");
	assert_true(anthropic_tool_older(ANTHROPIC_TOOL_TOOLSET, &t));
	assert_int_equal(t, ANTHROPIC_TOOL_20251124);
	assert_true(anthropic_tool_older(ANTHROPIC_TOOL_20251124, &t));
	assert_int_equal(t, ANTHROPIC_TOOL_20250124);
	assert_false(anthropic_tool_older(ANTHROPIC_TOOL_20250124, &t));
}

static void test_refusal_names_the_type(void **state)
{
	(void)state;
	const char *msg = "'claude-x' does not support tool types: computer_toolset_20260801. "
	                  "Did you mean one of: computer_20251124, computer_20250124?";
	assert_true(anthropic_tool_refused(ANTHROPIC_TOOL_TOOLSET, msg));
	/* Named only among the accepted ones: not refused. */
	assert_false(anthropic_tool_refused(ANTHROPIC_TOOL_20251124, msg));
	assert_false(anthropic_tool_refused(ANTHROPIC_TOOL_TOOLSET,
	                                    "messages.1: computer_toolset_20260801 is fine"));
	assert_false(anthropic_tool_refused(ANTHROPIC_TOOL_TOOLSET, NULL));
	assert_true(anthropic_tool_refused(
		ANTHROPIC_TOOL_20251124,
		"anthropic: HTTP 400: 'claude-opus-5-5' does not support tool types: computer_20251124."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions_by_family),
		cmocka_unit_test(test_unknown_models_get_the_newest),
		cmocka_unit_test(test_thinking_by_family),
		cmocka_unit_test(test_names_headers_and_step_down),
		cmocka_unit_test(test_refusal_names_the_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
