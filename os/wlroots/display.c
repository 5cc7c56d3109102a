/*
 * os/wlroots/display — the connection to a wlroots compositor: the
 * registry's globals, the outputs' layout, who the compositor is, a dead
 * connection turned into failing calls, and the backend's table.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "base/base.h"
#include "os/wlroots/sway-ipc.h"
#include "os/wlroots/wlroots-internal.h"
#include "wlr-foreign-toplevel-management-unstable-v1-client-protocol.h"
#include "wlr-screencopy-unstable-v1-client-protocol.h"
#include "wlr-virtual-pointer-unstable-v1-client-protocol.h"
#include "virtual-keyboard-unstable-v1-client-protocol.h"
#include "xdg-output-unstable-v1-client-protocol.h"

/* ---- a connection that may die ---------------------------------------------- */

/*
 * libwayland reports protocol errors through its log handler, which prints
 * to standard error by default; os/ never prints, and the error is read
 * back from the display (wl_display_get_protocol_error) instead.
 */
static void quiet_log(const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
}

static void mark_dead(struct os_wl_display *w)
{
	if (w->dead)
		return;
	w->dead = true;
	int err = wl_display_get_error(w->wl);
	const struct wl_interface *iface = NULL;
	uint32_t id = 0;
	if (err == EPROTO) {
		uint32_t code = wl_display_get_protocol_error(w->wl, &iface, &id);
		snprintf(w->dead_why, sizeof(w->dead_why),
		         "the compositor ended the connection for a protocol error "
		         "(%s@%u, code %u)", iface != NULL ? iface->name : "?", id, code);
	} else {
		snprintf(w->dead_why, sizeof(w->dead_why), "the connection was lost (%s)",
		         strerror(err != 0 ? err : EPIPE));
	}
}

bool os_wl_alive(struct os_wl_display *w)
{
	if (!w->dead && wl_display_get_error(w->wl) != 0)
		mark_dead(w);
	if (w->dead)
		return os_fail("Wayland display %s: %s", w->base.name, w->dead_why);
	return true;
}

static bool wl_lost(const os_display *d)
{
	const struct os_wl_display *w = (const struct os_wl_display *)d;
	return w->dead || wl_display_get_error(w->wl) != 0;
}

bool os_wl_roundtrip(struct os_wl_display *w, const char *what)
{
	if (!os_wl_alive(w))
		return false;
	if (wl_display_roundtrip(w->wl) < 0) {
		mark_dead(w);
		return os_fail("%s: Wayland display %s: %s", what, w->base.name, w->dead_why);
	}
	w->roundtrips++;
	return true;
}

int os_wl_dispatch(struct os_wl_display *w, int timeout_ms)
{
	if (!os_wl_alive(w))
		return -1;
	while (wl_display_prepare_read(w->wl) != 0)
		if (wl_display_dispatch_pending(w->wl) < 0)
			goto dead;
	if (wl_display_flush(w->wl) < 0 && errno != EAGAIN) {
		wl_display_cancel_read(w->wl);
		goto dead;
	}
	struct pollfd p = {.fd = wl_display_get_fd(w->wl), .events = POLLIN};
	int r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		wl_display_cancel_read(w->wl);
		return 0;
	}
	if (wl_display_read_events(w->wl) < 0 || wl_display_dispatch_pending(w->wl) < 0)
		goto dead;
	return 1;
dead:
	mark_dead(w);
	os_fail("Wayland display %s: %s", w->base.name, w->dead_why);
	return -1;
}

uint32_t os_wl_time_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

