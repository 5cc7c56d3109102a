/*
 * Private to os/wlroots/: the display of the wlroots backend (a Wayland
 * connection to sway, Hyprland, river, labwc or wayfire) and what its files
 * share. Coordinates everywhere are the screen's: the layout's logical
 * pixels, translated so that the layout's top-left corner is 0,0.
 *
 * Owns: the Wayland connection, the globals bound on it, the capture
 * buffers (memfd + wl_shm), the virtual pointer and keyboard (keys held by
 * key_down are released at close), the toplevel handles.
 * May call: libwayland-client, libxkbcommon, cJSON (sway's IPC), base/.
 */
#ifndef DESKHAND_OS_WLROOTS_INTERNAL_H
#define DESKHAND_OS_WLROOTS_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "os/backend.h"

struct wl_display;
struct wl_registry;
struct wl_shm;
struct wl_seat;
struct wl_output;
struct wl_shm_pool;
struct wl_buffer;
struct zxdg_output_manager_v1;
struct zxdg_output_v1;
struct zwlr_screencopy_manager_v1;
struct zwlr_virtual_pointer_manager_v1;
struct zwlr_virtual_pointer_v1;
struct zwp_virtual_keyboard_manager_v1;
struct zwlr_foreign_toplevel_manager_v1;
struct os_wl_keyboard;
struct os_wl_toplevel;
struct os_sway_tree;

#define OS_WL_MAX_OUTPUTS 16

/* A client's time to take up a keyboard or pointer that appeared on its
 * seat with ours: a fresh foot on a headless sway needed 5..15 ms (5 lost
 * a text 1 time in 6, 15 none in 6, 60 none in 13). */
#define OS_WL_SEAT_SETTLE_MS 60

/* One wl_shm buffer in a memfd, reused between captures of an output. */
struct os_wl_buffer {
	int fd;                 /* -1: none */
	uint8_t *data;
	size_t size;
	struct wl_shm_pool *pool;
	struct wl_buffer *wl;
	uint32_t format;
	int width, height, stride;
	/* The frame last copied into it: its flag, and the capture it was for. */
	bool y_invert;
	unsigned pass;
};

struct os_wl_output {
	struct wl_output *wl;
	struct zxdg_output_v1 *xdg;
	uint32_t global;        /* the registry name, for global_remove */
	/* Where the compositor places it: xdg_output's logical rectangle, or
	 * wl_output's position and mode divided by its scale without one. */
	os_rect logical;
	bool have_xdg_position, have_xdg_size;
	int geo_x, geo_y;       /* wl_output.geometry */
	int mode_w, mode_h;     /* the current mode, physical pixels */
	int scale;              /* wl_output.scale */
	char name[32];
	struct os_wl_buffer buf;
};

struct os_wl_display {
	os_display base;        /* first: the dispatcher sees only this */
	struct wl_display *wl;
	struct wl_registry *registry;
	struct wl_shm *shm;
	struct wl_seat *seat;
	struct zxdg_output_manager_v1 *xdg_outputs;
	struct zwlr_screencopy_manager_v1 *screencopy;
	struct zwlr_virtual_pointer_manager_v1 *pointer_manager;
	struct zwp_virtual_keyboard_manager_v1 *keyboard_manager;
	struct zwlr_foreign_toplevel_manager_v1 *toplevel_manager;
	uint32_t toplevel_version;
	uint32_t seat_caps;     /* WL_SEAT_CAPABILITY_*, as last announced */
	bool seat_caps_seen;
	struct os_wl_output *outputs[OS_WL_MAX_OUTPUTS];
	int noutputs;
	/* The registry's interface names as they arrive (becomes base.offers). */
	char *offers;
	size_t offers_len, offers_cap;
	bool dead;
	char dead_why[192];
	unsigned long roundtrips;   /* that came back: all before each was taken */
	int compositor_pid;     /* 0: unknown */
	/* sway's IPC socket, when $SWAYSOCK names one this compositor serves. */
	char *swaysock;

	/* capture.c */
	os_image img;
	uint8_t *img_mem;       /* img's own pixels when not borrowed; owned */
	size_t img_cap;
	/* The last capture (its region, when it ended, its pass number), which
	 * the next strip of the same read continues from the same frames. */
	os_rect last_region;
	int64_t last_ns;
	unsigned pass;

