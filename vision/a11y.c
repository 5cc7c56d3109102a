/*
 * The accessibility tree (see a11y.h): libatspi finds the bus (through
 * a11y-conn.c) and the applications; the nodes of one application are
 * read through a11y-wire.c, which asks the toolkit's cache first and sends
 * the rest in waves. The marks drawn from a read are marks.c's.
 *
 * Cost: every D-Bus call costs the application a dispatch, so the walk
 * asks each node only what it must (a node that is not SHOWING costs its
 * states and its subtree nothing; a box is asked only where wants_box
 * says), asks a row of siblings at once (ask_ahead), and enters big
 * containers at their visible part instead of asking every row. Nothing
 * is kept from one read to the next.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "config.h"
#include "vision/a11y.h"
#include "vision/vision-internal.h"

void vision_element_centre(const vision_element *el, int *x, int *y)
{
	*x = el->box.x + el->box.width / 2;
	*y = el->box.y + el->box.height / 2;
}

static void elements_free_items(vision_elements *e)
{
	for (size_t i = 0; i < e->count; i++) {
		free(e->items[i].role);
		free(e->items[i].name);
		free(e->items[i].text);
		free(e->items[i].states);
	}
	free(e->items);
	e->items = NULL;
	e->count = 0;
}

void vision_elements_destroy(vision_elements *e)
{
	if (e == NULL)
		return;
	elements_free_items(e);
	free(e);
}

/* An empty list. Ownership: the caller's (vision_elements_destroy); NULL
 * with vision_error() when out of memory. */
static vision_elements *elements_new(void)
{
	vision_elements *e = calloc(1, sizeof(*e));
	if (e == NULL)
		vision_fail("out of memory");
	return e;
}

static void note(vision_elements *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(vision_elements *e, const char *fmt, ...)
{
	if (e->note[0] != '\0')
		return; /* the first reason is the one that matters */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->note, sizeof(e->note), fmt, ap);
	va_end(ap);
}

#if DESKHAND_HAVE_ATSPI
#include <atspi/atspi.h>

#include "vision/a11y-internal.h"
#include "vision/a11y-wire.h"
#include "vision/a11y-libs.h"

/* ---- one walk ------------------------------------------------------- */

typedef struct walk {
	vision_elements *e;
	size_t cap;
	os_rect screen;
	int64_t deadline;   /* base_now_ns */
	int max_nodes;
	int pid;
	int patience_ms;    /* the longest one call to the application being read waits */
	char hung[128];     /* "zenity (pid 12), ...": applications that did not answer */
	int hung_count, hung_ms;
	a11y_wire *net; /* the application being read: its nodes are ints */
	/* GTK 4 (its own AT-SPI code, no atk-bridge): VISIBLE stands for
	 * SHOWING, and boxes are relative to the window, moved by (dx, dy). */
	bool gtk4;
	/* Every toolkit's boxes are relative to its window (Wayland:
	 * os_display_boxes_window_relative), moved by (dx, dy) too. */
	bool relative;
	int dx, dy;
} walk;

/* Every call waits at most what is left of the wall-time cap. */
static bool time_ok(walk *w)
{
	long left = base_ms_until(w->deadline);
	if (left <= 0) {
		w->e->partial = true;
		note(w->e, "partial: the time cap ran out (an application answers slowly "
		           "or hangs)");
		return false;
	}
	atspi_set_timeout((gint)left, (gint)left);
	return true;
}

static bool gerr(GError **err)
{
	if (*err == NULL)
		return false;
	g_clear_error(err);
	return true;
}

static bool has(const walk *w, int n, AtspiStateType s)
{
	return a11y_wire_has(w->net, n, s);
}

/* GTK 4.8 marks only windows SHOWING, every other widget VISIBLE. */
static bool shown(const walk *w, int n)
{
	return has(w, n, ATSPI_STATE_SHOWING) || (w->gtk4 && has(w, n, ATSPI_STATE_VISIBLE));
}

