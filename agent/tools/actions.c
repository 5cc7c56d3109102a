/*
 * agent/tools/actions — the one table's actions (actions.h): their names
 * and classes, the strict parsing of deskhand's arguments against the last
 * screenshot's view (where an action's name becomes its kind, once), its
 * description for the human and its JSON form (computer.h).
 */
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "agent/tools/actions.h"
#include "agent/tools/computer.h"
#include "agent/tools/elements.h"
#include "agent/util/textutil.h"
#include "base/base.h"

#define ACTION_NAME_(id, name, cls, desc) [AGENT_ACTION_##id] = name,
static const char *const names[AGENT_ACTION_COUNT] = {AGENT_ACTIONS(ACTION_NAME_)};

#define ACTION_INPUT_(id, name, cls, desc) [AGENT_ACTION_##id] = ACTION_CLASS_##cls,
#define ACTION_CLASS_INPUT true
#define ACTION_CLASS_OBSERVE false
static const bool input[AGENT_ACTION_COUNT] = {AGENT_ACTIONS(ACTION_INPUT_)};

#define ACTION_LIST_(id, name, cls, desc) ", " name
static const char list[] = AGENT_ACTIONS(ACTION_LIST_);

bool agent_action_lookup(const char *name, agent_action *out)
{
	int i = base_name_index(BASE_NAMES(names), name);
	if (i >= 0 && out != NULL)
		*out = (agent_action)i;
	return i >= 0;
}

const char *agent_action_name(agent_action a)
{
	return base_name_of(BASE_NAMES(names), (int)a, "unknown");
}

bool agent_action_is_input(agent_action a)
{
	/* Out of range: nothing looks without asking. */
	return (unsigned)a >= AGENT_ACTION_COUNT || input[a];
}

const char *agent_action_list(void)
{
	return list + 2; /* past the first ", " */
}

bool agent_action_refuse(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return false;
}

cJSON *agent_action_drop(char *err, size_t len, cJSON *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	cJSON_Delete(o);
	return NULL;
}

bool agent_action_int(const cJSON *v, long min, long max, long *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return false;
	double d = v->valuedouble;
	if (d != floor(d) || d < (double)min || d > (double)max)
		return false;
	*out = (long)d;
	return true;
}

long agent_action_wheel_clicks(double px)
{
	long n = lround(fabs(px) / AGENT_ACTION_SCROLL_PX);
	return n < 1 ? 1 : n > 100 ? 100 : n;
}

const char *const agent_element_click_actions[] = {
	"left_click", "right_click", "middle_click", "double_click", "triple_click", "mouse_move",
	NULL,
};

/* ---- deskhand's arguments ------------------------------------------------ */

static bool parse_point(const cJSON *args, const char *key, const vision_view *view,
                        int *mx, int *my, int *sx, int *sy, bool *present,
                        char *err, size_t errlen)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, key);
	*present = false;
	if (c == NULL || cJSON_IsNull(c))
		return true;
	long x, y;
	if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2 ||
	    !agent_action_int(cJSON_GetArrayItem(c, 0), -1000000, 1000000, &x) ||
	    !agent_action_int(cJSON_GetArrayItem(c, 1), -1000000, 1000000, &y))
		return agent_action_refuse(err, errlen, "%s must be [x, y] with two whole numbers", key);
	if (!vision_model_to_screen(view, (int)x, (int)y, sx, sy))
		return agent_action_refuse(err, errlen, "%s: %s", key, vision_error());
	*mx = (int)x;
	*my = (int)y;
	*present = true;
	return true;
}

