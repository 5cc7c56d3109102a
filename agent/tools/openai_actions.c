/* agent/tools/openai_actions — OpenAI's computer actions as deskhand's (see the header). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/tools/actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/tools-internal.h"

/* OpenAI's names that deskhand's key aliases do not already read. */
static const struct {
	const char *openai, *deskhand;
} key_names[] = {
	{"arrowleft", "Left"},   {"arrowright", "Right"}, {"arrowup", "Up"},
	{"arrowdown", "Down"},   {"option", "alt"},       {"command", "super"},
	{"pageup", "Prior"},     {"pagedown", "Next"},    {"/", "slash"},
	{"\\", "backslash"},     {" ", "space"},
};

const char *agent_openai_key_name(const char *key, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (strcasecmp(key, key_names[i].openai) == 0) {
			snprintf(buf, size, "%s", key_names[i].deskhand);
			return buf;
		}
	/* "C" in ["CTRL", "C"] is the key, not a capital: no Shift. */
	if (key[0] >= 'A' && key[0] <= 'Z' && key[1] == '\0') {
		snprintf(buf, size, "%c", key[0] - 'A' + 'a');
		return buf;
	}
	snprintf(buf, size, "%s", key);
	return buf;
}

char *agent_openai_key_combo(const cJSON *keys, bool required, char *err, size_t errlen)
{
	if (keys == NULL || cJSON_IsNull(keys)) {
		if (required)
			agent_action_drop(err, errlen, NULL, "needs \"keys\": a list of key names");
		return required ? NULL : strdup("");
	}
	int n = cJSON_GetArraySize(keys);
	if (!cJSON_IsArray(keys) || (required && n == 0) || n > 8) {
		agent_action_drop(err, errlen, NULL, "\"keys\" must be a list of 1 to 8 key names");
		return NULL;
	}
	size_t cap = (size_t)n * 64 + 1, len = 0;
	char *out = calloc(1, cap);
	if (out == NULL)
		return NULL;
	const cJSON *k;
	cJSON_ArrayForEach(k, keys) {
		char name[64];
		const char *key = cJSON_GetStringValue(k);
		/* One key per entry: a "+" inside one would split in the key parser. */
		bool plus = key != NULL && strcmp(key, "+") == 0;
		if (key == NULL || key[0] == '\0' || strlen(key) > 40 ||
		    (!plus && strpbrk(key, " \t\n+") != NULL)) {
			free(out);
			agent_action_drop(err, errlen, NULL, "\"keys\" entries must be key names such as \"CTRL\"");
			return NULL;
		}
		agent_openai_key_name(plus ? "plus" : key, name, sizeof(name));
		len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "+" : "", name);
	}
	return out;
}

/* A whole number field of the action. */
static bool get_int(const cJSON *a, const char *key, long *out)
{
	return agent_action_int(cJSON_GetObjectItemCaseSensitive(a, key), -1000000, 1000000, out);
}

static bool add_point(cJSON *o, const char *key, const cJSON *a, char *err, size_t errlen)
{
	long x, y;
	if (!get_int(a, "x", &x) || !get_int(a, "y", &y)) {
		agent_action_drop(err, errlen, NULL, "needs \"x\" and \"y\" as whole numbers");
		return false;
	}
	int xy[2] = {(int)x, (int)y};
	cJSON_AddItemToObject(o, key, cJSON_CreateIntArray(xy, 2));
	return true;
}

/* Modifiers held during a mouse action: deskhand's "text" of a click. */
static bool add_held(cJSON *o, const cJSON *a, char *err, size_t errlen)
{
	char *c = agent_openai_key_combo(cJSON_GetObjectItemCaseSensitive(a, "keys"), false, err, errlen);
	if (c == NULL)
		return false;
	if (c[0] != '\0')
		cJSON_AddStringToObject(o, "text", c);
	free(c);
	return true;
}

/* Adds the held keys; on failure deletes o (err says why). */
static cJSON *held_or_drop(cJSON *o, const cJSON *a, char *err, size_t errlen)
{
	if (add_held(o, a, err, errlen))
		return o;
	cJSON_Delete(o);
	return NULL;
}

