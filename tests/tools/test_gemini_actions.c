/*
 * Google Gemini's computer-use functions in deskhand's terms
 * (agent/tools/gemini_actions): every function of the 3.5 desktop set and
 * of Gemini 2.5's set, both drag spellings, both scroll magnitude names and
 * their unit, Gemini's key names, Google's defaults (type_text_at clears
 * and presses Enter, type does neither), the browser-only refusals — then
 * translations through the strict parser on a 1000x1000 grid over an odd
 * screen, so 0..999 maps exactly and 1000 is refused.
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
#include "agent/tools/gemini_actions.h"

/* 1001x777 shown at 1001x777, coordinates on a 1000x1000 grid. */
static const vision_view odd = {0, 0, 1001, 777, 1001, 777, 1000, 1000};

static char *tr(const char *name, const char *args, char *err, size_t errlen)
{
	cJSON *a = cJSON_Parse(args);
	assert_non_null(a);
	cJSON *o = agent_gemini_action_args(name, a, &odd, err, errlen);
	cJSON_Delete(a);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

static void expect(const char *name, const char *args, const char *want)
{
	char err[512] = "";
	char *got = tr(name, args, err, sizeof(err));
	if (got == NULL)
		fail_msg("%s %s refused: %s", name, args, err);
	if (strcmp(got, want) != 0)
		fail_msg("%s %s\n got: %s\nwant: %s", name, args, got, want);
	free(got);
}

static void refused(const char *name, const char *args, const char *why)
{
	char err[512] = "";
	char *got = tr(name, args, err, sizeof(err));
	if (got != NULL)
		fail_msg("%s %s accepted as %s", name, args, got);
	if (strstr(err, why) == NULL)
		fail_msg("%s %s: '%s' does not say '%s'", name, args, err, why);
}

static void desktop_set(void **state)
{
	(void)state;
	expect("click", "{\"x\":10,\"y\":20,\"intent\":\"open it\"}",
	       "{\"coordinate\":[10,20],\"action\":\"left_click\"}");
	expect("double_click", "{\"x\":1,\"y\":2}", "{\"coordinate\":[1,2],\"action\":\"double_click\"}");
	expect("triple_click", "{\"x\":1,\"y\":2}", "{\"coordinate\":[1,2],\"action\":\"triple_click\"}");
	expect("middle_click", "{\"x\":1,\"y\":2}", "{\"coordinate\":[1,2],\"action\":\"middle_click\"}");
	expect("right_click", "{\"x\":1,\"y\":2}", "{\"coordinate\":[1,2],\"action\":\"right_click\"}");
	expect("mouse_down", "{\"x\":3,\"y\":4}",
	       "{\"coordinate\":[3,4],\"action\":\"left_mouse_down\"}");
	expect("mouse_up", "{}", "{\"action\":\"left_mouse_up\"}");
	expect("move", "{\"x\":5,\"y\":6}", "{\"coordinate\":[5,6],\"action\":\"mouse_move\"}");
	expect("type", "{\"text\":\"hi\"}", "{\"action\":\"type\",\"text\":\"hi\"}");
	expect("type", "{\"text\":\"hi\",\"press_enter\":true}",
	       "{\"action\":\"type\",\"text\":\"hi\\n\"}");
	expect("drag_and_drop", "{\"start_x\":1,\"start_y\":2,\"end_x\":3,\"end_y\":4}",
	       "{\"start_coordinate\":[1,2],\"coordinate\":[3,4],\"action\":\"left_click_drag\"}");
	expect("drag_and_drop", "{\"x\":1,\"y\":2,\"destination_x\":3,\"destination_y\":4}",
	       "{\"start_coordinate\":[1,2],\"coordinate\":[3,4],\"action\":\"left_click_drag\"}");
	expect("press_key", "{\"key\":\"Enter\"}", "{\"action\":\"key\",\"text\":\"Enter\"}");
	expect("press_key", "{\"key\":\"ArrowLeft\"}", "{\"action\":\"key\",\"text\":\"Left\"}");
	expect("key_down", "{\"key\":\"Shift\"}", "{\"action\":\"key_down\",\"text\":\"Shift\"}");
	expect("key_up", "{\"key\":\"Shift\"}", "{\"action\":\"key_up\",\"text\":\"Shift\"}");
	expect("hotkey", "{\"keys\":[\"Control\",\"Shift\",\"T\"]}",
	       "{\"action\":\"key\",\"text\":\"Control+Shift+t\"}");
	expect("take_screenshot", "{}", "{\"action\":\"screenshot\"}");
	expect("wait", "{}", "{\"action\":\"wait\",\"duration\":1}");
	expect("wait", "{\"seconds\":3}", "{\"action\":\"wait\",\"duration\":3}");
}

static void legacy_set(void **state)
{
	(void)state;
	expect("click_at", "{\"x\":10,\"y\":20}", "{\"coordinate\":[10,20],\"action\":\"left_click\"}");
	expect("hover_at", "{\"x\":10,\"y\":20}", "{\"coordinate\":[10,20],\"action\":\"mouse_move\"}");
	/* Google's defaults: cleared first, Enter after. */
	expect("type_text_at", "{\"x\":1,\"y\":2,\"text\":\"q\"}",
	       "{\"coordinate\":[1,2],\"action\":\"type\",\"text\":\"q\\n\",\"clear\":true}");
	expect("type_text_at", "{\"x\":1,\"y\":2,\"text\":\"q\",\"press_enter\":false,"
	       "\"clear_before_typing\":false}",
	       "{\"coordinate\":[1,2],\"action\":\"type\",\"text\":\"q\"}");
	expect("key_combination", "{\"keys\":\"Control+A\"}",
	       "{\"action\":\"key\",\"text\":\"Control+a\"}");
	expect("key_combination", "{\"keys\":\"enter\"}", "{\"action\":\"key\",\"text\":\"enter\"}");
	expect("key_combination", "{\"keys\":\"Control++\"}",
	       "{\"action\":\"key\",\"text\":\"Control+plus\"}");
	expect("wait_5_seconds", "{}", "{\"action\":\"wait\",\"duration\":5}");
	/* The document: at the centre, by a whole screen (777 px = 8 clicks). */
	expect("scroll_document", "{\"direction\":\"down\"}",
	       "{\"coordinate\":[500,500],\"action\":\"scroll\",\"scroll_direction\":\"down\","
	       "\"scroll_amount\":8}");
}

static void scroll_unit(void **state)
{
	(void)state;
	/* 300 of 1000 along 777 px = 233 px: 2 clicks; the default is 300. */
	const char *down2 = "{\"coordinate\":[5,6],\"action\":\"scroll\",\"scroll_direction\":\"down\","
	                    "\"scroll_amount\":2}";
	expect("scroll", "{\"x\":5,\"y\":6,\"direction\":\"down\",\"magnitude_in_pixels\":300}", down2);
	expect("scroll", "{\"x\":5,\"y\":6,\"direction\":\"down\"}", down2);
	expect("scroll", "{\"x\":5,\"y\":6,\"direction\":\"down\",\"magnitude\":300}", down2);
	/* Across: 999 of 1001 px = 1000 px: 10 clicks. Tiny: at least one. */
	expect("scroll", "{\"x\":5,\"y\":6,\"direction\":\"right\",\"magnitude\":999}",
	       "{\"coordinate\":[5,6],\"action\":\"scroll\",\"scroll_direction\":\"right\","
	       "\"scroll_amount\":10}");
	expect("scroll", "{\"x\":5,\"y\":6,\"direction\":\"up\",\"magnitude\":0}",
	       "{\"coordinate\":[5,6],\"action\":\"scroll\",\"scroll_direction\":\"up\","
	       "\"scroll_amount\":1}");
	/* scroll_at's default is 800: of 1001 px across, 801 px: 8 clicks. */
	expect("scroll_at", "{\"x\":5,\"y\":6,\"direction\":\"left\"}",
	       "{\"coordinate\":[5,6],\"action\":\"scroll\",\"scroll_direction\":\"left\","
	       "\"scroll_amount\":8}");
	refused("scroll", "{\"x\":5,\"y\":6,\"direction\":\"sideways\"}", "up, down, left or right");
	refused("scroll", "{\"x\":5,\"y\":6,\"direction\":\"up\",\"magnitude\":1000}", "0 to 999");
}

static void refusals(void **state)
{
	(void)state;
	refused("navigate", "{\"url\":\"https://example.com\"}", "browser-only");
	refused("go_back", "{}", "browser-only");
	refused("go_forward", "{}", "browser-only");
	refused("search", "{}", "browser-only");
	refused("open_web_browser", "{}", "browser-only");
	refused("teleport", "{}", "unknown computer-use function");
	refused("click", "{\"x\":1.5,\"y\":2}", "whole numbers");
	refused("click", "{\"y\":2}", "\"x\" and \"y\"");
	refused("type", "{}", "needs \"text\"");
	refused("type", "{\"text\":\"a\",\"press_enter\":\"yes\"}", "true or false");
	refused("drag_and_drop", "{\"start_x\":1,\"start_y\":2,\"end_x\":3,\"end_y\":4,"
	        "\"destination_x\":5,\"destination_y\":6}", "not both");
	refused("drag_and_drop", "{\"x\":1,\"y\":2}", "destination_x");
	refused("press_key", "{\"key\":\"Control A\"}", "one key name");
	refused("hotkey", "{\"keys\":[]}", "1 to 8");
	refused("key_combination", "{}", "Control+A");
	refused("wait", "{\"seconds\":-1}", "0 to 300");
}

/* Translated, then parsed: 0..999 maps onto the odd screen exactly; 1000 is refused. */
static void through_the_parser(void **state)
{
	(void)state;
	static const struct {
		int gx, gy, sx, sy;
	} pts[] = {{0, 0, 0, 0}, {999, 999, 1000, 776}, {500, 500, 501, 388}, {999, 0, 1000, 0}};
	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		char args[64], err[256] = "";
		snprintf(args, sizeof(args), "{\"x\":%d,\"y\":%d}", pts[i].gx, pts[i].gy);
		cJSON *a = cJSON_Parse(args);
		cJSON *o = agent_gemini_action_args("click", a, &odd, err, sizeof(err));
		agent_computer_action act;
		assert_non_null(o);
		if (!agent_computer_parse(o, &odd, &act, err, sizeof(err)))
			fail_msg("%s: %s", args, err);
		assert_int_equal(act.sx, pts[i].sx);
		assert_int_equal(act.sy, pts[i].sy);
		agent_computer_action_finish(&act);
		cJSON_Delete(o);
		cJSON_Delete(a);
	}
	char err[256] = "";
	cJSON *a = cJSON_Parse("{\"x\":1000,\"y\":5}");
	cJSON *o = agent_gemini_action_args("click", a, &odd, err, sizeof(err));
	agent_computer_action act;
	assert_false(agent_computer_parse(o, &odd, &act, err, sizeof(err)));
	assert_non_null(strstr(err, "1000,5"));
	cJSON_Delete(o);
	cJSON_Delete(a);
	/* type_text_at's clear and Enter reach the parsed action. */
	a = cJSON_Parse("{\"x\":10,\"y\":10,\"text\":\"ls\"}");
	o = agent_gemini_action_args("type_text_at", a, &odd, err, sizeof(err));
	assert_true(agent_computer_parse(o, &odd, &act, err, sizeof(err)));
	assert_true(act.clear_first && act.has_point);
	assert_string_equal(act.text, "ls\n");
	char *d = agent_computer_describe(&act);
	assert_non_null(strstr(d, "clearing the field first"));
	free(d);
	agent_computer_action_finish(&act);
	cJSON_Delete(o);
	cJSON_Delete(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(desktop_set),
		cmocka_unit_test(legacy_set),
		cmocka_unit_test(scroll_unit),
		cmocka_unit_test(refusals),
		cmocka_unit_test(through_the_parser),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