/* Splits `text` on white space into key combinations. */
static bool parse_combos(const char *text, agent_computer_action *a, char *err, size_t errlen)
{
	a->n_combos = 0;
	const char *p = text;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		const char *end = p;
		while (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\n')
			end++;
		char tok[128];
		size_t n = (size_t)(end - p);
		if (n >= sizeof(tok))
			return agent_action_refuse(err, errlen, "key name too long: '%.40s...'", p);
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (a->n_combos == AC_MAX_COMBOS)
			return agent_action_refuse(err, errlen, "too many keys in one action (at most %d)", AC_MAX_COMBOS);
		if (!os_key_parse(tok, &a->combos[a->n_combos]))
			return agent_action_refuse(err, errlen, "%s", os_error());
		a->n_combos++;
		p = end;
	}
	if (a->n_combos == 0)
		return agent_action_refuse(err, errlen, "text must name at least one key (xdotool syntax, e.g. \"ctrl+s\")");
	return true;
}

static const char *get_string(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool seconds_to_ms(const cJSON *args, double max_s, int *out, char *err, size_t errlen)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(args, "duration");
	if (!cJSON_IsNumber(d) || !isfinite(d->valuedouble) || d->valuedouble < 0 ||
	    d->valuedouble > max_s)
		return agent_action_refuse(err, errlen, "duration must be a number of seconds from 0 to %g", max_s);
	*out = (int)lround(d->valuedouble * 1000.0);
	return true;
}

/* The optional "text" field, copied into a->text. */
static bool parse_text(const cJSON *args, agent_computer_action *a, char *err, size_t errlen)
{
	const char *text = get_string(args, "text");
	if (text == NULL)
		return true;
	size_t n = strlen(text);
	if (n > AC_MAX_TEXT)
		return agent_action_refuse(err, errlen, "text is too long (%zu bytes, at most %d)", n, AC_MAX_TEXT);
	a->text = strdup(text);
	if (a->text == NULL)
		return agent_action_refuse(err, errlen, "out of memory");
	return true;
}

static bool parse_hold_key(const cJSON *args, agent_computer_action *a, char *err,
                           size_t errlen)
{
	if (a->text == NULL)
		return agent_action_refuse(err, errlen, "hold_key needs \"text\" with the key");
	if (!parse_combos(a->text, a, err, errlen))
		return false;
	if (a->n_combos != 1)
		return agent_action_refuse(err, errlen, "hold_key holds one key combination");
	return seconds_to_ms(args, AC_MAX_SECONDS, &a->duration_ms, err, errlen);
}

/* key_down / key_up: one combination, pressed (or released) and left so. */
static bool parse_key_state(agent_computer_action *a, char *err, size_t errlen)
{
	if (a->text == NULL)
		return agent_action_refuse(err, errlen, "%s needs \"text\" with the key", a->name);
	if (!parse_combos(a->text, a, err, errlen))
		return false;
	if (a->n_combos != 1)
		return agent_action_refuse(err, errlen, "%s takes one key combination", a->name);
	return true;
}

/* type: a point to click first, and "clear" to empty the field before typing. */
static bool parse_type(const cJSON *args, agent_computer_action *a, char *err, size_t errlen)
{
	if (a->text == NULL || a->text[0] == '\0')
		return agent_action_refuse(err, errlen, "%s needs a non-empty \"text\"", a->name);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "clear");
	if (c != NULL && !cJSON_IsBool(c) && !cJSON_IsNull(c))
		return agent_action_refuse(err, errlen, "\"clear\" must be true or false");
	a->clear_first = cJSON_IsTrue(c);
	return true;
}

/* key: "repeat" presses the whole sequence 1-100 times (default once). */
static bool parse_key(const cJSON *args, agent_computer_action *a, char *err, size_t errlen)
{
	if (a->text == NULL)
		return agent_action_refuse(err, errlen, "key needs \"text\" with the key combination");
	if (!parse_combos(a->text, a, err, errlen))
		return false;
	long repeat = 1;
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(args, "repeat");
	if (r != NULL && !cJSON_IsNull(r) && !agent_action_int(r, 1, 100, &repeat))
		return agent_action_refuse(err, errlen, "repeat must be a whole number from 1 to 100");
	a->repeat = (int)repeat;
	return true;
}

