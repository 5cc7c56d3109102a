/*
 * Private to os/gnome/: the display of the GNOME backend — a headless or
 * desktop Mutter (GNOME on Wayland) driven through the interfaces that
 * gnome-remote-desktop and xdg-desktop-portal-gnome use, on the session
 * bus: org.gnome.Mutter.RemoteDesktop (input: pointer motion in a
 * stream's coordinates, buttons, discrete scroll, keysyms and keycodes,
 * the clipboard) and org.gnome.Mutter.ScreenCast (one PipeWire stream per
 * monitor, the cursor as metadata), tied together in one session that
 * stays open for the life of the display; org.gnome.Mutter.DisplayConfig
 * for where the monitors are.
 *
 * Files: display.c (the bus, the sessions, the monitors, the struct of
 * functions), capture.c (PipeWire: the newest frame of each stream, the
 * cursor's position from its metadata), input.c (pointer and keys),
 * type.c (exact text: keysyms, the clipboard where Mutter cannot type a
 * character).
 *
 * Owns: the bus connection, the two sessions (stopped at close: Mutter
 * then releases every key and button deskhand held), the PipeWire
 * context and streams.
 * May call: GLib's GIO (GDBus), libpipewire, libxkbcommon's keysym
 * tables, base/.
 */
#ifndef DESKHAND_OS_GNOME_INTERNAL_H
#define DESKHAND_OS_GNOME_INTERNAL_H

#include <stdint.h>

#include "os/backend.h"

typedef struct _GDBusConnection GDBusConnection;
typedef struct _GMainContext GMainContext;
struct os_gnome_capture;       /* capture.c: the PipeWire side */
struct os_gnome_typer;         /* type.c: the keymap, the clipboard */

#define OS_GNOME_MAX_MONITORS 16

struct os_gnome_monitor {
	char connector[32];        /* "Meta-0", "DP-1": RecordMonitor's argument */
	os_rect logical;           /* in the screen's coordinates (layout min at 0,0) */
	/* Stream pixels per screen pixel: NotifyPointerMotionAbsolute takes
	 * (x - logical.x) * scale (Mutter divides by the monitor's scale when
	 * its stage views are scaled, the logical layout). */
	double scale;
	char *stream_path;         /* the ScreenCast stream recording it, owned */
	uint32_t node;             /* its PipeWire node (PipeWireStreamAdded) */
};

struct os_gnome_display {
	os_display base;           /* first: the dispatcher sees only this */
	GDBusConnection *bus;
	char *rd_session;          /* RemoteDesktop session object path, owned */
	char *sc_session;          /* ScreenCast session object path, owned */
	char *session_id;          /* the RemoteDesktop session's SessionId */
	char mutter_version[32];   /* "43.8"; "" when unknown */
	struct os_gnome_monitor mon[OS_GNOME_MAX_MONITORS];
	int nmon;
	os_rect layout;            /* the screen: every monitor's bounding box */
	bool dead;                 /* the bus or a session went away */
	char dead_why[192];
	/* display.c: the context the bus's signals are delivered to (pumped
	 * by os_gnome_alive), and the subscriptions (2 Closed + 1 per stream). */
	GMainContext *ctx;
	unsigned sub[2 + OS_GNOME_MAX_MONITORS];
	int nsub;
	/* Every Notify* call sent (os_gnome_call counts them): capture.c
	 * waits for a frame newer than the last input. */
	uint64_t input_seq;
	int64_t input_ns;

	/* capture.c */
	struct os_gnome_capture *cap;