static const char *click_action(const char *button)
{
	static const char *const map[][2] = {
		{"left", "left_click"},   {"right", "right_click"},     {"wheel", "middle_click"},
		{"back", "back_click"},   {"forward", "forward_click"},
	};
	for (size_t i = 0; button != NULL && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(button, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

static cJSON *drag(cJSON *o, const cJSON *a, char *err, size_t errlen)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(a, "path");
	if (!cJSON_IsArray(path) || cJSON_GetArraySize(path) < 2)
		return agent_action_drop(err, errlen, o, "drag needs \"path\": at least two points {\"x\", \"y\"}");
	cJSON *pts = cJSON_AddArrayToObject(o, "path");
	const cJSON *pt;
	cJSON_ArrayForEach(pt, path) {
		long x, y;
		if (!get_int(pt, "x", &x) || !get_int(pt, "y", &y))
			return agent_action_drop(err, errlen, o, "drag: every path point needs whole \"x\" and \"y\"");
		int xy[2] = {(int)x, (int)y};
		cJSON_AddItemToArray(pts, cJSON_CreateIntArray(xy, 2));
	}
	cJSON_AddStringToObject(o, "action", "left_click_drag");
	return held_or_drop(o, a, err, errlen);
}

static cJSON *scroll(cJSON *o, const cJSON *a, char *err, size_t errlen)
{
	long sx = 0, sy = 0;
	const cJSON *fx = cJSON_GetObjectItemCaseSensitive(a, "scroll_x");
	const cJSON *fy = cJSON_GetObjectItemCaseSensitive(a, "scroll_y");
	if ((fx && !get_int(a, "scroll_x", &sx)) || (fy && !get_int(a, "scroll_y", &sy)))
		return agent_action_drop(err, errlen, o, "scroll: scroll_x and scroll_y must be whole numbers");
	if (sx != 0 && sy != 0)
		return agent_action_drop(err, errlen, o, "scroll one axis per action: scroll_x or scroll_y, "
		            "the other 0");
	if (sx == 0 && sy == 0)
		return agent_action_drop(err, errlen, o, "scroll needs a non-zero scroll_x or scroll_y (pixels)");
	if (!add_point(o, "coordinate", a, err, errlen))
		return agent_action_drop(err, errlen, o, "scroll needs \"x\" and \"y\" as whole numbers");
	os_scroll dir = sy > 0 ? OS_SCROLL_DOWN : sy < 0 ? OS_SCROLL_UP
	                : sx > 0 ? OS_SCROLL_RIGHT : OS_SCROLL_LEFT;
	cJSON_AddStringToObject(o, "action", "scroll");
	cJSON_AddStringToObject(o, "scroll_direction", os_scroll_name(dir));
	cJSON_AddNumberToObject(o, "scroll_amount", (double)agent_action_wheel_clicks((double)(sy ? sy : sx)));
	return held_or_drop(o, a, err, errlen);
}

/* click, double_click and move: a point and held keys. */
static cJSON *pointed(cJSON *o, const cJSON *a, const char *action, char *err, size_t errlen)
{
	if (!add_point(o, "coordinate", a, err, errlen))
		return agent_action_drop(err, errlen, o, "%s needs \"x\" and \"y\" as whole numbers", action);
	cJSON_AddStringToObject(o, "action", action);
	return held_or_drop(o, a, err, errlen);
}

static cJSON *keypress(cJSON *o, const cJSON *a, char *err, size_t errlen)
{
	char *c = agent_openai_key_combo(cJSON_GetObjectItemCaseSensitive(a, "keys"), true, err, errlen);
	if (c == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(o, "action", "key");
	cJSON_AddStringToObject(o, "text", c);
	free(c);
	return o;
}

cJSON *agent_openai_action_args(const cJSON *a, char *err, size_t errlen)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, "type");
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return agent_action_drop(err, errlen, NULL, "out of memory");
	if (!cJSON_IsObject(a) || !cJSON_IsString(t))
		return agent_action_drop(err, errlen, o, "an OpenAI computer action is an object with a \"type\"");
	const char *type = t->valuestring;
	if (strcmp(type, "click") == 0) {
		const char *button = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "button"));
		const char *action = click_action(button ? button : "left");
		if (action == NULL)
			return agent_action_drop(err, errlen, o, "click: button must be left, right, wheel, back or "
			            "forward");
		return pointed(o, a, action, err, errlen);
	}
	if (strcmp(type, "double_click") == 0)
		return pointed(o, a, "double_click", err, errlen);
	if (strcmp(type, "move") == 0)
		return pointed(o, a, "mouse_move", err, errlen);
	if (strcmp(type, "drag") == 0)
		return drag(o, a, err, errlen);
	if (strcmp(type, "scroll") == 0)
		return scroll(o, a, err, errlen);
	if (strcmp(type, "keypress") == 0)
		return keypress(o, a, err, errlen);
	if (strcmp(type, "type") == 0) {
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "text"));
		if (text == NULL)
			return agent_action_drop(err, errlen, o, "type needs \"text\"");
		cJSON_AddStringToObject(o, "action", "type");
		cJSON_AddStringToObject(o, "text", text);
		return o;
	}
	if (strcmp(type, "screenshot") == 0 || strcmp(type, "wait") == 0) {
		cJSON_AddStringToObject(o, "action", type);
		if (strcmp(type, "wait") == 0)
			cJSON_AddNumberToObject(o, "duration", AGENT_OPENAI_WAIT_S);
		return o;
	}
	return agent_action_drop(err, errlen, o, "unknown OpenAI computer action \"%.40s\" (click, double_click, "
	            "drag, keypress, move, scroll, type, screenshot, wait)", type);
}

/* ---- the dialect ---------------------------------------------------------- */

/* One action of a computer_call: the call holds it as its arguments. */
static void propose_openai(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	char err[512] = "";
	agent_tools_parse_translated(t, agent_openai_action_args(call->args, err, sizeof(err)),
	                             err, p);
}

const agent_dialect agent_dialect_openai = {
	.name = "openai",
	.propose = propose_openai,
	/* A computer_call is answered with a screenshot, whatever happened. */
	.results_carry_screenshot = true,
	.checks_name = "OpenAI's safety check",
	.checks_declined = "None of this computer_call's actions ran",
};