/* `text` of a click or a scroll names modifier keys held during it. */
static bool parse_modifiers(agent_computer_action *a, char *err, size_t errlen)
{
	if (a->text != NULL && a->text[0] != '\0')
		return parse_combos(a->text, a, err, errlen);
	return true;
}

static bool parse_scroll(const cJSON *args, agent_computer_action *a, char *err, size_t errlen)
{
	if (!os_scroll_parse(get_string(args, "scroll_direction"), &a->direction)) {
		char dirs[40];
		base_names_join(BASE_NAMES(os_scroll_names), ", ", " or ", dirs, sizeof(dirs));
		return agent_action_refuse(err, errlen, "scroll needs \"scroll_direction\": %s", dirs);
	}
	long amount = 3;
	const cJSON *am = cJSON_GetObjectItemCaseSensitive(args, "scroll_amount");
	if (am != NULL && !agent_action_int(am, 1, 100, &amount))
		return agent_action_refuse(err, errlen, "scroll_amount must be a whole number from 1 to 100");
	a->amount = (int)amount;
	return parse_modifiers(a, err, errlen);
}

/* "path": [[x, y], ...] of a drag, each point checked against the screen. */
static bool parse_path(const cJSON *args, const vision_view *view, agent_computer_action *a,
                       char *err, size_t errlen)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(args, "path");
	int n = cJSON_GetArraySize(path);
	if (!cJSON_IsArray(path) || n < 2 || n > AC_MAX_PATH)
		return agent_action_refuse(err, errlen, "path must hold 2 to %d points [x, y]", AC_MAX_PATH);
	for (int k = 0; k < n; k++) {
		const cJSON *pt = cJSON_GetArrayItem(path, k);
		long x, y;
		if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2 ||
		    !agent_action_int(cJSON_GetArrayItem(pt, 0), -1000000, 1000000, &x) ||
		    !agent_action_int(cJSON_GetArrayItem(pt, 1), -1000000, 1000000, &y))
			return agent_action_refuse(err, errlen, "path point %d must be [x, y] with two whole numbers", k);
		if (!vision_model_to_screen(view, (int)x, (int)y, &a->path_s[k][0], &a->path_s[k][1]))
			return agent_action_refuse(err, errlen, "path point %d: %s", k, vision_error());
		a->path_m[k][0] = (int)x;
		a->path_m[k][1] = (int)y;
	}
	a->n_path = n;
	/* The ends stand for the whole where one point is looked at (the gate's
	 * own-terminal check, the description). */
	a->start_mx = a->path_m[0][0], a->start_my = a->path_m[0][1];
	a->start_sx = a->path_s[0][0], a->start_sy = a->path_s[0][1];
	a->mx = a->path_m[n - 1][0], a->my = a->path_m[n - 1][1];
	a->sx = a->path_s[n - 1][0], a->sy = a->path_s[n - 1][1];
	a->has_start = a->has_point = true;
	return true;
}

static bool parse_drag(const cJSON *args, const vision_view *view, agent_computer_action *a,
                       char *err, size_t errlen)
{
	if (cJSON_GetObjectItemCaseSensitive(args, "path") != NULL) {
		if (a->has_start || a->has_point)
			return agent_action_refuse(err, errlen, "left_click_drag takes either \"path\" or "
			            "\"start_coordinate\" and \"coordinate\", not both");
		if (!parse_path(args, view, a, err, errlen))
			return false;
	} else if (!a->has_start || !a->has_point) {
		return agent_action_refuse(err, errlen, "left_click_drag needs \"start_coordinate\" and \"coordinate\"");
	}
	return parse_modifiers(a, err, errlen);
}

