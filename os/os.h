/*
 * os/ — deskhand's only door to a display: an X server, a Wayland
 * compositor that speaks wlroots' protocols, or GNOME's Mutter through its
 * remote-desktop and screen-cast interfaces.
 *
 * Everything that touches the display lives behind this header: the
 * connection (one backend per folder, os/x11/, os/wlroots/, os/gnome/, each one
 * struct of functions, chosen once at connect: os/display.c), screen and
 * monitor geometry, pixel capture, PNG encoding, synthetic mouse and
 * keyboard input (including exact Unicode typing), the window list and
 * who owns what input would reach; and the display's session bus, found
 * where toolkits look for it or started privately (os/bus.c). No other
 * module includes Xlib, libwayland or libpipewire; the types below are plain C so that
 * callers never need to.
 *
 * Error convention: functions that can fail return false or NULL and leave a
 * human-readable reason in os_error() (per thread, valid until the next os_
 * call on that thread). Nothing here ever exits the process or prints.
 *
 * Owns: the display connection and what it keeps (the reused capture
 * buffers, the keymap's temporary bindings or the virtual keyboard's
 * keymap, restored or released at close), the private session bus it
 * may start, and the private X servers of deskhand batch's tasks.
 * May call: base/, Xlib and its extensions (XTest, XShm, RandR, XKB,
 * X-Resource), libXau (a private server's cookie), libwayland-client,
 * libxkbcommon, cJSON (sway's IPC), GLib's GIO (Mutter's D-Bus
 * interfaces), libpipewire (its screen-cast streams), libpng, zlib, ISA-L.
 */
#ifndef DESKHAND_OS_H
#define DESKHAND_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The reason for the last failure on this thread; never NULL. */
const char *os_error(void);

/*
 * A benchmark's phase mark: only when DESKHAND_TRACE is set, writes
 * "deskhand-trace WHAT SECONDS" (CLOCK_MONOTONIC) to standard error, the
 * one thing os/ ever prints.
 */
void os_trace(const char *what);

/* ---- connection, screen, pointer ------------------------------------ */

typedef struct os_display os_display;

typedef struct os_rect {
	int x, y, width, height;
} os_rect;

typedef struct os_point {
	int x, y;
} os_point;

/* Whether a and b overlap; *out (when not NULL) gets the overlap. Pure. */
bool os_rect_meet(os_rect a, os_rect b, os_rect *out);

/*
 * Opens the display `name` (NULL: $DISPLAY) and installs error handlers so
 * that a protocol error (a window that vanished, a failed SHM attach) is
 * recorded and reported by the call that caused it, never fatal, and a lost
 * connection makes later calls fail instead of exiting.
 * Fails with "cannot open display :N" (or "no display: DISPLAY is not set").
 * Ownership: the caller owns the result and releases it with os_display_close.
 */
os_display *os_display_open(const char *name);
/*
 * The same, telling why it failed: *unsupported is set when the session is
 * one deskhand does not drive (a Wayland compositor without the protocols
 * any backend needs; os_error names the compositor and what it lacks), as
 * opposed to a display that cannot be reached.
 */
os_display *os_display_connect(const char *name, bool *unsupported);
/* Restores anything os/ changed (keymap bindings), frees. NULL is a no-op. */
void os_display_close(os_display *d);
/* The display string actually used (":3"); owned by d. */
const char *os_display_name(const os_display *d);

/*
 * Which backend drives the display. AUTO: a Wayland session
 * (WAYLAND_DISPLAY set, or XDG_SESSION_TYPE=wayland) gets the Wayland
 * backend that speaks its compositor's protocols, and fails when none does
 * (naming the compositor and what it lacks); any other session gets X11.
 * X11 on a Wayland session only when asked for (it reaches XWayland's
 * windows only: the display then carries a warning).
 */
typedef enum os_backend_choice {
	OS_BACKEND_AUTO,
	OS_BACKEND_X11,
	OS_BACKEND_WLROOTS,
	OS_BACKEND_GNOME,
	OS_BACKEND_COUNT
} os_backend_choice;

/* "auto", "x11", "wlroots": the one table of their names. */
extern const char *const os_backend_names[OS_BACKEND_COUNT];
bool os_backend_parse(const char *name, os_backend_choice *out);
/*
 * The choice every later os_display_open in this process makes (the
 * command line's --display-backend); AUTO until set.
 */