static const char *name_of(const walk *w, int n)
{
	const char *name = a11y_wire_name(w->net, n);
	return w->gtk4 && vision_a11y_gtk_class_name(name) ? "" : name;
}

/* n's box on the screen (GTK 4's moved from its window's corner). */
static bool box_of(const walk *w, int n, os_rect *out)
{
	if (!a11y_wire_box(w->net, n, out))
		return false;
	out->x += w->dx;
	out->y += w->dy;
	return true;
}

/* The states a model acts on, by name; "" for none. */
static char *states_text(const walk *w, int n)
{
	static const struct {
		AtspiStateType s;
		const char *name;
		bool when;
	} shown[] = {
		{ATSPI_STATE_FOCUSED, "focused", true},
		{ATSPI_STATE_CHECKED, "checked", true},
		{ATSPI_STATE_PRESSED, "pressed", true},
		{ATSPI_STATE_SELECTED, "selected", true},
		{ATSPI_STATE_EXPANDED, "expanded", true},
		{ATSPI_STATE_EDITABLE, "editable", true},
		{ATSPI_STATE_SENSITIVE, "disabled", false},
	};
	char buf[128] = "";
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		if (has(w, n, shown[i].s) != shown[i].when)
			continue;
		if (buf[0] != '\0')
			strcat(buf, ",");
		strcat(buf, shown[i].name);
	}
	return strdup(buf);
}

#define A11Y_TEXT_MAX 100

static bool keep(const walk *w, int n, AtspiRole role, const char *name, const char *text)
{
	if (vision_a11y_role_interactive(role))
		return true;
	bool named = name[0] != '\0' || text[0] != '\0';
	if (role == ATSPI_ROLE_TEXT && has(w, n, ATSPI_STATE_EDITABLE))
		return true;
	return named && (vision_a11y_role_texty(role) || has(w, n, ATSPI_STATE_FOCUSABLE));
}

static bool add(walk *w, int n, AtspiRole role, const char *name, const char *text,
                os_rect box)
{
	vision_elements *e = w->e;
	if (e->count == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		vision_element *items = realloc(e->items, cap * sizeof(*items));
		if (items == NULL)
			return vision_fail("out of memory");
		e->items = items;
		w->cap = cap;
	}
	vision_element *el = &e->items[e->count];
	gchar *rn = atspi_role_get_name(role);
	el->role = strdup(rn ? rn : "unknown");
	g_free(rn);
	el->name = strdup(name);
	el->text = strdup(text);
	el->states = states_text(w, n);
	el->box = box;
	el->pid = w->pid;
	el->id = (int)e->count + 1;
	if (!el->role || !el->name || !el->text || !el->states) {
		free(el->role), free(el->name), free(el->text), free(el->states);
		return vision_fail("out of memory");
	}
	e->count++;
	return true;
}

/* OK: walked; HIDDEN: not on screen; BELOW: below the clip; STOP: a cap. */
enum step { STEP_OK, STEP_HIDDEN, STEP_BELOW, STEP_STOP, STEP_FAIL };

static enum step walk_node(walk *w, int n, int depth, os_rect clip, bool boxed);

#define A11Y_HEAD 16   /* a big container's first children: its headers */
#define A11Y_PROBES 8  /* hit tests down its visible part */
#define A11Y_MISSES 32 /* children off screen in a row after visible ones: the end */
#define A11Y_WAVE 16   /* a big container's children asked about at once */

/*
 * Where the visible rows of a big container start: hit tests at points
 * down its visible part (the first may land on a header), the smallest
 * index past the headers. A11Y_HEAD when the tests say nothing.
 */
