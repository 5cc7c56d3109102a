/*
 * The AT-SPI2 calls of one tree read, several in flight at once (see
 * a11y-wire.h). The interfaces are the documented org.a11y.atspi ones
 * (Accessible, Component, Text, Value, Cache).
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "vision/a11y-wire.h"

#define IF_ACC "org.a11y.atspi.Accessible"
#define IF_COMP "org.a11y.atspi.Component"
#define IF_TEXT "org.a11y.atspi.Text"
#define IF_VALUE "org.a11y.atspi.Value"
#define IF_PROPS "org.freedesktop.DBus.Properties"
#define ROOT_PATH "/org/a11y/atspi/accessible/root"
#define NULL_PATH "/org/a11y/atspi/null"
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

enum { KID_UNKNOWN = -1, KID_NONE = -2 }; /* a child not asked yet; asked, none */
enum { HAS_COMP = 1, HAS_TEXT = 2, HAS_VALUE = 4, IFACES_KNOWN = 8 };

/* A call sent: libdbus's pending call, or in a detached read the reply
 * the answering function gave at once (see a11y_wire_new_detached). */
typedef struct wcall {
	DBusPendingCall *pending;
	DBusMessage *reply;
} wcall;

typedef struct wnode {
	char *key;       /* "bus path": the table's key, owned */
	const char *bus; /* into key */
	const char *path;
	char *name;      /* NULL until known */
	uint32_t states[2];
	int role;
	int count;       /* children; -1 unknown */
	int *kids;       /* count entries (KID_*, or a node); NULL: none known */
	GHashTable *far; /* the same for a node of more than WIRE_KIDS_MAX children */
	bool props;      /* role, name, states and count known */
	bool box_known;
	bool has_box;
	bool box_failed; /* the box call had no answer: no Component (or no time) */
	unsigned ifaces;
	os_rect box;
	wcall *box_call;
	wcall *kids_call; /* GetChildren sent ahead */
} wnode;

struct a11y_wire {
	DBusConnection *app_conn; /* to the application (its own socket when libatspi has one) */
	DBusConnection *bus_conn; /* the accessibility bus, for nodes of other applications */
	char *bus;                /* the application's unique name */
	int64_t deadline;         /* base_now_ns */
	wnode *nodes;
	int count, cap;
	GHashTable *index;        /* key -> node number + 1 */
	int calls;
	int slots;                /* child slots allocated (WIRE_SLOTS_MAX) */
	a11y_wire_answer_fn *answer_fn; /* detached: answers every call */
	void *answer_ctx;
};

/* ---- nodes ---------------------------------------------------------- */

/*
 * The node of (bus, path), added when new; -1 when out of memory, for
 * NULL_PATH or for a bus name that is not one (libdbus aborts the process
 * when a call is addressed to it, and the name is the application's).
 */
static int node_of(a11y_wire *w, const char *bus, const char *path)
{
	if (strcmp(path, NULL_PATH) == 0 || !dbus_validate_bus_name(bus, NULL))
		return -1;
	char *key = g_strconcat(bus, " ", path, NULL);
	gpointer found = g_hash_table_lookup(w->index, key);
	if (found != NULL) {
		g_free(key);
		return GPOINTER_TO_INT(found) - 1;
	}
	if (w->count == w->cap) {
		int cap = w->cap ? w->cap * 2 : 256;
		wnode *nodes = realloc(w->nodes, (size_t)cap * sizeof(*nodes));
		if (nodes == NULL) {
			g_free(key);
			return -1;
		}
		w->nodes = nodes;
		w->cap = cap;
	}
	wnode *nd = &w->nodes[w->count];
	*nd = (wnode){.key = key, .bus = key, .path = key + strlen(bus) + 1, .count = -1};
	key[strlen(bus)] = '\0'; /* bus and path in one allocation: "bus\0path" */
	char *hkey = g_strconcat(bus, " ", path, NULL);
	g_hash_table_insert(w->index, hkey, GINT_TO_POINTER(w->count + 1));
	return w->count++;
}

static void call_drop(wcall *c)
{
	if (c == NULL)
		return;
	if (c->pending != NULL) {
		dbus_pending_call_cancel(c->pending);
		dbus_pending_call_unref(c->pending);
	}
	if (c->reply != NULL)
		dbus_message_unref(c->reply);
	free(c);
}

