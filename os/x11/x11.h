/*
 * Private to os/x11/: the X11 backend's display (an os_display head, then
 * the Xlib connection and what each part of the backend keeps on it) and
 * the X error trap. Never included outside os/x11/ (tests/ excepted).
 *
 * The backend's functions take an os_x11 *; os/x11/display.c holds the
 * struct of functions that os/display.c calls through, each a cast of the
 * head to the backend's display.
 */
#ifndef DESKHAND_OS_X11_H
#define DESKHAND_OS_X11_H

#include <X11/Xlib.h>
#include <stdarg.h>

#include "os/backend.h"

struct os_capture_state;  /* capture.c: the reused SHM segment */
struct os_input_state;    /* input.c/type.c: keymap snapshot, spare keycodes */

typedef struct os_x11 {
	os_display base;
	Display *dpy;
	Window root;
	int screen;
	/*
	 * Each part of the backend that keeps state on the display sets its
	 * pointer and its clean-up together; closing calls the clean-ups (input
	 * first: it restores the keymap).
	 */
	struct os_capture_state *capture;
	void (*capture_cleanup)(struct os_x11 *d);
	struct os_input_state *input;
	void (*input_cleanup)(struct os_x11 *d);
} os_x11;

/*
 * Protocol errors are recorded, never fatal. A trap brackets requests whose
 * errors the caller wants to see: os_x_trap_begin() syncs and clears the
 * record, os_x_trap_end() syncs and returns the error code of the first
 * error since begin (0: none) and, when non-zero, sets os_error() to a text
 * naming `what`.
 */
void os_x_trap_begin(os_x11 *d);
int os_x_trap_end(os_x11 *d, const char *what);

/* True once the connection to the server was lost; os_error() says so. */
bool os_display_dead(os_x11 *d);
/* Whether the connection is gone, without touching os_error (the backend's .lost). */
bool os_x_lost(const os_display *d);

/* The pid of the client that created window w, as the X server knows it
 * (X-Resource; clients on this machine); 0 when unknown. */
int os_x_window_pid(os_x11 *d, Window w);

/* The input focus as the server has it: a window, PointerRoot or None
 * (read inside a trap: a failure reads as None). */
Window os_x_focus(os_x11 *d);

/* ---- the backend's functions, behind os/backend.h's struct ---------- */

extern const struct os_backend_impl os_x11_impl;
void os_x11_destroy(os_x11 *d);

void os_x11_screen_size(os_x11 *d, int *width, int *height);
int os_x11_monitors(os_x11 *d, os_monitor *out, int max);
bool os_x11_pointer(os_x11 *d, int *x, int *y);

const os_image *os_x11_capture_borrow(os_x11 *d, const os_rect *region);
void os_x11_capture_trim(os_x11 *d, size_t max_bytes);
bool os_x11_capture_uses_shm(os_x11 *d);
bool os_x11_capture_png(os_x11 *d, const os_rect *region, const char *path,
                        int fd, const os_png_options *opt);

bool os_x11_mouse_move(os_x11 *d, int x, int y);
bool os_x11_mouse_click(os_x11 *d, os_button b, int count);
bool os_x11_mouse_button(os_x11 *d, os_button b, bool down);
bool os_x11_mouse_scroll(os_x11 *d, os_scroll dir, int amount);

bool os_x11_key_combo(os_x11 *d, const os_combo *c);
bool os_x11_key_down(os_x11 *d, const os_combo *c);
bool os_x11_key_up(os_x11 *d, const os_combo *c);
bool os_x11_key_hold(os_x11 *d, const os_combo *c, int ms);
bool os_x11_type(os_x11 *d, const char *utf8, size_t len, int delay_ms);

os_window *os_x11_windows_list(os_x11 *d, size_t *count);
bool os_x11_window_activate(os_x11 *d, uint32_t id);
/* An EWMH window manager runs (its check window points back at itself)
 * and answers requests: a window mapped now is managed. */
bool os_x11_wm_running(os_x11 *d);
char *os_x11_root_string(os_x11 *d, const char *name);

size_t os_x11_client_pids(os_x11 *d, int *pids, size_t max);
size_t os_x11_point_owners(os_x11 *d, int x, int y, int *pids, size_t max);
size_t os_x11_keys_owners(os_x11 *d, int *pids, size_t max);

#endif