/* "region": [x0, y0, x1, y1] in the screenshot, checked against the screen. */
static bool parse_zoom(const cJSON *args, const vision_view *view, agent_computer_action *a,
                       char *err, size_t errlen)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(args, "region");
	long v[4];
	if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 4)
		return agent_action_refuse(err, errlen, "zoom needs \"region\": [x0, y0, x1, y1]");
	for (int k = 0; k < 4; k++)
		if (!agent_action_int(cJSON_GetArrayItem(r, k), 0, 1000000, &v[k]))
			return agent_action_refuse(err, errlen, "region must hold four whole numbers >= 0");
	os_rect tmp;
	if (!vision_model_rect_to_screen(view, (int)v[0], (int)v[1], (int)v[2], (int)v[3], &tmp))
		return agent_action_refuse(err, errlen, "region: %s", vision_error());
	for (int k = 0; k < 4; k++)
		a->region[k] = (int)v[k];
	return true;
}

/* What each kind needs beyond the common fields. */
static bool parse_kind(const cJSON *args, const vision_view *view, agent_computer_action *a,
                       char *err, size_t errlen)
{
	switch (a->kind) {
	case AGENT_ACTION_KEY:
		return parse_key(args, a, err, errlen);
	case AGENT_ACTION_HOLD_KEY:
		return parse_hold_key(args, a, err, errlen);
	case AGENT_ACTION_KEY_DOWN:
	case AGENT_ACTION_KEY_UP:
		return parse_key_state(a, err, errlen);
	case AGENT_ACTION_TYPE:
		return parse_type(args, a, err, errlen);
	case AGENT_ACTION_FIND_TEXT:
		if (a->text == NULL || a->text[0] == '\0')
			return agent_action_refuse(err, errlen, "%s needs a non-empty \"text\"", a->name);
		return true;
	case AGENT_ACTION_MOUSE_MOVE:
		if (!a->has_point)
			return agent_action_refuse(err, errlen, "mouse_move needs \"coordinate\"");
		return parse_modifiers(a, err, errlen);
	case AGENT_ACTION_LEFT_CLICK:
	case AGENT_ACTION_RIGHT_CLICK:
	case AGENT_ACTION_MIDDLE_CLICK:
	case AGENT_ACTION_BACK_CLICK:
	case AGENT_ACTION_FORWARD_CLICK:
	case AGENT_ACTION_DOUBLE_CLICK:
	case AGENT_ACTION_TRIPLE_CLICK:
		return parse_modifiers(a, err, errlen);
	case AGENT_ACTION_LEFT_CLICK_DRAG:
		return parse_drag(args, view, a, err, errlen);
	case AGENT_ACTION_LEFT_MOUSE_DOWN:
	case AGENT_ACTION_LEFT_MOUSE_UP:
		return true;
	case AGENT_ACTION_SCROLL:
		return parse_scroll(args, a, err, errlen);
	case AGENT_ACTION_WAIT:
		return seconds_to_ms(args, AC_MAX_SECONDS, &a->duration_ms, err, errlen);
	case AGENT_ACTION_SCREENSHOT:
	case AGENT_ACTION_CURSOR_POSITION:
	case AGENT_ACTION_ELEMENTS:
	case AGENT_ACTION_WINDOWS:
		return true;
	case AGENT_ACTION_ZOOM:
		return parse_zoom(args, view, a, err, errlen);
	default:
		break;
	}
	/* In the table but without a parser here: refused, never guessed at. */
	return agent_action_refuse(err, errlen, "action \"%s\" is not supported by this deskhand", a->name);
}

static bool parse_fields(const char *name, const cJSON *args, const vision_view *view,
                         agent_computer_action *a, char *err, size_t errlen)
{
	if (!cJSON_IsObject(args))
		return agent_action_refuse(err, errlen, "the computer tool takes a JSON object");
	if (name == NULL)
		name = get_string(args, "action");
	if (name == NULL)
		return agent_action_refuse(err, errlen, "missing \"action\" (one of: %s)", agent_action_list());
	if (!agent_action_lookup(name, &a->kind))
		return agent_action_refuse(err, errlen, "unknown action \"%.60s\" (one of: %s)", name,
		            agent_action_list());
	a->name = agent_action_name(a->kind);
	a->input = agent_action_is_input(a->kind);

	if (!parse_point(args, "coordinate", view, &a->mx, &a->my, &a->sx, &a->sy,
	                 &a->has_point, err, errlen))
		return false;
	if (!parse_point(args, "start_coordinate", view, &a->start_mx, &a->start_my,
	                 &a->start_sx, &a->start_sy, &a->has_start, err, errlen))
		return false;
	if (!parse_text(args, a, err, errlen))
		return false;
	/* Most actions name no element: the list is not looked at then. */
	if (cJSON_GetObjectItemCaseSensitive(args, "element") != NULL &&
	    !agent_elements_parse(args, view, a, err, errlen))
		return false;
	return parse_kind(args, view, a, err, errlen);
}