int os_wl_memfd(const char *name, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		os_fail("memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		os_fail("cannot size a %zu-byte memfd: %s", size, strerror(errno));
		close(fd);
		return -1;
	}
	/* The compositor maps it: it must never shrink under its feet. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	return fd;
}

/* ---- outputs ------------------------------------------------------------------ */

static void out_geometry(void *data, struct wl_output *o, int32_t x, int32_t y,
                         int32_t pw, int32_t ph, int32_t sub, const char *make,
                         const char *model, int32_t transform)
{
	struct os_wl_output *out = data;
	out->geo_x = x;
	out->geo_y = y;
}

static void out_mode(void *data, struct wl_output *o, uint32_t flags, int32_t w,
                     int32_t h, int32_t refresh)
{
	struct os_wl_output *out = data;
	if (flags & WL_OUTPUT_MODE_CURRENT) {
		out->mode_w = w;
		out->mode_h = h;
	}
}

static void out_done(void *data, struct wl_output *o)
{
}

static void out_scale(void *data, struct wl_output *o, int32_t factor)
{
	struct os_wl_output *out = data;
	out->scale = factor > 0 ? factor : 1;
}

static void out_name(void *data, struct wl_output *o, const char *name)
{
	struct os_wl_output *out = data;
	if (out->name[0] == '\0')
		snprintf(out->name, sizeof(out->name), "%s", name);
}

static void out_description(void *data, struct wl_output *o, const char *desc)
{
}

static const struct wl_output_listener output_listener = {
	.geometry = out_geometry, .mode = out_mode, .done = out_done,
	.scale = out_scale, .name = out_name, .description = out_description,
};

static void xdg_position(void *data, struct zxdg_output_v1 *x, int32_t px, int32_t py)
{
	struct os_wl_output *out = data;
	out->logical.x = px;
	out->logical.y = py;
	out->have_xdg_position = true;
}

static void xdg_size(void *data, struct zxdg_output_v1 *x, int32_t w, int32_t h)
{
	struct os_wl_output *out = data;
	out->logical.width = w;
	out->logical.height = h;
	out->have_xdg_size = true;
}

static void xdg_done(void *data, struct zxdg_output_v1 *x)
{
}

static void xdg_name(void *data, struct zxdg_output_v1 *x, const char *name)
{
	struct os_wl_output *out = data;
	snprintf(out->name, sizeof(out->name), "%s", name);
}

static void xdg_description(void *data, struct zxdg_output_v1 *x, const char *desc)
{
}

static const struct zxdg_output_v1_listener xdg_output_listener = {
	.logical_position = xdg_position, .logical_size = xdg_size,
	.done = xdg_done, .name = xdg_name, .description = xdg_description,
};

static void output_add_xdg(struct os_wl_display *w, struct os_wl_output *out)
{
	if (w->xdg_outputs == NULL || out->xdg != NULL)
		return;
	out->xdg = zxdg_output_manager_v1_get_xdg_output(w->xdg_outputs, out->wl);
	zxdg_output_v1_add_listener(out->xdg, &xdg_output_listener, out);
}

static void output_add(struct os_wl_display *w, uint32_t name, uint32_t version)
{
	if (w->noutputs >= OS_WL_MAX_OUTPUTS)
		return;
	struct os_wl_output *out = calloc(1, sizeof(*out));
	if (out == NULL)
		return;
	out->global = name;
	out->scale = 1;
	out->buf.fd = -1;
	out->wl = wl_registry_bind(w->registry, name, &wl_output_interface,
	                           version < 4 ? version : 4);
	wl_output_add_listener(out->wl, &output_listener, out);
	output_add_xdg(w, out);
	w->outputs[w->noutputs++] = out;
}

static void output_free(struct os_wl_output *out)
{
	os_wl_buffer_free(&out->buf);
	if (out->xdg != NULL)
		zxdg_output_v1_destroy(out->xdg);
	if (wl_output_get_version(out->wl) >= 3)
		wl_output_release(out->wl);
	else
		wl_output_destroy(out->wl);
	free(out);
}

/* An output's logical rectangle, from wl_output alone when xdg_output is
 * missing (its size then is the mode divided by the integer scale). */
static os_rect output_rect(const struct os_wl_output *out)
{
	os_rect r = out->logical;
	if (!out->have_xdg_position) {
		r.x = out->geo_x;
		r.y = out->geo_y;
	}
	if (!out->have_xdg_size) {
		r.width = out->mode_w / out->scale;
		r.height = out->mode_h / out->scale;
	}
	return r;
}

os_rect os_wl_layout(struct os_wl_display *w)
{
	int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
	for (int i = 0; i < w->noutputs; i++) {
		os_rect r = output_rect(w->outputs[i]);
		if (i == 0 || r.x < x0)
			x0 = r.x;
		if (i == 0 || r.y < y0)
			y0 = r.y;
		if (i == 0 || r.x + r.width > x1)
			x1 = r.x + r.width;
		if (i == 0 || r.y + r.height > y1)
			y1 = r.y + r.height;
	}
	return (os_rect){x0, y0, x1 - x0, y1 - y0};
}

/* ---- the seat ------------------------------------------------------------------ */

static void seat_caps(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct os_wl_display *w = data;
	w->seat_caps = caps;
	w->seat_caps_seen = true;
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_caps, .name = seat_name,
};

/* ---- the registry ------------------------------------------------------------ */

/* Whether the list of offers names iface already (one per output). */
static bool offered(const struct os_wl_display *w, const char *iface, size_t len)
{
	for (const char *p = w->offers; p != NULL && (p = strstr(p, iface)) != NULL; p += len)
		if ((p == w->offers || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static void offers_add(struct os_wl_display *w, const char *iface)
{
	size_t len = strlen(iface);
	if (offered(w, iface, len))
		return;
	if (w->offers_len + len + 3 > w->offers_cap) {
		size_t cap = (w->offers_len + len + 3) * 2;
		char *n = realloc(w->offers, cap);
		if (n == NULL)
			return;
		w->offers = n;
		w->offers_cap = cap;
	}
	if (w->offers_len > 0) {
		w->offers[w->offers_len++] = ',';
		w->offers[w->offers_len++] = ' ';
	}
	memcpy(w->offers + w->offers_len, iface, len + 1);
	w->offers_len += len;
}

static void *bind_up_to(struct os_wl_display *w, uint32_t name,
                        const struct wl_interface *iface, uint32_t have, uint32_t want)
{
	return wl_registry_bind(w->registry, name, iface, have < want ? have : want);
}

static void reg_global(void *data, struct wl_registry *reg, uint32_t name,
                       const char *iface, uint32_t version)
{
	struct os_wl_display *w = data;
	offers_add(w, iface);
	if (strcmp(iface, wl_shm_interface.name) == 0 && w->shm == NULL) {
		w->shm = bind_up_to(w, name, &wl_shm_interface, version, 1);
	} else if (strcmp(iface, wl_seat_interface.name) == 0 && w->seat == NULL) {
		/* The first seat: the one a virtual device joins. */
		w->seat = bind_up_to(w, name, &wl_seat_interface, version, 1);
		wl_seat_add_listener(w->seat, &seat_listener, w);
	} else if (strcmp(iface, wl_output_interface.name) == 0) {
		output_add(w, name, version);
	} else if (strcmp(iface, zxdg_output_manager_v1_interface.name) == 0) {
		w->xdg_outputs = bind_up_to(w, name, &zxdg_output_manager_v1_interface, version, 3);
		for (int i = 0; i < w->noutputs; i++)
			output_add_xdg(w, w->outputs[i]);
	} else if (strcmp(iface, zwlr_screencopy_manager_v1_interface.name) == 0) {
		w->screencopy = bind_up_to(w, name, &zwlr_screencopy_manager_v1_interface, version, 3);
	} else if (strcmp(iface, zwlr_virtual_pointer_manager_v1_interface.name) == 0) {
		w->pointer_manager = bind_up_to(w, name, &zwlr_virtual_pointer_manager_v1_interface,
		                                version, 2);
	} else if (strcmp(iface, zwp_virtual_keyboard_manager_v1_interface.name) == 0) {
		w->keyboard_manager = bind_up_to(w, name, &zwp_virtual_keyboard_manager_v1_interface,
		                                 version, 1);
	} else if (strcmp(iface, zwlr_foreign_toplevel_manager_v1_interface.name) == 0) {
		w->toplevel_version = version < 3 ? version : 3;
		w->toplevel_manager = wl_registry_bind(reg, name, &zwlr_foreign_toplevel_manager_v1_interface,
		                                       w->toplevel_version);
		os_wl_toplevels_listen(w);
	}
}

static void reg_global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
	struct os_wl_display *w = data;
	for (int i = 0; i < w->noutputs; i++) {
		if (w->outputs[i]->global != name)
			continue;
		output_free(w->outputs[i]);
		memmove(&w->outputs[i], &w->outputs[i + 1],
		        (size_t)(w->noutputs - i - 1) * sizeof(w->outputs[0]));
		w->noutputs--;
		return;
	}
}

static const struct wl_registry_listener registry_listener = {
	.global = reg_global, .global_remove = reg_global_remove,
};

/* ---- who the compositor is ---------------------------------------------------- */

static int peer_pid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return 0;
	return cred.pid;
}

/*
 * $SWAYSOCK counts only when the compositor itself serves it: a variable
 * left over from another session must not answer for this one.
 */
static void find_sway(struct os_wl_display *w, const char *comm)
{
	const char *sock = getenv("SWAYSOCK");
	if (sock == NULL || sock[0] == '\0')
		return;
	int pid = os_sway_socket_pid(sock);
	if (pid == 0 || (w->compositor_pid != 0 && pid != w->compositor_pid))
		return;
	w->swaysock = strdup(sock);
	char *version = w->swaysock != NULL ? os_sway_version(sock) : NULL;
	if (version != NULL)
		os_display_set(&w->base.server, "%s %s", comm[0] ? comm : "sway", version);
	free(version);
}

static void identify(struct os_wl_display *w)
{
	char comm[32];
	w->compositor_pid = peer_pid(wl_display_get_fd(w->wl));
	comm[0] = '\0';
	if (w->compositor_pid > 0)
		base_proc_comm(w->compositor_pid, comm, sizeof(comm));
	os_display_set(&w->base.server, "%s", comm);
	find_sway(w, comm);
}

/* ---- open and close ------------------------------------------------------------- */

/* Fails (not mine) naming the wlroots protocols the compositor lacks. */
static bool check_protocols(struct os_wl_display *w)
{
	const char *missing[3];
	int n = 0;
	if (w->screencopy == NULL)
		missing[n++] = zwlr_screencopy_manager_v1_interface.name;
	if (w->pointer_manager == NULL)
		missing[n++] = zwlr_virtual_pointer_manager_v1_interface.name;
	if (w->keyboard_manager == NULL)
		missing[n++] = zwp_virtual_keyboard_manager_v1_interface.name;
	if (n == 0)
		return true;
	char list[160] = "";
	for (int i = 0; i < n; i++) {
		if (i > 0)
			strcat(list, ", ");
		strcat(list, missing[i]);
	}
	if (w->base.server[0] != '\0')
		return os_fail("the Wayland compositor %s (pid %d) lacks %s", w->base.server,
		               w->compositor_pid, list);
	return os_fail("the Wayland compositor at %s lacks %s", w->base.name, list);
}

static void wl_destroy(os_display *d);
static const struct os_backend_impl wlroots_impl;

/* Binds the globals and reads the outputs: two round trips (globals, then
 * the outputs' and xdg_outputs' properties). */
static bool setup(struct os_wl_display *w)
{
	w->registry = wl_display_get_registry(w->wl);
	wl_registry_add_listener(w->registry, &registry_listener, w);
	w->toplevels_at_bind = true;
	bool ok = os_wl_roundtrip(w, "listing the compositor's globals") &&
	          os_wl_roundtrip(w, "reading the outputs");
	w->toplevels_at_bind = false;
	if (!ok)
		return false;
	if (w->offers != NULL)
		os_display_set(&w->base.offers, "%s", w->offers);
	identify(w);
	return true;
}

os_display *os_wlroots_open(const char *name, bool *not_mine)
{
	*not_mine = false;
	if (name == NULL || name[0] == '\0')
		name = getenv("WAYLAND_DISPLAY");
	if (name == NULL || name[0] == '\0') {
		*not_mine = true;
		os_fail("no Wayland display: WAYLAND_DISPLAY is not set and no display was given");
		return NULL;
	}
	struct os_wl_display *w = calloc(1, sizeof(*w));
	if (w == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	if (!os_display_init_head(&w->base, &wlroots_impl, name)) {
		free(w);
		return NULL;
	}
	w->base.session = "Wayland";
	w->stop_fd = -1;
	wl_log_set_handler_client(quiet_log);
	w->wl = wl_display_connect(name);
	if (w->wl == NULL) {
		const char *dir = getenv("XDG_RUNTIME_DIR");
		os_fail("cannot connect to the Wayland display %s (in %s): %s", name,
		        name[0] == '/' ? "/" : dir != NULL ? dir : "no XDG_RUNTIME_DIR",
		        strerror(errno));
		goto fail;
	}
	if (!setup(w))
		goto fail;
	if (!check_protocols(w)) {
		*not_mine = true;
		goto fail;
	}
	if (w->noutputs == 0) {
		os_fail("the Wayland compositor at %s has no outputs", name);
		goto fail;
	}
	return &w->base;
fail:
	wl_destroy(&w->base);
	return NULL;
}

static void wl_destroy(os_display *d)
{
	struct os_wl_display *w = os_wl(d);
	if (w->wl != NULL) {
		/* Input first: held keys and buttons are released while the
		 * devices still exist. */
		os_wl_keyboard_cleanup(w);
		os_wl_pointer_cleanup(w);
		os_wl_stop_key_cleanup(w);
		os_wl_toplevels_cleanup(w);
		os_wl_capture_cleanup(w);
		for (int i = 0; i < w->noutputs; i++)
			output_free(w->outputs[i]);
		if (w->screencopy != NULL)
			zwlr_screencopy_manager_v1_destroy(w->screencopy);
		if (w->pointer_manager != NULL)
			zwlr_virtual_pointer_manager_v1_destroy(w->pointer_manager);
		if (w->keyboard_manager != NULL)
			wl_proxy_destroy((struct wl_proxy *)w->keyboard_manager);
		if (w->xdg_outputs != NULL)
			zxdg_output_manager_v1_destroy(w->xdg_outputs);
		if (w->seat != NULL)
			wl_seat_destroy(w->seat);
		if (w->shm != NULL)
			wl_shm_destroy(w->shm);
		if (w->registry != NULL)
			wl_registry_destroy(w->registry);
		/* What the clean-ups sent must reach the compositor. */
		if (!w->dead)
			wl_display_roundtrip(w->wl);
		wl_display_disconnect(w->wl);
	}
	free(w->offers);
	free(w->swaysock);
	os_display_free_head(d);
}

/* ---- geometry ---------------------------------------------------------------------- */

static void wl_screen_size(os_display *d, int *width, int *height)
{
	os_rect r = os_wl_layout(os_wl(d));
	*width = r.width;
	*height = r.height;
}

static int wl_monitors(os_display *d, os_monitor *out, int max)
{
	struct os_wl_display *w = os_wl(d);
	os_rect lay = os_wl_layout(w);
	for (int i = 0; i < w->noutputs && i < max; i++) {
		const struct os_wl_output *o = w->outputs[i];
		os_rect r = output_rect(o);
		out[i].rect = (os_rect){r.x - lay.x, r.y - lay.y, r.width, r.height};
		/* The fractional scale shows in the mode against the logical size. */
		out[i].scale = r.width > 0 && o->mode_w > 0 ? (double)o->mode_w / r.width
		                                            : (double)o->scale;
		snprintf(out[i].name, sizeof(out[i].name), "%s", o->name);
	}
	return w->noutputs;
}

static bool wl_pointer(os_display *d, int *x, int *y)
{
	return os_fail("the compositor does not tell clients where the pointer is");
}

static bool wl_capture_uses_shm(os_display *d)
{
	return true;
}

static const char *wl_feature(os_display *d, os_feature f, const char **why)
{
	struct os_wl_display *w = os_wl(d);
	switch (f) {
	case OS_FEATURE_CAPTURE:
		return zwlr_screencopy_manager_v1_interface.name;
	case OS_FEATURE_POINTER:
		return zwlr_virtual_pointer_manager_v1_interface.name;
	case OS_FEATURE_KEYS:
	case OS_FEATURE_TYPING:
		return zwp_virtual_keyboard_manager_v1_interface.name;
	case OS_FEATURE_WINDOWS:
		if (w->toplevel_manager != NULL)
			return w->swaysock != NULL ? "zwlr_foreign_toplevel_manager_v1 and sway IPC"
			                           : zwlr_foreign_toplevel_manager_v1_interface.name;
		if (w->swaysock != NULL)
			return "sway IPC";
		*why = "the compositor offers no zwlr_foreign_toplevel_manager_v1 and no sway IPC";
		return NULL;
	case OS_FEATURE_OWNERS:
		if (w->swaysock != NULL)
			return "sway IPC";
		*why = "Wayland does not tell which process owns a window; only sway's IPC "
		       "($SWAYSOCK) does, and it is not available";
		return NULL;
	case OS_FEATURE_POINTER_POSITION:
		*why = "a wlroots compositor does not tell clients where the pointer is";
		return NULL;
	case OS_FEATURE_HELD_KEYS:
		*why = "a virtual keyboard's keys are released when deskhand exits: --down "
		       "holds them only within one process, as the agent's key_down does";
		return NULL;
	default:
		*why = "unknown feature";
		return NULL;
	}
}

static const struct os_backend_impl wlroots_impl = {
	.name = "wlroots",
	/* A Wayland client never learns its window's place; XWayland's do
	 * (vision/a11y.c tells them by their frame's box). */
	.clients_know_position = false,
	.destroy = wl_destroy,
	.screen_size = wl_screen_size,
	.monitors = wl_monitors,
	.pointer = wl_pointer,
	.capture_borrow = os_wl_capture_borrow,
	.capture_trim = os_wl_capture_trim,
	.capture_uses_shm = wl_capture_uses_shm,
	.capture_png = NULL,
	.mouse_move = os_wl_mouse_move,
	.mouse_click = os_wl_mouse_click,
	.mouse_button = os_wl_mouse_button,
	.mouse_scroll = os_wl_mouse_scroll,
	.key_combo = os_wl_key_combo,
	.key_down = os_wl_key_down,
	.key_up = os_wl_key_up,
	.key_hold = os_wl_key_hold,
	.type = os_wl_type,
	.windows_list = os_wl_windows_list,
	.window_activate = os_wl_window_activate,
	.root_string = NULL,
	.client_pids = os_wl_client_pids,
	.point_owners = os_wl_point_owners,
	.keys_owners = os_wl_keys_owners,
	.stop_key_arm = os_wl_stop_key_arm,
	.stop_key_pressed = os_wl_stop_key_pressed,
	.feature = wl_feature,
	.lost = wl_lost,
};