static void node_free(wnode *nd)
{
	call_drop(nd->box_call);
	call_drop(nd->kids_call);
	g_free(nd->key);
	free(nd->name);
	free(nd->kids);
	if (nd->far != NULL)
		g_hash_table_destroy(nd->far);
}

/* ---- calls ---------------------------------------------------------- */

static DBusMessage *msg_new(const wnode *nd, const char *iface, const char *member)
{
	return dbus_message_new_method_call(nd->bus, nd->path, iface, member);
}

/* A property's Get. */
static DBusMessage *msg_get(const wnode *nd, const char *iface, const char *prop)
{
	DBusMessage *m = msg_new(nd, IF_PROPS, "Get");
	if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING,
	                                           &prop, DBUS_TYPE_INVALID)) {
		dbus_message_unref(m);
		return NULL;
	}
	return m;
}

/* Sends m (consumed) to nd; NULL when past the deadline or out of memory. */
static wcall *send(a11y_wire *w, const wnode *nd, DBusMessage *m)
{
	wcall *call = m != NULL ? calloc(1, sizeof(*call)) : NULL;
	if (call != NULL && w->answer_fn != NULL) {
		dbus_message_set_serial(m, (dbus_uint32_t)w->calls + 1); /* as sending would */
		call->reply = w->answer_fn(w->answer_ctx, m);
	} else if (call != NULL) {
		long left = base_ms_until(w->deadline);
		DBusConnection *c = strcmp(nd->bus, w->bus) == 0 ? w->app_conn : w->bus_conn;
		if (left <= 0 || !dbus_connection_send_with_reply(c, m, &call->pending, (int)left))
			call->pending = NULL;
		if (call->pending == NULL) {
			free(call);
			call = NULL;
		}
	}
	if (m != NULL)
		dbus_message_unref(m);
	if (call != NULL)
		w->calls++;
	return call;
}

/* c's answer (c consumed); NULL for none, an error or a time-out. */
static DBusMessage *answer(wcall *c)
{
	if (c == NULL)
		return NULL;
	DBusMessage *r = c->reply;
	if (c->pending != NULL) {
		dbus_pending_call_block(c->pending);
		r = dbus_pending_call_steal_reply(c->pending);
		dbus_pending_call_unref(c->pending);
	}
	free(c);
	if (r != NULL && dbus_message_get_type(r) != DBUS_MESSAGE_TYPE_METHOD_RETURN) {
		dbus_message_unref(r);
		r = NULL;
	}
	return r;
}

/* The first argument of r (unreffed) as a basic value of `type`, through a variant. */
static bool arg_basic(DBusMessage *r, int type, void *out)
{
	if (r == NULL)
		return false;
	DBusMessageIter it, v;
	bool ok = dbus_message_iter_init(r, &it);
	if (ok && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
		dbus_message_iter_recurse(&it, &v);
		it = v;
	}
	ok = ok && dbus_message_iter_get_arg_type(&it) == type;
	if (ok && type == DBUS_TYPE_STRING) {
		const char *s = NULL;
		dbus_message_iter_get_basic(&it, &s);
		*(char **)out = strdup(s ? s : "");
		ok = *(char **)out != NULL;
	} else if (ok) {
		dbus_message_iter_get_basic(&it, out);
	}
	dbus_message_unref(r);
	return ok;
}

/* A reference (so) at `it` as a node; -1 for the null object or another type. */
static int ref_at(a11y_wire *w, DBusMessageIter *it)
{
	if (dbus_message_iter_get_arg_type(it) != DBUS_TYPE_STRUCT)
		return -1;
	DBusMessageIter s;
	const char *bus = NULL, *path = NULL;
	dbus_message_iter_recurse(it, &s);
	if (dbus_message_iter_get_arg_type(&s) != DBUS_TYPE_STRING)
		return -1;
	dbus_message_iter_get_basic(&s, &bus);
	dbus_message_iter_next(&s);
	if (dbus_message_iter_get_arg_type(&s) != DBUS_TYPE_OBJECT_PATH)
		return -1;
	dbus_message_iter_get_basic(&s, &path);
	/* An empty bus name means "the sender": the application itself. */
	return node_of(w, bus[0] ? bus : w->bus, path);
}

