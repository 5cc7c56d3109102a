/*
 * The window list and activation, through EWMH when a window manager runs
 * and through the window tree (ICCCM WM_STATE) otherwise.
 *
 * Windows come and go while we read them: every per-window read happens
 * inside an X error trap, and a window that vanished (BadWindow) is simply
 * left out of the list.
 */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/x11/x11.h"

enum {
	A_CLIENT_LIST_STACKING,
	A_CLIENT_LIST,
	A_ACTIVE_WINDOW,
	A_WM_NAME,
	A_UTF8_STRING,
	A_WM_PID,
	A_WM_STATE,
	A_SUPPORTING_WM_CHECK,
	A_SUPPORTED,
	A_REQUEST_FRAME_EXTENTS,
	A_FRAME_EXTENTS,
	A_COUNT
};

static const char *const atom_names[A_COUNT] = {
	"_NET_CLIENT_LIST_STACKING",
	"_NET_CLIENT_LIST",
	"_NET_ACTIVE_WINDOW",
	"_NET_WM_NAME",
	"UTF8_STRING",
	"_NET_WM_PID",
	"WM_STATE",
	"_NET_SUPPORTING_WM_CHECK",
	"_NET_SUPPORTED",
	"_NET_REQUEST_FRAME_EXTENTS",
	"_NET_FRAME_EXTENTS",
};

static bool atoms_get(os_x11 *d, Atom *atoms)
{
	if (os_display_dead(d))
		return false;
	if (!XInternAtoms(d->dpy, (char **)atom_names, A_COUNT, False, atoms))
		return os_fail("cannot intern the EWMH atoms");
	return true;
}

/*
 * Reads a property of the given type and format; NULL when absent, of
 * another type, or the window is gone. The caller XFree()s the result.
 * Properties are capped at 4 MiB: a title or a client list never needs more.
 */
static unsigned char *prop_get(os_x11 *d, Window w, Atom prop, Atom type,
                               int format, unsigned long *n)
{
	Atom actual_type;
	int actual_format;
	unsigned long after;
	unsigned char *data = NULL;
	*n = 0;
	if (XGetWindowProperty(d->dpy, w, prop, 0, 1l << 20, False, type,
	                       &actual_type, &actual_format, n, &after,
	                       &data) != Success)
		return NULL;
	if (data == NULL)
		return NULL;
	if (actual_type != type || actual_format != format) {
		XFree(data);
		*n = 0;
		return NULL;
	}
	return data;
}

/* One WINDOW-typed value of a property; 0 when unset. */
static Window prop_window(os_x11 *d, Window w, Atom prop)
{
	unsigned long n;
	unsigned char *data = prop_get(d, w, prop, XA_WINDOW, 32, &n);
	Window v = (data != NULL && n > 0) ? (Window)((unsigned long *)data)[0] : 0;
	if (data != NULL)
		XFree(data);
	return v;
}

/*
 * The EWMH manager's check window, validated both ways: a stale property
 * left by a manager that exited points at a window that no longer exists or
 * no longer points back.
 */
static bool ewmh_running(os_x11 *d, const Atom *a)
{
	os_x_trap_begin(d);
	Window check = prop_window(d, d->root, a[A_SUPPORTING_WM_CHECK]);
	Window back = check ? prop_window(d, check, a[A_SUPPORTING_WM_CHECK]) : 0;
	int err = os_x_trap_end(d, "reading _NET_SUPPORTING_WM_CHECK");
	return err == 0 && check != 0 && back == check;
}

/* Sends the manager a ClientMessage about w, as EWMH asks (to the root,
 * both substructure masks). Inside the caller's error trap. */
static void ewmh_send(os_x11 *d, Window w, Atom type, long l0, long l1)
{
	XEvent ev;
	memset(&ev, 0, sizeof(ev));
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = type;
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = l0;
	ev.xclient.data.l[1] = l1;
	XSendEvent(d->dpy, d->root, False, SubstructureRedirectMask | SubstructureNotifyMask, &ev);
}

/* Whether the manager lists `want` in _NET_SUPPORTED. */
static bool ewmh_supports(os_x11 *d, const Atom *a, Atom want)
{
	unsigned long n = 0;
	os_x_trap_begin(d);
	unsigned char *data = prop_get(d, d->root, a[A_SUPPORTED], XA_ATOM, 32, &n);
	os_x_trap_end(d, "reading _NET_SUPPORTED");
	bool found = false;
	for (unsigned long i = 0; data != NULL && i < n && !found; i++)
		found = ((unsigned long *)data)[i] == want;
	if (data != NULL)
		XFree(data);
	return found;
}