	/* pointer.c */
	struct zwlr_virtual_pointer_v1 *pointer;
	int sent_x, sent_y;     /* the last position sent, for clicks */
	bool sent_any;
	uint32_t buttons_down;  /* bit (evdev code - BTN_LEFT) */

	/* keyboard.c */
	struct os_wl_keyboard *kb;

	/* stop.c: the subscription to sway's binding events, -1: not armed */
	int stop_fd;
	char stop_command[48];

	/* windows.c */
	struct os_wl_toplevel *toplevels;   /* newest first */
	long long toplevels_seen;
	bool toplevels_at_bind;             /* during open: the initial burst */
};

static inline struct os_wl_display *os_wl(os_display *d)
{
	return (struct os_wl_display *)d;
}

/* ---- display.c ----------------------------------------------------------- */

/*
 * False with os_error() set once the connection is gone (a protocol error
 * or a closed socket): every entry point checks it first.
 */
bool os_wl_alive(struct os_wl_display *w);
/*
 * Flushes the requests and waits until the compositor has handled them
 * (wl_display_roundtrip); on a lost connection marks it dead and fails
 * with `what` in the message.
 */
bool os_wl_roundtrip(struct os_wl_display *w, const char *what);
/*
 * Waits up to timeout_ms for events and dispatches them: 1 when some came,
 * 0 on timeout (or an interrupting signal), -1 with os_error() once the
 * connection is gone.
 */
int os_wl_dispatch(struct os_wl_display *w, int timeout_ms);
/* The layout's bounding box in the compositor's coordinates. */
os_rect os_wl_layout(struct os_wl_display *w);
/* Milliseconds on CLOCK_MONOTONIC, for event timestamps. */
uint32_t os_wl_time_ms(void);
/* A memfd of `size` bytes (sealed against shrinking); -1 with os_error. */
int os_wl_memfd(const char *name, size_t size);

/* ---- capture.c ----------------------------------------------------------- */

const os_image *os_wl_capture_borrow(os_display *d, const os_rect *region);
void os_wl_capture_trim(os_display *d, size_t max_bytes);
/* Frees every output's buffer and the image memory. */
void os_wl_capture_cleanup(struct os_wl_display *w);
void os_wl_buffer_free(struct os_wl_buffer *b);

/* ---- pointer.c ----------------------------------------------------------- */

bool os_wl_mouse_move(os_display *d, int x, int y);
bool os_wl_mouse_click(os_display *d, os_button b, int count);
bool os_wl_mouse_button(os_display *d, os_button b, bool down);
bool os_wl_mouse_scroll(os_display *d, os_scroll dir, int amount);
/* Releases held buttons and destroys the virtual pointer. */
void os_wl_pointer_cleanup(struct os_wl_display *w);

/* ---- keyboard.c ---------------------------------------------------------- */

bool os_wl_key_combo(os_display *d, const os_combo *c);
bool os_wl_key_down(os_display *d, const os_combo *c);
bool os_wl_key_up(os_display *d, const os_combo *c);
bool os_wl_key_hold(os_display *d, const os_combo *c, int ms);
bool os_wl_type(os_display *d, const char *utf8, size_t len, int delay_ms);
/* Releases held keys and destroys the virtual keyboard. */
void os_wl_keyboard_cleanup(struct os_wl_display *w);

/* ---- windows.c ----------------------------------------------------------- */

/* Binds the toplevel manager's listener (called when it is bound). */
void os_wl_toplevels_listen(struct os_wl_display *w);
os_window *os_wl_windows_list(os_display *d, size_t *count);
bool os_wl_window_activate(os_display *d, uint32_t id);
size_t os_wl_client_pids(os_display *d, int *pids, size_t max);
size_t os_wl_point_owners(os_display *d, int x, int y, int *pids, size_t max);
size_t os_wl_keys_owners(os_display *d, int *pids, size_t max);
void os_wl_toplevels_cleanup(struct os_wl_display *w);

/* ---- stop.c: the stop key (os.h's os_stop_key_arm) ------------------------- */

bool os_wl_stop_key_arm(os_display *d, char *desc, size_t size);
bool os_wl_stop_key_pressed(os_display *d);
void os_wl_stop_key_cleanup(struct os_wl_display *w);

#endif