void os_display_prefer(os_backend_choice c);
/* Whether this process's environment is a Wayland session. */
bool os_session_is_wayland(void);

/* The backend that drives d ("x11", "wlroots"). */
const char *os_display_backend(const os_display *d);
/* The kind of session d is: "X11" or "Wayland"; static. */
const char *os_display_session(const os_display *d);
/* What serves d ("sway 1.7", "Xvfb"), "" when unknown; owned by d. */
const char *os_display_server(const os_display *d);
/* The protocols or extensions the server offers, comma separated ("" when
 * not listed); owned by d. */
const char *os_display_offers(const os_display *d);
/* A warning to show the user once (X11 on a Wayland session); NULL: none. */
const char *os_display_warning(const os_display *d);
/*
 * Whether the connection to the display's server is gone for good (the X
 * server or the compositor ended, or closed the connection): every later
 * call fails, so a caller ends what it was doing. Sends nothing; a loss
 * is known once a call has met it. os_error() is left alone.
 */
bool os_display_lost(const os_display *d);

/*
 * What a display can do, each feature as the backend provides it: for
 * `deskhand doctor`, and for the safety layer, which fails closed where a
 * fact cannot be had (OWNERS: who owns the window at a point or with the
 * focus, for the own-terminal check; POINTER_POSITION: where the pointer
 * is, observed, for the kill switch; HELD_KEYS: keys pressed by
 * os_key_down stay down after this process exits, for a later one's
 * os_key_up).
 */
typedef enum os_feature {
	OS_FEATURE_CAPTURE,
	OS_FEATURE_POINTER,
	OS_FEATURE_KEYS,
	OS_FEATURE_TYPING,
	OS_FEATURE_WINDOWS,
	OS_FEATURE_OWNERS,
	OS_FEATURE_POINTER_POSITION,
	OS_FEATURE_HELD_KEYS,
	OS_FEATURE_COUNT
} os_feature;

/* "capture", "pointer", "keys", "typing", "windows", "owners",
 * "pointer-position", "held-keys". */
extern const char *const os_feature_names[OS_FEATURE_COUNT];
/*
 * How d provides f ("XTest", "zwlr_screencopy_manager_v1", "sway IPC"),
 * or NULL when it cannot, with the reason in *why (never NULL then).
 * The strings are static or owned by d.
 */
const char *os_feature_how(os_display *d, os_feature f, const char **why);

/*
 * The stop key, for the kill switch where the pointer cannot be watched
 * (OS_FEATURE_POINTER_POSITION missing): a key combination the compositor
 * binds through its IPC, shared by every deskhand on that desktop (one
 * press stops them all) and undone when the last closes. os_stop_key_arm
 * binds it and writes what to press into desc ("Ctrl+Alt+Escape, bound
 * through sway's IPC"); false (os_error) where the backend cannot.
 * os_stop_key_pressed: whether it was pressed since the last call; never
 * blocks.
 */
bool os_stop_key_arm(os_display *d, char *desc, size_t size);
bool os_stop_key_pressed(os_display *d);

/* Size of the whole screen (the layout of every monitor) in pixels. */
void os_screen_size(os_display *d, int *width, int *height);
/*
 * Monitors through RandR (active outputs' CRTCs), in RandR order; a screen
 * without RandR or without active outputs counts as one monitor covering the
 * root window. Writes at most `max` entries, returns how many exist.
 */
int os_monitors(os_display *d, os_rect *out, int max);
/* A monitor: its logical place in the layout, its scale (physical pixels
 * per logical one) and its name ("HEADLESS-1", "" when unknown). */
typedef struct os_monitor {
	os_rect rect;
	double scale;
	char name[32];
} os_monitor;
/* The same monitors as os_monitors, with scale and name. */
int os_monitors_info(os_display *d, os_monitor *out, int max);
/*
 * Pointer position in screen coordinates, as observed; fails where the
 * display does not tell it (a Wayland compositor: os_error says so).
 */
bool os_pointer(os_display *d, int *x, int *y);

/* ---- images and capture ---------------------------------------------- */

/*
 * Pixels in memory order B, G, R, X (one byte each, X undefined), rows
 * `stride` bytes apart. This is what a little-endian 24/32-bit TrueColor
 * server produces natively; other layouts are converted on capture.
 */
