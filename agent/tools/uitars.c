/* agent/tools/uitars — UI-TARS's text actions as deskhand's (see the header). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/actions.h"
#include "agent/tools/openai_actions.h"
#include "agent/tools/uitars.h"
#include "agent/tools/tools-internal.h"
#include "base/base.h"

#define UT_MAX_ARGS 8
#define UT_MAX_VALUE 65536

struct ut_arg {
	char key[32];
	char *value; /* a string's text, or a number as written */
};

struct ut_call {
	char name[32];
	size_t n;
	struct ut_arg args[UT_MAX_ARGS];
};

static void ut_free(struct ut_call *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->args[i].value);
	c->n = 0;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* An identifier into out; NULL when there is none or it is too long. */
static const char *ident(const char *p, char *out, size_t size)
{
	size_t n = 0;
	if (!(isalpha((unsigned char)*p) || *p == '_'))
		return NULL;
	while (isalnum((unsigned char)p[n]) || p[n] == '_')
		n++;
	if (n >= size)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return p + n;
}

/* A quoted string (Python's escapes for quotes, backslash and \n \t \r). */
static const char *string_lit(const char *p, char **out)
{
	char q = *p++;
	size_t cap = strlen(p) + 1, n = 0;
	if (cap > UT_MAX_VALUE)
		cap = UT_MAX_VALUE;
	char *s = malloc(cap);
	if (s == NULL)
		return NULL;
	for (; *p != q; p++) {
		if (*p == '\0' || n + 2 >= cap) {
			free(s);
			return NULL;
		}
		if (*p != '\\') {
			s[n++] = *p;
			continue;
		}
		char e = *++p;
		if (e == '\0') {
			free(s);
			return NULL;
		}
		if (e == 'n' || e == 't' || e == 'r')
			s[n++] = e == 'n' ? '\n' : e == 't' ? '\t' : '\r';
		else if (e == '\\' || e == '\'' || e == '"')
			s[n++] = e;
		else {
			s[n++] = '\\';
			s[n++] = e;
		}
	}
	s[n] = '\0';
	*out = s;
	return p + 1;
}

static const char *number_lit(const char *p, char **out)
{
	size_t n = strspn(p, "-+.0123456789");
	if (n == 0 || n > 30)
		return NULL;
	*out = strndup(p, n);
	return *out != NULL ? p + n : NULL;
}

static const char *one_arg(const char *p, struct ut_arg *a, char *err, size_t errlen)
{
	if ((p = ident(p, a->key, sizeof(a->key))) == NULL) {
		agent_action_refuse(err, errlen, "expected a parameter name");
		return NULL;
	}
	p = skip_ws(p);
	if (*p++ != '=') {
		agent_action_refuse(err, errlen, "expected '=' after %s", a->key);
		return NULL;
	}
	p = skip_ws(p);
	const char *end = *p == '\'' || *p == '"' ? string_lit(p, &a->value)
	                                          : number_lit(p, &a->value);
	if (end == NULL)
		agent_action_refuse(err, errlen, "the value of %s is not a complete quoted string or a number",
		     a->key);
	return end;
}

/* NAME(KEY=VALUE, ...) and nothing after it. */
static bool ut_parse(const char *s, struct ut_call *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	const char *p = ident(skip_ws(s), c->name, sizeof(c->name));
	if (p == NULL)
		return agent_action_refuse(err, errlen, "an action is NAME(key='value', ...)");
	p = skip_ws(p);
	if (*p++ != '(')
		return agent_action_refuse(err, errlen, "expected '(' after %s", c->name);
	p = skip_ws(p);
	while (*p != ')') {
		if (c->n == UT_MAX_ARGS) {
			ut_free(c);
			return agent_action_refuse(err, errlen, "too many parameters");
		}
		const char *next = one_arg(p, &c->args[c->n], err, errlen);
		if (next == NULL) {
			ut_free(c);
			return false;
		}
		c->n++;
		p = skip_ws(next);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ')') {
			agent_action_refuse(err, errlen, "expected ',' or ')' after the value of %s",
			     c->args[c->n - 1].key);
			ut_free(c);
			return false;
		}
	}
	if (*skip_ws(p + 1) != '\0') {
		ut_free(c);
		return agent_action_refuse(err, errlen, "text after the closing parenthesis");
	}
	return true;
}

static const char *ut_get(const struct ut_call *c, const char *k1, const char *k2)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->args[i].key, k1) == 0 || (k2 != NULL && strcmp(c->args[i].key, k2) == 0))
			return c->args[i].value;
	return NULL;
}