/* The reply's single reference (unreffed); -1 for none. */
static int arg_ref(a11y_wire *w, DBusMessage *r)
{
	if (r == NULL)
		return -1;
	DBusMessageIter it, v;
	int n = -1;
	if (dbus_message_iter_init(r, &it)) {
		if (dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
			dbus_message_iter_recurse(&it, &v);
			it = v;
		}
		n = ref_at(w, &it);
	}
	dbus_message_unref(r);
	return n;
}

/* ---- the toolkit's cache ------------------------------------------ */

static void read_states(DBusMessageIter *it, uint32_t states[2])
{
	DBusMessageIter a;
	states[0] = states[1] = 0;
	if (dbus_message_iter_get_arg_type(it) != DBUS_TYPE_ARRAY)
		return;
	dbus_message_iter_recurse(it, &a);
	for (int i = 0; i < 2 && dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_UINT32; i++) {
		dbus_message_iter_get_basic(&a, &states[i]);
		dbus_message_iter_next(&a);
	}
}

static unsigned read_ifaces(DBusMessageIter *it)
{
	DBusMessageIter a;
	unsigned f = IFACES_KNOWN;
	dbus_message_iter_recurse(it, &a);
	while (dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_STRING) {
		const char *s;
		dbus_message_iter_get_basic(&a, &s);
		f |= strcmp(s, IF_COMP) == 0 ? HAS_COMP : strcmp(s, IF_TEXT) == 0 ? HAS_TEXT
		   : strcmp(s, IF_VALUE) == 0 ? HAS_VALUE : 0;
		dbus_message_iter_next(&a);
	}
	return f;
}

static int kid_get(const wnode *p, int i)
{
	if (p->kids != NULL)
		return p->kids[i];
	gpointer v = p->far ? g_hash_table_lookup(p->far, GINT_TO_POINTER(i + 1)) : NULL;
	return v != NULL ? GPOINTER_TO_INT(v) - 3 : KID_UNKNOWN;
}

/* Records child `index` of `parent`: node n, or KID_NONE. */
static void link_kid(a11y_wire *w, int parent, int index, int n)
{
	if (parent < 0 || index < 0)
		return;
	wnode *p = &w->nodes[parent];
	if (p->count <= 0 || index >= p->count)
		return;
	if (p->count > WIRE_KIDS_MAX || (p->kids == NULL && p->count > WIRE_SLOTS_MAX - w->slots)) {
		/* Holds only what the walk asked: at most what its caps let it ask. */
		if (p->far == NULL)
			p->far = g_hash_table_new(NULL, NULL);
		g_hash_table_insert(p->far, GINT_TO_POINTER(index + 1), GINT_TO_POINTER(n + 3));
		return;
	}
	if (p->kids == NULL) {
		p->kids = malloc((size_t)p->count * sizeof(int));
		if (p->kids == NULL)
			return;
		w->slots += p->count;
		for (int i = 0; i < p->count; i++)
			p->kids[i] = KID_UNKNOWN;
	}
	p->kids[index] = n;
}

/* One item (o(so)(so)iiassusau) of GetItems: false when it is not that shape. */
static bool cache_item(a11y_wire *w, DBusMessageIter *item, int *n, int *parent, int *index)
{
	static const char shape[] = "((so)(so)(so)iiassusau)";
	char *sig = dbus_message_iter_get_signature(item);
	bool ok = sig != NULL && strcmp(sig, shape) == 0;
	dbus_free(sig);
	if (!ok)
		return false;
	DBusMessageIter s;
	dbus_message_iter_recurse(item, &s);
	*n = ref_at(w, &s);
	dbus_message_iter_next(&s); /* the application */
	dbus_message_iter_next(&s);
	*parent = ref_at(w, &s);
	if (*n < 0)
		return true;
	wnode *nd = &w->nodes[*n];
	const char *name;
	dbus_uint32_t role;
	dbus_message_iter_next(&s);
	dbus_message_iter_get_basic(&s, index);
	dbus_message_iter_next(&s);
	dbus_message_iter_get_basic(&s, &nd->count);
	dbus_message_iter_next(&s);
	nd->ifaces = read_ifaces(&s);
	dbus_message_iter_next(&s);
	dbus_message_iter_get_basic(&s, &name);
	dbus_message_iter_next(&s);
	dbus_message_iter_get_basic(&s, &role);
	dbus_message_iter_next(&s);
	dbus_message_iter_next(&s); /* the description */
	read_states(&s, nd->states);
	free(nd->name);
	nd->name = strdup(name);
	nd->role = (int)role;
	/* A count of -1: the toolkit keeps the children out of its cache. */
	nd->props = nd->name != NULL && nd->count >= 0;
	return true;
}

