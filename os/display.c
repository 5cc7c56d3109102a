/*
 * The X connection: opening it, error handlers that record instead of
 * exiting, screen and monitor geometry, the pointer.
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/Xrandr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/os-internal.h"

BASE_ERROR_TEXT(, os_err, os_error, os_fail)

/*
 * Xlib calls the error handler from inside whatever request flushed the
 * error, with no user pointer; the record is therefore process-wide. deskhand
 * drives X from one thread, so one record suffices.
 */
static int x_last_error;
static char x_last_error_text[256];
static bool x_io_dead;

static int x_error_handler(Display *dpy, XErrorEvent *ev)
{
	if (x_last_error == 0) {
		char text[160];
		XGetErrorText(dpy, ev->error_code, text, sizeof(text));
		snprintf(x_last_error_text, sizeof(x_last_error_text),
		         "%s (request %d.%d, resource 0x%lx)", text,
		         ev->request_code, ev->minor_code, ev->resourceid);
		x_last_error = ev->error_code;
	}
	return 0;
}

static int x_io_error_handler(Display *dpy)
{
	(void)dpy;
	x_io_dead = true;
	return 0;
}

/*
 * Called instead of exit() once the connection is gone. Returning leaves the
 * Display marked broken: later requests are dropped, and os_display_dead()
 * lets callers report it instead of dying inside Xlib.
 */
static void x_io_exit_handler(Display *dpy, void *data)
{
	(void)dpy;
	(void)data;
	x_io_dead = true;
}

void os_x_trap_begin(os_display *d)
{
	if (!x_io_dead)
		XSync(d->dpy, False);
	x_last_error = 0;
	x_last_error_text[0] = '\0';
}

int os_x_trap_end(os_display *d, const char *what)
{
	if (!x_io_dead)
		XSync(d->dpy, False);
	if (x_io_dead) {
		os_fail("%s: lost the connection to the X server %s", what, d->name);
		return -1;
	}
	int code = x_last_error;
	if (code != 0)
		os_fail("%s: X error: %s", what, x_last_error_text);
	x_last_error = 0;
	return code;
}

bool os_display_dead(os_display *d)
{
	if (x_io_dead)
		os_fail("lost the connection to the X server %s", d->name);
	return x_io_dead;
}

os_display *os_display_open(const char *name)
{
	if (name == NULL || name[0] == '\0') {
		name = getenv("DISPLAY");
		if (name == NULL || name[0] == '\0') {
			os_fail("no display: DISPLAY is not set and no display was given");
			return NULL;
		}
	}
	os_display *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	d->name = strdup(name);
	if (d->name == NULL) {
		os_fail("out of memory");
		goto err_free;
	}
	XSetErrorHandler(x_error_handler);
	XSetIOErrorHandler(x_io_error_handler);
	d->dpy = XOpenDisplay(name);
	if (d->dpy == NULL) {
		os_fail("cannot open display %s", name);
		goto err_name;
	}
	XSetIOErrorExitHandler(d->dpy, x_io_exit_handler, NULL);
	x_io_dead = false;
	d->screen = DefaultScreen(d->dpy);
	d->root = RootWindow(d->dpy, d->screen);
	return d;

err_name:
	free(d->name);
err_free:
	free(d);
	return NULL;
}

void os_display_close(os_display *d)
{
	if (d == NULL)
		return;
	if (d->input_cleanup != NULL)
		d->input_cleanup(d);
	if (d->capture_cleanup != NULL)
		d->capture_cleanup(d);
	if (d->dpy != NULL && !x_io_dead)
		XCloseDisplay(d->dpy);
	free(d->name);
	free(d);
}

const char *os_display_name(const os_display *d)
{
	return d->name;
}

void os_screen_size(os_display *d, int *width, int *height)
{
	*width = DisplayWidth(d->dpy, d->screen);
	*height = DisplayHeight(d->dpy, d->screen);
}

bool os_point_on_screen(os_display *d, int x, int y)
{
	int w, h;
	os_screen_size(d, &w, &h);
	if (x < 0 || y < 0 || x >= w || y >= h)
		return os_fail("point %d,%d is off the screen (%dx%d)", x, y, w, h);
	return true;
}

int os_monitors(os_display *d, os_rect *out, int max)
{
	int n = 0;
	int ev_base, err_base;
	if (XRRQueryExtension(d->dpy, &ev_base, &err_base)) {
		int nmon = 0;
		XRRMonitorInfo *mons = XRRGetMonitors(d->dpy, d->root, True, &nmon);
		for (int i = 0; mons != NULL && i < nmon; i++) {
			if (n < max) {
				out[n].x = mons[i].x;
				out[n].y = mons[i].y;
				out[n].width = mons[i].width;
				out[n].height = mons[i].height;
			}
			n++;
		}
		if (mons != NULL)
			XRRFreeMonitors(mons);
	}
	if (n == 0) {
		if (max > 0) {
			out[0].x = 0;
			out[0].y = 0;
			os_screen_size(d, &out[0].width, &out[0].height);
		}
		n = 1;
	}
	return n;
}

bool os_pointer(os_display *d, int *x, int *y)
{
	Window root_ret, child;
	int wx, wy;
	unsigned int mask;
	if (os_display_dead(d))
		return false;
	if (!XQueryPointer(d->dpy, d->root, &root_ret, &child, x, y, &wx, &wy, &mask))
		return os_fail("the pointer is on another screen");
	return true;
}
