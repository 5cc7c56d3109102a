/* agent/tools/gemini_actions — Gemini's computer-use functions as deskhand's (see the header). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/actions.h"
#include "agent/tools/gemini_actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/tools-internal.h"
#include "base/base.h"

/* Deletes o; err already says why. */
static cJSON *drop(cJSON *o)
{
	cJSON_Delete(o);
	return NULL;
}

/* A whole-number field; absent or not whole: false. */
static bool get_int(const cJSON *a, const char *key, long *out)
{
	return agent_action_int(cJSON_GetObjectItemCaseSensitive(a, key), -1000000, 1000000, out);
}

static bool has(const cJSON *a, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
	return v != NULL && !cJSON_IsNull(v);
}

/* o[key] = [a[kx], a[ky]]; false (err set) when either is missing or not whole. */
static bool add_point(cJSON *o, const char *key, const cJSON *a, const char *kx, const char *ky,
                      const char *fn, char *err, size_t errlen)
{
	long x, y;
	if (!get_int(a, kx, &x) || !get_int(a, ky, &y)) {
		agent_action_drop(err, errlen, NULL, "%s needs \"%s\" and \"%s\" as whole numbers from 0 to 999",
		     fn, kx, ky);
		return false;
	}
	int xy[2] = {(int)x, (int)y};
	cJSON_AddItemToObject(o, key, cJSON_CreateIntArray(xy, 2));
	return true;
}

/* A boolean field with a default; false (err set) when it is something else. */
static bool get_bool(const cJSON *a, const char *key, bool def, bool *out, const char *fn,
                     char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
	if (v == NULL || cJSON_IsNull(v)) {
		*out = def;
		return true;
	}
	if (!cJSON_IsBool(v)) {
		agent_action_drop(err, errlen, NULL, "%s: \"%s\" must be true or false", fn, key);
		return false;
	}
	*out = cJSON_IsTrue(v);
	return true;
}

/* One Gemini key name as deskhand's; NULL (err set) when it cannot be one key. */
static bool key_name(const char *key, char *buf, size_t size, char *err, size_t errlen)
{
	bool plus = key != NULL && strcmp(key, "+") == 0;
	if (key == NULL || key[0] == '\0' || strlen(key) > 40 ||
	    (!plus && strpbrk(key, " \t\n+") != NULL)) {
		agent_action_drop(err, errlen, NULL, "a key must be one key name such as \"Control\" or \"Enter\"");
		return false;
	}
	agent_openai_key_name(plus ? "plus" : key, buf, size);
	return true;
}

/* Key names joined as one combination; names come from a list or a "+" string. */
static char *combo_of(const char **keys, int n, char *err, size_t errlen)
{
	if (n < 1 || n > 8) {
		agent_action_drop(err, errlen, NULL, "a key combination holds 1 to 8 keys");
		return NULL;
	}
	size_t cap = (size_t)n * 64 + 1, len = 0;
	char *out = calloc(1, cap);
	for (int i = 0; out != NULL && i < n; i++) {
		char name[64];
		if (!key_name(keys[i], name, sizeof(name), err, errlen)) {
			free(out);
			return NULL;
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "+" : "", name);
	}
	if (out == NULL)
		agent_action_drop(err, errlen, NULL, "out of memory");
	return out;
}

