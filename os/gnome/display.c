/*
 * os/gnome/display — the GNOME backend's connection: the session bus, a
 * check that Mutter serves it, the monitors (DisplayConfig), the
 * RemoteDesktop session and the ScreenCast session tied to it (one
 * stream per monitor, cursor as metadata), who the compositor is, and
 * the backend's table.
 *
 * Signals (each stream's PipeWireStreamAdded, the sessions' Closed) are
 * delivered to a main context of the display's own, pumped while waiting
 * for the nodes and at every os_gnome_alive(): nothing runs behind the
 * caller's back on its thread.
 */
#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "os/gnome/gnome-internal.h"
#include "os/gnome/gnome-libs.h"

#define RD_NAME "org.gnome.Mutter.RemoteDesktop"
#define RD_PATH "/org/gnome/Mutter/RemoteDesktop"
#define RD_SESSION RD_NAME ".Session"
#define SC_NAME "org.gnome.Mutter.ScreenCast"
#define SC_PATH "/org/gnome/Mutter/ScreenCast"
#define SC_SESSION SC_NAME ".Session"
#define SC_STREAM SC_NAME ".Stream"
#define DC_NAME "org.gnome.Mutter.DisplayConfig"
#define DC_PATH "/org/gnome/Mutter/DisplayConfig"

/* A Mutter that answers nothing in this long is not going to. */
#define CALL_TIMEOUT_MS 5000
/* Start() to every stream's node: Mutter announces them at once. */
#define NODES_TIMEOUT_MS 5000

/* ---- calls ------------------------------------------------------------------ */

static void mark_dead(struct os_gnome_display *g, const char *why)
{
	if (g->dead)
		return;
	g->dead = true;
	snprintf(g->dead_why, sizeof(g->dead_why), "%s", why);
}

/* Runs what the bus delivered to the display's context (signals). */
static void pump(struct os_gnome_display *g)
{
	while (g_main_context_iteration(g->ctx, FALSE))
		;
}

bool os_gnome_alive(struct os_gnome_display *g)
{
	if (g->bus != NULL && !g->dead) {
		pump(g);
		if (g_dbus_connection_is_closed(g->bus))
			mark_dead(g, "the session bus connection was closed");
	}
	if (g->dead)
		return os_fail("GNOME display: %s", g->dead_why);
	return true;
}

