/*
 * An MCP host's tools in deskhand's terms (agent/tools/mcp_actions): each
 * tool's translation, the refusals (an argument the tool does not take, a
 * count for a button that has none, half a point), and that every tool of
 * the table has a schema that is JSON with additionalProperties false, and
 * that the hints say which ones only look — the policy's own classes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/safety/policy.h"
#include "agent/tools/actions.h"
#include "agent/tools/mcp_actions.h"

static char *tr(const char *name, const char *args, char *err, size_t errlen)
{
	cJSON *a = cJSON_Parse(args);
	assert_non_null(a);
	cJSON *o = agent_mcp_translate(name, a, err, errlen);
	cJSON_Delete(a);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

static void expect(const char *name, const char *args, const char *want)
{
	char err[256] = "";
	char *got = tr(name, args, err, sizeof(err));
	if (got == NULL)
		fail_msg("%s %s refused: %s", name, args, err);
	assert_string_equal(got, want);
	free(got);
}

static void refused(const char *name, const char *args, const char *why)
{
	char err[256] = "";
	char *got = tr(name, args, err, sizeof(err));
	if (got != NULL)
		fail_msg("%s %s accepted as %s", name, args, got);
	if (strstr(err, why) == NULL)
		fail_msg("%s %s: '%s' does not say '%s'", name, args, err, why);
}

static void every_tool(void **state)
{
	(void)state;
	expect("screenshot", "{}", "{\"action\":\"screenshot\"}");
	expect("click", "{\"x\":10,\"y\":20}", "{\"action\":\"left_click\",\"coordinate\":[10,20]}");
	expect("click", "{}", "{\"action\":\"left_click\"}");
	expect("click", "{\"x\":1,\"y\":2,\"count\":2}",
	       "{\"action\":\"double_click\",\"coordinate\":[1,2]}");
	expect("click", "{\"x\":1,\"y\":2,\"count\":3,\"button\":\"left\"}",
	       "{\"action\":\"triple_click\",\"coordinate\":[1,2]}");
	expect("click", "{\"x\":1,\"y\":2,\"button\":\"right\",\"modifiers\":\"ctrl\"}",
	       "{\"action\":\"right_click\",\"coordinate\":[1,2],\"text\":\"ctrl\"}");
	expect("click", "{\"button\":\"forward\"}", "{\"action\":\"forward_click\"}");
	expect("drag", "{\"x1\":1,\"y1\":2,\"x2\":3,\"y2\":4}",
	       "{\"action\":\"left_click_drag\",\"start_coordinate\":[1,2],\"coordinate\":[3,4]}");
	expect("move", "{\"x\":5,\"y\":6}", "{\"action\":\"mouse_move\",\"coordinate\":[5,6]}");
	expect("scroll", "{\"direction\":\"down\"}",
	       "{\"action\":\"scroll\",\"scroll_direction\":\"down\",\"scroll_amount\":3}");
	expect("scroll", "{\"direction\":\"up\",\"amount\":7,\"x\":1,\"y\":1}",
	       "{\"action\":\"scroll\",\"coordinate\":[1,1],\"scroll_direction\":\"up\","
	       "\"scroll_amount\":7}");
	expect("key", "{\"keys\":\"ctrl+s\",\"repeat\":2}",
	       "{\"action\":\"key\",\"text\":\"ctrl+s\",\"repeat\":2}");
	expect("type", "{\"text\":\"héllo\",\"clear\":true}",
	       "{\"action\":\"type\",\"text\":\"héllo\",\"clear\":true}");
	expect("wait", "{\"seconds\":1.5}", "{\"action\":\"wait\",\"duration\":1.5}");
	expect("windows", "{}", "{\"action\":\"windows\"}");
}

static void refusals(void **state)
{
	(void)state;
	refused("click", "{\"x\":1,\"y\":2,\"z\":3}", "unknown argument \"z\"");
	refused("click", "{\"x\":1}", "both x and y");
	refused("click", "{\"x\":1.5,\"y\":2}", "whole numbers");
	refused("click", "{\"x\":\"1\",\"y\":2}", "whole numbers");
	refused("click", "{\"button\":\"right\",\"count\":2}", "left button");
	refused("click", "{\"count\":4}", "1, 2 or 3");
	refused("click", "{\"button\":\"thumb\"}", "\"button\" must be");
	refused("drag", "{\"x1\":1,\"y1\":2}", "both x and y");
	refused("move", "{}", "both x and y");
	refused("key", "{}", "needs \"keys\"");
	refused("key", "{\"keys\":[\"ctrl\"]}", "needs \"keys\"");
	refused("wait", "{\"seconds\":\"1\"}", "a number");
	refused("screenshot", "{\"region\":[0,0,1,1]}", "unknown argument");
	refused("windows", "{\"all\":true}", "unknown argument");
	refused("launch", "{}", "unknown tool");
	refused("execute", "{}", "unknown tool"); /* deskhand's own: passed on, not translated */
	char err[64];
	cJSON *arr = cJSON_CreateArray();
	assert_null(agent_mcp_translate("click", arr, err, sizeof(err)));
	cJSON_Delete(arr);
}

