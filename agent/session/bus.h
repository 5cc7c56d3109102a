/*
 * agent/session/bus — the session bus deskhand runs with: the agent, and
 * `deskhand elements` and `doctor`, find the display's accessibility bus
 * where toolkits look for it or, when there is none, start a private
 * session bus for as long as deskhand runs (dbus-run-session's semantics:
 * os_bus_start), so that applications started from then on register
 * their accessibility tree. main() ends it (os_bus_stop). A dead
 * accessibility bus address on the root window is replaced at once (see
 * vision/a11y.c: Qt 5 would take it and never register).
 */
#ifndef DESKHAND_AGENT_SESSION_BUS_H
#define DESKHAND_AGENT_SESSION_BUS_H

#include <stddef.h>

#include "os/os.h"

typedef enum agent_bus_state {
	AGENT_BUS_FOUND,    /* a bus was there: nothing started, `note` empty */
	AGENT_BUS_STARTED,  /* started; `note` is the one line to tell the user */
	AGENT_BUS_NONE,     /* none, and none could be started; `note` says why */
} agent_bus_state;

/*
 * Finds or starts the bus for display d (see above). Once started, the
 * accessibility bus is activated from it at once (at-spi-bus-launcher
 * then publishes AT_SPI_BUS on the root window, where applications
 * started by others on the display find it). Call before anything in
 * this process uses libatspi, and before code sessions copy the
 * environment (the sandbox hides the socket DBUS_SESSION_BUS_ADDRESS
 * names and drops the variable; unsandboxed code and what it starts get
 * it). A second call reports what the first did.
 */
agent_bus_state agent_session_bus(os_display *d, char *note, size_t size);

#endif
