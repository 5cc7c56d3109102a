/*
 * Private to os/: one display backend is one struct of functions, as
 * wlroots' struct wlr_backend_impl is. os/display.c chooses the backend
 * once, at connect, and every public os_ call on a display goes through
 * d->impl; shared code (display.c, owners.c, the PNG encoder) never names
 * a backend. Each backend's folder (os/x11/, os/wlroots/) defines one
 * `const struct os_backend os_backend_NAME` and a struct of its own that
 * starts with `os_display base`.
 *
 * Never included outside os/ (tests/ excepted).
 */
#ifndef DESKHAND_OS_BACKEND_H
#define DESKHAND_OS_BACKEND_H

#include <signal.h>
#include <stdarg.h>

#include "os/os.h"

struct os_backend_impl;

/* The head every backend's display starts with. */
struct os_display {
	const struct os_backend_impl *impl;
	/* The display or socket name actually used (":3", "wayland-1"), owned. */
	char *name;
	/* "X11", "Wayland": the kind of session, for the model and doctor;
	 * static. */
	const char *session;
	/* "sway 1.7", "Xorg": what serves the display, as far as it is known;
	 * owned; "" when unknown. */
	char *server;
	/* The globals / extensions the server offers, comma separated, owned
	 * ("" when not listed): for `deskhand doctor`. */
	char *offers;
	/* A warning the caller should show once (X11 on a Wayland session),
	 * owned; NULL when none. */
	char *warning;
};

/*
 * The functions of one backend. Coordinates are in the layout's logical
 * pixels (the screen of os_screen_size), which is also what a capture's
 * pixels are: a backend that captures a scaled output resamples it.
 * Every function that can fail sets os_error(). NULL members: the backend
 * cannot; the dispatcher then fails with os_error() naming the feature.
 */
struct os_backend_impl {
	const char *name;       /* "x11", "wlroots": os_display_backend() */
	/* Whether clients know where their windows are on the screen (X11:
	 * yes; Wayland: no, so toolkits answer boxes relative to their window):
	 * os_display_boxes_window_relative(). */
	bool clients_know_position;

	/* Frees everything the backend holds, then calls os_display_free_head. */
	void (*destroy)(os_display *d);

	void (*screen_size)(os_display *d, int *width, int *height);
	int (*monitors)(os_display *d, os_monitor *out, int max);
	/* Where the pointer is, observed (never only where it was sent). */
	bool (*pointer)(os_display *d, int *x, int *y);

	const os_image *(*capture_borrow)(os_display *d, const os_rect *region);
	void (*capture_trim)(os_display *d, size_t max_bytes);
	bool (*capture_uses_shm)(os_display *d);
	/* Captures straight to PNG (path, or fd when path is NULL); NULL: the
	 * dispatcher borrows a capture and encodes it. */
	bool (*capture_png)(os_display *d, const os_rect *region, const char *path,
	                    int fd, const os_png_options *opt);

	bool (*mouse_move)(os_display *d, int x, int y);
	bool (*mouse_click)(os_display *d, os_button b, int count);
	bool (*mouse_button)(os_display *d, os_button b, bool down);
	bool (*mouse_scroll)(os_display *d, os_scroll dir, int amount);

	bool (*key_combo)(os_display *d, const os_combo *c);
	bool (*key_down)(os_display *d, const os_combo *c);
	bool (*key_up)(os_display *d, const os_combo *c);
	bool (*key_hold)(os_display *d, const os_combo *c, int ms);
	bool (*type)(os_display *d, const char *utf8, size_t len, int delay_ms);

	os_window *(*windows_list)(os_display *d, size_t *count);
	bool (*window_activate)(os_display *d, uint32_t id);
	/* A window manager has taken the screen; NULL: the compositor is one. */
	bool (*wm_running)(os_display *d);
	char *(*root_string)(os_display *d, const char *name);

	size_t (*client_pids)(os_display *d, int *pids, size_t max);
	size_t (*point_owners)(os_display *d, int x, int y, int *pids, size_t max);
	size_t (*keys_owners)(os_display *d, int *pids, size_t max);