/* Reads the toolkit's cache; an application without one leaves the table as it was. */
static void read_cache(a11y_wire *w)
{
	wnode *root = &w->nodes[0];
	DBusMessage *r = answer(send(w, root, dbus_message_new_method_call(
		root->bus, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache", "GetItems")));
	DBusMessageIter it, a;
	if (r == NULL || !dbus_message_iter_init(r, &it) ||
	    dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY)
		goto out;
	dbus_message_iter_recurse(&it, &a);
	int *links = malloc(3 * WIRE_ITEMS_MAX * sizeof(int)), k = 0;
	if (links == NULL)
		goto out;
	while (k < WIRE_ITEMS_MAX && dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_STRUCT) {
		if (!cache_item(w, &a, &links[3 * k], &links[3 * k + 1], &links[3 * k + 2]))
			break;
		k++;
		dbus_message_iter_next(&a);
	}
	/* Parents' counts are all known now: place each child. */
	for (int i = 0; i < k; i++)
		if (links[3 * i] >= 0 && links[3 * i + 1] >= 0)
			link_kid(w, links[3 * i + 1], links[3 * i + 2], links[3 * i]);
	free(links);
out:
	if (r != NULL)
		dbus_message_unref(r);
}

/* The root node and the cache of a read whose calls go where `w` says. */
static a11y_wire *wire_start(a11y_wire *w, const char *bus, bool cache)
{
	w->bus = strdup(bus);
	w->index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (w->bus == NULL || node_of(w, w->bus, ROOT_PATH) != 0) {
		a11y_wire_destroy(w);
		return NULL;
	}
	if (cache)
		read_cache(w);
	return w;
}

a11y_wire *a11y_wire_new(AtspiAccessible *app, int64_t deadline, bool cache)
{
	a11y_wire *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	AtspiApplication *a = app->parent.app;
	w->bus_conn = dbus_connection_ref(atspi_get_a11y_bus());
	w->app_conn = dbus_connection_ref(a != NULL && a->bus != NULL ? a->bus : w->bus_conn);
	w->deadline = deadline;
	return wire_start(w, a != NULL && a->bus_name != NULL ? a->bus_name : "", cache);
}

a11y_wire *a11y_wire_new_detached(const char *bus, a11y_wire_answer_fn *fn, void *ctx,
                                  bool cache)
{
	a11y_wire *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->answer_fn = fn;
	w->answer_ctx = ctx;
	return wire_start(w, bus, cache);
}

void a11y_wire_destroy(a11y_wire *w)
{
	if (w == NULL)
		return;
	for (int i = 0; i < w->count; i++)
		node_free(&w->nodes[i]);
	free(w->nodes);
	if (w->index != NULL)
		g_hash_table_destroy(w->index);
	/* What arrived meanwhile (libatspi's signals) goes to libatspi now, as
	 * its own calls would have let it, instead of piling up. */
	DBusConnection *conns[] = {w->app_conn, w->bus_conn};
	for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++) {
		if (conns[i] == NULL)
			continue; /* detached */
		while (dbus_connection_dispatch(conns[i]) == DBUS_DISPATCH_DATA_REMAINS)
			;
		dbus_connection_unref(conns[i]);
	}
	free(w->bus);
	free(w);
}

int a11y_wire_root(const a11y_wire *w)
{
	(void)w;
	return 0;
}

int a11y_wire_calls(const a11y_wire *w)
{
	return w->calls;
}

/* ---- properties ----------------------------------------------------- */

static void states_from(DBusMessage *r, uint32_t states[2])
{
	DBusMessageIter it;
	states[0] = states[1] = 0;
	if (r != NULL && dbus_message_iter_init(r, &it))
		read_states(&it, states);
	if (r != NULL)
		dbus_message_unref(r);
}

void a11y_wire_props(a11y_wire *w, const int *ns, int k)
{
	wcall **p = calloc((size_t)(k > 0 ? k : 1) * 4, sizeof(*p));
	if (p == NULL)
		return;
	for (int j = 0; j < k; j++) {
		const wnode *nd = &w->nodes[ns[j]];
		if (nd->props)
			continue;
		p[4 * j] = send(w, nd, msg_new(nd, IF_ACC, "GetState"));
		p[4 * j + 1] = send(w, nd, msg_new(nd, IF_ACC, "GetRole"));
		p[4 * j + 2] = send(w, nd, msg_get(nd, IF_ACC, "Name"));
		p[4 * j + 3] = send(w, nd, msg_get(nd, IF_ACC, "ChildCount"));
	}
	for (int j = 0; j < k; j++) {
		wnode *nd = &w->nodes[ns[j]];
		/* A node listed twice was asked twice: both answers are taken. */
		bool sent = p[4 * j] || p[4 * j + 1] || p[4 * j + 2] || p[4 * j + 3];
		if (nd->props && !sent)
			continue;
		dbus_uint32_t role = 0;
		dbus_int32_t count = 0;
		states_from(answer(p[4 * j]), nd->states);
		if (!arg_basic(answer(p[4 * j + 1]), DBUS_TYPE_UINT32, &role))
			role = ATSPI_ROLE_INVALID;
		free(nd->name);
		nd->name = NULL;
		if (!arg_basic(answer(p[4 * j + 2]), DBUS_TYPE_STRING, &nd->name))
			nd->name = NULL;
		if (!arg_basic(answer(p[4 * j + 3]), DBUS_TYPE_INT32, &count) || count < 0)
			count = 0;
		nd->role = (int)role;
		if (nd->count != count) {
			free(nd->kids);
			nd->kids = NULL;
			if (nd->far != NULL)
				g_hash_table_destroy(nd->far);
			nd->far = NULL;
		}
		nd->count = count;
		nd->props = true;
	}
	free(p);
}

AtspiRole a11y_wire_role(const a11y_wire *w, int n)
{
	return (AtspiRole)w->nodes[n].role;
}

const char *a11y_wire_name(const a11y_wire *w, int n)
{
	return w->nodes[n].name ? w->nodes[n].name : "";
}

bool a11y_wire_has(const a11y_wire *w, int n, AtspiStateType s)
{
	unsigned b = (unsigned)s;
	return b < 64 && (w->nodes[n].states[b / 32] >> (b % 32) & 1u);
}

int a11y_wire_child_count(const a11y_wire *w, int n)
{
	return w->nodes[n].count > 0 ? w->nodes[n].count : 0;
}

/* ---- children ------------------------------------------------------- */

/* n's children in one call (GetChildren). */
static void list_children(a11y_wire *w, int n)
{
	wcall *p = w->nodes[n].kids_call;
	w->nodes[n].kids_call = NULL;
	if (p == NULL)
		p = send(w, &w->nodes[n], msg_new(&w->nodes[n], IF_ACC, "GetChildren"));
	DBusMessage *r = answer(p);
	DBusMessageIter it, a;
	int count = w->nodes[n].count, i = 0;
	if (r != NULL && dbus_message_iter_init(r, &it) &&
	    dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_ARRAY) {
		dbus_message_iter_recurse(&it, &a);
		for (; i < count && dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_STRUCT; i++) {
			int kid = ref_at(w, &a);
			link_kid(w, n, i, kid >= 0 ? kid : KID_NONE);
			dbus_message_iter_next(&a);
		}
	}
	for (; i < count; i++)
		link_kid(w, n, i, KID_NONE);
	if (r != NULL)
		dbus_message_unref(r);
}

void a11y_wire_want_children(a11y_wire *w, int n, int list_max)
{
	wnode *nd = &w->nodes[n];
	if (nd->kids_call != NULL || nd->count <= 0 || nd->count > list_max)
		return;
	for (int i = 0; i < nd->count; i++)
		if (kid_get(nd, i) == KID_UNKNOWN) {
			nd->kids_call = send(w, nd, msg_new(nd, IF_ACC, "GetChildren"));
			return;
		}
}

static DBusMessage *msg_child_at(const wnode *nd, int i)
{
	DBusMessage *m = msg_new(nd, IF_ACC, "GetChildAtIndex");
	dbus_int32_t idx = i;
	if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_INT32, &idx, DBUS_TYPE_INVALID)) {
		dbus_message_unref(m);
		m = NULL;
	}
	return m;
}