/*
 * Whether the manager answers _NET_REQUEST_FRAME_EXTENTS for a fresh
 * unmapped window within 200 ms: it does so from its event loop, which
 * openbox enters well after it sets its check window; a window mapped in
 * between is left unmanaged for good.
 */
static bool ewmh_answers(os_x11 *d, const Atom *a)
{
	os_x_trap_begin(d);
	Window w = XCreateSimpleWindow(d->dpy, d->root, -10, -10, 1, 1, 0, 0, 0);
	ewmh_send(d, w, a[A_REQUEST_FRAME_EXTENTS], 0, 0);
	bool answered = false;
	for (int i = 0; i < 20 && !answered; i++) {
		unsigned long n = 0;
		unsigned char *data = prop_get(d, w, a[A_FRAME_EXTENTS], XA_CARDINAL, 32, &n);
		answered = data != NULL;
		if (data != NULL)
			XFree(data);
		else
			base_sleep_ms(10, NULL);
	}
	XDestroyWindow(d->dpy, w);
	return os_x_trap_end(d, "asking for _NET_FRAME_EXTENTS") == 0 && answered;
}

bool os_x11_wm_running(os_x11 *d)
{
	Atom a[A_COUNT];
	if (!atoms_get(d, a) || !ewmh_running(d, a))
		return false;
	return !ewmh_supports(d, a, a[A_REQUEST_FRAME_EXTENTS]) || ewmh_answers(d, a);
}

/* ---- text ------------------------------------------------------------ */

/*
 * Copies text up to the first NUL into valid UTF-8, each invalid byte
 * becoming U+FFFD. `latin1`: the bytes are ISO 8859-1 (STRING). Malloc'ed;
 * NULL on allocation failure.
 */
static char *text_to_utf8(const unsigned char *s, size_t n, bool latin1)
{
	size_t end = 0;
	while (end < n && s[end] != '\0')
		end++;
	char *out = malloc(end * 3 + 1);
	if (out == NULL)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < end;) {
		if (latin1) {
			o += (size_t)base_utf8_encode(s[i++], out + o);
			continue;
		}
		uint32_t cp;
		size_t l = base_utf8_next((const char *)s + i, end - i, &cp);
		if (l == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, l);
		o += l;
		i += l;
	}
	out[o] = '\0';
	return out;
}

/* WM_NAME in whatever encoding the client chose (STRING, COMPOUND_TEXT...). */
static char *wm_name_utf8(os_x11 *d, Window w, const Atom *a)
{
	XTextProperty tp;
	if (!XGetWMName(d->dpy, w, &tp) || tp.value == NULL)
		return NULL;
	char *out = NULL;
	if (tp.format == 8 && tp.encoding == XA_STRING) {
		out = text_to_utf8(tp.value, tp.nitems, true);
	} else if (tp.format == 8 && tp.encoding == a[A_UTF8_STRING]) {
		out = text_to_utf8(tp.value, tp.nitems, false);
	} else {
		char **list = NULL;
		int count = 0;
		if (Xutf8TextPropertyToTextList(d->dpy, &tp, &list, &count) >= 0 &&
		    list != NULL && count > 0)
			out = text_to_utf8((const unsigned char *)list[0],
			                   strlen(list[0]), false);
		if (list != NULL)
			XFreeStringList(list);
	}
	XFree(tp.value);
	return out;
}

/* ---- listing --------------------------------------------------------- */

/*
 * Reads everything about one window inside a trap. False when the window
 * vanished meanwhile (or memory ran out): the caller skips it.
 */
static bool window_read(os_x11 *d, const Atom *a, Window w, os_window *out)
{
	memset(out, 0, sizeof(*out));
	out->id = (uint32_t)w;
	out->pid = -1;
	os_x_trap_begin(d);
	XWindowAttributes wa;
	if (!XGetWindowAttributes(d->dpy, w, &wa))
		goto fail;
	int rx = 0, ry = 0;
	Window child;
	if (!XTranslateCoordinates(d->dpy, w, d->root, 0, 0, &rx, &ry, &child))
		goto fail;
	out->geometry = (os_rect){rx, ry, wa.width, wa.height};

	unsigned long n;
	unsigned char *data = prop_get(d, w, a[A_WM_PID], XA_CARDINAL, 32, &n);
	if (data != NULL) {
		unsigned long pid = n > 0 ? ((unsigned long *)data)[0] : 0;
		if (pid > 0 && pid <= INT_MAX)
			out->pid = (int)pid;
		XFree(data);
	}

	XClassHint hint = {NULL, NULL};
	if (XGetClassHint(d->dpy, w, &hint)) {
		if (hint.res_class != NULL)
			out->klass = text_to_utf8((unsigned char *)hint.res_class,
			                          strlen(hint.res_class), true);
		XFree(hint.res_name);
		XFree(hint.res_class);
	}

	data = prop_get(d, w, a[A_WM_NAME], a[A_UTF8_STRING], 8, &n);
	if (data != NULL) {
		out->title = text_to_utf8(data, n, false);
		XFree(data);
	} else {
		out->title = wm_name_utf8(d, w, a);
	}
	if (os_x_trap_end(d, "reading a window") != 0)
		goto fail_ended;
	if (out->klass == NULL)
		out->klass = strdup("");
	if (out->title == NULL)
		out->title = strdup("");
	if (out->klass == NULL || out->title == NULL)
		goto fail_ended;
	return true;

fail:
	os_x_trap_end(d, "reading a window");
fail_ended:
	os_window_clear(out);
	return false;
}

