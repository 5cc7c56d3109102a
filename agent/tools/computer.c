/*
 * agent/tools/computer — running a parsed computer action: the one place
 * that turns an action into os/ calls (mouse, keys, typing, zoom, OCR),
 * and the screenshot that answers it. Reached only through the gate's
 * runner (computer-run.h); parsing and describing is computer_parse.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/tools/computer-run.h"
#include "agent/tools/elements.h"
#include "agent/tools/tools-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

/* ---- running --------------------------------------------------------- */

static void set_text(agent_computer_result *r, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_text(agent_computer_result *r, bool is_error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = agent_vformat(fmt, ap);
	va_end(ap);
	free(r->text);
	r->text = text;
	r->is_error = is_error;
}

static bool mods(os_display *d, const agent_computer_action *a, bool down)
{
	bool ok = true;
	if (down) {
		for (int i = 0; i < a->n_combos && ok; i++)
			ok = os_key_down(d, &a->combos[i]);
	} else {
		for (int i = a->n_combos - 1; i >= 0; i--)
			ok = os_key_up(d, &a->combos[i]) && ok;
	}
	return ok;
}

static bool click(os_display *d, const agent_computer_action *a, os_button b, int count)
{
	if (a->has_point && !os_mouse_move(d, a->sx, a->sy))
		return false;
	bool ok = mods(d, a, true);
	if (ok)
		ok = os_mouse_click(d, b, count);
	/* Release held modifiers even when the click failed. */
	return mods(d, a, false) && ok;
}

/* A drag, along its path when it has one, with the modifiers held throughout. */
static bool drag(os_display *d, const agent_computer_action *a)
{
	bool ok = mods(d, a, true);
	if (ok && a->n_path > 0)
		ok = os_mouse_drag_path(d, &a->path_s[0][0], a->n_path, OS_BUTTON_LEFT);
	else if (ok)
		ok = os_mouse_drag(d, a->start_sx, a->start_sy, a->sx, a->sy, OS_BUTTON_LEFT);
	return mods(d, a, false) && ok;
}

static bool move(os_display *d, const agent_computer_action *a)
{
	bool ok = mods(d, a, true);
	if (ok)
		ok = os_mouse_move(d, a->sx, a->sy);
	return mods(d, a, false) && ok;
}

static bool run_find_text(agent_tools *t, const agent_computer_action *a,
                          agent_computer_result *r)
{
	const vision_view *v = &t->view;
	os_rect mon = {v->screen_x, v->screen_y, v->screen_w, v->screen_h};
	os_image *img = os_capture(t->display, &mon);
	if (img == NULL) {
		set_text(r, true, "find_text: %s", os_error());
		return true;
	}
	vision_match *m = NULL;
	size_t n = 0;
	bool ok = vision_ocr_find(img, a->text, 0, &m, &n);
	os_image_destroy(img);
	if (!ok) {
		set_text(r, true, "find_text: %s", vision_error());
		return true;
	}
	if (n == 0) {
		set_text(r, false, "\"%s\" was not found on the screen", a->text);
		vision_matches_free(m, n);
		return true;
	}
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "%zu match%s (centre x,y in screenshot coordinates, size, confidence):",
	                 n, n == 1 ? "" : "es");
	for (size_t i = 0; i < n && i < 20; i++) {
		int mx, my, mx2, my2;
		int cx = v->screen_x + m[i].x + m[i].width / 2;
		int cy = v->screen_y + m[i].y + m[i].height / 2;
		if (!vision_screen_to_model(v, cx, cy, &mx, &my))
			continue;
		vision_screen_to_model(v, v->screen_x + m[i].x + m[i].width - 1,
		                       v->screen_y + m[i].y + m[i].height - 1, &mx2, &my2);
		int mx1, my1;
		vision_screen_to_model(v, v->screen_x + m[i].x, v->screen_y + m[i].y, &mx1, &my1);
		agent_buf_printf(&b, "\n%d,%d %dx%d %.0f%% \"%s\"", mx, my, mx2 - mx1 + 1,
		                 my2 - my1 + 1, (double)m[i].confidence, m[i].text);
	}
	vision_matches_free(m, n);
	free(r->text);
	r->text = agent_buf_steal(&b);
	r->is_error = false;
	return true;
}

/* How performing an action went: done (the result's text still to be
 * written), os/ failed, or the result is complete as it is. */
enum outcome { OUTCOME_DONE, OUTCOME_FAILED, OUTCOME_FINAL };

static enum outcome done_if(bool ok)
{
	return ok ? OUTCOME_DONE : OUTCOME_FAILED;
}

static bool press_combos(os_display *d, const agent_computer_action *a,
                         volatile sig_atomic_t *cancel)
{
	bool ok = true;
	int times = a->repeat > 1 ? a->repeat : 1;
	/* Ctrl-C stops a long repeat between presses, never inside a combination. */
	for (int k = 0; k < times && ok && !(cancel && *cancel); k++)
		for (int i = 0; i < a->n_combos && ok; i++)
			ok = os_key_combo(d, &a->combos[i]);
	return ok;
}