void a11y_wire_children(a11y_wire *w, int n, int from, int to, int list_max)
{
	int count = a11y_wire_child_count(w, n);
	to = to < count ? to : count;
	from = from > 0 ? from : 0;
	bool missing = false;
	for (int i = from; i < to && !missing; i++)
		missing = kid_get(&w->nodes[n], i) == KID_UNKNOWN;
	if (!missing)
		return;
	if (count <= list_max) {
		list_children(w, n);
		return;
	}
	wcall **p = calloc((size_t)(to - from), sizeof(*p));
	if (p == NULL)
		return;
	for (int i = from; i < to; i++)
		if (kid_get(&w->nodes[n], i) == KID_UNKNOWN)
			p[i - from] = send(w, &w->nodes[n], msg_child_at(&w->nodes[n], i));
	for (int i = from; i < to; i++) {
		if (kid_get(&w->nodes[n], i) != KID_UNKNOWN)
			continue;
		int kid = arg_ref(w, answer(p[i - from]));
		link_kid(w, n, i, kid >= 0 ? kid : KID_NONE);
	}
	free(p);
}

int a11y_wire_child(a11y_wire *w, int n, int i, int list_max)
{
	if (i < 0 || i >= a11y_wire_child_count(w, n))
		return -1;
	if (kid_get(&w->nodes[n], i) == KID_UNKNOWN)
		a11y_wire_children(w, n, i, i + 1, list_max);
	int kid = kid_get(&w->nodes[n], i);
	return kid >= 0 ? kid : -1;
}