/* hotkey{keys: [...]}. */
static char *combo_list(const cJSON *keys, const char *fn, char *err, size_t errlen)
{
	const char *names[8];
	int n = cJSON_GetArraySize(keys);
	if (!cJSON_IsArray(keys) || n < 1 || n > 8) {
		agent_action_drop(err, errlen, NULL, "%s needs \"keys\": a list of 1 to 8 key names", fn);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		names[i] = cJSON_GetStringValue(cJSON_GetArrayItem(keys, i));
	return combo_of(names, n, err, errlen);
}

/* key_combination{keys: "Control+Shift+T"}: "+" separates, a trailing "+" is the key. */
static char *combo_string(const char *keys, const char *fn, char *err, size_t errlen)
{
	if (keys == NULL || keys[0] == '\0' || strlen(keys) > 200) {
		agent_action_drop(err, errlen, NULL, "%s needs \"keys\" such as \"Control+A\"", fn);
		return NULL;
	}
	char copy[201], *names[8];
	snprintf(copy, sizeof(copy), "%s", keys);
	int n = 0;
	char *p = copy;
	while (*p != '\0' && n < 8) {
		char *plus = strchr(p[0] == '+' ? p + 1 : p, '+');
		names[n++] = p;
		if (plus == NULL)
			break;
		*plus = '\0';
		p = plus + 1;
	}
	if (*p != '\0' && n == 8 && strchr(p, '+') != NULL) {
		agent_action_drop(err, errlen, NULL, "%s: at most 8 keys in one combination", fn);
		return NULL;
	}
	return combo_of((const char **)names, n, err, errlen);
}

static cJSON *pointed(cJSON *o, const cJSON *a, const char *fn, const char *action, char *err,
                      size_t errlen)
{
	if (!add_point(o, "coordinate", a, "x", "y", fn, err, errlen))
		return agent_action_drop(err, errlen, o, "%s needs \"x\" and \"y\" as whole numbers from 0 to 999",
		            fn);
	cJSON_AddStringToObject(o, "action", action);
	return o;
}

/* mouse_down / mouse_up: the point is optional (where the pointer is). */
static cJSON *button(cJSON *o, const cJSON *a, const char *fn, const char *action, char *err,
                     size_t errlen)
{
	if ((has(a, "x") || has(a, "y")) && !add_point(o, "coordinate", a, "x", "y", fn, err, errlen))
		return agent_action_drop(err, errlen, o, "%s: \"x\" and \"y\" must both be whole numbers", fn);
	cJSON_AddStringToObject(o, "action", action);
	return o;
}

/* type and type_text_at. */
static cJSON *type(cJSON *o, const cJSON *a, const char *fn, bool legacy, char *err,
                   size_t errlen)
{
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "text"));
	bool enter, clear;
	if (text == NULL)
		return agent_action_drop(err, errlen, o, "%s needs \"text\"", fn);
	/* Google's defaults: type_text_at clears and presses Enter, type does neither. */
	if (!get_bool(a, "press_enter", legacy, &enter, fn, err, errlen) ||
	    !get_bool(a, "clear_before_typing", legacy, &clear, fn, err, errlen))
		return drop(o);
	if ((legacy || has(a, "x") || has(a, "y")) &&
	    !add_point(o, "coordinate", a, "x", "y", fn, err, errlen))
		return drop(o);
	if (text[0] == '\0' && !enter)
		return agent_action_drop(err, errlen, o, "%s needs a non-empty \"text\"", fn);
	size_t n = strlen(text);
	char *t = malloc(n + 2);
	if (t == NULL)
		return agent_action_drop(err, errlen, o, "out of memory");
	memcpy(t, text, n);
	/* A newline types Return: the human sees it as part of what is typed. */
	if (enter)
		t[n++] = '\n';
	t[n] = '\0';
	cJSON_AddStringToObject(o, "action", "type");
	cJSON_AddStringToObject(o, "text", t);
	if (clear)
		cJSON_AddBoolToObject(o, "clear", 1);
	free(t);
	return o;
}

static cJSON *drag(cJSON *o, const cJSON *a, const char *fn, char *err, size_t errlen)
{
	/* The docs name the ends start_x..end_y; Google's own agent reads x..destination_y. */
	bool docs = has(a, "start_x") || has(a, "start_y") || has(a, "end_x") || has(a, "end_y");
	bool agent = has(a, "destination_x") || has(a, "destination_y");
	if (docs && agent)
		return agent_action_drop(err, errlen, o, "%s: give start_x, start_y, end_x, end_y or x, y, "
		            "destination_x, destination_y, not both", fn);
	bool ok = docs ? add_point(o, "start_coordinate", a, "start_x", "start_y", fn, err, errlen) &&
	                 add_point(o, "coordinate", a, "end_x", "end_y", fn, err, errlen)
	               : add_point(o, "start_coordinate", a, "x", "y", fn, err, errlen) &&
	                 add_point(o, "coordinate", a, "destination_x", "destination_y", fn, err,
	                           errlen);
	if (!ok)
		return agent_action_drop(err, errlen, o, "%s needs start_x, start_y, end_x, end_y (or x, y, "
		            "destination_x, destination_y) as whole numbers from 0 to 999", fn);
	cJSON_AddStringToObject(o, "action", "left_click_drag");
	return o;
}

