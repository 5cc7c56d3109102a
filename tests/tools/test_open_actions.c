/*
 * Open models' actions in deskhand's terms: Qwen's computer_use
 * (agent/tools/qwen_actions) and UI-TARS's text actions parsed strictly
 * (agent/tools/uitars) — every action, the point spellings, the escapes,
 * the ends of a task, and the refusals with their reasons; then a
 * translation through the strict parser with a smart-resize view, so
 * coordinates map back exactly. Also the model families by name
 * (agent/llm/family).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/llm/family.h"
#include "agent/tools/computer.h"
#include "agent/tools/qwen_actions.h"
#include "agent/tools/uitars.h"

static char *qwen(const char *args, const int *ptr, char *err, size_t errlen)
{
	cJSON *a = cJSON_Parse(args);
	assert_non_null(a);
	cJSON *o = agent_qwen_action_args(a, ptr, err, errlen);
	cJSON_Delete(a);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

static void q_expect(const char *args, const char *want)
{
	char err[256] = "";
	int ptr[2] = {7, 9};
	char *got = qwen(args, ptr, err, sizeof(err));
	if (got == NULL)
		fail_msg("%s refused: %s", args, err);
	assert_string_equal(got, want);
	free(got);
}

static void q_refuse(const char *args, const char *why)
{
	char err[256] = "";
	char *got = qwen(args, NULL, err, sizeof(err));
	if (got != NULL)
		fail_msg("%s accepted as %s", args, got);
	if (strstr(err, why) == NULL)
		fail_msg("%s: \"%s\" does not say \"%s\"", args, err, why);
}

static void u_expect(const char *action, const char *want)
{
	char err[256] = "";
	cJSON *o = agent_uitars_action_args(action, err, sizeof(err));
	if (o == NULL)
		fail_msg("%s refused: %s", action, err);
	char *got = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	assert_string_equal(got, want);
	free(got);
}

static void u_refuse(const char *action, const char *why)
{
	char err[256] = "";
	cJSON *o = agent_uitars_action_args(action, err, sizeof(err));
	if (o != NULL)
		fail_msg("%s accepted", action);
	if (strstr(err, why) == NULL)
		fail_msg("%s: \"%s\" does not say \"%s\"", action, err, why);
}

static void test_qwen_actions(void **state)
{
	(void)state;
	q_expect("{\"action\":\"left_click\",\"coordinate\":[10,20]}",
	         "{\"coordinate\":[10,20],\"action\":\"left_click\"}");
	q_expect("{\"action\":\"left_click\"}", "{\"action\":\"left_click\"}");
	q_expect("{\"action\":\"triple_click\",\"coordinate\":[1.0,2]}",
	         "{\"coordinate\":[1,2],\"action\":\"triple_click\"}");
	q_expect("{\"action\":\"mouse_move\",\"coordinate\":[3,4]}",
	         "{\"coordinate\":[3,4],\"action\":\"mouse_move\"}");
	q_expect("{\"action\":\"left_click_drag\",\"coordinate\":[30,40]}",
	         "{\"start_coordinate\":[7,9],\"coordinate\":[30,40],\"action\":\"left_click_drag\"}");
	q_expect("{\"action\":\"key\",\"keys\":[\"ctrl\",\"C\"]}",
	         "{\"action\":\"key\",\"text\":\"ctrl+c\"}");
	q_expect("{\"action\":\"type\",\"text\":\"hi\\n\"}", "{\"action\":\"type\",\"text\":\"hi\\n\"}");
	q_expect("{\"action\":\"scroll\",\"pixels\":-250}",
	         "{\"action\":\"scroll\",\"scroll_direction\":\"down\",\"scroll_amount\":3}");
	q_expect("{\"action\":\"hscroll\",\"pixels\":20,\"coordinate\":[5,5]}",
	         "{\"coordinate\":[5,5],\"action\":\"scroll\",\"scroll_direction\":\"right\","
	         "\"scroll_amount\":1}");
	q_expect("{\"action\":\"wait\",\"time\":1.5}", "{\"action\":\"wait\",\"duration\":1.5}");
	q_expect("{\"action\":\"wait\"}", "{\"action\":\"wait\",\"duration\":2}");
	q_refuse("{\"action\":\"fly\"}", "unknown computer_use action \"fly\"");
	q_refuse("{\"coordinate\":[1,2]}", "an \"action\"");
	q_refuse("{\"action\":\"mouse_move\"}", "needs \"coordinate\"");
	q_refuse("{\"action\":\"left_click\",\"coordinate\":[1.5,2]}", "two whole numbers");
	q_refuse("{\"action\":\"left_click_drag\",\"coordinate\":[1,2]}", "mouse_move to the start");
	q_refuse("{\"action\":\"scroll\",\"pixels\":0}", "not 0");
	q_refuse("{\"action\":\"key\",\"keys\":\"ctrl+c\"}", "list of 1 to 8");
	q_refuse("{\"action\":\"type\"}", "needs \"text\"");
	q_refuse("{\"action\":\"terminate\",\"status\":\"success\"}", "ends the task");
	char *text = NULL;
	cJSON *a = cJSON_Parse("{\"action\":\"answer\",\"text\":\"42\"}");
	assert_true(agent_qwen_final(a, &text));
	assert_string_equal(text, "42");
	free(text);
	cJSON_Delete(a);
	a = cJSON_Parse("{\"action\":\"terminate\",\"status\":\"failure\"}");
	assert_true(agent_qwen_final(a, &text));
	assert_string_equal(text, "the task failed");
	free(text);
	cJSON_Delete(a);
	a = cJSON_Parse("{\"action\":\"left_click\"}");
	assert_false(agent_qwen_final(a, &text));
	cJSON_Delete(a);
}

static void test_uitars_actions(void **state)
{
	(void)state;
	u_expect("click(start_box='(100,200)')", "{\"coordinate\":[100,200],\"action\":\"left_click\"}");
	u_expect("click(start_box='<|box_start|>(100,200)<|box_end|>')",
	         "{\"coordinate\":[100,200],\"action\":\"left_click\"}");
	u_expect("click(point='<point>100 200</point>')",
	         "{\"coordinate\":[100,200],\"action\":\"left_click\"}");
	u_expect("left_single(start_box='(10,20,30,41)')",
	         "{\"coordinate\":[20,30],\"action\":\"left_click\"}");
	u_expect("left_double(start_box='<bbox>10 20 30 40</bbox>')",
	         "{\"coordinate\":[20,30],\"action\":\"double_click\"}");
	u_expect("right_single(start_box=\"(1, 2)\")", "{\"coordinate\":[1,2],\"action\":\"right_click\"}");
	u_expect("hover(start_box='(5,6)')", "{\"coordinate\":[5,6],\"action\":\"mouse_move\"}");
	u_expect("drag(start_box='(1,2)', end_box='(3,4)')",
	         "{\"start_coordinate\":[1,2],\"coordinate\":[3,4],\"action\":\"left_click_drag\"}");
	u_expect("drag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')",
	         "{\"start_coordinate\":[1,2],\"coordinate\":[3,4],\"action\":\"left_click_drag\"}");
	u_expect("hotkey(key='ctrl c')", "{\"action\":\"key\",\"text\":\"ctrl+c\"}");
	u_expect("hotkey(key='arrowleft')", "{\"action\":\"key\",\"text\":\"Left\"}");
	u_expect("press(key='enter')", "{\"action\":\"key\",\"text\":\"enter\"}");
	u_expect("type(content='it\\'s \\\"q\\\"\\n')",
	         "{\"action\":\"type\",\"text\":\"it's \\\"q\\\"\\n\"}");
	u_expect("type(content='a\\\\b')", "{\"action\":\"type\",\"text\":\"a\\\\b\"}");
	u_expect("scroll(start_box='(7,8)', direction='down')",
	         "{\"coordinate\":[7,8],\"action\":\"scroll\",\"scroll_direction\":\"down\","
	         "\"scroll_amount\":5}");
	u_expect("scroll(direction='left')",
	         "{\"action\":\"scroll\",\"scroll_direction\":\"left\",\"scroll_amount\":5}");
	u_expect("wait()", "{\"action\":\"wait\",\"duration\":5}");
	u_refuse("clik(start_box='(1,2)')", "unknown action \"clik\"");
	u_refuse("click(start_box='(1,2)", "cannot read the action");
	u_refuse("click(start_box='(1,2)') and more", "text after the closing parenthesis");
	u_refuse("click(start_box='here')", "is not a point");
	u_refuse("click(start_box='(1,2,3)')", "is not a point");
	u_refuse("click(start_box='(0x10,2)')", "is not a point");
	u_refuse("click(start_box='(nan,2)')", "is not a point");
	u_refuse("click()", "needs start_box");
	u_refuse("scroll(direction='sideways')", "direction=");
	u_refuse("keydown(key='shift')", "not supported");
	u_refuse("type(content='')", "needs content");
	u_refuse("", "cannot read the action");
	u_refuse("finished(content='x')", "ends the task");
	char *text = NULL;
	assert_true(agent_uitars_final("finished(content='all \\'done\\'')", &text));
	assert_string_equal(text, "all 'done'");
	free(text);
	assert_true(agent_uitars_final("call_user()", &text));
	free(text);
	assert_false(agent_uitars_final("click(start_box='(1,2)')", &text));
	assert_false(agent_uitars_final("finished(", &text));
}

/* Through the strict parser: a smart-resize view of an odd screen. */
static void test_through_the_parser(void **state)
{
	(void)state;
	vision_view v = {0, 0, 1366, 771, 1344, 756, 0, 0};
	char err[256];
	cJSON *o = agent_uitars_action_args("click(start_box='(1343,755)')", err, sizeof(err));
	agent_computer_action a;
	assert_true(agent_computer_parse(o, &v, &a, err, sizeof(err)));
	assert_int_equal(a.sx, (2 * 1343 + 1) * 1366 / (2 * 1344));
	assert_int_equal(a.sy, (2 * 755 + 1) * 771 / (2 * 756));
	agent_computer_action_finish(&a);
	cJSON_Delete(o);
	o = agent_uitars_action_args("click(start_box='(1344,10)')", err, sizeof(err));
	assert_false(agent_computer_parse(o, &v, &a, err, sizeof(err)));
	assert_non_null(strstr(err, "outside"));
	cJSON_Delete(o);
	/* Qwen3-VL: the 0..999 grid. */
	vision_view rel = {0, 0, 1366, 771, 1280, 722, 1000, 1000};
	cJSON *args = cJSON_Parse("{\"action\":\"left_click\",\"coordinate\":[999,0]}");
	o = agent_qwen_action_args(args, NULL, err, sizeof(err));
	assert_true(agent_computer_parse(o, &rel, &a, err, sizeof(err)));
	assert_int_equal(a.sx, (2 * 999 + 1) * 1366 / 2000);
	assert_int_equal(a.sy, 771 / 2000);
	agent_computer_action_finish(&a);
	cJSON_Delete(o);
	cJSON_Delete(args);
}