static int first_visible(walk *w, int n, os_rect vis)
{
	int xs[A11Y_PROBES], ys[A11Y_PROBES], idx[A11Y_PROBES];
	for (int k = 0; k < A11Y_PROBES; k++) {
		xs[k] = vis.x + 2 - w->dx;
		ys[k] = vis.y + 2 + (int)((long)(vis.height - 4) * k / A11Y_PROBES) - w->dy;
	}
	a11y_wire_hits(w->net, n, xs, ys, A11Y_PROBES, idx);
	int best = -1;
	for (int k = 0; k < A11Y_PROBES; k++)
		if (idx[k] >= A11Y_HEAD && (best < 0 || idx[k] < best))
			best = idx[k];
	/* A row's cells come before the one hit: start a few children early. */
	return best < 0 ? A11Y_HEAD : (best - A11Y_HEAD > A11Y_HEAD ? best - A11Y_HEAD : A11Y_HEAD);
}

/* Whether the allowlist may keep a node with this role, name and states. */
static bool candidate(const walk *w, int n, AtspiRole role, const char *name)
{
	return vision_a11y_role_interactive(role) || vision_a11y_role_texty(role) ||
	       name[0] != '\0' || role == ATSPI_ROLE_TEXT || has(w, n, ATSPI_STATE_FOCUSABLE);
}

/*
 * Whether a SHOWING node's box (one more call) is needed: when it may be
 * kept, holds a big container's rows, or is one of them (`boxed`); the
 * other containers pass their clip on and their children are judged alone.
 */
static bool wants_box(const walk *w, int n, int depth, bool boxed)
{
	/* GTK 4 marks a stack's hidden pages VISIBLE too: there every node's
	 * box is asked, and an empty one prunes. */
	return w->gtk4 || boxed || depth == 0 || a11y_wire_child_count(w->net, n) > VISION_A11Y_BIG ||
	       candidate(w, n, a11y_wire_role(w->net, n), name_of(w, n));
}

/*
 * Children [from, to) of n (those that are there, at most `max`) into
 * kids, asked in one wave (one call when n has at most `max` children);
 * returns how many.
 */
static int children_of(walk *w, int n, int from, int to, int max, int *kids)
{
	int k = 0;
	a11y_wire_children(w->net, n, from, to, max);
	for (int i = from; i < to && k < max; i++) {
		int kid = a11y_wire_child(w->net, n, i, max);
		if (kid >= 0)
			kids[k++] = kid;
	}
	return k;
}

/*
 * Children [from, to) of n asked about in waves: their properties in one
 * (what the toolkit's cache lacked), then the boxes the SHOWING ones need
 * in another, so the walk that follows finds them answered.
 */
static void ask_ahead(walk *w, int n, int from, int to, int depth, bool boxed)
{
	int kids[VISION_A11Y_BIG];
	int k = children_of(w, n, from, to, VISION_A11Y_BIG, kids);
	a11y_wire_props(w->net, kids, k);
	for (int j = 0; j < k; j++) {
		if (!shown(w, kids[j]))
			continue;
		if (wants_box(w, kids[j], depth, boxed))
			a11y_wire_want_box(w->net, kids[j]);
		a11y_wire_want_children(w->net, kids[j], VISION_A11Y_BIG);
	}
}

/* Children [from, to) of n; in a big container, stops past the visible part. */
static enum step walk_range(walk *w, int n, int from, int to, int depth, os_rect clip,
                            bool big)
{
	bool seen = false;
	int misses = 0;
	for (int i = from; i < to; i++) {
		int wave = big ? A11Y_WAVE : VISION_A11Y_BIG;
		if ((i - from) % wave == 0)
			ask_ahead(w, n, i, i + wave < to ? i + wave : to, depth + 1, big);
		int child = a11y_wire_child(w->net, n, i, VISION_A11Y_BIG);
		if (child < 0)
			continue;
		enum step s = walk_node(w, child, depth + 1, clip, big);
		if (s == STEP_STOP || s == STEP_FAIL)
			return s;
		if (!big)
			continue;
		if (s == STEP_BELOW)
			break; /* rows past the visible part: the rest are further down */
		if (s == STEP_OK) {
			seen = true;
			misses = 0;
		} else if (seen && ++misses >= A11Y_MISSES) {
			break; /* GTK puts rows below the view at G_MININT too */
		}
	}
	return STEP_OK;
}