typedef struct os_image {
	uint8_t *pixels;
	int width, height;
	int stride;
} os_image;

/* Allocates a zeroed image; NULL on allocation failure. Caller destroys. */
os_image *os_image_create(int width, int height);
void os_image_destroy(os_image *img);

/*
 * Captures `region` (NULL: the whole screen) with MIT-SHM when the server
 * offers it (one segment, reused between calls, grown for bigger regions)
 * and XGetImage otherwise: when SHM is missing, fails to attach (remote
 * displays) or DESKHAND_NO_SHM is set to a non-empty value other than "0".
 * The region must be non-empty and lie inside the screen, else NULL with
 * "region WxH+X+Y is not inside the screen (WxH)". Screens that are not
 * TrueColor (depth 8 PseudoColor) fail with a message saying so.
 * Ownership: the caller owns the returned image (os_image_destroy).
 */
os_image *os_capture(os_display *d, const os_rect *region);
/*
 * Same, without the copy: the image belongs to `d` and stays valid until the
 * next capture on `d` or os_display_close. When the server's layout already
 * is BGRX it points straight into the shared segment (stride may then
 * exceed width * 4). For hot loops (settle detection).
 */
const os_image *os_capture_borrow(os_display *d, const os_rect *region);
/*
 * Gives back capture memory kept for reuse (the shared segment, the
 * conversion buffer) when it exceeds max_bytes: after an occasional capture
 * of a whole screen, a long-lived process need not keep 8 MB resident.
 * The next capture allocates again. Invalidates borrowed images.
 */
void os_capture_trim(os_display *d, size_t max_bytes);
/* Whether captures on d go through MIT-SHM (for `deskhand doctor`, bench). */
bool os_capture_uses_shm(os_display *d);

/*
 * Converts one row of server pixels to BGRX (X set to 0xff, except that a
 * row already in the BGRX layout is copied as it is). `bpp` is bits
 * per pixel of the source (16, 24 or 32; any other value yields zeros),
 * `msb_first` the server's image byte order, masks the visual's contiguous
 * channel masks. Channels narrower than 8 bits are scaled to 0..255 with
 * rounding (5 bits: 31 -> 255), wider ones keep their top 8 bits. Pure;
 * exposed for unit tests.
 */
void os_pixels_convert_row(const uint8_t *src, uint8_t *dst, int width, int bpp,
                           bool msb_first, uint32_t red_mask,
                           uint32_t green_mask, uint32_t blue_mask);

/* ---- PNG ----------------------------------------------------------- */

/* PNG row filters, the values of libpng's PNG_FILTER_* bits. */
#define OS_PNG_FILTER_NONE 0x08
#define OS_PNG_FILTER_SUB 0x10
#define OS_PNG_FILTER_UP 0x20
#define OS_PNG_FILTER_AVG 0x40
#define OS_PNG_FILTER_PAETH 0x80
#define OS_PNG_FILTER_ALL 0xf8

typedef struct os_png_options {
	/*
	 * Compression effort 0..9: 1..3 use ISA-L's igzip levels 1..3 (fast),
	 * 0 and 4..9 zlib's levels; -1: the tuned default (1).
	 */
	int level;
	/*
	 * OS_PNG_FILTER_* bit set; with several bits each row gets the one
	 * libpng's heuristic prefers. -1: the tuned default (Sub|Up|Paeth).
	 */
	int filter;
} os_png_options;

/*
 * The encoders write img as an 8-bit RGB PNG (the X byte is dropped); `opt`
 * NULL means the tuned defaults (see os/png.c for the measurements). The
 * image is cut into bands compressed on all CPUs in parallel. They fail on
 * an invalid image (or one above 16384 pixels a side) or options, or on a
 * write error, with os_error() saying which.
 *
 * os_png_write_file writes atomically: a temporary file in the same
 * directory, renamed over `path` once complete. On failure nothing is left
 * behind and an existing `path` is untouched.
 */
bool os_png_write_file(const os_image *img, const char *path,
                       const os_png_options *opt);
/* Writes to an already open descriptor (stdout); never closes it. */
bool os_png_write_fd(const os_image *img, int fd, const os_png_options *opt);
/*
 * Encodes to memory. Ownership: *out is malloc'ed, the caller frees it;
 * on failure *out is untouched.
 */
