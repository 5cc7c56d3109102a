/*
 * Private to os/wlroots/: a client of sway's IPC (the unix socket named by
 * $SWAYSOCK; i3's message format: "i3-ipc", u32 length, u32 type, JSON).
 * What Wayland's protocols do not tell a client — where a window is, which
 * process made it, which one has the focus — sway's tree does.
 *
 * Note: the socket also runs any command it is sent (RUN_COMMAND), so only
 * the few reading messages below, a focus command and the stop key's
 * binding (stop.c: a `nop`, which runs nothing) are ever sent.
 */
#ifndef DESKHAND_OS_WLROOTS_SWAY_IPC_H
#define DESKHAND_OS_WLROOTS_SWAY_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/os.h"

#define OS_SWAY_RUN_COMMAND 0
#define OS_SWAY_GET_TREE 4
#define OS_SWAY_SUBSCRIBE 2
#define OS_SWAY_GET_VERSION 7

/*
 * Sends one message and reads its reply (at most 64 MiB; 2 s timeouts).
 * Returns the reply's payload, NUL-terminated, malloc'ed (caller frees);
 * NULL with os_error() set.
 */
char *os_sway_ipc(const char *sock, uint32_t type, const char *payload);
/* Whether a reply ({"success": ...}, or a command's array of them, the
 * first counting) says it succeeded. */
bool os_sway_succeeded(const char *reply);
/*
 * A connection subscribed to `events` (a JSON array: ["binding"]), for
 * os_sway_event; -1 with os_error() set. The caller closes it.
 */
int os_sway_subscribe(const char *sock, const char *events);
/*
 * One event from a subscribed connection, without waiting for one: 1 with
 * *payload (malloc'ed, caller frees), 0 when none is waiting, -1 with
 * os_error() set when the connection failed.
 */
int os_sway_event(int fd, char **payload);
/* The pid of the process serving `sock` (SO_PEERCRED); 0 when unknown. */
int os_sway_socket_pid(const char *sock);
/* sway's human-readable version ("1.7"), malloc'ed; NULL on failure. */
char *os_sway_version(const char *sock);

/* A view (a window) of sway's tree. */
typedef struct os_sway_view {
	long long con_id;
	int pid;                /* 0 when the tree has none */
	char *app_id;           /* app_id, or an Xwayland window's class; "" */
	char *title;            /* "" when unset */
	os_rect frame;          /* with borders and title bar, layout coords */
	os_rect content;        /* the surface alone, layout coords */
	bool focused, visible, floating;
} os_sway_view;

/*
 * Every view of the tree (tiled ones in tree order, each workspace's
 * floating ones after its tiled ones). Ownership: *out is the caller's,
 * freed with os_sway_views_free. False with os_error() set.
 */
bool os_sway_views(const char *sock, os_sway_view **out, size_t *n);
void os_sway_views_free(os_sway_view *v, size_t n);
/* Focuses the view with con_id through a "[con_id=N] focus" command. */
bool os_sway_focus(const char *sock, long long con_id);

#endif
