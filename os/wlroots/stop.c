/*
 * os/wlroots/stop — the stop key. A Wayland compositor tells no client
 * where the pointer is, so the kill switch cannot watch for a hand on the
 * mouse; where sway's IPC is there, deskhand asks sway to bind a key to a
 * tagged `nop` (which runs nothing) and reads sway's binding events for it.
 *
 * sway holds one binding per key: a second deskhand on the same desktop
 * binding it again would replace the first's, and unbinding it at its
 * exit would leave the first with no stop key at all. So every deskhand
 * binds the same `nop`, one press stops them all, and the key is unbound
 * by the last to leave: each registers its pid in a directory of the
 * runtime dir named after sway's socket, arm and close serialised by a
 * lock on it; a holder is named by its pid and start time, so a pid
 * reused after a deskhand was killed outright holds nothing. A binding
 * left by the last one killed outright does nothing but keep the key.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
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

/* The holders' directory, locked; -1 where there is none to be had (the
 * key is then unbound at this process's exit, whoever else holds it). */
static int holders_lock(const struct os_wl_display *w)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *base = strrchr(w->swaysock, '/');
	char dir[4096];
	base = base != NULL ? base + 1 : w->swaysock;
	if (rt == NULL || rt[0] != '/' ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/deskhand-stop.%s", rt, base) >= sizeof(dir))
		return -1;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A holder's name: its pid and start time, so that a pid reused after a
 * deskhand was killed outright holds nothing. */
static bool holder_name(int pid, char *name, size_t size)
{
	base_proc_info pi;
	if (!base_proc_stat(pid, &pi))
		return false;
	snprintf(name, size, "%d-%llu", pid, pi.start);
	return true;
}

/* Registers (or removes) this process as a holder of the key. */
static void holders_mark(int dirfd, bool add)
{
	char name[48];
	if (!holder_name((int)getpid(), name, sizeof(name)))
		return;
	if (add) {
		int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
	} else {
		unlinkat(dirfd, name, 0);
	}
}

/* Whether another live process holds the key; the dead are forgotten. */
static bool holders_others(int dirfd)
{
	int fd = dup(dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	bool others = false;
	if (dir == NULL) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	const struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		char *end, now[48];
		long pid = strtol(e->d_name, &end, 10);
		if (*end != '-' || pid <= 0 || pid == (long)getpid())
			continue;
		if (holder_name((int)pid, now, sizeof(now)) && strcmp(now, e->d_name) == 0)
			others = true;
		else
			unlinkat(dirfd, e->d_name, 0);
	}
	closedir(dir);
	return others;
}

static bool stop_key_bind(struct os_wl_display *w)
{
	snprintf(w->stop_command, sizeof(w->stop_command), "nop deskhand-stop");
	/* Subscribed first: a press right after the binding is seen. */
	w->stop_fd = os_sway_subscribe(w->swaysock, "[\"binding\"]");
	if (w->stop_fd < 0)
		return false;
	char *reply = os_sway_ipc(w->swaysock, OS_SWAY_RUN_COMMAND,
	                          "bindsym --no-repeat " STOP_COMBO " nop deskhand-stop");
	bool ok = reply != NULL && os_sway_succeeded(reply);
	if (reply != NULL && !ok)
		os_fail("sway refused to bind " STOP_COMBO ": %s", reply);
	free(reply);
	if (!ok) {
		close(w->stop_fd);
		w->stop_fd = -1;
	}
	return ok;
}

bool os_wl_stop_key_arm(os_display *d, char *desc, size_t size)
{
	struct os_wl_display *w = os_wl(d);
	if (w->swaysock == NULL)
		return os_fail("the compositor %s has no IPC deskhand can bind a key through "
		               "(sway's: SWAYSOCK)", w->base.server[0] ? w->base.server : "");
	if (w->stop_fd < 0) {
		int lock = holders_lock(w);
		bool ok = stop_key_bind(w);
		if (lock >= 0) {
			if (ok)
				holders_mark(lock, true);
			close(lock);
		}
		if (!ok)
			return false;
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
	int lock = holders_lock(w);
	bool others = false;
	if (lock >= 0) {
		holders_mark(lock, false);
		others = holders_others(lock);
	}
	if (!others)
		free(os_sway_ipc(w->swaysock, OS_SWAY_RUN_COMMAND,
		                 "unbindsym --no-repeat " STOP_COMBO));
	if (lock >= 0)
		close(lock);
}
