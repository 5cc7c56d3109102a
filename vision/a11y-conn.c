/*
 * vision/a11y-conn — this process's one connection to the accessibility
 * bus, through libatspi: found where the toolkits look for it (never
 * autolaunched behind the user's back), a stale address on the root
 * window skipped, libatspi's warnings kept instead of printed. See
 * a11y-internal.h.
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdio.h>
#include <stdlib.h>

#include <atspi/atspi.h>
#include <dbus/dbus.h>

#include "vision/a11y-internal.h"
#include "vision/a11y.h"

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

#endif /* DESKHAND_HAVE_ATSPI */
