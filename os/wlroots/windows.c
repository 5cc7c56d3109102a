/*
 * os/wlroots/windows — the window list from zwlr_foreign_toplevel_manager_v1
 * (title, app_id, whether it is active; activation), completed where sway's
 * IPC is at hand with what the protocol does not say: each window's place
 * and process, and the windows the toplevel list lacks. The owners the
 * safety layer asks for (who is under a point, who has the keyboard) come
 * from sway's IPC only: without it they are unknown, never guessed.
 */
#include <stdlib.h>
#include <string.h>
#include <wayland-client.h>

#include "os/wlroots/sway-ipc.h"
#include "os/wlroots/wlroots-internal.h"
#include "wlr-foreign-toplevel-management-unstable-v1-client-protocol.h"

struct os_wl_toplevel {
	struct os_wl_toplevel *next;
	struct zwlr_foreign_toplevel_handle_v1 *h;
	/* Creation order: toplevels present at bind arrive newest first (as
	 * wlroots lists them), later ones as they appear; 0: closed. */
	long long rank;
	char *title, *app_id;   /* owned; NULL until sent */
	bool active;
};

/* ---- the toplevel list ---------------------------------------------------------- */

static void set_str(char **field, const char *v)
{
	char *n = strdup(v != NULL ? v : "");
	if (n == NULL)
		return;
	free(*field);
	*field = n;
}

static void tl_title(void *data, struct zwlr_foreign_toplevel_handle_v1 *h, const char *t)
{
	set_str(&((struct os_wl_toplevel *)data)->title, t);
}

static void tl_app_id(void *data, struct zwlr_foreign_toplevel_handle_v1 *h, const char *a)
{
	set_str(&((struct os_wl_toplevel *)data)->app_id, a);
}

static void tl_output(void *data, struct zwlr_foreign_toplevel_handle_v1 *h,
                      struct wl_output *o)
{
}

static void tl_state(void *data, struct zwlr_foreign_toplevel_handle_v1 *h,
                     struct wl_array *state)
{
	struct os_wl_toplevel *t = data;
	t->active = false;
	const uint32_t *s;
	wl_array_for_each(s, state)
		if (*s == ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_ACTIVATED)
			t->active = true;
}

static void tl_done(void *data, struct zwlr_foreign_toplevel_handle_v1 *h)
{
}

static void toplevel_free(struct os_wl_toplevel *t)
{
	zwlr_foreign_toplevel_handle_v1_destroy(t->h);
	free(t->title);
	free(t->app_id);
	free(t);
}

static void tl_closed(void *data, struct zwlr_foreign_toplevel_handle_v1 *h)
{
	struct os_wl_toplevel *t = data;
	/* Freed by the next walk of the list (prune): the handle has no way
	 * back to its display here. */
	t->rank = 0;
}

static void tl_parent(void *data, struct zwlr_foreign_toplevel_handle_v1 *h,
                      struct zwlr_foreign_toplevel_handle_v1 *parent)
{
}

static const struct zwlr_foreign_toplevel_handle_v1_listener toplevel_listener = {
	.title = tl_title, .app_id = tl_app_id, .output_enter = tl_output,
	.output_leave = tl_output, .state = tl_state, .done = tl_done,
	.closed = tl_closed, .parent = tl_parent,
};

static void mgr_toplevel(void *data, struct zwlr_foreign_toplevel_manager_v1 *m,
                         struct zwlr_foreign_toplevel_handle_v1 *h)
{
	struct os_wl_display *w = data;
	struct os_wl_toplevel *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		zwlr_foreign_toplevel_handle_v1_destroy(h);
		return;
	}
	t->h = h;
	long long n = ++w->toplevels_seen;
	t->rank = w->toplevels_at_bind ? -n : n;
	t->next = w->toplevels;
	w->toplevels = t;
	zwlr_foreign_toplevel_handle_v1_add_listener(h, &toplevel_listener, t);
}

static void mgr_finished(void *data, struct zwlr_foreign_toplevel_manager_v1 *m)
{
	struct os_wl_display *w = data;
	zwlr_foreign_toplevel_manager_v1_destroy(w->toplevel_manager);
	w->toplevel_manager = NULL;
}

static const struct zwlr_foreign_toplevel_manager_v1_listener manager_listener = {
	.toplevel = mgr_toplevel, .finished = mgr_finished,
};

void os_wl_toplevels_listen(struct os_wl_display *w)
{
	zwlr_foreign_toplevel_manager_v1_add_listener(w->toplevel_manager, &manager_listener, w);
}

/* Frees the handles of closed toplevels (rank 0). */
static void prune(struct os_wl_display *w)
{
	for (struct os_wl_toplevel **p = &w->toplevels; *p != NULL;) {
		struct os_wl_toplevel *t = *p;
		if (t->rank != 0) {
			p = &t->next;
			continue;
		}
		*p = t->next;
		toplevel_free(t);
	}
}

