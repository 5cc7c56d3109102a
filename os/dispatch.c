/*
 * os/dispatch — every public call on a display, passed to the backend that
 * opened it (os/backend.h), with what all backends share done once here:
 * the checks of arguments that need no display, copies of borrowed
 * captures, PNG encoding where a backend has no faster path, every drag
 * (paced over the backend's own moves and buttons), and "this backend
 * cannot" where it has no function for a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/backend.h"

#define CAN(d, fn, what) \
	((d)->impl->fn != NULL || os_fail("%s: the %s display backend cannot " what, \
	                                  (d)->name, (d)->impl->name))

void os_screen_size(os_display *d, int *width, int *height)
{
	d->impl->screen_size(d, width, height);
}

bool os_point_on_screen(os_display *d, int x, int y)
{
	int w, h;
	os_screen_size(d, &w, &h);
	if (x < 0 || y < 0 || x >= w || y >= h)
		return os_fail("point %d,%d is off the screen (%dx%d)", x, y, w, h);
	return true;
}

bool os_rect_meet(os_rect a, os_rect b, os_rect *out)
{
	int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
	int x1 = a.x + a.width < b.x + b.width ? a.x + a.width : b.x + b.width;
	int y1 = a.y + a.height < b.y + b.height ? a.y + a.height : b.y + b.height;
	if (x1 <= x0 || y1 <= y0)
		return false;
	if (out != NULL)
		*out = (os_rect){x0, y0, x1 - x0, y1 - y0};
	return true;
}

int os_monitors_info(os_display *d, os_monitor *out, int max)
{
	return d->impl->monitors(d, out, max);
}

int os_monitors(os_display *d, os_rect *out, int max)
{
	os_monitor m[16];
	int n = os_monitors_info(d, m, 16);
	for (int i = 0; i < n && i < max && i < 16; i++)
		out[i] = m[i].rect;
	return n;
}

bool os_pointer(os_display *d, int *x, int *y)
{
	return CAN(d, pointer, "tell where the pointer is") && d->impl->pointer(d, x, y);
}

const os_image *os_capture_borrow(os_display *d, const os_rect *region)
{
	if (!CAN(d, capture_borrow, "capture the screen"))
		return NULL;
	return d->impl->capture_borrow(d, region);
}

os_image *os_capture(os_display *d, const os_rect *region)
{
	const os_image *v = os_capture_borrow(d, region);
	if (v == NULL)
		return NULL;
	os_image *out = os_image_create(v->width, v->height);
	if (out == NULL) {
		os_fail("out of memory for a %dx%d capture", v->width, v->height);
		return NULL;
	}
	size_t row = (size_t)v->width * 4;
	for (int y = 0; y < v->height; y++)
		memcpy(out->pixels + (size_t)y * (size_t)out->stride,
		       v->pixels + (size_t)y * (size_t)v->stride, row);
	return out;
}

void os_capture_trim(os_display *d, size_t max_bytes)
{
	if (d->impl->capture_trim != NULL)
		d->impl->capture_trim(d, max_bytes);
}

bool os_capture_uses_shm(os_display *d)
{
	return d->impl->capture_uses_shm != NULL && d->impl->capture_uses_shm(d);
}

static bool capture_png(os_display *d, const os_rect *region, const char *path, int fd,
                        const os_png_options *opt)
{
	if (d->impl->capture_png != NULL)
		return d->impl->capture_png(d, region, path, fd, opt);
	const os_image *img = os_capture_borrow(d, region);
	if (img == NULL)
		return false;
	return path != NULL ? os_png_write_file(img, path, opt) : os_png_write_fd(img, fd, opt);
}

bool os_capture_png_file(os_display *d, const os_rect *region, const char *path,
                         const os_png_options *opt)
{
	if (path == NULL || path[0] == '\0')
		return os_fail("cannot write PNG: empty file name");
	return capture_png(d, region, path, -1, opt);
}

bool os_capture_png_fd(os_display *d, const os_rect *region, int fd,
                       const os_png_options *opt)
{
	return capture_png(d, region, NULL, fd, opt);
}

/* ---- input --------------------------------------------------------------- */

bool os_mouse_move(os_display *d, int x, int y)
{
	return CAN(d, mouse_move, "move the pointer") && d->impl->mouse_move(d, x, y);
}

bool os_mouse_click(os_display *d, os_button b, int count)
{
	return CAN(d, mouse_click, "click") && d->impl->mouse_click(d, b, count);
}

bool os_mouse_button(os_display *d, os_button b, bool down)
{
	return CAN(d, mouse_button, "press buttons") && d->impl->mouse_button(d, b, down);
}

bool os_mouse_drag(os_display *d, int x1, int y1, int x2, int y2, os_button b)
{
	int xy[4] = {x1, y1, x2, y2};
	return os_mouse_drag_path(d, xy, 2, b);
}

bool os_evdev_button(os_button b, uint32_t *code)
{
	switch (b) {
	case OS_BUTTON_LEFT: *code = OS_BTN_LEFT; return true;
	case OS_BUTTON_RIGHT: *code = OS_BTN_LEFT + 1; return true;
	case OS_BUTTON_MIDDLE: *code = OS_BTN_LEFT + 2; return true;
	case OS_BUTTON_BACK: *code = OS_BTN_LEFT + 3; return true;
	case OS_BUTTON_FORWARD: *code = OS_BTN_LEFT + 4; return true;
	}
	return os_fail("unknown mouse button %d", (int)b);
}

#define DRAG_STEPS 12
#define DRAG_STEP_MS 4

/* Paced motion from (x0,y0) to (x1,y1); false once a signal came or a
 * move failed. */
