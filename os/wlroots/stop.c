/*
 * os/wlroots/stop — the stop key. A Wayland compositor tells no client
 * where the pointer is, so the kill switch cannot watch for a hand on the
 * mouse; where sway's IPC is there, deskhand asks sway to bind a key to a
 * `nop` tagged with its pid (which runs nothing) and reads sway's binding
 * events for it. The binding is undone at close; one left by a process
 * killed outright does nothing.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/wlroots/sway-ipc.h"
#include "os/wlroots/wlroots-internal.h"

/* Three modifiers: no application's shortcut, and sway binds none of its own. */
#define STOP_COMBO "Ctrl+Alt+Escape"

static bool binding_is_ours(const struct os_wl_display *w, const char *event)
{
	cJSON *root = cJSON_Parse(event);
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "binding");
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(b, "command");
	bool ours = cJSON_IsString(cmd) && strcmp(cmd->valuestring, w->stop_command) == 0;
	cJSON_Delete(root);
	return ours;
}

bool os_wl_stop_key_arm(os_display *d, char *desc, size_t size)
{
	struct os_wl_display *w = os_wl(d);
	if (w->swaysock == NULL)
		return os_fail("the compositor %s has no IPC deskhand can bind a key through "
		               "(sway's: SWAYSOCK)", w->base.server[0] ? w->base.server : "");
	if (w->stop_fd < 0) {
		snprintf(w->stop_command, sizeof(w->stop_command), "nop deskhand-stop-%d",
		         (int)getpid());
		char bind[160];
		snprintf(bind, sizeof(bind), "bindsym --no-repeat " STOP_COMBO " %s",
		         w->stop_command);
		/* Subscribed first: a press right after the binding is seen. */
		w->stop_fd = os_sway_subscribe(w->swaysock, "[\"binding\"]");
		if (w->stop_fd < 0)
			return false;
		char *reply = os_sway_ipc(w->swaysock, OS_SWAY_RUN_COMMAND, bind);
		bool ok = reply != NULL && os_sway_succeeded(reply);
		if (reply != NULL && !ok)
			os_fail("sway refused to bind " STOP_COMBO ": %s", reply);
		free(reply);
		if (!ok) {
			close(w->stop_fd);
			w->stop_fd = -1;
			return false;
		}
	}
	snprintf(desc, size, STOP_COMBO " (bound through sway's IPC)");
	return true;
}

bool os_wl_stop_key_pressed(os_display *d)
{
	struct os_wl_display *w = os_wl(d);
	bool pressed = false;
	char *ev = NULL;
	while (w->stop_fd >= 0 && os_sway_event(w->stop_fd, &ev) == 1) {
		pressed = pressed || binding_is_ours(w, ev);
		free(ev);
	}
	return pressed;
}

void os_wl_stop_key_cleanup(struct os_wl_display *w)
{
	if (w->stop_fd < 0)
		return;
	close(w->stop_fd);
	w->stop_fd = -1;
	char *reply = os_sway_ipc(w->swaysock, OS_SWAY_RUN_COMMAND,
	                          "unbindsym --no-repeat " STOP_COMBO);
	free(reply);
}