/* Up to 4 numbers, separated as sep says; their count or -1. */
static int numbers(const char *p, const char *end, char sep, long v[4])
{
	int n = 0;
	while (p < end) {
		p = skip_ws(p);
		char *e;
		if (!isdigit((unsigned char)*p))
			return -1;
		double d = strtod(p, &e);
		/* Decimal digits only: strtod would also read hex and exponents. */
		if (e > end || n == 4 || strspn(p, "0123456789.") < (size_t)(e - p) ||
		    !(d >= 0 && d <= 1e6))
			return -1;
		v[n++] = (long)(d + 0.5);
		p = skip_ws(e);
		if (p < end && *p == sep)
			p++;
		else if (p < end && sep != ' ')
			return -1;
	}
	return n;
}

static bool strip(const char **p, const char **end, const char *open, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close);
	if ((size_t)(*end - *p) < lo + lc || strncmp(*p, open, lo) != 0 ||
	    strncmp(*end - lc, close, lc) != 0)
		return false;
	*p += lo;
	*end -= lc;
	return true;
}

/* A point or a box (its centre), in any of UI-TARS's spellings. */
static bool ut_point(const char *v, int xy[2])
{
	const char *p = skip_ws(v), *end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	strip(&p, &end, "<|box_start|>", "<|box_end|>");
	long n[4];
	int k;
	if (strip(&p, &end, "<point>", "</point>") || strip(&p, &end, "<bbox>", "</bbox>"))
		k = numbers(p, end, ' ', n);
	else if (strip(&p, &end, "(", ")") || strip(&p, &end, "[", "]"))
		k = numbers(p, end, ',', n);
	else
		return false;
	if (k == 2) {
		xy[0] = (int)n[0], xy[1] = (int)n[1];
		return true;
	}
	if (k == 4 && n[0] <= n[2] && n[1] <= n[3]) {
		xy[0] = (int)((n[0] + n[2]) / 2), xy[1] = (int)((n[1] + n[3]) / 2);
		return true;
	}
	return false;
}

static bool add_point(cJSON *o, const char *field, const struct ut_call *c, const char *k1,
                      const char *k2, char *err, size_t errlen)
{
	const char *v = ut_get(c, k1, k2);
	int xy[2];
	if (v == NULL)
		return agent_action_refuse(err, errlen, "%s needs %s='(x,y)'", c->name, k1);
	if (!ut_point(v, xy))
		return agent_action_refuse(err, errlen, "%s: %s='%.60s' is not a point: write '(x,y)' or "
		            "'<point>x y</point>'", c->name, k1, v);
	cJSON_AddItemToObject(o, field, cJSON_CreateIntArray(xy, 2));
	return true;
}

/* UI-TARS's key names (pyautogui's, space separated) as one combination. */
static bool add_keys(cJSON *o, const struct ut_call *c, const char *v, char *err, size_t errlen)
{
	if (v == NULL || *skip_ws(v) == '\0')
		return agent_action_refuse(err, errlen, "%s needs key='...' (names separated by spaces, as "
		            "'ctrl c')", c->name);
	cJSON *list = cJSON_CreateArray();
	char *copy = strdup(v), *save = NULL;
	for (char *k = copy ? strtok_r(copy, " ", &save) : NULL; k; k = strtok_r(NULL, " ", &save))
		cJSON_AddItemToArray(list, cJSON_CreateString(k));
	free(copy);
	char why[200];
	char *combo = agent_openai_key_combo(list, true, why, sizeof(why));
	cJSON_Delete(list);
	if (combo == NULL)
		return agent_action_refuse(err, errlen, "%s: key='%.60s': %s", c->name, v, why);
	cJSON_AddStringToObject(o, "action", "key");
	cJSON_AddStringToObject(o, "text", combo);
	free(combo);
	return true;
}

static bool scroll(cJSON *o, const struct ut_call *c, char *err, size_t errlen)
{
	os_scroll d;
	if (!os_scroll_parse(ut_get(c, "direction", NULL), &d)) {
		char dirs[48];
		base_names_join(BASE_NAMES(os_scroll_names), "', '", "' or '", dirs, sizeof(dirs));
		return agent_action_refuse(err, errlen, "scroll needs direction='%s'", dirs);
	}
	if ((ut_get(c, "start_box", "point") != NULL) &&
	    !add_point(o, "coordinate", c, ut_get(c, "start_box", NULL) ? "start_box" : "point",
	               NULL, err, errlen))
		return false;
	cJSON_AddStringToObject(o, "action", "scroll");
	cJSON_AddStringToObject(o, "scroll_direction", os_scroll_name(d));
	cJSON_AddNumberToObject(o, "scroll_amount", AGENT_UITARS_SCROLL_CLICKS);
	return true;
}

static bool clicked(cJSON *o, const struct ut_call *c, const char *action, char *err,
                    size_t errlen)
{
	const char *k = ut_get(c, "point", NULL) ? "point" : "start_box";
	if (!add_point(o, "coordinate", c, k, NULL, err, errlen))
		return false;
	cJSON_AddStringToObject(o, "action", action);
	return true;
}