static bool has_wm_state(os_x11 *d, const Atom *a, Window w)
{
	Atom type;
	int format;
	unsigned long n, after;
	unsigned char *data = NULL;
	if (XGetWindowProperty(d->dpy, w, a[A_WM_STATE], 0, 0, False,
	                       AnyPropertyType, &type, &format, &n, &after,
	                       &data) != Success)
		return false;
	if (data != NULL)
		XFree(data);
	return type != None;
}

/* The client window under a frame: the first descendant with WM_STATE. */
static Window client_below(os_x11 *d, const Atom *a, Window w, int depth)
{
	if (depth > 6)
		return 0;
	Window root, parent, *kids = NULL;
	unsigned int nkids = 0;
	if (!XQueryTree(d->dpy, w, &root, &parent, &kids, &nkids))
		return 0;
	Window found = 0;
	for (unsigned int i = 0; i < nkids && !found; i++)
		if (has_wm_state(d, a, kids[i]))
			found = kids[i];
	for (unsigned int i = 0; i < nkids && !found; i++)
		found = client_below(d, a, kids[i], depth + 1);
	if (kids != NULL)
		XFree(kids);
	return found;
}

/*
 * Without a window manager: the mapped top-level children of the root,
 * bottom to top, each replaced by its client window when it is a frame of
 * a non-EWMH manager. Override-redirect windows (menus, tooltips) and
 * input-only windows are not windows a user would switch to and are left
 * out. *n receives the count; the array is malloc'ed.
 */
static Window *tree_windows(os_x11 *d, const Atom *a, size_t *n)
{
	*n = 0;
	Window root, parent, *kids = NULL;
	unsigned int nkids = 0;
	os_x_trap_begin(d);
	Status ok = XQueryTree(d->dpy, d->root, &root, &parent, &kids, &nkids);
	if (os_x_trap_end(d, "listing the root's children") != 0 || !ok) {
		if (kids != NULL)
			XFree(kids);
		if (ok)
			return NULL;
		os_fail("cannot list the root window's children");
		return NULL;
	}
	Window *out = malloc(sizeof(*out) * (nkids ? nkids : 1));
	if (out == NULL) {
		if (kids != NULL)
			XFree(kids);
		os_fail("out of memory");
		return NULL;
	}
	for (unsigned int i = 0; i < nkids; i++) {
		os_x_trap_begin(d);
		XWindowAttributes wa;
		Window client = 0;
		if (XGetWindowAttributes(d->dpy, kids[i], &wa) &&
		    wa.map_state == IsViewable && !wa.override_redirect &&
		    wa.class == InputOutput) {
			client = kids[i];
			if (!has_wm_state(d, a, kids[i])) {
				Window below = client_below(d, a, kids[i], 0);
				if (below != 0)
					client = below;
			}
		}
		if (os_x_trap_end(d, "reading a top-level window") == 0 && client)
			out[(*n)++] = client;
	}
	if (kids != NULL)
		XFree(kids);
	return out;
}

/* The manager's client list, bottom to top when it offers stacking order. */
static Window *ewmh_windows(os_x11 *d, const Atom *a, size_t *n)
{
	unsigned long count = 0;
	os_x_trap_begin(d);
	unsigned char *data = prop_get(d, d->root, a[A_CLIENT_LIST_STACKING],
	                               XA_WINDOW, 32, &count);
	if (data == NULL)
		data = prop_get(d, d->root, a[A_CLIENT_LIST], XA_WINDOW, 32, &count);
	os_x_trap_end(d, "reading _NET_CLIENT_LIST");
	Window *out = malloc(sizeof(*out) * (count ? count : 1));
	if (out == NULL) {
		if (data != NULL)
			XFree(data);
		os_fail("out of memory");
		return NULL;
	}
	for (unsigned long i = 0; i < count; i++)
		out[i] = (Window)((unsigned long *)data)[i];
	if (data != NULL)
		XFree(data);
	*n = count;
	return out;
}

