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
	uint32_t id;
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
	t->id = 0;
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
	t->id = ++w->next_toplevel_id;
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

/* Frees the handles of closed toplevels (id 0). */
static void prune(struct os_wl_display *w)
{
	for (struct os_wl_toplevel **p = &w->toplevels; *p != NULL;) {
		struct os_wl_toplevel *t = *p;
		if (t->id != 0) {
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
	free(w->view_ids);
	w->view_ids = NULL;
	w->nview_ids = 0;
}

/* ---- with sway's views ------------------------------------------------------------ */

/* A stable small id for a view the toplevel list lacks. */
static uint32_t view_id(struct os_wl_display *w, long long con_id)
{
	for (size_t i = 0; i < w->nview_ids; i++)
		if (w->view_ids[i].con_id == con_id)
			return w->view_ids[i].id;
	struct os_wl_view_id *n = realloc(w->view_ids, (w->nview_ids + 1) * sizeof(*n));
	if (n == NULL)
		return 0;
	w->view_ids = n;
	n[w->nview_ids] = (struct os_wl_view_id){con_id, ++w->next_toplevel_id};
	return n[w->nview_ids++].id;
}

static bool views_get(struct os_wl_display *w, os_sway_view **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	return w->swaysock != NULL && os_sway_views(w->swaysock, v, n);
}

static os_rect to_screen(struct os_wl_display *w, os_rect r)
{
	os_rect lay = os_wl_layout(w);
	return (os_rect){r.x - lay.x, r.y - lay.y, r.width, r.height};
}

static bool window_fill(os_window *win, uint32_t id, const char *klass, const char *title,
                        bool active)
{
	*win = (os_window){.id = id, .pid = -1, .active = active};
	win->klass = strdup(klass != NULL ? klass : "");
	win->title = strdup(title != NULL ? title : "");
	return win->klass != NULL && win->title != NULL;
}

/* The first view not yet taken with the toplevel's app_id and title. */
static os_sway_view *view_match(os_sway_view *v, size_t n, bool *taken,
                                const struct os_wl_toplevel *t)
{
	for (size_t i = 0; i < n; i++)
		if (!taken[i] && strcmp(v[i].app_id, t->app_id ? t->app_id : "") == 0 &&
		    strcmp(v[i].title, t->title ? t->title : "") == 0) {
			taken[i] = true;
			return &v[i];
		}
	return NULL;
}

/* Fills out[] from the toplevels (oldest first) and then the views they
 * lack; returns how many, or -1 on allocation failure. */
static long windows_fill(struct os_wl_display *w, os_window *out, os_sway_view *v,
                         size_t nv, bool *taken)
{
	long k = 0;
	size_t nt = 0;
	for (struct os_wl_toplevel *t = w->toplevels; t != NULL; t = t->next)
		nt++;
	for (size_t idx = nt; idx-- > 0;) {
		struct os_wl_toplevel *t = w->toplevels;
		for (size_t j = 0; j < idx; j++)
			t = t->next;
		if (!window_fill(&out[k++], t->id, t->app_id, t->title, t->active))
			return -1;
		os_sway_view *m = view_match(v, nv, taken, t);
		if (m != NULL) {
			out[k - 1].pid = m->pid > 0 ? m->pid : -1;
			out[k - 1].geometry = to_screen(w, m->content);
		}
	}
	for (size_t i = 0; i < nv; i++) {
		if (taken[i])
			continue;
		if (!window_fill(&out[k++], view_id(w, v[i].con_id), v[i].app_id, v[i].title,
		                 v[i].focused))
			return -1;
		out[k - 1].pid = v[i].pid > 0 ? v[i].pid : -1;
		out[k - 1].geometry = to_screen(w, v[i].content);
	}
	return k;
}

/* Stacking order is not told: the active window goes last (on top). */
static void active_last(os_window *win, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (!win[i].active)
			continue;
		os_window a = win[i];
		memmove(&win[i], &win[i + 1], (n - i - 1) * sizeof(*win));
		win[n - 1] = a;
		return;
	}
}

os_window *os_wl_windows_list(os_display *d, size_t *count)
{
	struct os_wl_display *w = os_wl(d);
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
	os_window *out = calloc(nt + nv + 1, sizeof(*out));
	bool *taken = calloc(nv + 1, sizeof(*taken));
	long k = out != NULL && taken != NULL ? windows_fill(w, out, v, nv, taken) : -1;
	free(taken);
	os_sway_views_free(v, nv);
	if (k < 0) {
		os_windows_free(out, nt + nv);
		os_fail("out of memory");
		return NULL;
	}
	active_last(out, (size_t)k);
	*count = (size_t)k;
	return out;
}

bool os_wl_window_activate(os_display *d, uint32_t id)
{
	struct os_wl_display *w = os_wl(d);
	if (!os_wl_roundtrip(w, "activating a window"))
		return false;
	prune(w);
	for (struct os_wl_toplevel *t = w->toplevels; t != NULL; t = t->next) {
		if (t->id != id)
			continue;
		zwlr_foreign_toplevel_handle_v1_activate(t->h, w->seat);
		return os_wl_roundtrip(w, "activating a window");
	}
	for (size_t i = 0; w->swaysock != NULL && i < w->nview_ids; i++)
		if (w->view_ids[i].id == id)
			return os_sway_focus(w->swaysock, w->view_ids[i].con_id);
	return os_fail("no window with id %u", id);
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
