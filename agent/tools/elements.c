/* The `elements` action and `element: ID` targets (see elements.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/elements.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "vision/vision.h"

/* The list the model was last given; its IDs are the ones it may name. */
static vision_elements *last_list;

static bool takes_element(agent_computer_kind k)
{
	switch (k) {
	case AGENT_ACTION_LEFT_CLICK: case AGENT_ACTION_RIGHT_CLICK:
	case AGENT_ACTION_MIDDLE_CLICK: case AGENT_ACTION_BACK_CLICK:
	case AGENT_ACTION_FORWARD_CLICK: case AGENT_ACTION_DOUBLE_CLICK:
	case AGENT_ACTION_TRIPLE_CLICK: case AGENT_ACTION_MOUSE_MOVE:
	case AGENT_ACTION_TYPE: case AGENT_ACTION_SCROLL:
		return true;
	default:
		return false;
	}
}

bool agent_elements_parse(const cJSON *args, const vision_view *view,
                          agent_computer_action *a, char *err, size_t errlen)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(args, "element");
	if (e == NULL || cJSON_IsNull(e))
		return true;
	if (!takes_element(a->kind))
		return agent_action_refuse(err, errlen, "%s does not take \"element\"", a->name);
	if (a->has_point)
		return agent_action_refuse(err, errlen, "give either \"element\" or \"coordinate\", not both");
	long id;
	if (!agent_action_int(e, 1, 1000000, &id))
		return agent_action_refuse(err, errlen, "element must be an element ID (a whole number from the "
		            "elements action's list)");
	if (last_list == NULL)
		return agent_action_refuse(err, errlen, "no element list yet: call the elements action first");
	if ((size_t)id > last_list->count)
		return agent_action_refuse(err, errlen, "no element %ld in the last elements list (1..%zu)", id,
		            last_list->count);
	const vision_element *el = &last_list->items[id - 1];
	int cx, cy;
	vision_element_centre(el, &cx, &cy);
	if (!vision_screen_to_model(view, cx, cy, &a->mx, &a->my))
		return agent_action_refuse(err, errlen, "element %ld is not on the screenshot's monitor", id);
	a->sx = cx;
	a->sy = cy;
	a->has_point = true;
	a->element = (int)id;
	a->element_box = el->box;
	a->element_role = strdup(el->role);
	a->element_name = strdup(el->name);
	if (a->element_role == NULL || a->element_name == NULL)
		return agent_action_refuse(err, errlen, "out of memory");
	return true;
}

static bool same_box(os_rect a, os_rect b)
{
	return a.x == b.x && a.y == b.y && a.width == b.width && a.height == b.height;
}

/* Whether box b covers the centre of box a: a control that took a new name
 * often takes a new width with it ("Approve" -> "Delete all"). */
static bool covers_centre(os_rect b, os_rect a)
{
	int x = a.x + a.width / 2, y = a.y + a.height / 2;
	return x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height;
}

bool agent_elements_verify(os_display *d, const agent_computer_action *a, char *why,
                           size_t whylen)
{
	vision_elements *now = vision_elements_read(d, NULL);
	if (now == NULL)
		return agent_action_refuse(why, whylen, "element %d: the accessibility tree cannot be read: %s",
		            a->element, vision_error());
	bool ok = false, renamed = false, moved = false;
	for (size_t i = 0; i < now->count && !ok; i++) {
		const vision_element *el = &now->items[i];
		bool same_name = strcmp(el->role, a->element_role) == 0 &&
		                 strcmp(el->name, a->element_name) == 0;
		if (same_name && same_box(el->box, a->element_box))
			ok = true;
		else if (same_name)
			moved = true;
		else if (covers_centre(el->box, a->element_box) &&
		         strcmp(el->role, a->element_role) == 0)
			renamed = true;
	}
	if (!ok) {
		const char *what = moved ? "moved" : renamed ? "changed its name" : "vanished";
		agent_action_refuse(why, whylen, "element %d (%s) %s since the elements list; nothing was done "
		     "(call elements again)", a->element, a->element_role, what);
	}
	vision_elements_destroy(now);
	return ok;
}

/* Whether the element of `a`, read now, has the focus. */
static bool focused_now(os_display *d, const agent_computer_action *a)
{
	vision_elements *now = vision_elements_read(d, NULL);
	bool yes = false;
	for (size_t i = 0; now != NULL && i < now->count && !yes; i++) {
		const vision_element *el = &now->items[i];
		yes = strcmp(el->role, a->element_role) == 0 && strcmp(el->name, a->element_name) == 0 &&
		      same_box(el->box, a->element_box) &&
		      (strncmp(el->states, "focused", 7) == 0 || strstr(el->states, ",focused"));
	}
	vision_elements_destroy(now);
	return yes;
}

bool agent_elements_await_focus(os_display *d, const agent_computer_action *a, long ms)
{
	long long deadline = base_now_ms() + ms;
	for (;;) {
		if (focused_now(d, a))
			return true;
		if (base_now_ms() >= deadline || !base_sleep_ms(20, NULL))
			return false;
	}
}

/* The part of screen box r on the view's monitor, as x y w h in the
 * model's grid; false when none of it is. */
