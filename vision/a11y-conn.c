/*
 * vision/a11y-conn — this process's one connection to the accessibility
 * bus, through libatspi: found where the toolkits look for it (never
 * autolaunched behind the user's back), a stale address on the root
 * window skipped, libatspi's warnings kept instead of printed. See
 * a11y-internal.h. And the probe of who is on it (vision_a11y_probe).
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdio.h>
#include <stdlib.h>

#include <atspi/atspi.h>
#include <dbus/dbus.h>

#include "vision/a11y-internal.h"
#include "vision/a11y.h"
#include "vision/a11y-libs.h"

static int conn_state; /* 0 not tried, 1 up, -1 failed (reason in conn_why) */
static char conn_why[200];
static char glib_last[120];

/* libatspi reports through g_warning; deskhand prints nothing from vision/. */
static void glib_quiet(const gchar *domain, GLogLevelFlags level, const gchar *msg,
                       gpointer data)
{
	(void)domain;
	(void)level;
	(void)data;
	snprintf(glib_last, sizeof(glib_last), "%s", msg ? msg : "");
}

/*
 * An AT_SPI_BUS address on the root window that nobody answers (left by an
 * at-spi-bus-launcher that did not end cleanly) wins over the session bus
 * in libatspi, and in Qt 5, which connects to it, fails, and never tries
 * again. Asking the session bus for the accessibility bus activates the
 * launcher if it is not running (it publishes a fresh address as it
 * starts, for the applications started from then on); deskhand uses the
 * answer itself through AT_SPI_BUS_ADDRESS (which the sandbox drops).
 */
static void skip_stale_root_address(os_display *d)
{
	char where[64];
	if (getenv("AT_SPI_BUS_ADDRESS") != NULL || !os_bus_find(NULL, where, sizeof(where)))
		return; /* set by hand, or no session bus to ask */
	if (!os_bus_root_stale(d))
		return;
	DBusError err;
	dbus_error_init(&err);
	DBusConnection *c = dbus_bus_get_private(DBUS_BUS_SESSION, &err);
	DBusMessage *m = NULL, *r = NULL;
	if (c == NULL)
		goto out;
	dbus_connection_set_exit_on_disconnect(c, FALSE);
	m = dbus_message_new_method_call("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus",
	                                 "GetAddress");
	if (m != NULL)
		r = dbus_connection_send_with_reply_and_block(c, m, VISION_A11Y_TIMEOUT_MS * 3, &err);
	const char *addr = NULL;
	if (r != NULL && dbus_message_get_args(r, &err, DBUS_TYPE_STRING, &addr, DBUS_TYPE_INVALID) &&
	    os_bus_address_reachable(addr))
		setenv("AT_SPI_BUS_ADDRESS", addr, 1);
out:
	if (r != NULL)
		dbus_message_unref(r);
	if (m != NULL)
		dbus_message_unref(m);
	if (c != NULL) {
		dbus_connection_close(c);
		dbus_connection_unref(c);
	}
	dbus_error_free(&err);
}

bool vision_a11y_connect(os_display *d, const char **why)
{
	*why = conn_why;
	if (conn_state == 1)
		return true;
	if (conn_state == -1)
		return false;
	conn_state = -1;
	const char *unloaded;
	if (!a11y_libs_load(&unloaded)) {
		snprintf(conn_why, sizeof(conn_why), "%s", unloaded);
		return false;
	}
	g_log_set_default_handler(glib_quiet, NULL);
	/* Checked first: with no bus, libdbus would autolaunch a session bus
	 * of its own through X11, which deskhand must not do behind the user's
	 * back (it starts one itself and says so: os_bus_start). */
	char where[64];
	if (!os_bus_find(d, where, sizeof(where))) {
		snprintf(conn_why, sizeof(conn_why),
		         "no accessibility bus (no session D-Bus, no AT_SPI_BUS on the root window)");
		return false;
	}
	/* Not autolaunching: DBUS_SESSION_BUS_ADDRESS or the socket is there. */
	setenv("DBUS_AUTOLAUNCH", "0", 0);
	skip_stale_root_address(d);
	int r = atspi_init();
	if (r != 0 && r != 1) {
		snprintf(conn_why, sizeof(conn_why), "the accessibility bus is unreachable%s%s",
		         glib_last[0] ? ": " : "", glib_last);
		return false;
	}
	conn_state = 1;
	return true;
}

static bool gerr(GError **err)
{
	if (*err == NULL)
		return false;
	g_clear_error(err);
	return true;
}

bool vision_a11y_probe(os_display *d, char *apps, size_t apps_size, char *why,
                       size_t why_size)
{
	const char *down;
	if (!vision_a11y_connect(d, &down)) {
		snprintf(why, why_size, "%s", down);
		return false;
	}
	atspi_set_timeout(1000, 1000);
	AtspiAccessible *desk = atspi_get_desktop(0);
	GError *err = NULL;
	gint n = desk ? atspi_accessible_get_child_count(desk, &err) : -1;
	if (desk == NULL || gerr(&err) || n < 0) {
		snprintf(why, why_size, "the accessibility registry does not answer");
		if (desk != NULL)
			g_object_unref(desk);
		return false;
	}
	apps[0] = '\0';
	size_t used = 0;
	for (gint i = 0; i < n && i < 64; i++) {
		AtspiAccessible *app = atspi_accessible_get_child_at_index(desk, i, &err);
		if (gerr(&err) || app == NULL)
			continue;
		gchar *name = atspi_accessible_get_name(app, &err);
		gerr(&err);
		guint pid = atspi_accessible_get_process_id(app, &err);
		gerr(&err);
		int k = snprintf(apps + used, apps_size - used, "%s%s (pid %u)", used ? ", " : "",
		                 name && name[0] ? name : "?", pid);
		if (k > 0 && (size_t)k < apps_size - used)
			used += (size_t)k;
		g_free(name);
		g_object_unref(app);
	}
	g_object_unref(desk);
	if (used == 0)
		snprintf(apps, apps_size, "none");
	return true;
}

#else /* !DESKHAND_HAVE_ATSPI */

#include <stdio.h>

#include "vision/a11y.h"

bool vision_a11y_probe(os_display *d, char *apps, size_t apps_size, char *why,
                       size_t why_size)
{
	(void)d;
	(void)apps;
	(void)apps_size;
	snprintf(why, why_size, "deskhand was built without AT-SPI (libatspi2.0-dev)");
	return false;
}

#endif /* DESKHAND_HAVE_ATSPI */
