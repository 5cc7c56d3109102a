/* agent/tools/mcp_actions — the tools of an MCP host, as deskhand's (see the header). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/actions.h"
#include "agent/tools/mcp_actions.h"
#include "agent/tools/tools-internal.h"

#define INT_PROP(desc) "{\"type\":\"integer\",\"description\":\"" desc "\"}"
#define XY_PROPS "\"x\":" INT_PROP("pixels from the left of the last screenshot") \
	",\"y\":" INT_PROP("pixels from the top of the last screenshot")
#define MODS_PROP "\"modifiers\":{\"type\":\"string\",\"description\":" \
	"\"keys held meanwhile, xdotool names joined by + (ctrl+shift)\"}"
#define OBJECT(props, req) "{\"type\":\"object\",\"properties\":{" props "}," req \
	"\"additionalProperties\":false}"
#define NONE OBJECT("", "")

static const char screen_out[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"width\":{\"type\":\"integer\",\"description\":\"the image's width: x runs 0..width-1\"},"
	"\"height\":{\"type\":\"integer\"},"
	"\"scale\":{\"type\":\"number\",\"description\":\"screen pixels per image pixel\"},"
	"\"screen\":{\"type\":\"object\",\"description\":\"the monitor shown, in screen pixels\","
	"\"properties\":{\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},"
	"\"width\":{\"type\":\"integer\"},\"height\":{\"type\":\"integer\"}},"
	"\"required\":[\"x\",\"y\",\"width\",\"height\"]}},"
	"\"required\":[\"width\",\"height\",\"scale\",\"screen\"]}";

const agent_mcp_tool agent_mcp_tools[] = {
	{"screenshot", "Screenshot",
	 "The screen (its monitor) as PNG, scaled to fit deskhand's --screen-max; every x, y "
	 "the other tools take is a pixel of the last screenshot.", NONE, screen_out, true, false},
	{"click", "Click",
	 "Click at x, y (or where the pointer is): button left (default), right, middle, back or "
	 "forward; count 2 or 3 double- or triple-clicks the left button. A human approves it.",
	 OBJECT(XY_PROPS ",\"button\":{\"type\":\"string\",\"enum\":[\"left\",\"right\",\"middle\","
	        "\"back\",\"forward\"]},\"count\":{\"type\":\"integer\",\"minimum\":1,"
	        "\"maximum\":3}," MODS_PROP, ""), NULL, false, true},
	{"drag", "Drag", "Press the left button at x1, y1, move to x2, y2, release. A human "
	 "approves it.",
	 OBJECT("\"x1\":" INT_PROP("start") ",\"y1\":" INT_PROP("start") ",\"x2\":" INT_PROP("end")
	        ",\"y2\":" INT_PROP("end") "," MODS_PROP,
	        "\"required\":[\"x1\",\"y1\",\"x2\",\"y2\"],"), NULL, false, true},
	{"scroll", "Scroll", "Turn the wheel `amount` clicks (default 3) in `direction`, at x, y "
	 "or where the pointer is. A human approves it.",
	 OBJECT("\"direction\":{\"type\":\"string\",\"enum\":[\"up\",\"down\",\"left\",\"right\"]},"
	        "\"amount\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100}," XY_PROPS,
	        "\"required\":[\"direction\"],"), NULL, false, true},
	{"move", "Move the pointer", "Move the pointer to x, y. A human approves it.",
	 OBJECT(XY_PROPS, "\"required\":[\"x\",\"y\"],"), NULL, false, true},
	{"key", "Press keys", "Press a key or combination, xdotool names (Return, ctrl+s, "
	 "alt+F4); repeat presses it 1-100 times. A human approves it.",
	 OBJECT("\"keys\":{\"type\":\"string\"},\"repeat\":{\"type\":\"integer\",\"minimum\":1,"
	        "\"maximum\":100}", "\"required\":[\"keys\"],"), NULL, false, true},
	{"type", "Type text", "Type the text exactly (Unicode); at x, y it clicks there first, "
	 "clear empties the field first (ctrl+a, BackSpace). A human approves it.",
	 OBJECT("\"text\":{\"type\":\"string\"}," XY_PROPS ",\"clear\":{\"type\":\"boolean\"}",
	        "\"required\":[\"text\"],"), NULL, false, true},
	{"wait", "Wait", "Wait this many seconds (at most 300), then answer with a screenshot.",
	 OBJECT("\"seconds\":{\"type\":\"number\",\"minimum\":0,\"maximum\":300}",
	        "\"required\":[\"seconds\"],"), NULL, true, false},
	{"find_text", "Find text on the screen", "Find text on the screen with local OCR: the "
	 "centre of each match, in screenshot pixels.",
	 OBJECT("\"text\":{\"type\":\"string\",\"minLength\":1}", "\"required\":[\"text\"],"),
	 NULL, true, false, true},
	{"elements", "List controls", "The active window's controls from the accessibility "
	 "tree: ID role \"name\" states x y w h, in screenshot pixels.", NONE, NULL, true, false, true},
	{"click_element", "Click a control", "Act on a control of the last elements list by its "
	 "ID: left_click (default), right_click, middle_click, double_click, triple_click or "
	 "mouse_move at its centre, checked again first. A human approves it.",
	 OBJECT("\"element\":{\"type\":\"integer\",\"minimum\":1},\"action\":{\"type\":\"string\","
	        "\"enum\":[\"left_click\",\"right_click\",\"middle_click\",\"double_click\","
	        "\"triple_click\",\"mouse_move\"]}", "\"required\":[\"element\"],"),
	 NULL, false, true, true},
	{"windows", "List windows", "The top-level windows: app, title, the active one, boxes in "
	 "screenshot pixels.", NONE, NULL, true, false},
	{"execute", "Run code", "Run code in a persistent interpreter session inside deskhand's "
	 "sandbox (no display unless display is true, which a human must approve).",
	 OBJECT("\"language\":{\"type\":\"string\"},\"code\":{\"type\":\"string\"},"
	        "\"display\":{\"type\":\"boolean\"}", "\"required\":[\"language\",\"code\"],"),
	 NULL, false, true, true},
};
const size_t agent_mcp_tool_count = sizeof(agent_mcp_tools) / sizeof(agent_mcp_tools[0]);

const agent_mcp_tool *agent_mcp_tool_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < agent_mcp_tool_count; i++)
		if (strcmp(name, agent_mcp_tools[i].name) == 0)
			return &agent_mcp_tools[i];
	return NULL;
}

bool agent_mcp_own_tool(const char *name)
{
	const agent_mcp_tool *t = agent_mcp_tool_find(name);
	return t != NULL && t->own;
}

/* ---- translation ----------------------------------------------------------- */