static enum step walk_children(walk *w, int n, int depth, os_rect clip, os_rect box)
{
	int count = a11y_wire_child_count(w->net, n);
	if (count <= VISION_A11Y_BIG)
		return walk_range(w, n, 0, count, depth, clip, false);
	/* SHOWING prunes nothing here (GTK marks every row of a list so): the
	 * headers, then the rows from where a hit test finds the first. */
	os_rect vis;
	if (!os_rect_meet(clip, box, &vis))
		return STEP_OK;
	enum step s = walk_range(w, n, 0, A11Y_HEAD, depth, vis, false);
	if (s != STEP_OK)
		return s;
	int start = first_visible(w, n, vis);
	int end = count < start + VISION_A11Y_MAX_CHILDREN ? count : start + VISION_A11Y_MAX_CHILDREN;
	s = walk_range(w, n, start, end, depth, vis, true);
	if (s == STEP_OK && end < count && w->e->nodes >= w->max_nodes) {
		w->e->partial = true;
		note(w->e, "partial: a node has %d children (cap %d)", count, VISION_A11Y_MAX_CHILDREN);
	}
	return s;
}

/* The text to judge a node by: "" where its name says it all; NULL: not kept. */
static char *text_for(walk *w, int n, AtspiRole role, const char *name)
{
	/* Every call costs a round trip into the app: a named button's text
	 * is its name, and only fields and unnamed nodes are asked for more. */
	bool field = role == ATSPI_ROLE_TEXT || role == ATSPI_ROLE_ENTRY ||
	             role == ATSPI_ROLE_SPIN_BUTTON || role == ATSPI_ROLE_SLIDER ||
	             role == ATSPI_ROLE_PROGRESS_BAR || role == ATSPI_ROLE_LEVEL_BAR ||
	             role == ATSPI_ROLE_PASSWORD_TEXT;
	if (role == ATSPI_ROLE_PASSWORD_TEXT)
		return strdup(""); /* never read */
	bool unnamed_text = name[0] == '\0' &&
	                    (vision_a11y_role_texty(role) || has(w, n, ATSPI_STATE_FOCUSABLE));
	if (field || unnamed_text)
		return a11y_wire_short_text(w->net, n, A11Y_TEXT_MAX);
	if (vision_a11y_role_interactive(role) || name[0] != '\0')
		return strdup("");
	return NULL;
}

/* A SHOWING node: its box when wants_box says so, then it and its children. */
static enum step visit(walk *w, int n, int depth, os_rect clip, bool boxed)
{
	AtspiRole role = a11y_wire_role(w->net, n);
	const char *name = name_of(w, n);
	os_rect box = clip, seen = clip;
	bool may_keep = candidate(w, n, role, name);
	if (wants_box(w, n, depth, boxed)) {
		/* A GTK 4 stack page has no box of its own (its child has) and
		 * passes the clip on. */
		if (box_of(w, n, &box))
			;
		else if (!w->gtk4 || a11y_wire_has_component(w->net, n))
			return STEP_HIDDEN;
		else
			may_keep = false; /* no box to show */
		if (box.y >= clip.y + clip.height)
			return STEP_BELOW;
		if (!os_rect_meet(box, clip, &seen))
			return STEP_HIDDEN;
	}
	enum step s = STEP_OK;
	char *text = may_keep ? text_for(w, n, role, name) : NULL;
	bool want = text != NULL && keep(w, n, role, name, text);
	if (want && !add(w, n, role, name, text, seen))
		s = STEP_FAIL;
	free(text);
	if (s == STEP_OK && a11y_wire_child_count(w->net, n) > 0)
		s = walk_children(w, n, depth, clip, box);
	return s;
}

