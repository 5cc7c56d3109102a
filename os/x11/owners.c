/*
 * os/owners — which processes own the windows that input would reach, and
 * which processes are X clients at all; with them, whether input would
 * reach deskhand's own terminal (the nearest of deskhand's ancestors that
 * is an X client), which the gate then asks about even under the override.
 *
 * A window's owner is the process of the client that created it as the X
 * server knows it (X-Resource: any client on this machine, whether or not
 * it sets _NET_WM_PID), and also the window's _NET_WM_PID when set (a
 * server without X-Resource). Reporting both errs towards "owned by": the
 * caller only ever asks more because of it.
 */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/extensions/XRes.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/base.h"
#include "os/x11/x11.h"

#define MAX_DEPTH 32

static void add_pid(int pid, int *pids, size_t max, size_t *n)
{
	if (pid <= 0)
		return;
	for (size_t i = 0; i < *n; i++)
		if (pids[i] == pid)
			return;
	if (*n < max)
		pids[(*n)++] = pid;
}

static int wm_pid(os_x11 *d, Window w)
{
	Atom type, prop = XInternAtom(d->dpy, "_NET_WM_PID", False);
	int format;
	unsigned long n = 0, after;
	unsigned char *data = NULL;
	int pid = 0;
	os_x_trap_begin(d);
	if (XGetWindowProperty(d->dpy, w, prop, 0, 1, False, XA_CARDINAL, &type, &format, &n,
	                       &after, &data) == Success &&
	    data != NULL && type == XA_CARDINAL && format == 32 && n == 1) {
		unsigned long v = ((unsigned long *)data)[0];
		pid = v <= INT_MAX ? (int)v : 0;
	}
	if (data != NULL)
		XFree(data);
	os_x_trap_end(d, "reading _NET_WM_PID");
	return pid;
}

static void add_window(os_x11 *d, Window w, int *pids, size_t max, size_t *n)
{
	if (w == None || w == d->root || w == PointerRoot)
		return;
	add_pid(os_x_window_pid(d, w), pids, max, n);
	add_pid(wm_pid(d, w), pids, max, n);
}

size_t os_x11_client_pids(os_x11 *d, int *pids, size_t max)
{
	size_t n = 0;
	int ev, err;
	if (os_display_dead(d) || !XResQueryExtension(d->dpy, &ev, &err))
		return 0;
	/* Client 0: every client the server has. */
	XResClientIdSpec spec = {.client = 0, .mask = XRES_CLIENT_ID_PID_MASK};
	long count = 0;
	XResClientIdValue *ids = NULL;
	os_x_trap_begin(d);
	Status st = XResQueryClientIds(d->dpy, 1, &spec, &count, &ids);
	if (os_x_trap_end(d, "listing the X clients") == 0 && st == Success)
		for (long i = 0; i < count; i++)
			add_pid(XResGetClientPid(&ids[i]), pids, max, &n);
	if (ids != NULL)
		XResClientIdsDestroy(count, ids);
	return n;
}

/* Every window at (x,y) from the top-level child of the root downwards. */
static void add_point(os_x11 *d, int x, int y, int *pids, size_t max, size_t *n)
{
	Window w = d->root;
	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		int wx, wy;
		Window child = None;
		os_x_trap_begin(d);
		Bool ok = XTranslateCoordinates(d->dpy, d->root, w, x, y, &wx, &wy, &child);
		if (os_x_trap_end(d, "finding the window at a point") != 0 || !ok || child == None)
			return;
		add_window(d, child, pids, max, n);
		w = child;
	}
}

size_t os_x11_point_owners(os_x11 *d, int x, int y, int *pids, size_t max)
{
	size_t n = 0;
	if (!os_display_dead(d))
		add_point(d, x, y, pids, max, &n);
	return n;
}

size_t os_x11_keys_owners(os_x11 *d, int *pids, size_t max)
{
	size_t n = 0;
	if (os_display_dead(d))
		return 0;
	Window focus = os_x_focus(d);
	if (focus == PointerRoot || focus == None || focus == d->root) {
		/* Keys follow the pointer: they reach whatever is under it. */
		int x, y;
		if (os_x11_pointer(d, &x, &y))
			add_point(d, x, y, pids, max, &n);
		return n;
	}
	/* The focus window and the windows that hold it (the top-level one). */
	Window w = focus;
	for (int depth = 0; depth < MAX_DEPTH && w != None && w != d->root; depth++) {
		add_window(d, w, pids, max, &n);
		Window root, parent = None, *kids = NULL;
		unsigned int nkids = 0;
		os_x_trap_begin(d);
		Status ok = XQueryTree(d->dpy, w, &root, &parent, &kids, &nkids);
		os_x_trap_end(d, "walking up from the focus");
		if (kids != NULL)
			XFree(kids);
		if (!ok)
			break;
		w = parent;
	}
	return n;
}