static void the_table(void **state)
{
	(void)state;
	assert_int_equal(agent_mcp_tool_count, 13);
	for (size_t i = 0; i < agent_mcp_tool_count; i++) {
		const agent_mcp_tool *t = &agent_mcp_tools[i];
		assert_ptr_equal(agent_mcp_tool_find(t->name), t);
		cJSON *in = cJSON_Parse(t->input_schema);
		if (in == NULL)
			fail_msg("%s: the input schema is not JSON", t->name);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(in, "type")), "object");
		assert_true(cJSON_IsFalse(cJSON_GetObjectItem(in, "additionalProperties")));
		cJSON_Delete(in);
		if (t->output_schema != NULL) {
			cJSON *out = cJSON_Parse(t->output_schema);
			assert_non_null(out);
			cJSON_Delete(out);
		}
		/* A computer action's hint is the policy's class of it. */
		char err[128];
		cJSON *args = cJSON_CreateObject();
		if (strcmp(t->name, "wait") == 0)
			cJSON_AddNumberToObject(args, "seconds", 1);
		if (strcmp(t->name, "move") == 0 || strcmp(t->name, "drag") == 0) {
			cJSON_Delete(args);
			args = cJSON_Parse("{\"x\":1,\"y\":1,\"x1\":1,\"y1\":1,\"x2\":2,\"y2\":2}");
			cJSON_DeleteItemFromObject(args, strcmp(t->name, "move") == 0 ? "x1" : "x");
			cJSON_DeleteItemFromObject(args, strcmp(t->name, "move") == 0 ? "y1" : "y");
			cJSON_DeleteItemFromObject(args, "x2");
			cJSON_DeleteItemFromObject(args, "y2");
			if (strcmp(t->name, "drag") == 0) {
				cJSON_AddNumberToObject(args, "x2", 2);
				cJSON_AddNumberToObject(args, "y2", 2);
			}
		}
		if (strcmp(t->name, "scroll") == 0)
			cJSON_AddStringToObject(args, "direction", "up");
		if (strcmp(t->name, "key") == 0 || strcmp(t->name, "type") == 0)
			cJSON_AddStringToObject(args, strcmp(t->name, "key") == 0 ? "keys" : "text", "a");
		cJSON *o = agent_mcp_own_tool(t->name) ? NULL
		           : agent_mcp_translate(t->name, args, err, sizeof(err));
		cJSON_Delete(args);
		if (o == NULL) {
			assert_true(agent_mcp_own_tool(t->name));
			continue;
		}
		agent_action a;
		agent_policy_kind k;
		assert_true(agent_policy_action_lookup(
			cJSON_GetStringValue(cJSON_GetObjectItem(o, "action")), &a, &k));
		if ((k == AGENT_POLICY_OS_OBSERVE) != t->read_only)
			fail_msg("%s: readOnlyHint %d, the policy's class %d", t->name, t->read_only, k);
		cJSON_Delete(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_tool),
		cmocka_unit_test(refusals),
		cmocka_unit_test(the_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