/* ---- boxes and hit tests ------------------------------------------ */

void a11y_wire_want_box(a11y_wire *w, int n)
{
	wnode *nd = &w->nodes[n];
	if (nd->box_known || nd->box_call != NULL)
		return;
	if ((nd->ifaces & IFACES_KNOWN) && !(nd->ifaces & HAS_COMP)) {
		nd->box_known = true;
		return;
	}
	DBusMessage *m = msg_new(nd, IF_COMP, "GetExtents");
	dbus_uint32_t screen = ATSPI_COORD_TYPE_SCREEN;
	if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_UINT32, &screen, DBUS_TYPE_INVALID)) {
		dbus_message_unref(m);
		m = NULL;
	}
	nd->box_call = send(w, nd, m);
	if (nd->box_call == NULL)
		nd->box_known = true;
}

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool a11y_wire_box(a11y_wire *w, int n, os_rect *out)
{
	a11y_wire_want_box(w, n);
	wnode *nd = &w->nodes[n];
	if (!nd->box_known) {
		DBusMessage *r = answer(nd->box_call);
		nd->box_call = NULL;
		nd->box_known = true;
		DBusMessageIter it, s;
		dbus_int32_t v[4];
		if (r != NULL && dbus_message_iter_init(r, &it) &&
		    dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_STRUCT) {
			dbus_message_iter_recurse(&it, &s);
			int i = 0;
			for (; i < 4 && dbus_message_iter_get_arg_type(&s) == DBUS_TYPE_INT32; i++) {
				dbus_message_iter_get_basic(&s, &v[i]);
				dbus_message_iter_next(&s);
			}
			nd->has_box = i == 4 && v[2] > 0 && v[3] > 0;
			if (nd->has_box)
				nd->box = (os_rect){clamp(v[0], -WIRE_COORD_MAX, WIRE_COORD_MAX),
				                    clamp(v[1], -WIRE_COORD_MAX, WIRE_COORD_MAX),
				                    clamp(v[2], 1, WIRE_COORD_MAX),
				                    clamp(v[3], 1, WIRE_COORD_MAX)};
		}
		if (r != NULL)
			dbus_message_unref(r);
		nd->box_failed = r == NULL;
	}
	*out = nd->box;
	return nd->has_box;
}