static void test_families(void **state)
{
	(void)state;
	assert_int_equal(model_family_of("Qwen/Qwen2.5-VL-7B-Instruct"), MODEL_FAMILY_QWEN25_VL);
	assert_int_equal(model_family_of("qwen2.5vl:7b"), MODEL_FAMILY_QWEN25_VL);
	assert_int_equal(model_family_of("qwen3-vl-235b-a22b"), MODEL_FAMILY_QWEN3_VL);
	assert_int_equal(model_family_of("qwen3vl:8b"), MODEL_FAMILY_QWEN3_VL);
	assert_int_equal(model_family_of("ByteDance-Seed/UI-TARS-1.5-7B"), MODEL_FAMILY_UITARS);
	assert_int_equal(model_family_of("0000/ui-tars-1.5-7b"), MODEL_FAMILY_UITARS);
	assert_int_equal(model_family_of("qwen3-coder"), MODEL_FAMILY_QWEN);
	assert_int_equal(model_family_of("llama3.2-vision"), MODEL_FAMILY_OTHER);
	assert_int_equal(model_family_of("gpt-5.4"), MODEL_FAMILY_OTHER);
	assert_int_equal(model_family_of(NULL), MODEL_FAMILY_OTHER);
	assert_true(model_family_qwen(MODEL_FAMILY_QWEN3_VL));
	assert_false(model_family_qwen(MODEL_FAMILY_UITARS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qwen_actions),
		cmocka_unit_test(test_uitars_actions),
		cmocka_unit_test(test_through_the_parser),
		cmocka_unit_test(test_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
