/*
 * os/x11/backend — the X11 backend's struct of functions: what os/display.c
 * calls through for a display this backend opened. Each entry casts the
 * head to the backend's display; the work is in the files beside this one.
 */
#include <X11/Xlib.h>
#include <X11/extensions/XRes.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/XTest.h>

#include "os/x11/x11.h"

static os_x11 *X(os_display *d)
{
	return (os_x11 *)d;
}

static void destroy(os_display *d) { os_x11_destroy(X(d)); }
static void screen_size(os_display *d, int *w, int *h) { os_x11_screen_size(X(d), w, h); }
static int monitors(os_display *d, os_monitor *out, int max) { return os_x11_monitors(X(d), out, max); }
static bool pointer(os_display *d, int *x, int *y) { return os_x11_pointer(X(d), x, y); }

static const os_image *capture_borrow(os_display *d, const os_rect *r)
{
	return os_x11_capture_borrow(X(d), r);
}
static void capture_trim(os_display *d, size_t max) { os_x11_capture_trim(X(d), max); }
static bool capture_uses_shm(os_display *d) { return os_x11_capture_uses_shm(X(d)); }
static bool capture_png(os_display *d, const os_rect *r, const char *path, int fd,
                        const os_png_options *opt)
{
	return os_x11_capture_png(X(d), r, path, fd, opt);
}

static bool mouse_move(os_display *d, int x, int y) { return os_x11_mouse_move(X(d), x, y); }
static bool mouse_click(os_display *d, os_button b, int n) { return os_x11_mouse_click(X(d), b, n); }
static bool mouse_button(os_display *d, os_button b, bool down)
{
	return os_x11_mouse_button(X(d), b, down);
}
static bool mouse_scroll(os_display *d, os_scroll dir, int amount)
{
	return os_x11_mouse_scroll(X(d), dir, amount);
}

static bool key_combo(os_display *d, const os_combo *c) { return os_x11_key_combo(X(d), c); }
static bool key_down(os_display *d, const os_combo *c) { return os_x11_key_down(X(d), c); }
static bool key_up(os_display *d, const os_combo *c) { return os_x11_key_up(X(d), c); }
static bool key_hold(os_display *d, const os_combo *c, int ms) { return os_x11_key_hold(X(d), c, ms); }
static bool type(os_display *d, const char *s, size_t len, int delay_ms)
{
	return os_x11_type(X(d), s, len, delay_ms);
}

static os_window *windows_list(os_display *d, size_t *n) { return os_x11_windows_list(X(d), n); }
static bool window_activate(os_display *d, uint32_t id) { return os_x11_window_activate(X(d), id); }
static bool wm_running(os_display *d) { return os_x11_wm_running(X(d)); }
static char *root_string(os_display *d, const char *name) { return os_x11_root_string(X(d), name); }

static size_t client_pids(os_display *d, int *pids, size_t max)
{
	return os_x11_client_pids(X(d), pids, max);
}
static size_t point_owners(os_display *d, int x, int y, int *pids, size_t max)
{
	return os_x11_point_owners(X(d), x, y, pids, max);
}
static size_t keys_owners(os_display *d, int *pids, size_t max)
{
	return os_x11_keys_owners(X(d), pids, max);
}

static const char *feature(os_display *head, os_feature f, const char **why)
{
	os_x11 *d = X(head);
	int ev, err, major, minor;
	bool xtest = XTestQueryExtension(d->dpy, &ev, &err, &major, &minor);
	switch (f) {
	case OS_FEATURE_CAPTURE:
		return os_x11_capture_uses_shm(d) ? "MIT-SHM" : "XGetImage";
	case OS_FEATURE_POINTER:
	case OS_FEATURE_KEYS:
		if (xtest)
			return "XTEST";
		break;
	case OS_FEATURE_TYPING:
		if (xtest)
			return "XTEST, spare keycodes bound through XKB";
		break;
	case OS_FEATURE_WINDOWS:
		return "EWMH (_NET_CLIENT_LIST, _NET_ACTIVE_WINDOW)";
	case OS_FEATURE_OWNERS:
		return XResQueryExtension(d->dpy, &ev, &err) ? "X-Resource, _NET_WM_PID"
		                                             : "_NET_WM_PID";
	case OS_FEATURE_POINTER_POSITION:
		return "XQueryPointer";
	case OS_FEATURE_HELD_KEYS:
		if (xtest)
			return "XTEST (the server holds them)";
		break;
	case OS_FEATURE_COUNT:
		break;
	}
	*why = xtest ? "unknown feature" : "the X server lacks the XTEST extension";
	return NULL;
}

const struct os_backend_impl os_x11_impl = {
	.name = "x11",
	.clients_know_position = true,
	.destroy = destroy,
	.screen_size = screen_size,
	.monitors = monitors,
	.pointer = pointer,
	.capture_borrow = capture_borrow,
	.capture_trim = capture_trim,
	.capture_uses_shm = capture_uses_shm,
	.capture_png = capture_png,
	.mouse_move = mouse_move,
	.mouse_click = mouse_click,
	.mouse_button = mouse_button,
	.mouse_scroll = mouse_scroll,
	.key_combo = key_combo,
	.key_down = key_down,
	.key_up = key_up,
	.key_hold = key_hold,
	.type = type,
	.windows_list = windows_list,
	.window_activate = window_activate,
	.wm_running = wm_running,
	.root_string = root_string,
	.client_pids = client_pids,
	.point_owners = point_owners,
	.keys_owners = keys_owners,
	.feature = feature,
	.lost = os_x_lost,
};
