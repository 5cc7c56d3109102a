/*
 * OpenAI's computer actions in deskhand's terms (agent/tools/openai_actions):
 * every action type, OpenAI's key names, the pixel-to-wheel-click rule, the
 * whole drag path, and the refusals — then each translation through the
 * strict parser with a scaled view, so coordinates map back exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/tools/computer.h"
#include "agent/tools/openai_actions.h"

/* The translation of `action` printed compactly; NULL with err on failure. */
static char *tr(const char *action, char *err, size_t errlen)
{
	cJSON *a = cJSON_Parse(action);
	assert_non_null(a);
	cJSON *o = agent_openai_action_args(a, err, errlen);
	cJSON_Delete(a);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

static void expect(const char *action, const char *want)
{
	char err[256] = "";
	char *got = tr(action, err, sizeof(err));
	if (got == NULL)
		fail_msg("%s refused: %s", action, err);
	assert_string_equal(got, want);
	free(got);
}

static void refused(const char *action, const char *why)
{
	char err[256] = "";
	char *got = tr(action, err, sizeof(err));
	if (got != NULL)
		fail_msg("%s accepted as %s", action, got);
	if (strstr(err, why) == NULL)
		fail_msg("%s: '%s' does not say '%s'", action, err, why);
}

static void every_action_type(void **state)
{
	(void)state;
	expect("{\"type\":\"click\",\"button\":\"left\",\"x\":10,\"y\":20}",
	       "{\"coordinate\":[10,20],\"action\":\"left_click\"}");
	expect("{\"type\":\"click\",\"button\":\"right\",\"x\":1,\"y\":2}",
	       "{\"coordinate\":[1,2],\"action\":\"right_click\"}");
	expect("{\"type\":\"click\",\"button\":\"wheel\",\"x\":1,\"y\":2}",
	       "{\"coordinate\":[1,2],\"action\":\"middle_click\"}");
	expect("{\"type\":\"click\",\"button\":\"back\",\"x\":1,\"y\":2}",
	       "{\"coordinate\":[1,2],\"action\":\"back_click\"}");
	expect("{\"type\":\"click\",\"button\":\"forward\",\"x\":1,\"y\":2,\"keys\":[\"CTRL\",\"SHIFT\"]}",
	       "{\"coordinate\":[1,2],\"action\":\"forward_click\",\"text\":\"CTRL+SHIFT\"}");
	expect("{\"type\":\"double_click\",\"x\":5,\"y\":6}",
	       "{\"coordinate\":[5,6],\"action\":\"double_click\"}");
	expect("{\"type\":\"move\",\"x\":5,\"y\":6,\"keys\":[\"ALT\"]}",
	       "{\"coordinate\":[5,6],\"action\":\"mouse_move\",\"text\":\"ALT\"}");
	expect("{\"type\":\"drag\",\"path\":[{\"x\":1,\"y\":2},{\"x\":3,\"y\":4},{\"x\":5,\"y\":6}]}",
	       "{\"path\":[[1,2],[3,4],[5,6]],\"action\":\"left_click_drag\"}");
	expect("{\"type\":\"keypress\",\"keys\":[\"CTRL\",\"C\"]}",
	       "{\"action\":\"key\",\"text\":\"CTRL+c\"}");
	expect("{\"type\":\"type\",\"text\":\"h\\u00e9\"}", "{\"action\":\"type\",\"text\":\"h\u00e9\"}");
	expect("{\"type\":\"screenshot\"}", "{\"action\":\"screenshot\"}");
	expect("{\"type\":\"wait\"}", "{\"action\":\"wait\",\"duration\":2}");
}

static void key_names(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {
		{"CTRL", "CTRL"},      {"ARROWLEFT", "Left"}, {"ARROWRIGHT", "Right"},
		{"ARROWUP", "Up"},     {"ARROWDOWN", "Down"}, {"ENTER", "ENTER"},
		{"PAGEUP", "Prior"},   {"PAGEDOWN", "Next"},  {"OPTION", "alt"},
		{"CMD", "CMD"},        {"A", "a"},            {"/", "slash"},
		{"\\", "backslash"},   {"F5", "F5"},          {"ESC", "ESC"},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		assert_string_equal(agent_openai_key_name(pairs[i][0], buf, sizeof(buf)), pairs[i][1]);
	/* Every name OpenAI's models use parses as a key (aliases are case-blind). */
	static const char *const names[] = {
		"CTRL", "ALT", "SHIFT", "ENTER", "ESC", "TAB", "SPACE", "BACKSPACE", "DELETE",
		"HOME", "END", "PAGEUP", "PAGEDOWN", "ARROWLEFT", "ARROWRIGHT", "ARROWUP",
		"ARROWDOWN", "CMD", "SUPER", "WIN", "META", "OPTION", "CAPSLOCK", "INSERT", "F1",
		"F12", "A", "Z", "0", "/", "\\", "+",
	};
	vision_view v = {0, 0, 1280, 800, 1280, 800};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "type", "keypress");
		cJSON *keys = cJSON_AddArrayToObject(a, "keys");
		cJSON_AddItemToArray(keys, cJSON_CreateString(names[i]));
		char err[256];
		cJSON *o = agent_openai_action_args(a, err, sizeof(err));
		assert_non_null(o);
		agent_computer_action act;
		if (!agent_computer_parse(o, &v, &act, err, sizeof(err)))
			fail_msg("%s: %s", names[i], err);
		assert_int_equal(act.n_combos, 1);
		agent_computer_action_finish(&act);
		cJSON_Delete(o);
		cJSON_Delete(a);
	}
}

