/* agent/tools/qwen_actions — Qwen's computer_use actions as deskhand's (see the header). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/qwen_actions.h"
#include "agent/tools/tools-internal.h"

static const char *action_of(const cJSON *args)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "action"));
}

/* "coordinate": [x, y], two whole numbers (Qwen's models write 12.0 now and then). */
static bool get_point(const cJSON *args, int xy[2])
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "coordinate");
	if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2)
		return false;
	for (int k = 0; k < 2; k++) {
		long v;
		if (!agent_action_int(cJSON_GetArrayItem(c, k), -1000000, 1000000, &v))
			return false;
		xy[k] = (int)v;
	}
	return true;
}

static bool has(const cJSON *args, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(args, key) != NULL;
}

/* Clicks and mouse_move: the point when given (required for mouse_move). */
static cJSON *pointed(cJSON *o, const cJSON *args, const char *action, bool need, char *err,
                      size_t errlen)
{
	int xy[2];
	bool given = has(args, "coordinate");
	if ((given || need) && !get_point(args, xy))
		return agent_action_drop(err, errlen, o, "%s needs \"coordinate\": [x, y], two whole numbers",
		            action);
	if (given)
		cJSON_AddItemToObject(o, "coordinate", cJSON_CreateIntArray(xy, 2));
	cJSON_AddStringToObject(o, "action", action);
	return o;
}

static cJSON *drag(cJSON *o, const cJSON *args, const int *pointer, char *err, size_t errlen)
{
	int xy[2];
	if (!get_point(args, xy))
		return agent_action_drop(err, errlen, o, "left_click_drag needs \"coordinate\": [x, y], where the "
		            "drag ends");
	if (pointer == NULL)
		return agent_action_drop(err, errlen, o, "left_click_drag starts where the pointer is, and the "
		            "pointer is not on the screen you see: mouse_move to the start first");
	cJSON_AddItemToObject(o, "start_coordinate", cJSON_CreateIntArray(pointer, 2));
	cJSON_AddItemToObject(o, "coordinate", cJSON_CreateIntArray(xy, 2));
	cJSON_AddStringToObject(o, "action", "left_click_drag");
	return o;
}

/* scroll (vertical, positive up) and hscroll (horizontal, positive right). */
static cJSON *scroll(cJSON *o, const cJSON *args, bool horizontal, char *err, size_t errlen)
{
	const char *name = horizontal ? "hscroll" : "scroll";
	long px;
	if (!agent_action_int(cJSON_GetObjectItemCaseSensitive(args, "pixels"), -1000000, 1000000,
	                      &px) || px == 0)
		return agent_action_drop(err, errlen, o, "%s needs \"pixels\": a whole number, not 0 (positive "
		            "scrolls %s)", name,
		            os_scroll_name(horizontal ? OS_SCROLL_RIGHT : OS_SCROLL_UP));
	if (has(args, "coordinate") && !pointed(o, args, "scroll", true, err, errlen))
		return NULL;
	if (!has(args, "coordinate"))
		cJSON_AddStringToObject(o, "action", "scroll");
	os_scroll dir = horizontal ? (px > 0 ? OS_SCROLL_RIGHT : OS_SCROLL_LEFT)
	                           : (px > 0 ? OS_SCROLL_UP : OS_SCROLL_DOWN);
	cJSON_AddStringToObject(o, "scroll_direction", os_scroll_name(dir));
	cJSON_AddNumberToObject(o, "scroll_amount", (double)agent_action_wheel_clicks((double)px));
	return o;
}

static cJSON *keys(cJSON *o, const cJSON *args, char *err, size_t errlen)
{
	char why[200];
	char *c = agent_openai_key_combo(cJSON_GetObjectItemCaseSensitive(args, "keys"), true, why,
	                                 sizeof(why));
	if (c == NULL)
		return agent_action_drop(err, errlen, o, "key %s", why);
	cJSON_AddStringToObject(o, "action", "key");
	cJSON_AddStringToObject(o, "text", c);
	free(c);
	return o;
}

static cJSON *wait(cJSON *o, const cJSON *args, char *err, size_t errlen)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "time");
	if (t != NULL && (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0))
		return agent_action_drop(err, errlen, o, "wait: \"time\" must be a number of seconds");
	cJSON_AddStringToObject(o, "action", "wait");
	cJSON_AddNumberToObject(o, "duration", t != NULL ? t->valuedouble : AGENT_QWEN_WAIT_S);
	return o;
}

static const char *const clicks[] = {
	"left_click", "right_click", "middle_click", "double_click", "triple_click",
};

cJSON *agent_qwen_action_args(const cJSON *args, const int *pointer, char *err, size_t errlen)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return agent_action_drop(err, errlen, NULL, "out of memory");
	const char *action = action_of(args);
	if (!cJSON_IsObject(args) || action == NULL)
		return agent_action_drop(err, errlen, o, "computer_use takes an object with an \"action\"");
	for (size_t i = 0; i < sizeof(clicks) / sizeof(clicks[0]); i++)
		if (strcmp(action, clicks[i]) == 0)
			return pointed(o, args, action, false, err, errlen);
	if (strcmp(action, "mouse_move") == 0)
		return pointed(o, args, action, true, err, errlen);
	if (strcmp(action, "left_click_drag") == 0)
		return drag(o, args, pointer, err, errlen);
	if (strcmp(action, "scroll") == 0 || strcmp(action, "hscroll") == 0)
		return scroll(o, args, action[0] == 'h', err, errlen);
	if (strcmp(action, "key") == 0)
		return keys(o, args, err, errlen);
	if (strcmp(action, "wait") == 0)
		return wait(o, args, err, errlen);
	if (strcmp(action, "type") == 0) {
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
		if (text == NULL || text[0] == '\0')
			return agent_action_drop(err, errlen, o, "type needs \"text\": the text to type");
		cJSON_AddStringToObject(o, "action", "type");
		cJSON_AddStringToObject(o, "text", text);
		return o;
	}
	if (strcmp(action, "terminate") == 0 || strcmp(action, "answer") == 0)
		return agent_action_drop(err, errlen, o, "%s ends the task; it is not a desktop action", action);
	return agent_action_drop(err, errlen, o, "unknown computer_use action \"%.40s\" (key, type, mouse_move, "
	            "left_click, left_click_drag, right_click, middle_click, double_click, "
	            "triple_click, scroll, hscroll, wait, terminate, answer)", action);
}

bool agent_qwen_final(const cJSON *args, char **text)
{
	const char *action = action_of(args);
	if (action == NULL)
		return false;
	if (strcmp(action, "answer") == 0) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
		*text = strdup(t != NULL ? t : "");
		return true;
	}
	if (strcmp(action, "terminate") == 0) {
		const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "status"));
		*text = strdup(s != NULL && strcmp(s, "failure") == 0 ? "the task failed"
		               : "the task is done");
		return true;
	}
	return false;
}

/* ---- the dialect ---------------------------------------------------------- */

/* One computer_use call; its drag starts where the pointer is. */
static void propose_qwen(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	char err[512] = "";
	int ptr[2];
	bool at = agent_tools_pointer_in_view(t, ptr);
	agent_tools_parse_translated(t, agent_qwen_action_args(call->args, at ? ptr : NULL, err,
	                                                       sizeof(err)), err, p);
}

static bool qwen_final(const agent_tool_call *call, char **text)
{
	return agent_qwen_final(call->args, text);
}

const agent_dialect agent_dialect_qwen = {
	.name = "qwen",
	.propose = propose_qwen,
	.final = qwen_final,
	/* Its actions have no screenshot action: each batch is answered with one. */
	.results_carry_screenshot = true,
};