static bool box_in_view(const vision_view *v, const os_rect *r, int out[4])
{
	int sx0 = r->x > v->screen_x ? r->x : v->screen_x;
	int sy0 = r->y > v->screen_y ? r->y : v->screen_y;
	int sx1 = r->x + r->width - 1, sy1 = r->y + r->height - 1;
	if (sx1 > v->screen_x + v->screen_w - 1)
		sx1 = v->screen_x + v->screen_w - 1;
	if (sy1 > v->screen_y + v->screen_h - 1)
		sy1 = v->screen_y + v->screen_h - 1;
	int x0, y0, x1, y1;
	if (sx1 < sx0 || sy1 < sy0 || !vision_screen_to_model(v, sx0, sy0, &x0, &y0) ||
	    !vision_screen_to_model(v, sx1, sy1, &x1, &y1))
		return false;
	out[0] = x0;
	out[1] = y0;
	out[2] = x1 - x0 + 1;
	out[3] = y1 - y0 + 1;
	return true;
}

/* One line: ID ROLE "NAME" STATES X Y W H, the box in the model's grid. */
static bool put_line(agent_buf *b, const vision_view *v, const vision_element *el)
{
	int cx, cy, mx, my, box[4];
	/* Listed only when its centre, where element: clicks, is in the view. */
	vision_element_centre(el, &cx, &cy);
	if (!vision_screen_to_model(v, cx, cy, &mx, &my) || !box_in_view(v, &el->box, box))
		return false;
	agent_buf_printf(b, "\n%d %s \"", el->id, el->role);
	agent_show_append(b, el->name, strlen(el->name), AGENT_SHOW_STRICT);
	agent_buf_puts(b, "\"");
	if (el->text[0] != '\0' && strcmp(el->text, el->name) != 0) {
		agent_buf_puts(b, " text=\"");
		agent_show_append(b, el->text, strlen(el->text), AGENT_SHOW_STRICT);
		agent_buf_puts(b, "\"");
	}
	agent_buf_printf(b, " %s %d %d %d %d", el->states[0] ? el->states : "-", box[0], box[1],
	                 box[2], box[3]);
	return true;
}

/* Keeps e as the list element IDs refer to (the previous one goes) and returns the text. */
static char *keep_list(vision_elements *e, agent_buf *b)
{
	vision_elements_destroy(last_list);
	last_list = e;
	if (b->oom) {
		agent_buf_finish(b);
		return NULL;
	}
	return agent_buf_steal(b);
}

char *agent_elements_run(os_display *d, const vision_view *view, bool *is_error)
{
	agent_buf b;
	agent_buf_init(&b);
	vision_elements *e = vision_elements_read(d, NULL);
	*is_error = e == NULL;
	if (e == NULL) {
		agent_buf_printf(&b, "elements: %s", vision_error());
		return agent_buf_steal(&b);
	}
	agent_buf_printf(&b, "%zu elements of the active window (ID role \"name\" states x y w h, "
	                 "in screenshot coordinates; use element: ID to act on one)",
	                 e->count);
	size_t off = 0;
	for (size_t i = 0; i < e->count; i++)
		if (!put_line(&b, view, &e->items[i]))
			off++;
	if (off > 0)
		agent_buf_printf(&b, "\n(%zu elements off the screenshot's monitor not listed)", off);
	if (e->note[0] != '\0') {
		agent_buf_puts(&b, "\nnote: ");
		agent_show_append(&b, e->note, strlen(e->note), 0);
	}
	if (e->count == 0)
		agent_buf_puts(&b, "\n(no elements: use the screenshot and find_text)");
	return keep_list(e, &b);
}

char *agent_windows_run(os_display *d, const vision_view *view, bool *is_error)
{
	agent_buf b;
	agent_buf_init(&b);
	size_t n = 0;
	os_window *w = os_windows_list(d, &n);
	*is_error = w == NULL;
	if (w == NULL) {
		agent_buf_printf(&b, "windows: %s", os_error());
		return agent_buf_steal(&b);
	}
	agent_buf_printf(&b, "%zu top-level windows, bottom to top (* active; app \"title\" "
	                 "x y w h of the part on the screenshot, or off-screen)", n);
	for (size_t i = 0; i < n; i++) {
		int box[4];
		agent_buf_printf(&b, "\n%c ", w[i].active ? '*' : '-');
		agent_show_append(&b, w[i].klass[0] ? w[i].klass : "-", strlen(w[i].klass[0] ?
		                  w[i].klass : "-"), AGENT_SHOW_STRICT);
		agent_buf_puts(&b, " \"");
		agent_show_append(&b, w[i].title, strlen(w[i].title), AGENT_SHOW_STRICT);
		agent_buf_puts(&b, "\"");
		if (box_in_view(view, &w[i].geometry, box))
			agent_buf_printf(&b, " %d %d %d %d", box[0], box[1], box[2], box[3]);
		else
			agent_buf_puts(&b, " off-screen");
	}
	os_windows_free(w, n);
	if (b.oom) {
		agent_buf_finish(&b);
		return NULL;
	}
	return agent_buf_steal(&b);
}

char *agent_computer_marks(os_display *d, os_image *shot, const vision_view *view)
{
	agent_buf b;
	agent_buf_init(&b);
	vision_elements *e = vision_elements_read(d, NULL);
	if (e == NULL) {
		agent_buf_printf(&b, "[marks: %s]", vision_error());
		return agent_buf_steal(&b);
	}
	size_t unlabelled = 0;
	size_t drawn = vision_draw_marks(shot, view, e, &unlabelled);
	agent_buf_printf(&b, "[marks: %zu elements outlined with their IDs (element: ID acts on "
	                 "one; the elements action lists roles and names)", drawn);
	if (unlabelled > 0)
		agent_buf_printf(&b, ", %zu without room for a label", unlabelled);
	if (e->note[0] != '\0') {
		agent_buf_puts(&b, "; ");
		agent_show_append(&b, e->note, strlen(e->note), 0);
	}
	agent_buf_puts(&b, "]");
	return keep_list(e, &b);
}