Window os_x_focus(os_x11 *d)
{
	Window focus = None;
	int revert;
	os_x_trap_begin(d);
	XGetInputFocus(d->dpy, &focus, &revert);
	os_x_trap_end(d, "reading the input focus");
	return focus;
}

/* The focused window when no manager says which is active. */
static Window focus_window(os_x11 *d)
{
	Window focus = os_x_focus(d);
	return focus == PointerRoot ? 0 : focus;
}

os_window *os_x11_windows_list(os_x11 *d, size_t *count)
{
	*count = 0;
	Atom a[A_COUNT];
	if (!atoms_get(d, a))
		return NULL;
	bool ewmh = ewmh_running(d, a);
	size_t n = 0;
	Window *ids = ewmh ? ewmh_windows(d, a, &n) : tree_windows(d, a, &n);
	if (ids == NULL)
		return NULL;
	Window active;
	if (ewmh) {
		os_x_trap_begin(d);
		active = prop_window(d, d->root, a[A_ACTIVE_WINDOW]);
		os_x_trap_end(d, "reading _NET_ACTIVE_WINDOW");
	} else {
		active = focus_window(d);
	}
	os_window *out = calloc(n ? n : 1, sizeof(*out));
	if (out == NULL) {
		free(ids);
		os_fail("out of memory");
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (window_read(d, a, ids[i], &out[k])) {
			out[k].active = active != 0 && ids[i] == active;
			k++;
		}
	}
	free(ids);
	if (os_display_dead(d)) {
		os_windows_free(out, k);
		return NULL;
	}
	*count = k;
	return out;
}

static bool ewmh_manages(os_x11 *d, const Atom *a, Window w)
{
	size_t n = 0;
	Window *ids = ewmh_windows(d, a, &n);
	bool found = false;
	for (size_t i = 0; ids != NULL && i < n; i++)
		found = found || ids[i] == w;
	free(ids);
	return found;
}

/*
 * Asks the manager to activate the window as a pager would (source 2: EWMH
 * says managers honour pagers without focus-stealing prevention), then
 * waits up to a second for _NET_ACTIVE_WINDOW to name it, so that a
 * screenshot taken right after shows the window in front.
 */
bool os_x11_window_activate(os_x11 *d, uint32_t id)
{
	Atom a[A_COUNT];
	if (!atoms_get(d, a))
		return false;
	if (!ewmh_running(d, a))
		return os_fail("cannot activate window 0x%x: no EWMH window manager "
		               "is running (activation asks the manager through "
		               "_NET_ACTIVE_WINDOW)", id);
	Window w = (Window)id;
	if (!ewmh_manages(d, a, w))
		return os_fail("cannot activate window 0x%x: the window manager does "
		               "not manage such a window", id);
	os_x_trap_begin(d);
	ewmh_send(d, w, a[A_ACTIVE_WINDOW], 2, CurrentTime);   /* 2: a pager's request */
	if (os_x_trap_end(d, "sending _NET_ACTIVE_WINDOW") != 0)
		return false;
	/* A busy machine's manager may take a while; one that never answers
	 * costs the caller these 5 s. */
	for (int i = 0; i < 500; i++) {
		os_x_trap_begin(d);
		Window now = prop_window(d, d->root, a[A_ACTIVE_WINDOW]);
		if (os_x_trap_end(d, "reading _NET_ACTIVE_WINDOW") != 0)
			return false;
		if (now == w)
			return true;
		base_sleep_ms(10, NULL);
	}
	return os_fail("the window manager did not activate window 0x%x within "
	               "5 seconds", id);
}

char *os_x11_root_string(os_x11 *d, const char *name)
{
	if (os_display_dead(d))
		return NULL;
	Atom prop = XInternAtom(d->dpy, name, True);
	if (prop == None)
		return NULL;
	unsigned long n = 0;
	os_x_trap_begin(d);
	unsigned char *data = prop_get(d, d->root, prop, XA_STRING, 8, &n);
	os_x_trap_end(d, "reading a root window property");
	if (data == NULL)
		return NULL;
	char *s = malloc(n + 1);
	if (s != NULL) {
		memcpy(s, data, n);
		s[n] = '\0';
	}
	XFree(data);
	return s;
}