bool os_png_encode(const os_image *img, uint8_t **out, size_t *out_len,
                   const os_png_options *opt);
/*
 * Decodes a PNG (gray, RGB, palette, with or without alpha; 1 to 16 bits
 * per channel, interlaced or not) into a BGRX image; alpha, when present,
 * lands in the X byte uncomposited. Refuses images above 16384 pixels on a
 * side and corrupt or truncated data, never crashing. Caller destroys.
 */
os_image *os_png_decode(const uint8_t *data, size_t len);
/* Reads and decodes a file (at most 1 GiB); caller destroys. */
os_image *os_png_read_file(const char *path);

/*
 * Captures `region` (NULL: the whole screen, same rules as os_capture) and
 * writes it as PNG (same encoder and options as os_png_write_file, which
 * see), faster than os_capture_borrow followed by os_png_write_file in a
 * fresh process: into a new MIT-SHM segment the screen is copied in strips
 * and each band is compressed as soon as its rows are there, so the
 * server's page faults on the fresh segment overlap with the encoding (a
 * segment used before is grabbed at once). Same pixels. The written image
 * stays borrowable as by os_capture_borrow until the next capture.
 */
bool os_capture_png_file(os_display *d, const os_rect *region,
                         const char *path, const os_png_options *opt);
/* Writes to an already open descriptor (stdout); never closes it. */
bool os_capture_png_fd(os_display *d, const os_rect *region, int fd,
                       const os_png_options *opt);

/* ---- mouse --------------------------------------------------------- */

typedef enum os_button {
	OS_BUTTON_LEFT = 1,
	OS_BUTTON_MIDDLE = 2,
	OS_BUTTON_RIGHT = 3,
	/* The side buttons (browser back/forward): X buttons 8 and 9, after the
	 * four wheel buttons 4-7. */
	OS_BUTTON_BACK = 8,
	OS_BUTTON_FORWARD = 9,
} os_button;

typedef enum os_scroll {
	OS_SCROLL_UP,
	OS_SCROLL_DOWN,
	OS_SCROLL_LEFT,
	OS_SCROLL_RIGHT,
	OS_SCROLL_COUNT
} os_scroll;

/* "up", "down", "left", "right", by the direction: the one table of their
 * names (the computer tool's scroll_direction, every vendor's translation,
 * the tool schema, deskhand scroll). */
extern const char *const os_scroll_names[OS_SCROLL_COUNT];
/* The name (exact) <-> the enum; "?" for no direction. */
bool os_scroll_parse(const char *name, os_scroll *out);
const char *os_scroll_name(os_scroll dir);

/*
 * All through XTest, synced: the events have reached the server when a call
 * returns. Coordinates are root pixels and must lie on the screen: a point
 * off it fails (os_error names it), it is never clamped.
 */
bool os_mouse_move(os_display *d, int x, int y);
/*
 * `count` clicks (1..10) at the current position: press/release pairs sent
 * in one burst, so that toolkits see a double or triple click.
 */
bool os_mouse_click(os_display *d, os_button b, int count);
bool os_mouse_button(os_display *d, os_button b, bool down);
/*
 * Moves to (x1,y1), presses, moves to (x2,y2) in paced steps (about 50 ms in
 * all), releases there. The button is released also on SIGINT/SIGTERM/SIGHUP.
 */
bool os_mouse_drag(os_display *d, int x1, int y1, int x2, int y2, os_button b);
/*
 * The same along a path of n points (xy: x0,y0,x1,y1,...; 2 <= n <= 1024):
 * pressed at the first, moved through every later point in paced steps,
 * released at the last. Every point must lie on the screen.
 */
bool os_mouse_drag_path(os_display *d, const int *xy, int n, os_button b);
/* `amount` (1..1000) wheel clicks: buttons 4/5/6/7 for up/down/left/right. */
bool os_mouse_scroll(os_display *d, os_scroll dir, int amount);

/* ---- keyboard ------------------------------------------------------ */

#define OS_COMBO_MAX 8

/* A parsed key combination: keysyms pressed in order, released in reverse. */
typedef struct os_combo {
	uint32_t keysyms[OS_COMBO_MAX];
	int count;
} os_combo;