/* How long type waits for a clicked element to take the focus. */
#define AC_FOCUS_WAIT_MS 3000

/* type: clicked where asked, the field emptied when asked, then the text. */
static bool type_text(os_display *d, const agent_computer_action *a)
{
	bool ok = true;
	if (a->has_point)
		ok = os_mouse_move(d, a->sx, a->sy) && os_mouse_click(d, OS_BUTTON_LEFT, 1);
	if (ok && a->element > 0)
		(void)agent_elements_await_focus(d, a, AC_FOCUS_WAIT_MS);
	if (ok && a->clear_first) {
		os_combo all, back;
		ok = os_key_parse("ctrl+a", &all) && os_key_parse("BackSpace", &back) &&
		     os_key_combo(d, &all) && os_key_combo(d, &back);
	}
	return ok && os_type(d, a->text, strlen(a->text), -1);
}

/* left_mouse_down / left_mouse_up, after moving to the point if there is one. */
static bool mouse_button(os_display *d, const agent_computer_action *a)
{
	bool ok = true;
	if (a->has_point)
		ok = os_mouse_move(d, a->sx, a->sy);
	if (ok)
		ok = os_mouse_button(d, OS_BUTTON_LEFT, a->kind == AGENT_ACTION_LEFT_MOUSE_DOWN);
	return ok;
}

static bool scroll(os_display *d, const agent_computer_action *a)
{
	bool ok = true;
	if (a->has_point)
		ok = os_mouse_move(d, a->sx, a->sy);
	if (ok)
		ok = mods(d, a, true);
	if (ok)
		ok = os_mouse_scroll(d, a->direction, a->amount);
	/* Release held modifiers even when the scroll failed. */
	return mods(d, a, false) && ok;
}

static enum outcome cursor_position(agent_tools *t, agent_computer_result *r)
{
	r->want_screenshot = false;
	int x, y, mx, my;
	if (!os_pointer(t->display, &x, &y))
		return OUTCOME_FAILED;
	if (!vision_screen_to_model(&t->view, x, y, &mx, &my))
		set_text(r, false, "the pointer is outside the screenshot's monitor (screen %d,%d)", x, y);
	else
		set_text(r, false, "X=%d,Y=%d", mx, my);
	r->pointer_x = x;
	r->pointer_y = y;
	return OUTCOME_FINAL;
}

/* zoom's image goes instead of a screenshot; the model's coordinates
 * still refer to the last full one (Anthropic's zoom semantics). */
static enum outcome zoom(agent_tools *t, const agent_computer_action *a,
                         agent_computer_result *r)
{
	r->want_screenshot = false;
	os_image *img = vision_zoom(t->display, &t->view, a->region[0], a->region[1],
	                            a->region[2], a->region[3], t->shot.max_w, t->shot.max_h,
	                            NULL);
	if (img == NULL) {
		set_text(r, true, "zoom: %s", vision_error());
		return OUTCOME_FINAL;
	}
	bool ok = os_png_encode(img, &r->shot.png, &r->shot.len, NULL);
	r->shot.width = img->width;
	r->shot.height = img->height;
	os_image_destroy(img);
	if (!ok) {
		set_text(r, true, "zoom: %s", os_error());
		return OUTCOME_FINAL;
	}
	set_text(r, false, "zoomed into [%d,%d,%d,%d], shown at %dx%d", a->region[0],
	         a->region[1], a->region[2], a->region[3], r->shot.width, r->shot.height);
	return OUTCOME_DONE;
}