bool agent_computer_parse_named(const char *name, const cJSON *args, const vision_view *view,
                                agent_computer_action *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	if (parse_fields(name, args, view, a, err, errlen))
		return true;
	agent_computer_action_finish(a);
	return false;
}

bool agent_computer_parse(const cJSON *args, const vision_view *view,
                          agent_computer_action *a, char *err, size_t errlen)
{
	return agent_computer_parse_named(NULL, args, view, a, err, errlen);
}

void agent_computer_action_finish(agent_computer_action *a)
{
	if (a == NULL)
		return;
	free(a->text);
	a->text = NULL;
	free(a->element_role);
	free(a->element_name);
	a->element_role = a->element_name = NULL;
}

/* What the action does besides where: its text, duration, direction. */
static void describe_extra(const agent_computer_action *a, agent_buf *b)
{
	switch (a->kind) {
	case AGENT_ACTION_TYPE:
		/* The human approves exactly what will be typed: all of it, shown. */
		if (a->clear_first)
			agent_buf_puts(b, " (clearing the field first: ctrl+a, BackSpace)");
		agent_buf_puts(b, " ");
		agent_show_typed(b, a->text ? a->text : "", a->text ? strlen(a->text) : 0);
		break;
	case AGENT_ACTION_KEY:
	case AGENT_ACTION_KEY_DOWN:
	case AGENT_ACTION_KEY_UP:
	case AGENT_ACTION_HOLD_KEY:
	case AGENT_ACTION_FIND_TEXT:
		agent_buf_puts(b, " \"");
		agent_show_append(b, a->text ? a->text : "", a->text ? strlen(a->text) : 0,
		                  AGENT_SHOW_STRICT);
		agent_buf_puts(b, "\"");
		if (a->kind == AGENT_ACTION_HOLD_KEY)
			agent_buf_printf(b, " for %d ms", a->duration_ms);
		if (a->kind == AGENT_ACTION_KEY && a->repeat > 1)
			agent_buf_printf(b, " %d times", a->repeat);
		break;
	case AGENT_ACTION_WAIT:
		agent_buf_printf(b, " %d ms", a->duration_ms);
		break;
	case AGENT_ACTION_SCROLL:
		agent_buf_printf(b, " %s by %d", os_scroll_name(a->direction), a->amount);
		break;
	case AGENT_ACTION_ZOOM:
		agent_buf_printf(b, " into [%d,%d,%d,%d]", a->region[0], a->region[1],
		                 a->region[2], a->region[3]);
		break;
	default:
		if (a->text != NULL && a->n_combos > 0) {
			agent_buf_puts(b, " holding ");
			agent_show_append(b, a->text, strlen(a->text), AGENT_SHOW_STRICT);
		}
		break;
	}
}

