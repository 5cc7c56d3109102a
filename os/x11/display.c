/*
 * os/x11/display — the X11 backend's connection: opening it, error
 * handlers that record instead of exiting, screen and monitor geometry,
 * the pointer, what the server offers; and the backend's struct of
 * functions (each casts the head to the backend's display).
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/Xrandr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/x11/x11.h"

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

void os_x_trap_begin(os_x11 *d)
{
	if (!x_io_dead)
		XSync(d->dpy, False);
	x_last_error = 0;
	x_last_error_text[0] = '\0';
}

int os_x_trap_end(os_x11 *d, const char *what)
{
	if (!x_io_dead)
		XSync(d->dpy, False);
	if (x_io_dead) {
		os_fail("%s: lost the connection to the X server %s", what, d->base.name);
		return -1;
	}
	int code = x_last_error;
	if (code != 0)
		os_fail("%s: X error: %s", what, x_last_error_text);
	x_last_error = 0;
	return code;
}

bool os_x_lost(const os_display *d)
{
	(void)d;
	return x_io_dead;
}

bool os_display_dead(os_x11 *d)
{
	if (x_io_dead)
		os_fail("lost the connection to the X server %s", d->base.name);
	return x_io_dead;
}

static void offers_list(os_x11 *d)
{
	int n = 0;
	char **ext = XListExtensions(d->dpy, &n);
	size_t len = 1;
	for (int i = 0; ext != NULL && i < n; i++)
		len += strlen(ext[i]) + 2;
	char *buf = malloc(len);
	if (buf != NULL) {
		buf[0] = '\0';
		for (int i = 0; ext != NULL && i < n; i++) {
			if (i > 0)
				strcat(buf, ", ");
			strcat(buf, ext[i]);
		}
		free(d->base.offers);
		d->base.offers = buf;
	}
	if (ext != NULL)
		XFreeExtensionList(ext);
}

os_display *os_x11_open(const char *name, bool *not_mine)
{
	*not_mine = false;
	if (name == NULL || name[0] == '\0') {
		name = getenv("DISPLAY");
		if (name == NULL || name[0] == '\0') {
			os_fail("no display: DISPLAY is not set and no display was given");
			return NULL;
		}
	}
	os_x11 *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	if (!os_display_init_head(&d->base, &os_x11_impl, name))
		goto err_free;
	XSetErrorHandler(x_error_handler);
	XSetIOErrorHandler(x_io_error_handler);
	d->dpy = XOpenDisplay(name);
	if (d->dpy == NULL) {
		os_fail("cannot open display %s", name);
		goto err_free;
	}
	XSetIOErrorExitHandler(d->dpy, x_io_exit_handler, NULL);
	x_io_dead = false;
	d->screen = DefaultScreen(d->dpy);
	d->root = RootWindow(d->dpy, d->screen);
	d->base.session = "X11";
	os_display_set(&d->base.server, "%s %d", ServerVendor(d->dpy), VendorRelease(d->dpy));
	offers_list(d);
	return &d->base;

err_free:
	os_display_free_head(&d->base);
	return NULL;
}

void os_x11_destroy(os_x11 *d)
{
	if (d->input_cleanup != NULL)
		d->input_cleanup(d);
	if (d->capture_cleanup != NULL)
		d->capture_cleanup(d);
	if (d->dpy != NULL && !x_io_dead)
		XCloseDisplay(d->dpy);
	os_display_free_head(&d->base);
}

void os_x11_screen_size(os_x11 *d, int *width, int *height)
{
	*width = DisplayWidth(d->dpy, d->screen);
	*height = DisplayHeight(d->dpy, d->screen);
}

static void monitor_name(os_x11 *d, Atom a, char *out, size_t size)
{
	out[0] = '\0';
	if (a == None)
		return;
	os_x_trap_begin(d);
	char *n = XGetAtomName(d->dpy, a);
	os_x_trap_end(d, "naming a monitor");
	if (n != NULL) {
		snprintf(out, size, "%s", n);
		XFree(n);
	}
}

int os_x11_monitors(os_x11 *d, os_monitor *out, int max)
{
	int n = 0;
	int ev_base, err_base;
	if (XRRQueryExtension(d->dpy, &ev_base, &err_base)) {
		int nmon = 0;
		XRRMonitorInfo *mons = XRRGetMonitors(d->dpy, d->root, True, &nmon);
		for (int i = 0; mons != NULL && i < nmon; i++) {
			if (n < max) {
				out[n].rect = (os_rect){mons[i].x, mons[i].y, mons[i].width,
				                        mons[i].height};
				out[n].scale = 1.0;
				monitor_name(d, mons[i].name, out[n].name, sizeof(out[n].name));
			}
			n++;
		}
		if (mons != NULL)
			XRRFreeMonitors(mons);
	}
	if (n == 0) {
		if (max > 0) {
			out[0] = (os_monitor){.rect = {0, 0, 0, 0}, .scale = 1.0};
			os_x11_screen_size(d, &out[0].rect.width, &out[0].rect.height);
		}
		n = 1;
	}
	return n;
}

bool os_x11_pointer(os_x11 *d, int *x, int *y)
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