/* Grid units along the axis -> screen pixels -> wheel clicks (see the header). */
static long wheel_clicks(long magnitude, int extent)
{
	double px = (double)magnitude * (extent > 0 ? extent : 1000) / 1000.0;
	return agent_action_wheel_clicks(px);
}

static cJSON *scroll(cJSON *o, const cJSON *a, const char *fn, long def, bool centre,
                     const vision_view *view, char *err, size_t errlen)
{
	os_scroll d;
	if (!os_scroll_parse(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "direction")),
	                     &d)) {
		char dirs[40];
		base_names_join(BASE_NAMES(os_scroll_names), ", ", " or ", dirs, sizeof(dirs));
		return agent_action_drop(err, errlen, o, "%s needs \"direction\": %s", fn, dirs);
	}
	long mag = def;
	const char *key = has(a, "magnitude_in_pixels") ? "magnitude_in_pixels" : "magnitude";
	if (has(a, key) && (!get_int(a, key, &mag) || mag < 0 || mag > 999))
		return agent_action_drop(err, errlen, o, "%s: \"%s\" must be a whole number from 0 to 999", fn, key);
	if (centre) {
		int xy[2] = {500, 500};
		cJSON_AddItemToObject(o, "coordinate", cJSON_CreateIntArray(xy, 2));
	} else if (!add_point(o, "coordinate", a, "x", "y", fn, err, errlen)) {
		return drop(o);
	}
	bool vertical = d == OS_SCROLL_UP || d == OS_SCROLL_DOWN;
	int extent = view == NULL ? 1000 : vertical ? view->screen_h : view->screen_w;
	cJSON_AddStringToObject(o, "action", "scroll");
	cJSON_AddStringToObject(o, "scroll_direction", os_scroll_name(d));
	cJSON_AddNumberToObject(o, "scroll_amount", (double)wheel_clicks(mag, extent));
	return o;
}

static cJSON *keys(cJSON *o, const cJSON *a, const char *fn, const char *action, char *err,
                   size_t errlen)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(a, strcmp(fn, "hotkey") == 0 ||
	                                                  strcmp(fn, "key_combination") == 0
	                                                  ? "keys" : "key");
	char *c = NULL;
	if (strcmp(fn, "hotkey") == 0)
		c = combo_list(k, fn, err, errlen);
	else if (strcmp(fn, "key_combination") == 0)
		c = combo_string(cJSON_GetStringValue(k), fn, err, errlen);
	else if (cJSON_GetStringValue(k) == NULL)
		agent_action_drop(err, errlen, NULL, "%s needs \"key\": one key name such as \"Enter\"", fn);
	else
		c = combo_of((const char *[]){cJSON_GetStringValue(k)}, 1, err, errlen);
	if (c == NULL)
		return drop(o);
	cJSON_AddStringToObject(o, "action", action);
	cJSON_AddStringToObject(o, "text", c);
	free(c);
	return o;
}

static cJSON *wait(cJSON *o, const cJSON *a, const char *fn, long def, char *err, size_t errlen)
{
	long s = def;
	if (has(a, "seconds") && (!get_int(a, "seconds", &s) || s < 0 || s > 300))
		return agent_action_drop(err, errlen, o, "%s: \"seconds\" must be a whole number from 0 to 300", fn);
	cJSON_AddStringToObject(o, "action", "wait");
	cJSON_AddNumberToObject(o, "duration", (double)s);
	return o;
}

static const char *const browser_only[] = {
	"navigate", "go_back", "go_forward", "search", "open_web_browser",
};