static enum step walk_node(walk *w, int n, int depth, os_rect clip, bool boxed)
{
	if (!time_ok(w))
		return STEP_STOP;
	if (w->e->nodes >= w->max_nodes) {
		w->e->partial = true;
		note(w->e, "partial: %d nodes read (the node cap)", w->max_nodes);
		return STEP_STOP;
	}
	if (depth > VISION_A11Y_MAX_DEPTH) {
		w->e->partial = true;
		note(w->e, "partial: the tree is deeper than %d", VISION_A11Y_MAX_DEPTH);
		return STEP_OK;
	}
	w->e->nodes++;
	a11y_wire_props(w->net, &n, 1); /* asked already, by the cache or a wave */
	if (!shown(w, n))
		return STEP_HIDDEN; /* one question, and its subtree costs nothing */
	return visit(w, n, depth, clip, boxed);
}

/* ---- which windows -------------------------------------------------- */

/* The frame of the application that overlaps `win` most; -1 when none shows. */
static int frame_for(walk *w, os_rect win)
{
	int root = a11y_wire_root(w->net);
	a11y_wire_props(w->net, &root, 1);
	int n = a11y_wire_child_count(w->net, root);
	n = n < VISION_A11Y_MAX_CHILDREN ? n : VISION_A11Y_MAX_CHILDREN;
	for (int i = 0; i < n; i++) {
		int f = a11y_wire_child(w->net, root, i, VISION_A11Y_MAX_CHILDREN);
		if (f >= 0)
			a11y_wire_want_box(w->net, f); /* every frame's box in one wave */
	}
	int best = -1;
	long best_area = 0;
	for (int i = 0; i < n; i++) {
		int f = a11y_wire_child(w->net, root, i, VISION_A11Y_MAX_CHILDREN);
		os_rect box, meet;
		long area = f >= 0 && box_of(w, f, &box) && os_rect_meet(box, win, &meet)
		                    ? (long)meet.width * meet.height : 0;
		if (area > best_area) {
			best = f;
			best_area = area;
		}
	}
	return best;
}
static bool active_window(os_display *d, os_rect *win, int *pid, vision_elements *e)
{
	size_t n = 0;
	os_window *ws = os_windows_list(d, &n);
	if (ws == NULL)
		return vision_fail_os("cannot tell where the active window is, so its controls' boxes "
		                      "cannot be placed on the screen (the screenshot and find_text "
		                      "still work)");
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		if (ws[i].active) {
			*win = ws[i].geometry;
			*pid = ws[i].pid;
			found = true;
		}
	}
	os_windows_free(ws, n);
	if (!found)
		note(e, "no active window");
	return true;
}


/*
 * GTK 4 speaks AT-SPI itself (no atk-bridge) and gives every box relative
 * to its window, whatever coordinate type is asked (it cannot know the
 * screen under Wayland); GTK 3 and Qt answer in screen coordinates. The
 * first question to the application: *hung when it waited all of the
 * application's patience unanswered (libatspi then sets no error: a
 * time-out tells itself only by the time it took).
 */
static bool toolkit_gtk4(walk *w, AtspiAccessible *app, bool *hung)
{
	long left = base_ms_until(w->deadline);
	long wait = left < w->patience_ms ? left : w->patience_ms;
	atspi_set_timeout((gint)wait, (gint)wait);
	GError *err = NULL;
	int64_t asked = base_now_ns();
	gchar *name = atspi_accessible_get_toolkit_name(app, &err);
	gerr(&err);
	*hung = name == NULL && wait == w->patience_ms &&
	        base_now_ns() - asked >= wait * BASE_NS_PER_MS * 9 / 10;
	gchar *version = *hung ? NULL : atspi_accessible_get_toolkit_version(app, &err);
	gerr(&err);
	bool yes = name != NULL && version != NULL && strcmp(name, "GTK") == 0 &&
	           strncmp(version, "4.", 2) == 0;
	g_free(name);
	g_free(version);
	return yes;
}