static bool drag_segment(os_display *d, int x0, int y0, int x1, int y1)
{
	for (int i = 1; i <= DRAG_STEPS && os_input_signal_caught() == 0; i++) {
		os_input_sleep_ms(DRAG_STEP_MS);
		int x = x0 + (int)((long)(x1 - x0) * i / DRAG_STEPS);
		int y = y0 + (int)((long)(y1 - y0) * i / DRAG_STEPS);
		if (!d->impl->mouse_move(d, x, y))
			return false;
	}
	return os_input_signal_caught() == 0;
}

/* Every backend's drag: its own moves and buttons, paced here. */
bool os_mouse_drag_path(os_display *d, const int *xy, int n, os_button b)
{
	if (n < 2 || n > 1024)
		return os_fail("a drag path needs 2 to 1024 points (got %d)", n);
	for (int k = 0; k < n; k++)
		if (!os_point_on_screen(d, xy[2 * k], xy[2 * k + 1]))
			return false;
	if (!CAN(d, mouse_move, "move the pointer") || !CAN(d, mouse_button, "press buttons"))
		return false;
	struct os_signal_guard guard;
	os_input_signals_begin(&guard);
	bool ok = d->impl->mouse_move(d, xy[0], xy[1]) && d->impl->mouse_button(d, b, true);
	bool pressed = ok;
	/* Toolkits start a drag once the pointer has moved a few pixels with
	 * the button held; paced steps let them scroll or highlight on the
	 * way, as with a hand on the mouse. */
	for (int k = 1; ok && k < n; k++)
		ok = drag_segment(d, xy[2 * k - 2], xy[2 * k - 1], xy[2 * k], xy[2 * k + 1]);
	char why[256] = "";
	if (!ok && os_input_signal_caught() == 0)
		snprintf(why, sizeof(why), "%s", os_error());
	/* Released even when interrupted or failed: never left held. */
	bool released = !pressed || d->impl->mouse_button(d, b, false);
	int sig = os_input_signal_caught();
	os_input_signals_end(&guard);
	if (why[0] != '\0')
		return os_fail("%s", why);
	if (!released)
		return false;
	if (sig != 0)
		return os_fail("drag interrupted by signal %d", sig);
	return true;
}

bool os_mouse_scroll(os_display *d, os_scroll dir, int amount)
{
	return CAN(d, mouse_scroll, "scroll") && d->impl->mouse_scroll(d, dir, amount);
}

const char *const os_scroll_names[OS_SCROLL_COUNT] = {
	[OS_SCROLL_UP] = "up", [OS_SCROLL_DOWN] = "down",
	[OS_SCROLL_LEFT] = "left", [OS_SCROLL_RIGHT] = "right",
};
BASE_NAME_FUNCTIONS(os_scroll, os_scroll_names, os_scroll_parse, os_scroll_name, "?")

bool os_key_combo(os_display *d, const os_combo *c)
{
	return CAN(d, key_combo, "press keys") && d->impl->key_combo(d, c);
}

bool os_key_down(os_display *d, const os_combo *c)
{
	return CAN(d, key_down, "hold keys") && d->impl->key_down(d, c);
}

bool os_key_up(os_display *d, const os_combo *c)
{
	return CAN(d, key_up, "release keys") && d->impl->key_up(d, c);
}

bool os_key_hold(os_display *d, const os_combo *c, int ms)
{
	return CAN(d, key_hold, "hold keys") && d->impl->key_hold(d, c, ms);
}

bool os_type(os_display *d, const char *utf8, size_t len, int delay_ms)
{
	return CAN(d, type, "type text") && d->impl->type(d, utf8, len, delay_ms);
}

/* ---- windows and their owners -------------------------------------------- */

os_window *os_windows_list(os_display *d, size_t *count)
{
	*count = 0;
	const char *why = NULL;
	if (d->impl->windows_list == NULL) {
		/* The backend's own reason says what the desktop does not offer. */
		if (os_feature_how(d, OS_FEATURE_WINDOWS, &why) == NULL)
			os_fail("%s: no window list: %s", d->name, why);
		else
			os_fail("%s: the %s display backend cannot list windows", d->name, d->impl->name);
		return NULL;
	}
	return d->impl->windows_list(d, count);
}

bool os_window_activate(os_display *d, uint32_t id)
{
	return CAN(d, window_activate, "activate windows") && d->impl->window_activate(d, id);
}

bool os_window_manager_running(os_display *d)
{
	return d->impl->wm_running == NULL || d->impl->wm_running(d);
}

bool os_display_boxes_window_relative(const os_display *d)
{
	return !d->impl->clients_know_position;
}

char *os_root_string(os_display *d, const char *name)
{
	return d->impl->root_string != NULL ? d->impl->root_string(d, name) : NULL;
}

size_t os_client_pids(os_display *d, int *pids, size_t max)
{
	return d->impl->client_pids != NULL ? d->impl->client_pids(d, pids, max) : 0;
}

size_t os_point_owners(os_display *d, int x, int y, int *pids, size_t max)
{
	return d->impl->point_owners != NULL ? d->impl->point_owners(d, x, y, pids, max) : 0;
}

size_t os_keys_owners(os_display *d, int *pids, size_t max)
{
	return d->impl->keys_owners != NULL ? d->impl->keys_owners(d, pids, max) : 0;
}

/* ---- the stop key ---------------------------------------------------------- */

bool os_stop_key_arm(os_display *d, char *desc, size_t size)
{
	return CAN(d, stop_key_arm, "bind a stop key") && d->impl->stop_key_arm(d, desc, size);
}

bool os_stop_key_pressed(os_display *d)
{
	return d->impl->stop_key_pressed != NULL && d->impl->stop_key_pressed(d);
}