GVariant *os_gnome_call(struct os_gnome_display *g, const char *dest, const char *path,
                        const char *iface, const char *method, GVariant *params,
                        const char *what)
{
	if (!os_gnome_alive(g)) {
		if (params != NULL)
			g_variant_unref(g_variant_ref_sink(params));
		return NULL;
	}
	GError *err = NULL;
	GVariant *r = g_dbus_connection_call_sync(g->bus, dest, path, iface, method, params,
	                                          NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START,
	                                          CALL_TIMEOUT_MS, NULL, &err);
	/* Every input event goes through here: capture.c waits for a frame
	 * newer than the last one. */
	if (strncmp(method, "Notify", 6) == 0) {
		g->input_seq++;
		g->input_ns = base_now_ns();
	}
	if (r != NULL)
		return r;
	if (g_dbus_connection_is_closed(g->bus))
		mark_dead(g, "the session bus connection was closed");
	else if (g_error_matches(err, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT) ||
	         g_error_matches(err, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) ||
	         g_error_matches(err, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
		mark_dead(g, "Mutter's session went away");
	os_fail("%s: %s.%s: %s", what, iface, method, err->message);
	g_error_free(err);
	return NULL;
}

bool os_gnome_rd(struct os_gnome_display *g, const char *method, GVariant *params,
                 const char *what)
{
	if (g->rd_session == NULL) {
		if (params != NULL)
			g_variant_unref(g_variant_ref_sink(params));
		return os_fail("%s: no RemoteDesktop session", what);
	}
	GVariant *r = os_gnome_call(g, RD_NAME, g->rd_session, RD_SESSION, method, params, what);
	if (r == NULL)
		return false;
	g_variant_unref(r);
	return true;
}

int os_gnome_monitor_at(struct os_gnome_display *g, int x, int y)
{
	for (int i = 0; i < g->nmon; i++) {
		const os_rect *r = &g->mon[i].logical;
		if (x >= r->x && y >= r->y && x < r->x + r->width && y < r->y + r->height)
			return i;
	}
	os_fail("point %d,%d is on no monitor", x, y);
	return -1;
}

/* ---- the bus and who serves it ------------------------------------------------ */

static bool name_owned(struct os_gnome_display *g, const char *name)
{
	GVariant *r = os_gnome_call(g, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                            "org.freedesktop.DBus", "NameHasOwner",
	                            g_variant_new("(s)", name), "asking the session bus");
	if (r == NULL)
		return false;
	gboolean has = FALSE;
	g_variant_get(r, "(b)", &has);
	g_variant_unref(r);
	return has;
}

/* The session bus's address: $DBUS_SESSION_BUS_ADDRESS, else the
 * per-user bus systemd sessions have at $XDG_RUNTIME_DIR/bus. */
static char *bus_address(void)
{
	const char *a = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (a != NULL && a[0] != '\0')
		return g_strdup(a);
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (rt == NULL || rt[0] == '\0')
		return NULL;
	char *path = g_strdup_printf("%s/bus", rt);
	char *addr = access(path, F_OK) == 0 ? g_strdup_printf("unix:path=%s", path) : NULL;
	g_free(path);
	return addr;
}

/* Connects and checks Mutter's two names; false (with *not_mine when this
 * is no GNOME session) naming what is missing. */
static bool connect_bus(struct os_gnome_display *g, bool *not_mine)
{
	char *addr = bus_address();
	if (addr == NULL) {
		*not_mine = true;
		return os_fail("no session bus to find " RD_NAME " and " SC_NAME " on "
		               "(DBUS_SESSION_BUS_ADDRESS is not set and there is no "
		               "$XDG_RUNTIME_DIR/bus)");
	}
	GError *err = NULL;
	g->bus = g_dbus_connection_new_for_address_sync(
		addr, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
		G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &err);
	if (g->bus == NULL) {
		*not_mine = true;
		os_fail("cannot connect to the session bus %s to find " RD_NAME " and " SC_NAME
		        ": %s", addr, err->message);
		g_error_free(err);
		g_free(addr);
		return false;
	}
	g_free(addr);
	g_dbus_connection_set_exit_on_close(g->bus, FALSE);
	const char *missing[2];
	int n = 0;
	if (!name_owned(g, RD_NAME))
		missing[n++] = RD_NAME;
	if (!name_owned(g, SC_NAME))
		missing[n++] = SC_NAME;
	if (n == 0)
		return true;
	*not_mine = true;
	return os_fail("the session bus has no %s%s%s (not a GNOME session, or Mutter is "
	               "not running)", missing[0], n > 1 ? " and " : "", n > 1 ? missing[1] : "");
}

static int owner_pid(struct os_gnome_display *g, const char *name)
{
	GVariant *r = os_gnome_call(g, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                            "org.freedesktop.DBus", "GetConnectionUnixProcessID",
	                            g_variant_new("(s)", name), "finding Mutter's process");
	guint32 pid = 0;
	if (r != NULL) {
		g_variant_get(r, "(u)", &pid);
		g_variant_unref(r);
	}
	return (int)pid;
}

/* One property of one of Mutter's objects, or NULL. */
static GVariant *property(struct os_gnome_display *g, const char *dest, const char *path,
                          const char *iface, const char *prop)
{
	GVariant *r = os_gnome_call(g, dest, path, "org.freedesktop.DBus.Properties", "Get",
	                            g_variant_new("(ss)", iface, prop), "reading a property");
	if (r == NULL)
		return NULL;
	GVariant *v = NULL;
	g_variant_get(r, "(v)", &v);
	g_variant_unref(r);
	return v;
}

/* ---- which Mutter ---------------------------------------------------------------- */

/*
 * libmutter's soname carries its API version, which is Mutter's major
 * version minus 32 (libmutter-11 is Mutter 43, libmutter-16 GNOME 48):
 * read from the compositor's mappings, not guessed.
 */
static int mutter_major(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	char line[512];
	int major = 0;
	while (major == 0 && fgets(line, sizeof(line), f) != NULL) {
		const char *p = strstr(line, "/libmutter-");
		int api;
		if (p != NULL && sscanf(p, "/libmutter-%d.so", &api) == 1 && api > 0)
			major = api + 32;
	}
	fclose(f);
	return major;
}

/*
 * The full version ("43.8") as the compositor's binary prints it for
 * --version: a string "MAJOR.minor" of its own in the executable, which
 * is small (mutter's main, gnome-shell's). Only a string that starts with
 * the major read from libmutter's soname counts, so nothing else of the
 * binary passes for it.
 */
static void binary_version(int pid, int major, char *out, size_t size)
{
	char path[64], want[16];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	snprintf(want, sizeof(want), "%d.", major);
	FILE *f = fopen(path, "rbe");
	if (f == NULL)
		return;
	char s[32];
	size_t len = 0;
	int c;
	for (long n = 0; (c = getc(f)) != EOF && n < 4L << 20; n++) {
		bool part = (c >= '0' && c <= '9') || c == '.' || (c >= 'a' && c <= 'z');
		if (part && len + 1 < sizeof(s)) {
			s[len++] = (char)c;
			continue;
		}
		s[len] = '\0';
		if (c == '\0' && len > strlen(want) && strncmp(s, want, strlen(want)) == 0 &&
		    s[strlen(want)] >= '0' && s[strlen(want)] <= '9') {
			snprintf(out, size, "%s", s);
			break;
		}
		len = 0;
	}
	fclose(f);
}

/* base.server: "mutter 43.8", "gnome-shell 45.2 (mutter 45)". */
static void identify(struct os_gnome_display *g)
{
	int pid = owner_pid(g, RD_NAME);
	char comm[32] = "";
	if (pid > 0) {
		base_proc_comm(pid, comm, sizeof(comm));
		int major = mutter_major(pid);
		if (major > 0) {
			snprintf(g->mutter_version, sizeof(g->mutter_version), "%d", major);
			binary_version(pid, major, g->mutter_version, sizeof(g->mutter_version));
		}
	}
	GVariant *shell = strcmp(comm, "gnome-shell") == 0
		? property(g, "org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "ShellVersion")
		: NULL;
	if (shell != NULL && g_variant_is_of_type(shell, G_VARIANT_TYPE_STRING))
		os_display_set(&g->base.server, "gnome-shell %s (mutter %s)",
		               g_variant_get_string(shell, NULL),
		               g->mutter_version[0] ? g->mutter_version : "?");
	else
		os_display_set(&g->base.server, "%s%s%s", comm[0] ? comm : "mutter",
		               g->mutter_version[0] ? " " : "", g->mutter_version);
	if (shell != NULL)
		g_variant_unref(shell);
}

/* base.offers: Mutter's (and the shell's) names on the bus, with the
 * API version of the two interfaces deskhand uses. */
static void list_offers(struct os_gnome_display *g)
{
	GVariant *r = os_gnome_call(g, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                            "org.freedesktop.DBus", "ListNames", NULL, "listing names");
	if (r == NULL)
		return;
	GString *s = g_string_new("");
	GVariantIter *it;
	const char *name;
	g_variant_get(r, "(as)", &it);
	while (g_variant_iter_next(it, "&s", &name)) {
		if (strncmp(name, "org.gnome.Mutter.", 17) != 0 && strncmp(name, "org.gnome.Shell", 15) != 0)
			continue;
		g_string_append_printf(s, "%s%s", s->len ? ", " : "", name);
		bool rd = strcmp(name, RD_NAME) == 0, sc = strcmp(name, SC_NAME) == 0;
		GVariant *v = rd || sc ? property(g, name, rd ? RD_PATH : SC_PATH, name, "Version") : NULL;
		if (v != NULL && g_variant_is_of_type(v, G_VARIANT_TYPE_INT32))
			g_string_append_printf(s, " %d", g_variant_get_int32(v));
		if (v != NULL)
			g_variant_unref(v);
	}
	g_variant_iter_free(it);
	g_variant_unref(r);
	os_display_set(&g->base.offers, "%s", s->str);
	g_string_free(s, TRUE);
}

/* ---- the monitors ------------------------------------------------------------------ */

/* The current mode's size of the monitor on `connector`, from
 * GetCurrentState's physical monitors a((ssss)a(siiddada{sv})a{sv}). */
static bool mode_size(GVariant *monitors, const char *connector, int *w, int *h)
{
	GVariantIter it;
	g_variant_iter_init(&it, monitors);
	GVariant *m;
	while ((m = g_variant_iter_next_value(&it)) != NULL) {
		const char *conn;
		GVariant *modes;
		g_variant_get_child(m, 0, "(&ssss)", &conn, NULL, NULL, NULL);
		modes = g_variant_get_child_value(m, 1);
		bool found = false;
		for (gsize i = 0; strcmp(conn, connector) == 0 && i < g_variant_n_children(modes); i++) {
			GVariant *mode = g_variant_get_child_value(modes, i);
			gint32 mw, mh;
			GVariant *props;
			g_variant_get(mode, "(&siiddad@a{sv})", NULL, &mw, &mh, NULL, NULL, NULL, &props);
			gboolean cur = FALSE;
			if (g_variant_lookup(props, "is-current", "b", &cur) && cur) {
				*w = mw;
				*h = mh;
				found = true;
			}
			g_variant_unref(props);
			g_variant_unref(mode);
		}
		g_variant_unref(modes);
		g_variant_unref(m);
		if (found)
			return true;
	}
	return false;
}

/* One logical monitor (iiduba(ssss)a{sv}): its first connector, its place
 * and logical size. In Mutter's "logical" layout mode the layout is in
 * logical pixels (mode / scale); in "physical" mode, in the mode's. */
static bool add_monitor(struct os_gnome_display *g, GVariant *lm, GVariant *monitors,
                        bool logical_layout)
{
	gint32 x, y;
	gdouble scale;
	guint32 transform;
	GVariant *conns;
	g_variant_get(lm, "(iidub@a(ssss)@a{sv})", &x, &y, &scale, &transform, NULL, &conns, NULL);
	bool ok = false;
	const char *conn = NULL;
	if (g_variant_n_children(conns) > 0)
		g_variant_get_child(conns, 0, "(&ssss)", &conn, NULL, NULL, NULL);
	int w = 0, h = 0;
	if (conn == NULL || !mode_size(monitors, conn, &w, &h)) {
		os_fail("DisplayConfig: logical monitor at %d,%d has no current mode", x, y);
		goto out;
	}
	if (transform % 2 == 1) {  /* 90 or 270 degrees, flipped or not */
		int t = w;
		w = h;
		h = t;
	}
	if (g->nmon >= OS_GNOME_MAX_MONITORS) {
		ok = true;  /* the rest stay out of the layout */
		goto out;
	}
	struct os_gnome_monitor *m = &g->mon[g->nmon++];
	snprintf(m->connector, sizeof(m->connector), "%s", conn);
	m->scale = scale > 0 ? scale : 1;
	m->logical = (os_rect){x, y, logical_layout ? (int)(w / m->scale + 0.5) : w,
	                       logical_layout ? (int)(h / m->scale + 0.5) : h};
	ok = true;
out:
	g_variant_unref(conns);
	return ok;
}

/* The monitors, their bounding box moved to 0,0 as the screen. */
static bool read_monitors(struct os_gnome_display *g)
{
	GVariant *r = os_gnome_call(g, DC_NAME, DC_PATH, DC_NAME, "GetCurrentState", NULL,
	                            "reading the monitors");
	if (r == NULL)
		return false;
	GVariant *monitors = g_variant_get_child_value(r, 1);
	GVariant *logical = g_variant_get_child_value(r, 2);
	GVariant *props = g_variant_get_child_value(r, 3);
	guint32 layout_mode = 1;  /* 1 logical, 2 physical */
	g_variant_lookup(props, "layout-mode", "u", &layout_mode);
	bool ok = true;
	for (gsize i = 0; ok && i < g_variant_n_children(logical); i++) {
		GVariant *lm = g_variant_get_child_value(logical, i);
		ok = add_monitor(g, lm, monitors, layout_mode != 2);
		g_variant_unref(lm);
	}
	g_variant_unref(props);
	g_variant_unref(logical);
	g_variant_unref(monitors);
	g_variant_unref(r);
	if (ok && g->nmon == 0)
		ok = os_fail("Mutter reports no monitors");
	if (!ok)
		return false;
	int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
	for (int i = 0; i < g->nmon; i++) {
		const os_rect *m = &g->mon[i].logical;
		x0 = i == 0 || m->x < x0 ? m->x : x0;
		y0 = i == 0 || m->y < y0 ? m->y : y0;
		x1 = i == 0 || m->x + m->width > x1 ? m->x + m->width : x1;
		y1 = i == 0 || m->y + m->height > y1 ? m->y + m->height : y1;
	}
	for (int i = 0; i < g->nmon; i++) {
		g->mon[i].logical.x -= x0;
		g->mon[i].logical.y -= y0;
	}
	g->layout = (os_rect){0, 0, x1 - x0, y1 - y0};
	return true;
}

/* ---- the sessions -------------------------------------------------------------------- */

static void on_node(GDBusConnection *c, const char *sender, const char *path,
                    const char *iface, const char *signal, GVariant *params, gpointer data)
{
	struct os_gnome_monitor *m = data;
	if (g_variant_is_of_type(params, G_VARIANT_TYPE("(u)")))
		g_variant_get(params, "(u)", &m->node);
}

static void on_closed(GDBusConnection *c, const char *sender, const char *path,
                      const char *iface, const char *signal, GVariant *params, gpointer data)
{
	struct os_gnome_display *g = data;
	mark_dead(g, strcmp(iface, RD_SESSION) == 0 ? "Mutter closed the RemoteDesktop session"
	                                            : "Mutter closed the ScreenCast session");
}

static guint subscribe(struct os_gnome_display *g, const char *sender, const char *iface,
                       const char *signal, const char *path, GDBusSignalCallback cb, void *data)
{
	return g_dbus_connection_signal_subscribe(g->bus, sender, iface, signal, path, NULL,
	                                          G_DBUS_SIGNAL_FLAGS_NONE, cb, data, NULL);
}

/* An object path from a reply "(o)", owned, or NULL. */
static char *reply_path(GVariant *r)
{
	if (r == NULL)
		return NULL;
	char *p = NULL;
	g_variant_get(r, "(o)", &p);
	g_variant_unref(r);
	return p;
}

static bool create_sessions(struct os_gnome_display *g)
{
	g->rd_session = reply_path(os_gnome_call(g, RD_NAME, RD_PATH, RD_NAME, "CreateSession",
	                                         NULL, "creating the RemoteDesktop session"));
	if (g->rd_session == NULL)
		return false;
	g->sub[g->nsub++] = subscribe(g, RD_NAME, RD_SESSION, "Closed", g->rd_session, on_closed, g);
	GVariant *id = property(g, RD_NAME, g->rd_session, RD_SESSION, "SessionId");
	if (id == NULL || !g_variant_is_of_type(id, G_VARIANT_TYPE_STRING)) {
		if (id != NULL)
			g_variant_unref(id);
		return os_fail("the RemoteDesktop session has no SessionId");
	}
	g->session_id = g_strdup(g_variant_get_string(id, NULL));
	g_variant_unref(id);
	GVariantBuilder b;
	g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
	g_variant_builder_add(&b, "{sv}", "remote-desktop-session-id",
	                      g_variant_new_string(g->session_id));
	g->sc_session = reply_path(os_gnome_call(g, SC_NAME, SC_PATH, SC_NAME, "CreateSession",
	                                         g_variant_new("(a{sv})", &b),
	                                         "creating the ScreenCast session"));
	if (g->sc_session == NULL)
		return false;
	g->sub[g->nsub++] = subscribe(g, SC_NAME, SC_SESSION, "Closed", g->sc_session, on_closed, g);
	return true;
}

/* One stream per monitor, the cursor as metadata (cursor-mode 2): the
 * frames show no pointer, and its position comes with each buffer. */
static bool record_monitors(struct os_gnome_display *g)
{
	for (int i = 0; i < g->nmon; i++) {
		struct os_gnome_monitor *m = &g->mon[i];
		GVariantBuilder b;
		g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
		g_variant_builder_add(&b, "{sv}", "cursor-mode", g_variant_new_uint32(2));
		m->stream_path = reply_path(os_gnome_call(g, SC_NAME, g->sc_session, SC_SESSION,
		                                          "RecordMonitor",
		                                          g_variant_new("(sa{sv})", m->connector, &b),
		                                          "recording a monitor"));
		if (m->stream_path == NULL)
			return false;
		g->sub[g->nsub++] = subscribe(g, SC_NAME, SC_STREAM, "PipeWireStreamAdded",
		                              m->stream_path, on_node, m);
	}
	return true;
}

static gboolean wake(gpointer data)
{
	return G_SOURCE_REMOVE;
}

/* Start() makes Mutter announce every stream's node: wait for them all. */
static bool start_sessions(struct os_gnome_display *g)
{
	if (!os_gnome_rd(g, "Start", NULL, "starting the RemoteDesktop session"))
		return false;
	int64_t deadline = base_now_ns() + NODES_TIMEOUT_MS * BASE_NS_PER_MS;
	for (int i = 0; i < g->nmon; i++) {
		while (g->mon[i].node == 0) {
			if (!os_gnome_alive(g))
				return false;
			long left = base_ms_until(deadline);
			if (left <= 0)
				return os_fail("Mutter announced no PipeWire stream for monitor %s in %d ms",
				               g->mon[i].connector, NODES_TIMEOUT_MS);
			/* Short slices: a signal queued to g->ctx from GDBus's
			 * thread has been seen not to wake a blocked iteration
			 * (a 5 s stall in one start of five). */
			GSource *t = g_timeout_source_new(left < 10 ? (guint)left : 10);
			g_source_set_callback(t, wake, NULL, NULL);
			g_source_attach(t, g->ctx);
			g_main_context_iteration(g->ctx, TRUE);
			g_source_destroy(t);
			g_source_unref(t);
		}
	}
	return true;
}

/* ---- open and close ------------------------------------------------------------------- */

static void gnome_destroy(os_display *d);
static const struct os_backend_impl gnome_impl;

static bool setup(struct os_gnome_display *g, bool *not_mine)
{
	if (!connect_bus(g, not_mine))
		return false;
	os_trace("bus");
	identify(g);
	list_offers(g);
	if (!read_monitors(g) || !create_sessions(g) || !record_monitors(g) ||
	    !start_sessions(g))
		return false;
	/* Benchmarks split the set-up: D-Bus sessions up to the nodes'
	 * announcement, then PipeWire's streams connected. */
	os_trace("sessions");
	if (!os_gnome_capture_start(g))
		return false;
	os_trace("streams");
	return true;
}

os_display *os_gnome_open(const char *name, bool *not_mine)
{
	/* Without its libraries this backend cannot even ask whether the
	 * session is GNOME's: the next one is tried, this reason kept. */
	*not_mine = true;
	if (!os_gnome_libs_load())
		return NULL;
	*not_mine = false;
	if (name == NULL || name[0] == '\0')
		name = getenv("WAYLAND_DISPLAY");
	struct os_gnome_display *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	if (!os_display_init_head(&g->base, &gnome_impl, name)) {
		free(g);
		return NULL;
	}
	g->base.session = "Wayland";
	g->ctx = g_main_context_new();
	/* The signals subscribed now are delivered to g->ctx. */
	g_main_context_push_thread_default(g->ctx);
	bool ok = setup(g, not_mine);
	g_main_context_pop_thread_default(g->ctx);
	if (ok)
		return &g->base;
	gnome_destroy(&g->base);
	return NULL;
}

static void gnome_destroy(os_display *d)
{
	struct os_gnome_display *g = os_gnome(d);
	if (g->bus != NULL) {
		/* Input first, while the session can still take the releases;
		 * then Stop, after which Mutter releases whatever is left. */
		if (g->rd_session != NULL)
			os_gnome_input_release(g);
		os_gnome_capture_stop(g);
		if (g->rd_session != NULL && !g->dead)
			os_gnome_rd(g, "Stop", NULL, "stopping the RemoteDesktop session");
		for (int i = 0; i < g->nsub; i++)
			g_dbus_connection_signal_unsubscribe(g->bus, g->sub[i]);
		g_object_unref(g->bus);
	}
	if (g->ctx != NULL) {
		pump(g);
		g_main_context_unref(g->ctx);
	}
	for (int i = 0; i < g->nmon; i++)
		g_free(g->mon[i].stream_path);
	g_free(g->rd_session);
	g_free(g->sc_session);
	g_free(g->session_id);
	os_display_free_head(d);
}

/* ---- geometry and features ------------------------------------------------------------ */

static void gnome_screen_size(os_display *d, int *width, int *height)
{
	*width = os_gnome(d)->layout.width;
	*height = os_gnome(d)->layout.height;
}

static int gnome_monitors(os_display *d, os_monitor *out, int max)
{
	struct os_gnome_display *g = os_gnome(d);
	for (int i = 0; i < g->nmon && i < max; i++) {
		out[i].rect = g->mon[i].logical;
		out[i].scale = g->mon[i].scale;
		snprintf(out[i].name, sizeof(out[i].name), "%s", g->mon[i].connector);
	}
	return g->nmon;
}

static bool gnome_capture_uses_shm(os_display *d)
{
	return true;  /* PipeWire's buffers are memfds mapped by both sides */
}

static const char *gnome_feature(os_display *d, os_feature f, const char **why)
{
	switch (f) {
	case OS_FEATURE_CAPTURE:
		return SC_NAME " (a PipeWire stream per monitor)";
	case OS_FEATURE_POINTER:
		return RD_NAME " (absolute motion in the streams' coordinates, evdev buttons, "
		       "discrete scroll)";
	case OS_FEATURE_KEYS:
		return RD_NAME " (keysyms)";
	case OS_FEATURE_TYPING:
		return RD_NAME " (keysyms; its clipboard for a character the keymap lacks)";
	case OS_FEATURE_WINDOWS:
		*why = "Mutter lists its windows to no other process (no foreign-toplevel "
		       "protocol; gnome-shell's Eval is closed)";
		return NULL;
	case OS_FEATURE_OWNERS:
		*why = "Mutter does not tell which process owns a window or the keyboard focus";
		return NULL;
	case OS_FEATURE_POINTER_POSITION:
		return "the screen-cast stream's cursor metadata";
	case OS_FEATURE_HELD_KEYS:
		*why = "the RemoteDesktop session's keys are released when it stops, i.e. when "
		       "deskhand exits: --down holds them only within one process, as the "
		       "agent's key_down does";
		return NULL;
	default:
		*why = "unknown feature";
		return NULL;
	}
}

static const struct os_backend_impl gnome_impl = {
	.name = "gnome",
	.clients_know_position = false,  /* Wayland clients never learn their place */
	.destroy = gnome_destroy,
	.screen_size = gnome_screen_size,
	.monitors = gnome_monitors,
	.pointer = os_gnome_pointer,
	.capture_borrow = os_gnome_capture_borrow,
	.capture_trim = os_gnome_capture_trim,
	.capture_uses_shm = gnome_capture_uses_shm,
	.capture_png = NULL,
	.mouse_move = os_gnome_mouse_move,
	.mouse_click = os_gnome_mouse_click,
	.mouse_button = os_gnome_mouse_button,
	.mouse_scroll = os_gnome_mouse_scroll,
	.key_combo = os_gnome_key_combo,
	.key_down = os_gnome_key_down,
	.key_up = os_gnome_key_up,
	.key_hold = os_gnome_key_hold,
	.type = os_gnome_type,
	.windows_list = NULL,
	.window_activate = NULL,
	.root_string = NULL,
	.client_pids = NULL,
	.point_owners = NULL,
	.keys_owners = NULL,
	.stop_key_arm = NULL,
	.stop_key_pressed = NULL,
	.feature = gnome_feature,
};