/*
 * The content of a frame drawn with a client-side shadow (GTK 3's header
 * bar windows on Wayland): the union of its children's boxes, which is the
 * window the compositor places, inside the surface the boxes count from.
 */
static bool frame_content(walk *w, int f, os_rect fb, os_rect *out)
{
	int kids[VISION_A11Y_BIG];
	int k = children_of(w, f, 0, VISION_A11Y_BIG, VISION_A11Y_BIG, kids);
	a11y_wire_props(w->net, kids, k);
	for (int j = 0; j < k; j++)
		if (shown(w, kids[j]))
			a11y_wire_want_box(w->net, kids[j]);
	int x0 = fb.width, y0 = fb.height, x1 = 0, y1 = 0;
	for (int j = 0; j < k; j++) {
		os_rect b;
		if (!shown(w, kids[j]) || !box_of(w, kids[j], &b) || !os_rect_meet(b, fb, &b))
			continue; /* GTK puts what it hides at G_MININT */
		x0 = b.x < x0 ? b.x : x0;
		y0 = b.y < y0 ? b.y : y0;
		x1 = b.x + b.width > x1 ? b.x + b.width : x1;
		y1 = b.y + b.height > y1 ? b.y + b.height : y1;
	}
	*out = (os_rect){x0, y0, x1 - x0, y1 - y0};
	return x1 > x0 && y1 > y0;
}

/*
 * Where a window-relative frame's boxes sit on the screen: at the window's
 * place, less the shadow that a client-side decoration keeps around the
 * window (the frame is then the whole surface and its children the
 * window), or the difference in size split evenly where the children do
 * not tell (GTK 4's border on X11). A frame not at 0,0 answers in screen
 * coordinates already (an XWayland client).
 */
static void place_frame(walk *w, int f, os_rect win)
{
	os_rect fb, in;
	if (f < 0 || !box_of(w, f, &fb) || fb.x != 0 || fb.y != 0)
		return;
	if (w->relative && (fb.width != win.width || fb.height != win.height) &&
	    frame_content(w, f, fb, &in) && in.width == win.width && in.height == win.height) {
		w->dx = win.x - in.x;
		w->dy = win.y - in.y;
		return;
	}
	w->dx = win.x + (win.width - fb.width) / 2;
	w->dy = win.y + (win.height - fb.height) / 2;
}

/*
 * The window-relative app's frame that is `win` (all of its frames say
 * they are at 0,0, so overlap tells nothing): the one that is ACTIVE; else
 * (no keyboard focus: a seat without a keyboard) the one of the window's
 * size, or the only one shown; and where its boxes sit on the screen.
 */
static int relative_frame(walk *w, os_rect win)
{
	int root = a11y_wire_root(w->net), kids[VISION_A11Y_MAX_CHILDREN];
	a11y_wire_props(w->net, &root, 1);
	int n = a11y_wire_child_count(w->net, root);
	n = n < VISION_A11Y_MAX_CHILDREN ? n : VISION_A11Y_MAX_CHILDREN;
	int k = children_of(w, root, 0, n, VISION_A11Y_MAX_CHILDREN, kids);
	a11y_wire_props(w->net, kids, k);
	int found = -1, sized = -1, only = -1, showing = 0;
	for (int j = 0; j < k && found < 0; j++)
		if (has(w, kids[j], ATSPI_STATE_ACTIVE))
			found = kids[j];
	for (int j = 0; j < k && found < 0 && w->relative; j++)
		if (shown(w, kids[j]))
			a11y_wire_want_box(w->net, kids[j]); /* in one wave */
	for (int j = 0; j < k && found < 0 && w->relative; j++) {
		os_rect fb;
		if (!shown(w, kids[j]))
			continue;
		showing++;
		only = kids[j];
		if (sized < 0 && box_of(w, kids[j], &fb) && fb.width == win.width &&
		    fb.height == win.height)
			sized = kids[j];
	}
	if (found < 0)
		found = sized >= 0 ? sized : showing == 1 ? only : frame_for(w, win);
	place_frame(w, found, win);
	return found;
}