/*
 * Parses xdotool syntax: "ctrl+shift+t", "Return", "super", "alt+F4",
 * single characters ("a", "+", "é") and common aliases (ctrl, control,
 * shift, alt, super, win, meta, cmd, enter, esc, del, pgup, ...).
 * Unknown names fail with a message naming the bad part. Pure: needs no X.
 */
bool os_key_parse(const char *text, os_combo *out);
/*
 * The canonical spelling of a combination: each keysym's X name (U+ names
 * for keysyms that have none) joined by '+'. os_key_parse reads it back as
 * the same keysyms, and formatting that gives the same text again. False
 * when it does not fit in `size` bytes (buf then holds "").
 */
bool os_key_format(const os_combo *c, char *buf, size_t size);

/*
 * Presses the keys in order, then releases them in reverse. A keysym in the
 * shifted column of its key gets Shift pressed before it ("ctrl++" is
 * Control, Shift, equal); a keysym missing from the keymap is bound to a
 * spare keycode for the duration. Keys are released and bindings undone
 * also on failure and on SIGINT/SIGTERM/SIGHUP (re-raised afterwards).
 */
bool os_key_combo(os_display *d, const os_combo *c);
/*
 * Presses (or releases, in reverse order) and leaves the keys so, for a
 * later call or process to undo. Only keys of the keymap: fails for a
 * keysym the keymap lacks, since its temporary binding could not outlive
 * the call.
 */
bool os_key_down(os_display *d, const os_combo *c);
bool os_key_up(os_display *d, const os_combo *c);
/* Presses, holds for `ms` milliseconds, releases; as os_key_combo. */
bool os_key_hold(os_display *d, const os_combo *c, int ms);

/*
 * Types UTF-8 text exactly. Characters in the keymap are typed with their
 * keycode and the needed shift level; others are bound to spare keycodes
 * (no keysym in the keymap) in rotation. A spare keycode is rebound only
 * once the client receiving the keys has handled every keystroke typed with
 * its previous binding: proven idle for a local client, after a guard time
 * otherwise. The keymap is restored before returning, also on errors and
 * when interrupted by SIGINT/SIGTERM/SIGHUP (the signal is re-raised
 * afterwards, with its previous disposition). '\n' is typed as Return,
 * '\t' as Tab; other control characters are refused. `delay_ms` < 0
 * selects the default pace (as fast as stays exact), otherwise that many
 * milliseconds between characters. Fails before typing anything on invalid
 * UTF-8, on a refused character, or while modifier keys are held down; a
 * locked Caps Lock is lifted for the duration.
 */
bool os_type(os_display *d, const char *utf8, size_t len, int delay_ms);
/*
 * Checks, without a display, that os_type would accept the text: valid
 * UTF-8, and no control character other than \n (typed as Return) and \t
 * (Tab). Fails with os_error() naming the first bad byte or character.
 */
bool os_type_check(const char *utf8, size_t len);

/* ---- windows ------------------------------------------------------- */

typedef struct os_window {
	uint32_t id;
	int pid;                /* -1 when unknown */
	char *klass;            /* WM_CLASS class part, UTF-8; "" when unset */
	char *title;            /* _NET_WM_NAME or WM_NAME, UTF-8; "" when unset */
	os_rect geometry;       /* in root coordinates */
	bool active;
} os_window;

/*
 * Lists top-level windows (the window manager's client list when one runs,
 * otherwise mapped children of the root), in stacking order bottom to top.
 * Ownership: the caller frees the array with os_windows_free.
 */
os_window *os_windows_list(os_display *d, size_t *count);
void os_windows_free(os_window *w, size_t count);
/*
 * Whether a window manager has taken the screen (X11: an EWMH manager's
 * check window points back at itself and it answers requests from its
 * event loop; a compositor always has). A window
 * mapped while the manager starts can be left unmanaged for good, so who
 * starts one waits for this before starting apps.
 */
bool os_window_manager_running(os_display *d);
/* Activates through _NET_ACTIVE_WINDOW; fails without an EWMH manager. */
bool os_window_activate(os_display *d, uint32_t id);
/*
 * Whether d's clients do not know where their windows are on the screen
 * (Wayland: the compositor places them and tells no client), so that the
 * boxes a toolkit gives (its accessibility tree) are relative to its
 * window, to be moved by the window's place in os_windows_list. False on
 * X11, where toolkits answer in screen coordinates.
 */