void os_wl_toplevels_cleanup(struct os_wl_display *w)
{
	while (w->toplevels != NULL) {
		struct os_wl_toplevel *t = w->toplevels;
		w->toplevels = t->next;
		toplevel_free(t);
	}
	if (w->toplevel_manager != NULL)
		zwlr_foreign_toplevel_manager_v1_destroy(w->toplevel_manager);
	w->toplevel_manager = NULL;
}

/* ---- the list, with sway's views ------------------------------------------------- */

/*
 * One window of the list and where it comes from. Ids: with sway's IPC the
 * view's con_id (sway's own, the same in every process, so that one
 * process may list and another activate); without it the toplevel's place
 * in creation order, counted from 1.
 */
struct entry {
	os_window win;
	struct os_wl_toplevel *t;       /* NULL: a view the toplevel list lacks */
	long long con_id;               /* 0: no view matched */
};

static bool views_get(struct os_wl_display *w, os_sway_view **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	return w->swaysock != NULL && os_sway_views(w->swaysock, v, n);
}

static int by_rank(const void *a, const void *b)
{
	long long ra = (*(struct os_wl_toplevel *const *)a)->rank;
	long long rb = (*(struct os_wl_toplevel *const *)b)->rank;
	return (ra > rb) - (ra < rb);
}

static int by_con_id(const void *a, const void *b)
{
	long long ca = ((const os_sway_view *)a)->con_id, cb = ((const os_sway_view *)b)->con_id;
	return (ca > cb) - (ca < cb);
}

static bool entry_fill(struct entry *e, const char *klass, const char *title)
{
	e->win.pid = -1;
	e->win.klass = strdup(klass != NULL ? klass : "");
	e->win.title = strdup(title != NULL ? title : "");
	return e->win.klass != NULL && e->win.title != NULL;
}

static void entry_view(struct os_wl_display *w, struct entry *e, const os_sway_view *v)
{
	os_rect lay = os_wl_layout(w);
	e->con_id = v->con_id;
	e->win.id = (uint32_t)v->con_id;
	e->win.pid = v->pid > 0 ? v->pid : -1;
	e->win.geometry = (os_rect){v->content.x - lay.x, v->content.y - lay.y,
	                            v->content.width, v->content.height};
	/* sway's focus is the truth where the toplevels' states disagree. */
	e->win.active = v->focused;
}

/*
 * Toplevels (oldest first) matched to views (oldest first: con_ids grow)
 * by app_id and title, in order among equals; then the views no toplevel
 * stands for. Returns how many entries, -1 on allocation failure.
 */
static long entries_fill(struct os_wl_display *w, struct entry *out, os_sway_view *v, size_t nv)
{
	size_t nt = 0;
	for (struct os_wl_toplevel *t = w->toplevels; t != NULL; t = t->next)
		nt++;
	struct os_wl_toplevel **ts = calloc(nt + 1, sizeof(*ts));
	bool *taken = calloc(nv + 1, sizeof(*taken));
	long k = -1;
	if (ts == NULL || taken == NULL)
		goto out;
	nt = 0;
	for (struct os_wl_toplevel *t = w->toplevels; t != NULL; t = t->next)
		ts[nt++] = t;
	qsort(ts, nt, sizeof(*ts), by_rank);
	qsort(v, nv, sizeof(*v), by_con_id);
	k = 0;
	for (size_t i = 0; i < nt; i++) {
		struct entry *e = &out[k++];
		e->t = ts[i];
		e->win.id = (uint32_t)(i + 1);
		e->win.active = ts[i]->active;
		if (!entry_fill(e, ts[i]->app_id, ts[i]->title))
			goto fail;
		for (size_t j = 0; j < nv; j++)
			if (!taken[j] && strcmp(v[j].app_id, e->win.klass) == 0 &&
			    strcmp(v[j].title, e->win.title) == 0) {
				taken[j] = true;
				entry_view(w, e, &v[j]);
				break;
			}
	}
	for (size_t j = 0; j < nv; j++) {
		if (taken[j])
			continue;
		if (!entry_fill(&out[k++], v[j].app_id, v[j].title))
			goto fail;
		entry_view(w, &out[k - 1], &v[j]);
	}
	goto out;
fail:
	k = -1;
out:
	free(ts);
	free(taken);
	return k;
}

/* The entries now (a round trip first: the toplevels' latest state).
 * Ownership: the caller frees with entries_free. */