	/* input.c */
	int sent_x, sent_y;        /* the last position sent, for "here" */
	bool sent_any;
	/* A move sent whose position the cursor metadata has not shown yet:
	 * os_gnome_pointer waits for it (bounded), or the agent's kill switch
	 * would take its own click for a person's move (capture.c). */
	bool motion_unseen;
	int64_t motion_ns;
	uint32_t buttons_down;     /* bit (evdev code - BTN_LEFT) */
	uint32_t keys_down[8];     /* keysyms held by key_down, released at close */
	int nkeys_down;
	bool clipboard_enabled;
	/* Mutter 43 adds a session's virtual pointer and keyboard to the seat
	 * only with their first event; clients miss events sent before they
	 * took up the new capability (input.c wakes each device once). */
	bool pointer_awake, keyboard_awake;
	struct os_gnome_typer *typer;  /* type.c: keymap, clipboard; owned */
};

static inline struct os_gnome_display *os_gnome(os_display *d)
{
	return (struct os_gnome_display *)d;
}

/* ---- display.c ----------------------------------------------------------- */

/*
 * Calls method `method` of `iface` on object `path` of Mutter's service
 * `dest` with `params` (a floating GVariant, or NULL), synchronously, with
 * a bounded timeout; returns the reply (g_variant_unref it) or NULL with
 * os_error() naming `what`. A bus or session that went away marks the
 * display dead.
 */
struct _GVariant;
struct _GVariant *os_gnome_call(struct os_gnome_display *g, const char *dest,
                                const char *path, const char *iface, const char *method,
                                struct _GVariant *params, const char *what);
/* The same on the RemoteDesktop session's interface; true when it answered. */
bool os_gnome_rd(struct os_gnome_display *g, const char *method,
                 struct _GVariant *params, const char *what);
/* False with os_error() once the display is dead. */
bool os_gnome_alive(struct os_gnome_display *g);
/* The monitor holding screen point (x,y); -1 (os_error) when none does. */
int os_gnome_monitor_at(struct os_gnome_display *g, int x, int y);

/* ---- capture.c ----------------------------------------------------------- */

/* Connects to PipeWire and opens one stream per monitor; false with os_error. */
bool os_gnome_capture_start(struct os_gnome_display *g);
void os_gnome_capture_stop(struct os_gnome_display *g);
const os_image *os_gnome_capture_borrow(os_display *d, const os_rect *region);
void os_gnome_capture_trim(os_display *d, size_t max_bytes);
/* For tests and benchmarks: frames PipeWire delivered (all streams) and
 * captures that took a new frame (a strip reusing one does not). */
void os_gnome_capture_stats(os_display *d, uint64_t *received, uint64_t *taken);
/* The cursor's position from the streams' metadata, in screen coordinates:
 * observed, never the position deskhand sent. */
bool os_gnome_pointer(os_display *d, int *x, int *y);

/* ---- input.c, type.c ------------------------------------------------------ */

bool os_gnome_mouse_move(os_display *d, int x, int y);
bool os_gnome_mouse_click(os_display *d, os_button b, int count);
bool os_gnome_mouse_button(os_display *d, os_button b, bool down);
bool os_gnome_mouse_scroll(os_display *d, os_scroll dir, int amount);
bool os_gnome_key_combo(os_display *d, const os_combo *c);
bool os_gnome_key_down(os_display *d, const os_combo *c);
bool os_gnome_key_up(os_display *d, const os_combo *c);
bool os_gnome_key_hold(os_display *d, const os_combo *c, int ms);
bool os_gnome_type(os_display *d, const char *utf8, size_t len, int delay_ms);
/* Releases what key_down and a button left held, and frees type.c's
 * state (at close, before the sessions stop). */
void os_gnome_input_release(struct os_gnome_display *g);

/* input.c for type.c: one keysym event (the keyboard woken first). */
bool os_gnome_key_send(struct os_gnome_display *g, uint32_t keysym, bool down);
/* type.c for input.c: whether Mutter finds `keysym` in its keymap, in
 * every layout group, at a level it can reach (0 Shift, 1, 2 AltGr);
 * false with os_error naming it otherwise (Mutter would drop the key
 * silently). */
bool os_gnome_keysym_reachable(struct os_gnome_display *g, uint32_t keysym);
void os_gnome_type_free(struct os_gnome_display *g);

#endif
