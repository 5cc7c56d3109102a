/*
 * Private to vision/a11y-wire.c and vision/a11y-wire-ask.c: one read's
 * nodes, its calls and how their answers are taken apart, which the asking
 * (a11y-wire-ask.c: properties, children, boxes, hit tests, text) shares
 * with the reading of the toolkit's cache and the construction
 * (a11y-wire.c). Never included elsewhere; a11y-wire.h is the door.
 */
#ifndef DESKHAND_VISION_A11Y_WIRE_INTERNAL_H
#define DESKHAND_VISION_A11Y_WIRE_INTERNAL_H

#include <stdint.h>

#include "vision/a11y-wire.h"

#define WIRE_IF_ACC "org.a11y.atspi.Accessible"
#define WIRE_IF_COMP "org.a11y.atspi.Component"
#define WIRE_IF_TEXT "org.a11y.atspi.Text"
#define WIRE_IF_VALUE "org.a11y.atspi.Value"
#define WIRE_IF_PROPS "org.freedesktop.DBus.Properties"
#define WIRE_ROOT_PATH "/org/a11y/atspi/accessible/root"
#define WIRE_NULL_PATH "/org/a11y/atspi/null"
/* A toolkit's cache bigger than this is read only this far. */
#define WIRE_ITEMS_MAX 20000
/* A node with more children than this keeps no list of them here: they
 * are asked one by one (and an application's count is not an allocation). */
#define WIRE_KIDS_MAX 4096
/* Child slots of all lists of one read: past it a node keeps only the
 * children linked (20,000 cached parents claiming 4,096 children each
 * would otherwise cost 320 MB). */
#define WIRE_SLOTS_MAX (1 << 20)
/* Box coordinates and sizes are clamped to this, so that the walk's sums
 * (x + width, plus a window's offset) stay within an int. */
#define WIRE_COORD_MAX (1 << 28)

/* A child not asked yet; asked, and none there. */
enum { WIRE_KID_UNKNOWN = -1, WIRE_KID_NONE = -2 };
enum { WIRE_HAS_COMP = 1, WIRE_HAS_TEXT = 2, WIRE_HAS_VALUE = 4, WIRE_IFACES_KNOWN = 8 };

/* A call sent: libdbus's pending call, or in a detached read the reply
 * the answering function gave at once (see a11y_wire_new_detached). */
typedef struct a11y_wcall {
	DBusPendingCall *pending;
	DBusMessage *reply;
	a11y_wire *w;   /* the read that sent it */
	bool patient;   /* sent to wait all of the read's patience */
} a11y_wcall;

typedef struct a11y_wnode {
	char *key;       /* "bus path": the table's key, owned */
	const char *bus; /* into key */
	const char *path;
	char *name;      /* NULL until known */
	uint32_t states[2];
	int role;
	int count;       /* children; -1 unknown */
	int *kids;       /* count entries (WIRE_KID_*, or a node); NULL: none known */
	GHashTable *far; /* the same for a node of more than WIRE_KIDS_MAX children */
	bool props;      /* role, name, states and count known */
	bool box_known;
	bool has_box;
	bool box_failed; /* the box call had no answer: no Component (or no time) */
	unsigned ifaces;
	os_rect box;
	a11y_wcall *box_call;
	a11y_wcall *kids_call; /* GetChildren sent ahead */
} a11y_wnode;

struct a11y_wire {
	DBusConnection *app_conn; /* to the application (its own socket when libatspi has one) */
	DBusConnection *bus_conn; /* the accessibility bus, for nodes of other applications */
	char *bus;                /* the application's unique name */
	int64_t deadline;         /* base_now_ns */
	int patience_ms;          /* the longest one call waits */
	bool hung;                /* a call waited all of it: ask nothing more */
	a11y_wnode *nodes;
	int count, cap;
	GHashTable *index;        /* key -> node number + 1 */
	int calls;
	int slots;                /* child slots allocated (WIRE_SLOTS_MAX) */
	a11y_wire_answer_fn *answer_fn; /* detached: answers every call */
	void *answer_ctx;
};

/* A node's call of `member` on `iface`; NULL when out of memory. */
DBusMessage *a11y_wire_msg_new(const a11y_wnode *nd, const char *iface, const char *member);
/* A property's Get; NULL when out of memory. */
DBusMessage *a11y_wire_msg_get(const a11y_wnode *nd, const char *iface, const char *prop);
/* Sends m (consumed) to nd; NULL when past the deadline, the application
 * hung (a11y_wire_hung) or out of memory. */
a11y_wcall *a11y_wire_send(a11y_wire *w, const a11y_wnode *nd, DBusMessage *m);
/* c's answer (c consumed; NULL: none); NULL for none, an error or a
 * time-out (and at once, without waiting, once the application hung). */
DBusMessage *a11y_wire_answer(a11y_wcall *c);
/* The first argument of r (unreffed) as a basic value of `type`, through a
 * variant; a string is strdup'ed into *(char **)out. False: not that. */
bool a11y_wire_arg_basic(DBusMessage *r, int type, void *out);
/* A reference (so) at `it` as a node; -1 for the null object or another type. */
int a11y_wire_ref_at(a11y_wire *w, DBusMessageIter *it);
/* The reply's single reference (unreffed); -1 for none. */
int a11y_wire_arg_ref(a11y_wire *w, DBusMessage *r);
/* A state set (au) at `it`; no states when it is not one. */
void a11y_wire_read_states(DBusMessageIter *it, uint32_t states[2]);
/* Child i of p: a node, WIRE_KID_NONE, or WIRE_KID_UNKNOWN (not asked). */
int a11y_wire_kid_get(const a11y_wnode *p, int i);
/* Records child `index` of `parent`: node n, or WIRE_KID_NONE. */
void a11y_wire_link_kid(a11y_wire *w, int parent, int index, int n);

#endif