bool a11y_wire_has_component(const a11y_wire *w, int n)
{
	const wnode *nd = &w->nodes[n];
	if (nd->ifaces & IFACES_KNOWN)
		return nd->ifaces & HAS_COMP;
	return !nd->box_failed;
}

void a11y_wire_hits(a11y_wire *w, int n, const int *xs, const int *ys, int k, int *idx)
{
	wcall **p = calloc((size_t)(k > 0 ? k : 1) * 2, sizeof(*p));
	int *hit = calloc((size_t)(k > 0 ? k : 1), sizeof(*hit));
	for (int j = 0; j < k; j++)
		idx[j] = -1;
	if (p == NULL || hit == NULL)
		goto out;
	const wnode *c = &w->nodes[n];
	for (int j = 0; j < k; j++) {
		DBusMessage *m = msg_new(c, IF_COMP, "GetAccessibleAtPoint");
		dbus_int32_t x = xs[j], y = ys[j];
		dbus_uint32_t screen = ATSPI_COORD_TYPE_SCREEN;
		if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_INT32, &x, DBUS_TYPE_INT32, &y,
		                                           DBUS_TYPE_UINT32, &screen, DBUS_TYPE_INVALID)) {
			dbus_message_unref(m);
			m = NULL;
		}
		p[j] = send(w, c, m);
	}
	for (int j = 0; j < k; j++)
		hit[j] = arg_ref(w, answer(p[j]));
	/* The second wave: each hit's parent and index there. */
	for (int j = 0; j < k; j++) {
		if (hit[j] < 0)
			continue;
		const wnode *h = &w->nodes[hit[j]];
		p[2 * j] = send(w, h, msg_get(h, IF_ACC, "Parent"));
		p[2 * j + 1] = send(w, h, msg_new(h, IF_ACC, "GetIndexInParent"));
	}
	for (int j = 0; j < k; j++) {
		if (hit[j] < 0)
			continue;
		int parent = arg_ref(w, answer(p[2 * j]));
		dbus_int32_t i = -1;
		if (!arg_basic(answer(p[2 * j + 1]), DBUS_TYPE_INT32, &i))
			i = -1;
		/* One node per (bus, path): the same object; and an index that
		 * is one of its children (the walk adds to it). */
		if (parent == n && i >= 0 && i < a11y_wire_child_count(w, n))
			idx[j] = i;
	}
out:
	free(p);
	free(hit);
}

/* ---- text ----------------------------------------------------------- */

/* Cuts valid UTF-8 s after its first max characters. */
static void utf8_cut(char *s, int max)
{
	int chars = 0;
	for (char *c = s; *c; c++) {
		if (((unsigned char)*c & 0xc0) != 0x80 && chars++ == max) {
			*c = '\0';
			return;
		}
	}
}

char *a11y_wire_short_text(a11y_wire *w, int n, int max)
{
	const wnode *nd = &w->nodes[n];
	bool known = nd->ifaces & IFACES_KNOWN;
	dbus_int32_t chars = 0;
	bool text = (!known || (nd->ifaces & HAS_TEXT)) &&
	            arg_basic(answer(send(w, nd, msg_get(nd, IF_TEXT, "CharacterCount"))),
	                      DBUS_TYPE_INT32, &chars);
	if (text) {
		char *s = NULL;
		dbus_int32_t from = 0, to = chars < max ? chars : max;
		DBusMessage *m = chars > 0 ? msg_new(nd, IF_TEXT, "GetText") : NULL;
		if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_INT32, &from, DBUS_TYPE_INT32,
		                                           &to, DBUS_TYPE_INVALID)) {
			dbus_message_unref(m);
			m = NULL;
		}
		if (!arg_basic(answer(send(w, nd, m)), DBUS_TYPE_STRING, &s))
			s = NULL;
		if (s != NULL)
			utf8_cut(s, max); /* what was asked, whatever came */
		return s ? s : strdup("");
	}
	double val = 0;
	char buf[64] = "";
	if ((!known || (nd->ifaces & HAS_VALUE)) &&
	    arg_basic(answer(send(w, nd, msg_get(nd, IF_VALUE, "CurrentValue"))), DBUS_TYPE_DOUBLE,
	              &val))
		snprintf(buf, sizeof(buf), "%g", val);
	return strdup(buf);
}

#endif /* DESKHAND_HAVE_ATSPI */