static struct entry *entries_get(struct os_wl_display *w, size_t *count)
{
	*count = 0;
	if (!os_wl_roundtrip(w, "listing windows"))
		return NULL;
	prune(w);
	os_sway_view *v;
	size_t nv, nt = 0;
	if (!views_get(w, &v, &nv) && w->toplevel_manager == NULL) {
		if (w->swaysock == NULL)
			os_fail("the compositor lists no windows (no zwlr_foreign_toplevel_manager_v1, "
			        "no sway IPC)");
		return NULL;
	}
	for (struct os_wl_toplevel *t = w->toplevels; t != NULL; t = t->next)
		nt++;
	struct entry *e = calloc(nt + nv + 1, sizeof(*e));
	long k = e != NULL ? entries_fill(w, e, v, nv) : -1;
	os_sway_views_free(v, nv);
	if (k < 0) {
		for (size_t i = 0; e != NULL && i < nt + nv; i++) {
			free(e[i].win.klass);
			free(e[i].win.title);
		}
		free(e);
		os_fail("out of memory");
		return NULL;
	}
	*count = (size_t)k;
	return e;
}

os_window *os_wl_windows_list(os_display *d, size_t *count)
{
	size_t n;
	struct entry *e = entries_get(os_wl(d), &n);
	*count = 0;
	if (e == NULL)
		return NULL;
	os_window *out = calloc(n + 1, sizeof(*out));
	if (out == NULL) {
		for (size_t i = 0; i < n; i++) {
			free(e[i].win.klass);
			free(e[i].win.title);
		}
		free(e);
		os_fail("out of memory");
		return NULL;
	}
	/* Stacking order is not told: the active window goes last (on top). */
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (e[i].win.active == (pass == 1))
				out[k++] = e[i].win;
	free(e);
	*count = n;
	return out;
}

/* Asks for the activation and checks that it happened: a compositor may
 * refuse without a word. The state comes in the events after the request
 * has been handled (wlroots sends it when idle): two round trips. */
static bool toplevel_activate(struct os_wl_display *w, struct os_wl_toplevel *t)
{
	zwlr_foreign_toplevel_handle_v1_activate(t->h, w->seat);
	if (!os_wl_roundtrip(w, "activating a window") ||
	    !os_wl_roundtrip(w, "activating a window"))
		return false;
	if (t->rank == 0)
		return os_fail("the window closed while it was being activated");
	if (!t->active)
		return os_fail("the compositor did not activate the window (a fullscreen "
		               "window may cover it)");
	return true;
}

bool os_wl_window_activate(os_display *d, uint32_t id)
{
	struct os_wl_display *w = os_wl(d);
	size_t n;
	struct entry *e = entries_get(w, &n);
	if (e == NULL)
		return false;
	bool ok = false, found = false;
	for (size_t i = 0; i < n; i++) {
		if (e[i].win.id != id || found)
			continue;
		found = true;
		/* sway's focus command first: sway ignores a toplevel's activation
		 * request for a window a fullscreen one covers (and says nothing),
		 * where its command takes the fullscreen one down, as a person's
		 * focus would. */
		if (e[i].con_id != 0 && w->swaysock != NULL)
			ok = os_sway_focus(w->swaysock, e[i].con_id);
		else if (e[i].t != NULL)
			ok = toplevel_activate(w, e[i].t);
	}
	for (size_t i = 0; i < n; i++) {
		free(e[i].win.klass);
		free(e[i].win.title);
	}
	free(e);
	if (!found)
		return os_fail("no window with id %u", id);
	return ok;
}

/* ---- owners ----------------------------------------------------------------------- */

static size_t add_pid(int *pids, size_t n, size_t max, int pid)
{
	if (pid <= 0 || n >= max)
		return n;
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return n;
	pids[n] = pid;
	return n + 1;
}

size_t os_wl_client_pids(os_display *d, int *pids, size_t max)
{
	os_sway_view *v;
	size_t nv, n = 0;
	if (!views_get(os_wl(d), &v, &nv))
		return 0;
	for (size_t i = 0; i < nv; i++)
		n = add_pid(pids, n, max, v[i].pid);
	os_sway_views_free(v, nv);
	return n;
}

static bool rect_has(os_rect r, int x, int y)
{
	return x >= r.x && y >= r.y && x < r.x + r.width && y < r.y + r.height;
}

size_t os_wl_point_owners(os_display *d, int x, int y, int *pids, size_t max)
{
	struct os_wl_display *w = os_wl(d);
	os_sway_view *v;
	size_t nv, n = 0;
	if (!views_get(w, &v, &nv))
		return 0;
	os_rect lay = os_wl_layout(w);
	/* Floating views lie above the tiled ones of their workspace. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nv; i++)
			if (v[i].visible && v[i].floating == (pass == 0) &&
			    rect_has(v[i].frame, x + lay.x, y + lay.y))
				n = add_pid(pids, n, max, v[i].pid);
	os_sway_views_free(v, nv);
	return n;
}

size_t os_wl_keys_owners(os_display *d, int *pids, size_t max)
{
	os_sway_view *v;
	size_t nv, n = 0;
	if (!views_get(os_wl(d), &v, &nv))
		return 0;
	for (size_t i = 0; i < nv; i++)
		if (v[i].focused)
			n = add_pid(pids, n, max, v[i].pid);
	os_sway_views_free(v, nv);
	return n;
}