/* Names the application being read as one that did not answer: its read
 * stopped there (what it said before stays listed) and the walk goes on. */
static void hung_add(walk *w)
{
	char comm[32];
	base_proc_comm(w->pid, comm, sizeof(comm));
	for (char *c = comm; *c != '\0'; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?'; /* the process names itself: hostile text in a note */
	size_t at = strlen(w->hung);
	if (w->hung_count < 4)
		snprintf(w->hung + at, sizeof(w->hung) - at, "%s%s (pid %d)", at ? ", " : "",
		         comm[0] ? comm : "?", w->pid);
	if (w->hung_count++ == 0)
		w->hung_ms = w->patience_ms;
	w->e->partial = true;
}

/*
 * What one call to an application may wait: what is left of the cap shared
 * by the `apps` still to read (at least VISION_A11Y_PATIENCE_MIN_MS, or all
 * that is left), so that one that hangs leaves the others their share.
 */
static int patience(const walk *w, int apps)
{
	long left = base_ms_until(w->deadline);
	long share = left / (apps > 0 ? apps : 1);
	long least = left < VISION_A11Y_PATIENCE_MIN_MS ? left : VISION_A11Y_PATIENCE_MIN_MS;
	return (int)(share > least ? share : least);
}

/* Walks the app's frame over `win` (or every frame of it when all). */
static enum step walk_app(walk *w, AtspiAccessible *app, os_rect win, bool all)
{
	bool hung;
	w->gtk4 = toolkit_gtk4(w, app, &hung);
	if (hung) {
		hung_add(w);
		return STEP_OK;
	}
	w->dx = w->dy = 0;
	/* GTK 4.8's own cache is not the tree (its root lists no windows). */
	w->net = a11y_wire_new(app, w->deadline, w->patience_ms, !w->gtk4);
	if (w->net == NULL) {
		vision_fail("out of memory");
		return STEP_FAIL;
	}
	enum step s = STEP_OK;
	os_rect clip;
	if (!all) {
		int f = w->gtk4 || w->relative ? relative_frame(w, win) : frame_for(w, win);
		if (f >= 0 && os_rect_meet(win, w->screen, &clip))
			s = walk_node(w, f, 0, clip, true);
		goto out;
	}
	if (w->gtk4) {
		/* No window to place its boxes by: only the active window is read. */
		note(w->e, "GTK 4 applications are listed only as the active window");
		goto out;
	}
	int root = a11y_wire_root(w->net);
	a11y_wire_props(w->net, &root, 1);
	int n = a11y_wire_child_count(w->net, root);
	for (int i = 0; i < n && i < VISION_A11Y_MAX_CHILDREN; i++) {
		int f = a11y_wire_child(w->net, root, i, VISION_A11Y_MAX_CHILDREN);
		s = f >= 0 ? walk_node(w, f, 0, w->screen, true) : STEP_OK;
		if (s == STEP_STOP || s == STEP_FAIL)
			break;
	}
out:
	if (a11y_wire_hung(w->net))
		hung_add(w);
	w->e->calls += a11y_wire_calls(w->net);
	a11y_wire_destroy(w->net);
	w->net = NULL;
	return s;
}

/* The applications that did not answer, named first in the note. */
static void note_hung(walk *w)
{
	vision_elements *e = w->e;
	char rest[sizeof(e->note)];
	snprintf(rest, sizeof(rest), "%s", e->note);
	e->note[0] = '\0';
	note(e, "partial: %s%s did not answer within %d ms (a stopped, blocked or busy main "
	        "loop): %s elements are missing or incomplete%s%s", w->hung,
	     w->hung_count > 4 ? " and others" : "", w->hung_ms, w->hung_count > 1 ? "their" : "its",
	     rest[0] ? "; " : "", rest);
}

static bool walk_desktop(walk *w, os_rect win, int pid, bool all)
{
	AtspiAccessible *desk = atspi_get_desktop(0);
	if (desk == NULL) {
		note(w->e, "the accessibility registry does not answer");
		return true;
	}
	GError *err = NULL;
	/* time_ok first: the last walk left libatspi's timeout at what little it
	 * had left, and this call failing said "no tree" (seen on GTK 4). */
	gint n = time_ok(w) ? atspi_accessible_get_child_count(desk, &err) : 0;
	if (gerr(&err))
		n = 0;
	bool matched = false, ok = true;
	for (gint i = 0; i < n && ok && time_ok(w); i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, &err);
		if (gerr(&err) || app == NULL)
			continue;
		int app_pid = (int)atspi_accessible_get_process_id(app, &err);
		if (gerr(&err))
			app_pid = -1;
		if (all || (pid > 0 && app_pid == pid)) {
			matched = true;
			w->pid = app_pid;
			w->patience_ms = patience(w, all ? n - i : 1);
			enum step s = walk_app(w, app, win, all);
			ok = s != STEP_FAIL;
			if (s == STEP_STOP)
				n = 0;
		}
		g_object_unref(app);
	}
	g_object_unref(desk);
	if (!all && !matched)
		note(w->e, "the active window's application exposes no accessibility tree "
		           "(use the screenshot and find_text)");
	return ok;
}

