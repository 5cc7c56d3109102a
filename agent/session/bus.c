/*
 * The session bus deskhand runs with (see bus.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent/session/bus.h"
#include "vision/vision.h"

agent_bus_state agent_session_bus(os_display *d, char *note, size_t size)
{
	static int state = -1;
	static char first[1024];
	if (state >= 0) {
		snprintf(note, size, "%s", first);
		return (agent_bus_state)state;
	}
	char where[PATH_MAX];
	state = AGENT_BUS_FOUND;
	first[0] = '\0';
	if (os_bus_find(d, where, sizeof(where))) {
		/* A dead address on the root window: replaced now, before the
		 * programs deskhand starts read it (see vision/a11y.c). */
		char apps[256], why[256];
		if (d != NULL && os_bus_root_stale(d))
			vision_a11y_probe(d, apps, sizeof(apps), why, sizeof(why));
	} else {
		char addr[512];
		if (!os_bus_start(addr, sizeof(addr))) {
			state = AGENT_BUS_NONE;
			snprintf(first, sizeof(first), "no session D-Bus bus, and none could be "
			         "started: %s", os_error());
		} else {
			/* Asking the registry activates the accessibility bus now. */
			char apps[256], why[256];
			bool a11y = vision_a11y_probe(d, apps, sizeof(apps), why, sizeof(why));
			state = AGENT_BUS_STARTED;
			snprintf(first, sizeof(first), "no session D-Bus bus for %s: started a private "
			         "one until deskhand exits (%s)%s%s; applications already running were "
			         "started without a bus and expose no elements until restarted",
			         d ? os_display_name(d) : "this display", addr,
			         a11y ? "" : ", but its accessibility bus does not answer: ",
			         a11y ? "" : why);
		}
	}
	snprintf(note, size, "%s", first);
	return (agent_bus_state)state;
}