/* What one translation builds: the action's arguments, or why not. */
struct tr {
	const cJSON *in;
	cJSON *out;
	char *err;
	size_t errlen;
	bool failed;
};

static bool tr_fail(struct tr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool tr_fail(struct tr *t, const char *fmt, ...)
{
	if (!t->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->err, t->errlen, fmt, ap);
		va_end(ap);
	}
	t->failed = true;
	return false;
}

/* Every argument is one the tool takes (its schema has additionalProperties false). */
static bool only(struct tr *t, const char *const *keys)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, t->in) {
		bool known = false;
		for (const char *const *k = keys; *k != NULL && !known; k++)
			known = strcmp(a->string, *k) == 0;
		if (!known)
			return tr_fail(t, "unknown argument \"%.40s\"", a->string);
	}
	return true;
}

static const cJSON *arg(const struct tr *t, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(t->in, key);
	return cJSON_IsNull(v) ? NULL : v;
}

/* x and y as a coordinate [x, y] under `key`, both or neither (required: both). */
static bool point(struct tr *t, const char *xk, const char *yk, const char *key, bool required)
{
	const cJSON *x = arg(t, xk), *y = arg(t, yk);
	if (x == NULL && y == NULL && !required)
		return true;
	long vx, vy;
	if (!agent_action_int(x, -1000000, 1000000, &vx) ||
	    !agent_action_int(y, -1000000, 1000000, &vy))
		return tr_fail(t, "%s needs whole numbers for both x and y", key);
	cJSON *c = cJSON_AddArrayToObject(t->out, key);
	if (c == NULL)
		return tr_fail(t, "%s", "out of memory");
	cJSON_AddItemToArray(c, cJSON_CreateNumber((double)vx));
	cJSON_AddItemToArray(c, cJSON_CreateNumber((double)vy));
	return true;
}

/* An argument passed on under deskhand's name, as it is: the action's parser checks it. */
static bool pass(struct tr *t, const char *key, const char *as)
{
	const cJSON *v = arg(t, key);
	if (v == NULL)
		return true;
	cJSON *copy = cJSON_Duplicate(v, true);
	if (copy == NULL)
		return tr_fail(t, "%s", "out of memory");
	cJSON_AddItemToObject(t->out, as, copy);
	return true;
}

static bool action(struct tr *t, const char *name)
{
	return cJSON_AddStringToObject(t->out, "action", name) != NULL ||
	       tr_fail(t, "%s", "out of memory");
}

static const char *click_action(struct tr *t)
{
	static const char *const buttons[][4] = {
		{"left", "left_click", "double_click", "triple_click"},
		{"right", "right_click", NULL, NULL},
		{"middle", "middle_click", NULL, NULL},
		{"back", "back_click", NULL, NULL},
		{"forward", "forward_click", NULL, NULL},
	};
	const cJSON *b = arg(t, "button");
	long count = 1;
	if (arg(t, "count") != NULL && !agent_action_int(arg(t, "count"), 1, 3, &count)) {
		tr_fail(t, "%s", "\"count\" must be 1, 2 or 3");
		return NULL;
	}
	const char *name = b == NULL ? "left" : cJSON_GetStringValue(b);
	for (size_t i = 0; name != NULL && i < sizeof(buttons) / sizeof(buttons[0]); i++) {
		if (strcmp(name, buttons[i][0]) != 0)
			continue;
		if (buttons[i][count] == NULL)
			tr_fail(t, "a count above 1 is for the left button (not %s)", name);
		return buttons[i][count];
	}
	tr_fail(t, "%s", "\"button\" must be left, right, middle, back or forward");
	return NULL;
}