vision_elements *vision_elements_read(os_display *d, const vision_a11y_options *opt)
{
	vision_elements *e = elements_new();
	if (e == NULL)
		return NULL;
	walk w = {.e = e};
	w.max_nodes = opt && opt->max_nodes > 0 ? opt->max_nodes : VISION_A11Y_MAX_NODES;
	int timeout = opt && opt->timeout_ms > 0 ? opt->timeout_ms : VISION_A11Y_TIMEOUT_MS;
	w.deadline = base_now_ns() + timeout * BASE_NS_PER_MS;
	bool all = opt && opt->all_windows;
	/* Boxes relative to their windows are placed by the active window's
	 * place; which other window a frame is, nothing tells. */
	bool only_active = all && os_display_boxes_window_relative(d);
	all = all && !only_active;
	os_rect win = {0, 0, 0, 0};
	int pid = -1;
	os_screen_size(d, &w.screen.width, &w.screen.height);
	const char *why;
	if (!vision_a11y_connect(d, &why)) {
		note(e, "%s", why);
		return e;
	}
	w.relative = os_display_boxes_window_relative(d);
	if (!all && !active_window(d, &win, &pid, e))
		goto fail;
	if (!all && e->note[0] == '\0' && w.relative && (win.width <= 0 || win.height <= 0))
		note(e, "the display's window list does not say where the active window is, and "
		        "applications here give their controls' boxes relative to their windows: "
		        "the elements cannot be placed on the screen (use the screenshot and "
		        "find_text; `deskhand doctor` shows what the display offers)");
	if (e->note[0] != '\0')
		return e;
	if (!walk_desktop(&w, win, pid, all))
		goto fail;
	if (w.hung_count > 0)
		note_hung(&w);
	if (only_active)
		note(e, "only the active window is listed: applications here give their boxes "
		        "relative to their windows, placed by the active one's place");
	/* A call that waited out the cap failed like a missing interface:
	 * the walk ended "complete" with a hole where the hung app was. */
	if (base_ms_until(w.deadline) <= 0) {
		e->partial = true;
		note(e, "partial: the time cap (%d ms) ran out (an application answers slowly "
		        "or hangs)", timeout);
	}
	return e;
fail:
	vision_elements_destroy(e);
	return NULL;
}

#else /* !DESKHAND_HAVE_ATSPI */

vision_elements *vision_elements_read(os_display *d, const vision_a11y_options *opt)
{
	(void)d;
	(void)opt;
	vision_elements *e = elements_new();
	if (e == NULL)
		return NULL;
	note(e, "deskhand was built without AT-SPI (libatspi2.0-dev)");
	return e;
}

#endif