/* Where the action points, if anywhere. */
static void describe_where(const agent_computer_action *a, agent_buf *b)
{
	if (a->kind == AGENT_ACTION_LEFT_CLICK_DRAG && a->n_path > 2) {
		agent_buf_puts(b, " along");
		for (int k = 0; k < a->n_path; k++)
			agent_buf_printf(b, "%s %d,%d", k ? " ->" : "", a->path_m[k][0], a->path_m[k][1]);
		agent_buf_puts(b, " (screen");
		for (int k = 0; k < a->n_path; k++)
			agent_buf_printf(b, "%s %d,%d", k ? " ->" : "", a->path_s[k][0], a->path_s[k][1]);
		agent_buf_puts(b, ")");
	} else if (a->kind == AGENT_ACTION_LEFT_CLICK_DRAG)
		agent_buf_printf(b, " from %d,%d to %d,%d (screen %d,%d -> %d,%d)",
		                 a->start_mx, a->start_my, a->mx, a->my, a->start_sx, a->start_sy,
		                 a->sx, a->sy);
	else if (a->has_point && a->element > 0) {
		/* The human sees which control, in the app's own words, beside where. */
		agent_buf_printf(b, " %s \"", a->element_role);
		agent_show_append(b, a->element_name, strlen(a->element_name), AGENT_SHOW_STRICT);
		agent_buf_printf(b, "\" (element %d) at %d,%d (screen %d,%d)", a->element, a->mx,
		                 a->my, a->sx, a->sy);
	} else if (a->has_point)
		agent_buf_printf(b, " at %d,%d (screen %d,%d)", a->mx, a->my, a->sx, a->sy);
}

int agent_computer_points(const agent_computer_action *a, os_point pts[2])
{
	int n = 0;
	if (a->has_start)
		pts[n++] = (os_point){a->start_sx, a->start_sy};
	if (a->has_point)
		pts[n++] = (os_point){a->sx, a->sy};
	return n;
}

char *agent_computer_describe(const agent_computer_action *a)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_puts(&b, a->name);
	/* Typed text may span lines: where it goes comes before it. */
	if (a->kind == AGENT_ACTION_TYPE)
		describe_where(a, &b);
	describe_extra(a, &b);
	if (a->kind != AGENT_ACTION_TYPE)
		describe_where(a, &b);
	if (b.oom) {
		agent_buf_finish(&b);
		return NULL;
	}
	return agent_buf_steal(&b);
}

cJSON *agent_computer_json(const agent_computer_action *a)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "action", a->name);
	if (a->has_point && a->n_path == 0) {
		int c[2] = {a->mx, a->my};
		cJSON_AddItemToObject(o, "coordinate", cJSON_CreateIntArray(c, 2));
		int s[2] = {a->sx, a->sy};
		cJSON_AddItemToObject(o, "screen_coordinate", cJSON_CreateIntArray(s, 2));
	}
	if (a->n_path > 0) {
		cJSON *path = cJSON_AddArrayToObject(o, "path");
		for (int k = 0; k < a->n_path; k++)
			cJSON_AddItemToArray(path, cJSON_CreateIntArray(a->path_m[k], 2));
	} else if (a->has_start) {
		int c[2] = {a->start_mx, a->start_my};
		cJSON_AddItemToObject(o, "start_coordinate", cJSON_CreateIntArray(c, 2));
	}
	if (a->text != NULL)
		cJSON_AddStringToObject(o, "text", a->text);
	if (a->element > 0)
		cJSON_AddNumberToObject(o, "element", a->element);
	if (a->kind == AGENT_ACTION_SCROLL) {
		cJSON_AddStringToObject(o, "scroll_direction", os_scroll_name(a->direction));
		cJSON_AddNumberToObject(o, "scroll_amount", a->amount);
	}
	if (a->kind == AGENT_ACTION_KEY && a->repeat > 1)
		cJSON_AddNumberToObject(o, "repeat", a->repeat);
	if (a->kind == AGENT_ACTION_TYPE && a->clear_first)
		cJSON_AddBoolToObject(o, "clear", 1);
	if (a->kind == AGENT_ACTION_HOLD_KEY || a->kind == AGENT_ACTION_WAIT)
		cJSON_AddNumberToObject(o, "duration", a->duration_ms / 1000.0);
	if (a->kind == AGENT_ACTION_ZOOM)
		cJSON_AddItemToObject(o, "region", cJSON_CreateIntArray(a->region, 4));
	return o;
}

char *agent_computer_to_json(const agent_computer_action *a)
{
	cJSON *o = agent_computer_json(a);
	char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}