	/* The stop key, where the pointer cannot be watched: see os.h. */
	bool (*stop_key_arm)(os_display *d, char *desc, size_t size);
	bool (*stop_key_pressed)(os_display *d);

	/* How the backend provides f on d ("XTest",
	 * "zwlr_virtual_pointer_manager_v1"), or NULL with *why set. */
	const char *(*feature)(os_display *d, os_feature f, const char **why);
	/* The connection is gone for good (os_display_lost); NULL: never known. */
	bool (*lost)(const os_display *d);
};

/*
 * One backend's entry point: connects to `name` (NULL: from the
 * environment). Returns NULL with os_error() set when it cannot; sets
 * *not_mine when the display is not one this backend drives at all (a
 * compositor that lacks its protocols), so that the next backend may try.
 */
typedef os_display *(*os_backend_open_fn)(const char *name, bool *not_mine);

os_display *os_x11_open(const char *name, bool *not_mine);
os_display *os_wlroots_open(const char *name, bool *not_mine);
os_display *os_gnome_open(const char *name, bool *not_mine);

/* Fills the head (impl, name); false on allocation failure (os_error set). */
bool os_display_init_head(os_display *d, const struct os_backend_impl *impl,
                          const char *name);
/* Frees the head's strings and d itself (d was malloc'ed by the backend). */
void os_display_free_head(os_display *d);
/* Replaces one of the head's strings with a printf result (best effort). */
void os_display_set(char **field, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The Linux input code of a button (BTN_LEFT 0x110 ... BTN_EXTRA 0x114),
 * as Wayland's and Mutter's virtual pointers take it; false (os_error)
 * for no button. */
#define OS_BTN_LEFT 0x110
bool os_evdev_button(os_button b, uint32_t *code);

/* Frees a window's strings (os_windows_free does it for a list). */
void os_window_clear(os_window *w);

/* Sets os_error() from a printf format. Always returns false. */
bool os_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Checks that (x,y) lies on the screen; sets os_error() otherwise. */
bool os_point_on_screen(os_display *d, int x, int y);

/*
 * os/image.c: maps the pages of [p, p + len) in one call (readable, or
 * writable when `write`), where touching them one by one would cost a
 * page fault per 4 KiB. Best effort.
 */
void os_mem_populate(const void *p, size_t len, bool write);

/*
 * Rows of an image that arrive over time: a capture in strips, so that the
 * encoder compresses the first bands while the server still copies the
 * last ones. fill() is called on the encoding call's thread until *ready
 * (rows [0, *ready) are final) reaches the image's height; it returns
 * false with os_error() set to abandon the image. The image's size and
 * pixel address must be final before the first call.
 */
typedef struct os_png_feed {
	bool (*fill)(void *ctx, int *ready);
	void *ctx;
} os_png_feed;

/* os_png_write_file and os_png_write_fd fed row by row (feed NULL: the
 * image is complete). */
bool os_png_write_file_fed(const os_image *img, const char *path,
                           const os_png_options *opt, os_png_feed *feed);
bool os_png_write_fd_fed(const os_image *img, int fd,
                         const os_png_options *opt, os_png_feed *feed);

/* ---- os/guard.c ------------------------------------------------------ */

/* Sleeps `ms` milliseconds, or less when a guarded signal arrives. */
void os_input_sleep_ms(int ms);

/*
 * While a guard is active, SIGINT/SIGTERM/SIGHUP only set a flag, which the
 * action polls between events; os_input_signals_end puts the previous
 * dispositions back and re-raises the signal that arrived, if any, after the
 * caller has undone its changes. Not nestable.
 */
struct os_signal_guard {
	struct sigaction old[3];
};
void os_input_signals_begin(struct os_signal_guard *g);
/* The signal caught since begin, 0 for none. */
int os_input_signal_caught(void);
void os_input_signals_end(struct os_signal_guard *g);

#endif