static enum outcome perform(agent_tools *t, const agent_computer_action *a,
                            agent_computer_result *r)
{
	os_display *d = t->display;
	switch (a->kind) {
	case AGENT_ACTION_KEY:
		return done_if(press_combos(d, a, t->cancel));
	case AGENT_ACTION_TYPE:
		return done_if(type_text(d, a));
	case AGENT_ACTION_MOUSE_MOVE:
		return done_if(move(d, a));
	case AGENT_ACTION_LEFT_CLICK:
		return done_if(click(d, a, OS_BUTTON_LEFT, 1));
	case AGENT_ACTION_RIGHT_CLICK:
		return done_if(click(d, a, OS_BUTTON_RIGHT, 1));
	case AGENT_ACTION_MIDDLE_CLICK:
		return done_if(click(d, a, OS_BUTTON_MIDDLE, 1));
	case AGENT_ACTION_BACK_CLICK:
		return done_if(click(d, a, OS_BUTTON_BACK, 1));
	case AGENT_ACTION_FORWARD_CLICK:
		return done_if(click(d, a, OS_BUTTON_FORWARD, 1));
	case AGENT_ACTION_DOUBLE_CLICK:
		return done_if(click(d, a, OS_BUTTON_LEFT, 2));
	case AGENT_ACTION_TRIPLE_CLICK:
		return done_if(click(d, a, OS_BUTTON_LEFT, 3));
	case AGENT_ACTION_LEFT_CLICK_DRAG:
		return done_if(drag(d, a));
	case AGENT_ACTION_LEFT_MOUSE_DOWN:
	case AGENT_ACTION_LEFT_MOUSE_UP:
		return done_if(mouse_button(d, a));
	case AGENT_ACTION_SCROLL:
		return done_if(scroll(d, a));
	case AGENT_ACTION_HOLD_KEY:
		return done_if(os_key_hold(d, &a->combos[0], a->duration_ms));
	case AGENT_ACTION_KEY_DOWN:
		return done_if(os_key_down(d, &a->combos[0]));
	case AGENT_ACTION_KEY_UP:
		return done_if(os_key_up(d, &a->combos[0]));
	case AGENT_ACTION_WAIT:
		if (base_sleep_ms(a->duration_ms, t->cancel))
			return OUTCOME_DONE;
		set_text(r, true, "wait was interrupted");
		return OUTCOME_FINAL;
	case AGENT_ACTION_SCREENSHOT:
		return OUTCOME_DONE;
	case AGENT_ACTION_CURSOR_POSITION:
		return cursor_position(t, r);
	case AGENT_ACTION_ZOOM:
		return zoom(t, a, r);
	case AGENT_ACTION_FIND_TEXT:
		/* The answer comes with the screen it was read from. */
		run_find_text(t, a, r);
		return OUTCOME_DONE;
	case AGENT_ACTION_ELEMENTS:
		r->want_screenshot = false;
		r->text = agent_elements_run(d, &t->view, &r->is_error);
		return r->text != NULL ? OUTCOME_FINAL : OUTCOME_FAILED;
	case AGENT_ACTION_WINDOWS:
		r->want_screenshot = false;
		r->text = agent_windows_run(d, &t->view, &r->is_error);
		return r->text != NULL ? OUTCOME_FINAL : OUTCOME_FAILED;
	default:
		/* The parser refuses such kinds; should one arrive, it does nothing. */
		set_text(r, true, "%s: not supported by this deskhand", a->name);
		r->want_screenshot = false;
		return OUTCOME_DONE;
	}
}

/*
 * The screenshot that answers the action: at once, of the screen as it is,
 * for the actions that look (screenshot, find_text); settled after any
 * other; or, while more calls of the batch follow, once at its end.
 */
static void answer_with_screenshot(agent_tools *t, const agent_computer_action *a,
                                   bool later, agent_computer_result *r)
{
	if (!r->want_screenshot || r->shot.png != NULL)
		return;
	bool own = a->kind == AGENT_ACTION_SCREENSHOT || a->kind == AGENT_ACTION_FIND_TEXT;
	if (!own && later) {
		r->screenshot_due = true;
		return;
	}
	agent_tools_screenshot_for(t, !own, &r->shot, &r->text);
}

static void run_action(agent_tools *t, const agent_proposal *p, agent_computer_result *r)
{
	const agent_computer_action *a = &p->action;
	char why[300];
	if (a->element > 0 && !agent_elements_verify(t->display, a, why, sizeof(why))) {
		set_text(r, true, "%s: %s", a->name, why);
		r->want_screenshot = false;
		return;
	}
	enum outcome o = perform(t, a, r);
	if (o == OUTCOME_FINAL)
		return;
	if (o == OUTCOME_FAILED) {
		/* A lost display is deskhand's failure; anything else the model's. */
		set_text(r, true, "%s failed: %s", a->name, os_error());
		r->want_screenshot = false;
	} else if (r->text == NULL) {
		set_text(r, false, "done: %s", p->description);
	}
	if (!os_pointer(t->display, &r->pointer_x, &r->pointer_y))
		r->pointer_x = r->pointer_y = -1;
}

bool agent_computer_run(agent_tools *t, const agent_proposal *p, bool screenshot_later,
                        agent_computer_result *r)
{
	const agent_computer_action *a = &p->action;
	memset(r, 0, sizeof(*r));
	r->pointer_x = r->pointer_y = -1;
	r->want_screenshot = true;
	run_action(t, p, r);
	/* find_text and zoom capture whole regions: keep no screenful around
	 * (a screenshot gives back what it took itself). */
	if (a->kind == AGENT_ACTION_FIND_TEXT || a->kind == AGENT_ACTION_ZOOM)
		os_capture_trim(t->display, TOOLS_CAPTURE_KEEP_BYTES);
	answer_with_screenshot(t, a, screenshot_later, r);
	return true;
}

void agent_computer_result_finish(agent_computer_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	agent_shot_clear(&r->shot);
	memset(r, 0, sizeof(*r));
}