/* Functions that map to one deskhand action at a point. */
static const struct {
	const char *gemini, *deskhand;
} pointed_fns[] = {
	{"click", "left_click"},          {"click_at", "left_click"},
	{"double_click", "double_click"}, {"triple_click", "triple_click"},
	{"middle_click", "middle_click"}, {"right_click", "right_click"},
	{"move", "mouse_move"},           {"hover_at", "mouse_move"},
};

static cJSON *translate(cJSON *o, const char *fn, const cJSON *a, const vision_view *view,
                        char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(pointed_fns) / sizeof(pointed_fns[0]); i++)
		if (strcmp(fn, pointed_fns[i].gemini) == 0)
			return pointed(o, a, fn, pointed_fns[i].deskhand, err, errlen);
	if (!strcmp(fn, "mouse_down") || !strcmp(fn, "mouse_up"))
		return button(o, a, fn, fn[6] == 'd' ? "left_mouse_down" : "left_mouse_up", err,
		              errlen);
	if (!strcmp(fn, "type") || !strcmp(fn, "type_text_at"))
		return type(o, a, fn, fn[4] == '_', err, errlen);
	if (!strcmp(fn, "drag_and_drop"))
		return drag(o, a, fn, err, errlen);
	if (!strcmp(fn, "scroll"))
		return scroll(o, a, fn, AGENT_GEMINI_SCROLL_DEFAULT, false, view, err, errlen);
	if (!strcmp(fn, "scroll_at"))
		return scroll(o, a, fn, AGENT_GEMINI_SCROLL_AT_DEFAULT, false, view, err, errlen);
	if (!strcmp(fn, "scroll_document"))
		return scroll(o, a, fn, 999, true, view, err, errlen);
	if (!strcmp(fn, "press_key") || !strcmp(fn, "hotkey") || !strcmp(fn, "key_combination"))
		return keys(o, a, fn, "key", err, errlen);
	if (!strcmp(fn, "key_down") || !strcmp(fn, "key_up"))
		return keys(o, a, fn, fn, err, errlen);
	if (!strcmp(fn, "take_screenshot")) {
		cJSON_AddStringToObject(o, "action", "screenshot");
		return o;
	}
	if (!strcmp(fn, "wait") || !strcmp(fn, "wait_5_seconds"))
		return wait(o, a, fn, fn[4] == '_' ? 5 : 1, err, errlen);
	for (size_t i = 0; i < sizeof(browser_only) / sizeof(browser_only[0]); i++)
		if (strcmp(fn, browser_only[i]) == 0)
			return agent_action_drop(err, errlen, o, "%s is a browser-only function: deskhand drives the "
			            "whole desktop (ENVIRONMENT_DESKTOP), not a browser it controls; open "
			            "the browser and use click, type and hotkey instead", fn);
	return agent_action_drop(err, errlen, o, "unknown computer-use function \"%.40s\" (click, double_click, "
	            "triple_click, middle_click, right_click, mouse_down, mouse_up, move, type, "
	            "drag_and_drop, scroll, press_key, key_down, key_up, hotkey, take_screenshot, "
	            "wait, and Gemini 2.5's click_at, hover_at, type_text_at, key_combination, "
	            "scroll_at, scroll_document, wait_5_seconds)", fn);
}

cJSON *agent_gemini_action_args(const char *name, const cJSON *args, const vision_view *view,
                                char *err, size_t errlen)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return agent_action_drop(err, errlen, NULL, "out of memory");
	if (name == NULL || !cJSON_IsObject(args))
		return agent_action_drop(err, errlen, o, "a Gemini computer-use call needs a name and args object");
	return translate(o, name, args, view, err, errlen);
}

/* ---- the dialect ---------------------------------------------------------- */

/* One predefined function call, on the view's 0..999 grid. */
static void propose_gemini(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	char err[512] = "";
	agent_tools_parse_translated(t, agent_gemini_action_args(call->name, call->args,
	                                                         agent_tools_view(t), err,
	                                                         sizeof(err)), err, p);
}

const agent_dialect agent_dialect_gemini = {
	.name = "gemini",
	.propose = propose_gemini,
	.screenshot_each_action = true,
	/* Its safety_decision, as the provider put it on the call. */
	.checks_name = "Google's safety decision",
	.checks_declined = "This call did not run",
};