bool os_display_boxes_window_relative(const os_display *d);
/*
 * A STRING property of the root window ("AT_SPI_BUS": the accessibility
 * bus address), malloc'ed; NULL when unset or of another type.
 */
char *os_root_string(os_display *d, const char *name);

/*
 * Who owns what input would reach (os/owners.c). A window's owner is the
 * process of the client that created it (X-Resource, for clients on this
 * machine) and its _NET_WM_PID when set. Each fills at most `max` distinct
 * pids into `pids` and returns how many; 0 when nothing is known.
 *
 * os_client_pids: every X client of the server on this machine.
 * os_point_owners: the windows at root point (x,y), from the top-level one
 *   (a window manager's frame) down to the deepest.
 * os_keys_owners: the window key events go to now, the focus window and
 *   those holding it, or, when the focus follows the pointer, the windows
 *   under the pointer.
 */
size_t os_client_pids(os_display *d, int *pids, size_t max);
size_t os_point_owners(os_display *d, int x, int y, int *pids, size_t max);
size_t os_keys_owners(os_display *d, int *pids, size_t max);

/*
 * Whether input would reach the terminal this process runs in: the
 * nearest of its ancestors that is a client of the display (X-Resource,
 * else the windows' _NET_WM_PID), against the owners of the windows at
 * the n points (none given: under the pointer) and, with `keys`, of the
 * window key events go to now. Typed there, text reads as the user's own
 * line. False when no ancestor is a client (a console; ssh or a
 * multiplexer in between, whose terminal window is no ancestor).
 */
bool os_input_reaches_ancestor(os_display *d, const os_point *pts, size_t n, bool keys);

/* ---- a private X server (os/x11/server.c) ---------------------------- */

typedef struct os_xserver {
	int pid;
	char display[16];       /* ":N" */
} os_xserver;

/*
 * Starts Xvfb with a width x height x 24 screen for one task of deskhand
 * batch: no TCP, the path and abstract sockets of a number nobody else
 * holds (clients try the abstract one first), a new random
 * MIT-MAGIC-COOKIE-1 written to auth_path (0600; the XAUTHORITY of its
 * clients), its output to log_fd, ended with the calling process
 * (PDEATHSIG). Returns once it accepts connections (bounded: 30 s). The
 * caller reaps out->pid.
 */
bool os_xserver_start(int width, int height, const char *auth_path, int log_fd,
                      os_xserver *out);

/* ---- the session bus (os/bus.c) ------------------------------------- */

/*
 * Whether an accessibility bus can be found for display d (NULL: skip the
 * root window) where libatspi and the toolkits look: AT_SPI_BUS_ADDRESS,
 * the AT_SPI_BUS property on the root window, DBUS_SESSION_BUS_ADDRESS,
 * $XDG_RUNTIME_DIR/bus. A unix socket counts only when something accepts
 * on it (a bus that ended leaves its address behind); other transports
 * are taken on trust. `where` gets which of them answered.
 */
bool os_bus_find(os_display *d, char *where, size_t size);
/* The same test for one D-Bus address list ("unix:path=...;tcp:..."). */
bool os_bus_address_reachable(const char *list);
/*
 * Whether the root window names an accessibility bus that does not answer
 * (left by an at-spi-bus-launcher that did not end cleanly).
 */
bool os_bus_root_stale(os_display *d);
/*
 * Starts a private session bus, as dbus-run-session does: dbus-daemon
 * --session listening on a path socket in a new 0700 directory (in
 * $XDG_RUNTIME_DIR, else /tmp; never an abstract socket, so the sandbox
 * can close it), in a session of its own, silent, given this process's
 * environment without secrets, and ended with this process (PDEATHSIG)
 * if os_bus_stop never runs. Sets DBUS_SESSION_BUS_ADDRESS in this
 * process's environment to its address (also copied to `addr`). One
 * per process. Fails when dbus-daemon is missing or does not start.
 */
bool os_bus_start(char *addr, size_t size);
/* The started daemon's pid; 0 when none runs. */
int os_bus_started_pid(void);
/*
 * Ends the daemon os_bus_start started (SIGTERM, then SIGKILL, by pid),
 * reaps it, removes its directory and the address it set. What it
 * activated (at-spi-bus-launcher, the accessibility bus, the registry)
 * leaves on its own when the bus goes. No-op when none was started.
 */
void os_bus_stop(void);

#endif
