/*
 * vision/a11y — the accessibility tree: what the desktop itself says its
 * controls are and where they sit.
 *
 * Reads, through AT-SPI2 on the accessibility D-Bus bus (libatspi, and
 * a11y-wire.c for the calls of one read, several in flight at once), the
 * elements of the active window (or of every window): role, name, a short
 * text or value, states and the screen box in root coordinates. Only what
 * is SHOWING and intersects the window and the screen is walked; a big
 * container (more than VISION_A11Y_BIG children) is entered at its first
 * visible child, found with a hit test at the container's visible box, and
 * left at the first child past it, so a list scrolled to row 1,500 yields
 * the rows on screen without asking about the other 2,990. Kept: the
 * interactive roles and text that has a name (an allowlist, see a11y.c).
 *
 * The walk is capped: depth, children per node, total nodes and wall time
 * (the time cap: each D-Bus call waits at most what is left of it). One
 * call to an application waits at most its patience: what is left of the
 * cap shared by the applications still to read (VISION_A11Y_PATIENCE_MIN_MS
 * at least, all of it for the active window's alone). An application that
 * lets a call wait that long (its main loop stopped, blocked or busy) is
 * asked nothing more; what it said is kept, the note names it, and the
 * other applications are read in what is left. So a read never takes more
 * than the time cap, hung applications or not. A capped walk returns what
 * it has, marked partial, with the reason.
 * No bus, a build without libatspi, or a window whose application exposes
 * no tree (xterm) is not an error: an empty list with a note that says so.
 *
 * Owns: the libatspi connection of this process (one, made on first use);
 * nothing read from an application outlives the read.
 * Part of the door of vision/ (vision.h includes it); it asks os/ for the
 * active window's pid and box, the screen, the bus address on the root
 * window. Never includes Xlib, never prints. Names
 * and texts come from applications: hostile, shown only through the
 * agent's sanitizers. Not thread-safe: one walk at a time per process.
 */
#ifndef DESKHAND_VISION_A11Y_H
#define DESKHAND_VISION_A11Y_H

#include <stdbool.h>
#include <stddef.h>

#include "os/os.h"
#include "vision/vision.h"

#define VISION_A11Y_MAX_DEPTH 50
#define VISION_A11Y_MAX_CHILDREN 1024
#define VISION_A11Y_MAX_NODES 2000
#define VISION_A11Y_TIMEOUT_MS 1000
/* The least patience for one call, whatever the number of applications: a
 * busy but healthy application (a compositor drawing, a big toolkit cache:
 * gtk3-widget-factory's whole read takes 40 ms) answers within it. */
#define VISION_A11Y_PATIENCE_MIN_MS 250
/* A container with more children than this is entered at its visible part. */
#define VISION_A11Y_BIG 64

typedef struct vision_element {
	int id;            /* 1-based, in walk order */
	char *role;        /* "push button", "text", ... (AT-SPI's role names) */
	char *name;        /* "" when unnamed */
	char *text;        /* short text or value ("" when none or too long) */
	char *states;      /* "focused,checked,..." the states that matter; "" */
	os_rect box;       /* root coordinates, clipped to nothing */
	int pid;           /* the application's process */
} vision_element;

typedef struct vision_elements {
	vision_element *items;
	size_t count;
	bool partial;      /* a cap cut the walk short; note says which */
	char note[256];    /* why the list is partial or empty; "" otherwise */
	int nodes;         /* nodes visited (for benchmarks) */
	int calls;         /* D-Bus calls to the applications (for benchmarks) */
} vision_elements;

typedef struct vision_a11y_options {
	bool all_windows;  /* every application's windows, not only the active one */
	int timeout_ms;    /* 0: VISION_A11Y_TIMEOUT_MS */
	int max_nodes;     /* 0: VISION_A11Y_MAX_NODES */
} vision_a11y_options;

/*
 * Reads the elements (see above). NULL only when out of memory or the
 * display is gone (vision_error()); every other absence is an empty list
 * with a note. Ownership: the caller frees with vision_elements_destroy.
 */
vision_elements *vision_elements_read(os_display *d, const vision_a11y_options *opt);
void vision_elements_destroy(vision_elements *e); /* NULL: no-op */

/*
 * Set-of-marks: on `img`, the model's image of `view` (vision_shot), each
 * element's box outlined and its ID in a label at a corner, placed where
 * it covers no other label (tried outside above, inside, outside below,
 * to the left); an ID that finds no free place is left unlabelled and
 * counted. Returns how many IDs were drawn; *unlabelled gets the others.
 */
size_t vision_draw_marks(os_image *img, const vision_view *view, const vision_elements *e,
                         size_t *unlabelled);

/* The centre of an element's box. */
void vision_element_centre(const vision_element *el, int *x, int *y);

/*
 * The accessibility bus as `deskhand doctor` reports it: false with a
 * reason in `why` when it is unreachable; true with the names of the
 * applications that expose a tree ("gtk3-widget-factory (pid 123), ...",
 * possibly "none") in `apps`.
 */
bool vision_a11y_probe(os_display *d, char *apps, size_t apps_size, char *why,
                       size_t why_size);

#endif