static void scroll_pixels_to_wheel_clicks(void **state)
{
	(void)state;
	/* round(|px| / 100), at least one, at most 100. */
	expect("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":0,\"scroll_y\":300}",
	       "{\"coordinate\":[1,2],\"action\":\"scroll\",\"scroll_direction\":\"down\","
	       "\"scroll_amount\":3}");
	expect("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":0,\"scroll_y\":-149}",
	       "{\"coordinate\":[1,2],\"action\":\"scroll\",\"scroll_direction\":\"up\","
	       "\"scroll_amount\":1}");
	expect("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":250,\"scroll_y\":0}",
	       "{\"coordinate\":[1,2],\"action\":\"scroll\",\"scroll_direction\":\"right\","
	       "\"scroll_amount\":3}");
	expect("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":-5,\"scroll_y\":0}",
	       "{\"coordinate\":[1,2],\"action\":\"scroll\",\"scroll_direction\":\"left\","
	       "\"scroll_amount\":1}");
	expect("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_y\":99999}",
	       "{\"coordinate\":[1,2],\"action\":\"scroll\",\"scroll_direction\":\"down\","
	       "\"scroll_amount\":100}");
	refused("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":10,\"scroll_y\":10}", "one axis");
	refused("{\"type\":\"scroll\",\"x\":1,\"y\":2,\"scroll_x\":0,\"scroll_y\":0}", "non-zero");
}

static void bad_actions_are_refused(void **state)
{
	(void)state;
	refused("{\"type\":\"click\",\"button\":\"middle\",\"x\":1,\"y\":2}", "button must be");
	refused("{\"type\":\"click\",\"x\":1.5,\"y\":2}", "whole numbers");
	refused("{\"type\":\"drag\",\"path\":[{\"x\":1,\"y\":2}]}", "at least two");
	refused("{\"type\":\"keypress\",\"keys\":[]}", "1 to 8");
	refused("{\"type\":\"keypress\",\"keys\":[\"CTRL+C\"]}", "key names");
	refused("{\"type\":\"keypress\"}", "keys");
	refused("{\"type\":\"type\"}", "text");
	refused("{\"type\":\"launch\"}", "unknown OpenAI computer action");
	refused("[1]", "object");
}

/* Through the strict parser with a scaled view: the whole path, mapped back. */
static void drag_path_maps_every_point(void **state)
{
	(void)state;
	vision_view v = {0, 0, 1920, 1080, 1280, 720};
	cJSON *a = cJSON_Parse("{\"type\":\"drag\",\"keys\":[\"SHIFT\"],\"path\":[{\"x\":0,\"y\":0},"
	                       "{\"x\":640,\"y\":360},{\"x\":1279,\"y\":719}]}");
	char err[256];
	cJSON *o = agent_openai_action_args(a, err, sizeof(err));
	assert_non_null(o);
	agent_computer_action act;
	if (!agent_computer_parse(o, &v, &act, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(act.kind, AGENT_ACTION_LEFT_CLICK_DRAG);
	assert_int_equal(act.n_path, 3);
	assert_int_equal(act.path_s[1][0], 960);
	assert_int_equal(act.path_s[1][1], 540);
	assert_int_equal(act.path_s[2][0], 1919);
	assert_int_equal(act.path_s[2][1], 1079);
	assert_int_equal(act.n_combos, 1);
	agent_computer_action_finish(&act);
	cJSON_Delete(o);
	cJSON_Delete(a);
	/* A point off the screenshot is an error, never clamped. */
	a = cJSON_Parse("{\"type\":\"drag\",\"path\":[{\"x\":0,\"y\":0},{\"x\":1280,\"y\":10}]}");
	o = agent_openai_action_args(a, err, sizeof(err));
	assert_false(agent_computer_parse(o, &v, &act, err, sizeof(err)));
	assert_non_null(strstr(err, "path point 1"));
	cJSON_Delete(o);
	cJSON_Delete(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_action_type),
		cmocka_unit_test(key_names),
		cmocka_unit_test(scroll_pixels_to_wheel_clicks),
		cmocka_unit_test(bad_actions_are_refused),
		cmocka_unit_test(drag_path_maps_every_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
