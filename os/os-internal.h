/*
 * Private to os/: the display structure shared by the os/ source files and
 * the X error trap. Never included outside os/ (tests/ excepted).
 */
#ifndef DESKHAND_OS_INTERNAL_H
#define DESKHAND_OS_INTERNAL_H

#include <X11/Xlib.h>
#include <stdarg.h>

#include "os/os.h"

struct os_capture_state;  /* capture.c: the reused SHM segment */
struct os_input_state;    /* input.c/type.c: keymap snapshot, spare keycodes */

struct os_display {
	Display *dpy;
	Window root;
	int screen;
	char *name;
	/*
	 * Each part of os/ that keeps state on the display sets its pointer and
	 * its clean-up together; os_display_close calls the clean-ups (input
	 * first: it restores the keymap).
	 */
	struct os_capture_state *capture;
	void (*capture_cleanup)(os_display *d);
	struct os_input_state *input;
	void (*input_cleanup)(os_display *d);
};

/* Sets os_error() from a printf format. Always returns false. */
bool os_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Protocol errors are recorded, never fatal. A trap brackets requests whose
 * errors the caller wants to see: os_x_trap_begin() syncs and clears the
 * record, os_x_trap_end() syncs and returns the error code of the first
 * error since begin (0: none) and, when non-zero, sets os_error() to a text
 * naming `what`.
 */
void os_x_trap_begin(os_display *d);
int os_x_trap_end(os_display *d, const char *what);

/* True once the connection to the server was lost; os_error() says so. */
bool os_display_dead(os_display *d);

/* The pid of the client that created window w, as the X server knows it
 * (X-Resource; clients on this machine); 0 when unknown. */
int os_x_window_pid(os_display *d, Window w);

/* The input focus as the server has it: a window, PointerRoot or None
 * (read inside a trap: a failure reads as None). */
Window os_x_focus(os_display *d);

/* Checks that (x,y) lies on the root window; sets os_error() otherwise. */
bool os_point_on_screen(os_display *d, int x, int y);

/*
 * os/image.c: maps the pages of [p, p + len) in one call (readable, or
 * writable when `write`), where touching them one by one would cost a
 * page fault per 4 KiB: memory the X server has just written into a fresh
 * shared segment, or a fresh buffer about to be filled (in a VM each
 * fault is costly: ~2,000 for a 1920x1080 capture). Best effort.
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

#endif