static bool drag(cJSON *o, const struct ut_call *c, char *err, size_t errlen)
{
	const char *s = ut_get(c, "start_point", NULL) ? "start_point" : "start_box";
	const char *e = ut_get(c, "end_point", NULL) ? "end_point" : "end_box";
	if (!add_point(o, "start_coordinate", c, s, NULL, err, errlen) ||
	    !add_point(o, "coordinate", c, e, NULL, err, errlen))
		return false;
	cJSON_AddStringToObject(o, "action", "left_click_drag");
	return true;
}

static bool type_text(cJSON *o, const struct ut_call *c, char *err, size_t errlen)
{
	const char *t = ut_get(c, "content", NULL);
	if (t == NULL || t[0] == '\0')
		return agent_action_refuse(err, errlen, "type needs content='...'");
	cJSON_AddStringToObject(o, "action", "type");
	cJSON_AddStringToObject(o, "text", t);
	return true;
}

/* What the action is in deskhand's terms; false (err) when it is none. */
static bool translate(cJSON *o, const struct ut_call *c, char *err, size_t errlen)
{
	static const char *const click_map[][2] = {
		{"click", "left_click"},        {"left_single", "left_click"},
		{"left_double", "double_click"}, {"right_single", "right_click"},
		{"hover", "mouse_move"},
	};
	const char *n = c->name;
	for (size_t i = 0; i < sizeof(click_map) / sizeof(click_map[0]); i++)
		if (strcmp(n, click_map[i][0]) == 0)
			return clicked(o, c, click_map[i][1], err, errlen);
	if (strcmp(n, "drag") == 0 || strcmp(n, "select") == 0)
		return drag(o, c, err, errlen);
	if (strcmp(n, "hotkey") == 0)
		return add_keys(o, c, ut_get(c, "key", "hotkey"), err, errlen);
	if (strcmp(n, "press") == 0)
		return add_keys(o, c, ut_get(c, "key", "press"), err, errlen);
	if (strcmp(n, "type") == 0)
		return type_text(o, c, err, errlen);
	if (strcmp(n, "scroll") == 0)
		return scroll(o, c, err, errlen);
	if (strcmp(n, "wait") == 0) {
		cJSON_AddStringToObject(o, "action", "wait");
		cJSON_AddNumberToObject(o, "duration", AGENT_UITARS_WAIT_S);
		return true;
	}
	if (strcmp(n, "keydown") == 0 || strcmp(n, "keyup") == 0 || strcmp(n, "release") == 0)
		return agent_action_refuse(err, errlen, "%s is not supported: deskhand holds keys only within one "
		            "action; use hotkey(key='ctrl c')", n);
	if (strcmp(n, "finished") == 0 || strcmp(n, "call_user") == 0)
		return agent_action_refuse(err, errlen, "%s ends the task; it is not a desktop action", n);
	return agent_action_refuse(err, errlen, "unknown action \"%.40s\" (click, left_double, right_single, "
	            "hover, drag, hotkey, press, type, scroll, wait, finished, call_user)", n);
}

cJSON *agent_uitars_action_args(const char *action, char *err, size_t errlen)
{
	struct ut_call c;
	char why[300];
	if (action == NULL || !ut_parse(action, &c, why, sizeof(why))) {
		agent_action_refuse(err, errlen, "cannot read the action \"%.120s\": %s", action ? action : "",
		     action ? why : "no action");
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL && translate(o, &c, err, errlen);
	ut_free(&c);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

bool agent_uitars_final(const char *action, char **text)
{
	struct ut_call c;
	char why[64];
	if (action == NULL || !ut_parse(action, &c, why, sizeof(why)))
		return false;
	bool fin = strcmp(c.name, "finished") == 0, user = strcmp(c.name, "call_user") == 0;
	if (fin || user) {
		const char *t = ut_get(&c, "content", NULL);
		*text = strdup(fin ? (t != NULL ? t : "the task is done")
		                   : "the model needs you to continue");
	}
	ut_free(&c);
	return fin || user;
}

/* ---- the dialect ---------------------------------------------------------- */

/* agent/llm cut the reply's text into one call per action: {"action": TEXT}. */
static const char *action_text(const agent_tool_call *call)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(call->args, "action"));
}

static void propose_uitars(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	char err[512] = "";
	agent_tools_parse_translated(t, agent_uitars_action_args(action_text(call), err,
	                                                         sizeof(err)), err, p);
}

static bool uitars_final(const agent_tool_call *call, char **text)
{
	return agent_uitars_final(action_text(call), text);
}

const agent_dialect agent_dialect_uitars = {
	.name = "uitars",
	.propose = propose_uitars,
	.final = uitars_final,
	.results_carry_screenshot = true,
	/* Its actions are the reply's own text, not calls on the wire. */
	.in_text = true,
};
