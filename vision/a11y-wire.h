/*
 * vision/a11y-wire — the AT-SPI2 calls of one tree read, spoken on the
 * accessibility bus directly (libdbus, on the connections libatspi
 * opened) so that many can be in flight at once. Private to vision/a11y.c
 * (and to the fuzz target, through a11y_wire_new_detached).
 *
 * Why: libatspi asks one property per round trip and keeps nothing from
 * one read to the next, about six round trips per node. Here one read of
 * one application
 *  - starts from the toolkit's own cache (org.a11y.atspi.Cache.GetItems):
 *    role, name, states and children of every node the toolkit holds, in
 *    one call, answered live by the application, not a copy kept here;
 *  - asks what that lacks per node (Qt answers with an empty cache; a
 *    container that manages its descendants, such as a GTK tree view,
 *    lists no children there): a node's four properties in one wave, the
 *    children of a small container in one call (GetChildren);
 *  - asks the boxes of a row of siblings in one wave (a11y_wire_want_box
 *    for each, then a11y_wire_box), and hit tests likewise: a wave costs
 *    about one latency instead of one per call.
 * Nothing outlives a11y_wire_destroy: the next read asks again, so a
 * re-read at action time sees the application as it is now.
 *
 * Every call waits at most until the deadline given to a11y_wire_new, and
 * at most `patience_ms`; a call that fails or times out reads as absent
 * (the caller watches the deadline and says why the list is partial). A
 * call left unanswered for all of its patience means the application's
 * main loop does not run (stopped, blocked, or busy for that long): the
 * read sends nothing more and waits for nothing more it sent, every later
 * question reading as absent at once, and a11y_wire_hung says so; without
 * that, each wave of calls to a hung application would cost the patience
 * again. Names and texts are the
 * application's: hostile, passed on as they came (valid UTF-8, which
 * libdbus checks).
 * Owns: the nodes of one read. Borrows the connections (libatspi's).
 * Speaks libdbus, and reads libatspi's public structures. Not thread-safe.
 */
#ifndef DESKHAND_VISION_A11Y_WIRE_H
#define DESKHAND_VISION_A11Y_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <atspi/atspi.h>

#include "os/os.h"

typedef struct a11y_wire a11y_wire;

/*
 * A read of the application whose root is `app` (a child of libatspi's
 * desktop), every call ending by `deadline` (base_now_ns's clock) and
 * waiting at most `patience_ms` (see above). Asks the toolkit's cache once
 * when `cache` (false for a toolkit whose cache is known not to be its
 * tree). NULL when out of memory (or libatspi's bus name for it is not one).
 */
a11y_wire *a11y_wire_new(AtspiAccessible *app, int64_t deadline, int patience_ms, bool cache);
/* Whether a call went unanswered for all of its patience (see above). */
bool a11y_wire_hung(const a11y_wire *w);
void a11y_wire_destroy(a11y_wire *w); /* NULL: no-op */

/*
 * For the fuzz target (tests/fuzz/fuzz_a11y_wire.c) and tests: a read of
 * the application at bus name `bus` with no connection and no deadline.
 * Every call the read would send goes to `fn` (the message is borrowed),
 * which returns the reply at once (a new reference, the read's; NULL: no
 * answer), so what a hostile application could answer goes through the
 * code of a real read. NULL when out of memory, `bus` is not a bus name or
 * the accessibility libraries cannot be loaded (a11y-libs.h).
 */
typedef DBusMessage *a11y_wire_answer_fn(void *ctx, DBusMessage *call);
a11y_wire *a11y_wire_new_detached(const char *bus, a11y_wire_answer_fn *fn, void *ctx,
                                  bool cache);

/* The application's root node (always 0). */
int a11y_wire_root(const a11y_wire *w);

/*
 * Role, name, states and child count of each of ns[0..k) that the cache
 * lacked, asked in one wave. A node that does not answer reads as having
 * no states (not SHOWING) and no children.
 */
void a11y_wire_props(a11y_wire *w, const int *ns, int k);
AtspiRole a11y_wire_role(const a11y_wire *w, int n);
const char *a11y_wire_name(const a11y_wire *w, int n); /* "" when unnamed */
bool a11y_wire_has(const a11y_wire *w, int n, AtspiStateType s);
int a11y_wire_child_count(const a11y_wire *w, int n); /* 0 when unknown */

/*
 * Child i of node n, or -1. The children of a container of at most
 * `list_max` come in one call, those of a bigger one one by one (so a
 * 100,000-row list is not sent whole).
 */
int a11y_wire_child(a11y_wire *w, int n, int i, int list_max);
/* Sends the call for the children of n (when at most list_max) without waiting. */
void a11y_wire_want_children(a11y_wire *w, int n, int list_max);
/* Children [from, to) of n asked in one wave, for a11y_wire_child to find. */
void a11y_wire_children(a11y_wire *w, int n, int from, int to, int list_max);

/* Sends the box call for n (coordinates of the screen) without waiting. */
void a11y_wire_want_box(a11y_wire *w, int n);
/* n's box: waits for the call sent, or asks now. false: it has none.
 * Coordinates and sizes are clamped to +-2^28, so sums stay in an int. */
bool a11y_wire_box(a11y_wire *w, int n, os_rect *out);
/* Whether n has a box at all (the Component interface), as far as known:
 * from the cache, or from how its box call was answered. */
bool a11y_wire_has_component(const a11y_wire *w, int n);

/*
 * Hit tests at the k root points (xs[j], ys[j]) of container n: idx[j] is
 * the index of the direct child of n found there (below n's child count),
 * or -1. Two waves.
 */
void a11y_wire_hits(a11y_wire *w, int n, const int *xs, const int *ys, int k, int *idx);

/*
 * n's first `max` characters of text (cut there when the application
 * sends more), or else its value ("%g"); "" when it has neither. malloc'ed, the caller's; NULL when out of memory.
 */
char *a11y_wire_short_text(a11y_wire *w, int n, int max);

/* Round trips sent so far (for the benchmark). */
int a11y_wire_calls(const a11y_wire *w);

#endif