static bool tr_click(struct tr *t)
{
	static const char *const keys[] = {"x", "y", "button", "count", "modifiers", NULL};
	const char *name = only(t, keys) ? click_action(t) : NULL;
	return name != NULL && action(t, name) && point(t, "x", "y", "coordinate", false) &&
	       pass(t, "modifiers", "text");
}

static bool tr_drag(struct tr *t)
{
	static const char *const keys[] = {"x1", "y1", "x2", "y2", "modifiers", NULL};
	return only(t, keys) && action(t, "left_click_drag") &&
	       point(t, "x1", "y1", "start_coordinate", true) &&
	       point(t, "x2", "y2", "coordinate", true) && pass(t, "modifiers", "text");
}

static bool tr_move(struct tr *t)
{
	static const char *const keys[] = {"x", "y", NULL};
	return only(t, keys) && action(t, "mouse_move") && point(t, "x", "y", "coordinate", true);
}

static bool tr_scroll(struct tr *t)
{
	static const char *const keys[] = {"direction", "amount", "x", "y", NULL};
	if (!only(t, keys) || !action(t, "scroll") || !point(t, "x", "y", "coordinate", false) ||
	    !pass(t, "direction", "scroll_direction"))
		return false;
	if (arg(t, "amount") == NULL)
		return cJSON_AddNumberToObject(t->out, "scroll_amount", 3) != NULL ||
		       tr_fail(t, "%s", "out of memory");
	return pass(t, "amount", "scroll_amount");
}

static bool tr_key(struct tr *t)
{
	static const char *const keys[] = {"keys", "repeat", NULL};
	if (!only(t, keys) || !action(t, "key"))
		return false;
	if (!cJSON_IsString(arg(t, "keys")))
		return tr_fail(t, "%s", "key needs \"keys\": a key or combination (ctrl+s)");
	return pass(t, "keys", "text") && pass(t, "repeat", "repeat");
}

static bool tr_type(struct tr *t)
{
	static const char *const keys[] = {"text", "x", "y", "clear", NULL};
	return only(t, keys) && action(t, "type") && point(t, "x", "y", "coordinate", false) &&
	       pass(t, "text", "text") && pass(t, "clear", "clear");
}

static bool tr_wait(struct tr *t)
{
	static const char *const keys[] = {"seconds", NULL};
	if (!only(t, keys) || !action(t, "wait"))
		return false;
	if (!cJSON_IsNumber(arg(t, "seconds")))
		return tr_fail(t, "%s", "wait needs \"seconds\": a number");
	return pass(t, "seconds", "duration");
}

static bool tr_plain(struct tr *t, const char *name)
{
	static const char *const keys[] = {NULL};
	return only(t, keys) && action(t, name);
}

static bool tr_screenshot(struct tr *t)
{
	return tr_plain(t, "screenshot");
}

static bool tr_windows(struct tr *t)
{
	return tr_plain(t, "windows");
}

static const struct {
	const char *name;
	bool (*translate)(struct tr *t);
} translators[] = {
	{"screenshot", tr_screenshot}, {"click", tr_click}, {"drag", tr_drag},
	{"move", tr_move},             {"scroll", tr_scroll}, {"key", tr_key},
	{"type", tr_type},             {"wait", tr_wait},     {"windows", tr_windows},
};

cJSON *agent_mcp_translate(const char *name, const cJSON *args, char *err, size_t errlen)
{
	struct tr t = {.in = args, .err = err, .errlen = errlen};
	if (args != NULL && !cJSON_IsObject(args))
		return agent_action_drop(err, errlen, NULL, "the arguments must be a JSON object");
	for (size_t i = 0; name != NULL && i < sizeof(translators) / sizeof(translators[0]); i++) {
		if (strcmp(name, translators[i].name) != 0)
			continue;
		t.out = cJSON_CreateObject();
		if (t.out == NULL)
			return agent_action_drop(err, errlen, NULL, "out of memory");
		if (!translators[i].translate(&t)) {
			char why[400];
			snprintf(why, sizeof(why), "%s", err);
			return agent_action_drop(err, errlen, t.out, "%s: %s", name, why);
		}
		return t.out;
	}
	return agent_action_drop(err, errlen, NULL, "unknown tool \"%.60s\"", name ? name : "");
}

/* ---- the dialect ------------------------------------------------------------ */

static void propose_mcp(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	if (agent_mcp_own_tool(call->name)) {
		agent_dialect_deskhand.propose(t, call, p);
		return;
	}
	char err[512];
	if (call->args == NULL) {
		agent_proposal_refuse(p, "%s: %s", call->name,
		                      call->args_error ? call->args_error : "arguments are not JSON");
		return;
	}
	cJSON *a = agent_mcp_translate(call->name, call->args, err, sizeof(err));
	agent_tools_parse_translated(t, a, err, p);
}

const agent_dialect agent_dialect_mcp = {
	.name = "mcp",
	.propose = propose_mcp,
};
