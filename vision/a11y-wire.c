/*
 * The AT-SPI2 calls of one tree read, several in flight at once (see
 * a11y-wire.h): the read's nodes, sending and answering its calls, the
 * toolkit's cache, and the read's start and end. What the walk asks of a
 * node is a11y-wire-ask.c's. The interfaces are the documented
 * org.a11y.atspi ones (Accessible, Component, Text, Value, Cache).
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "vision/a11y-wire-internal.h"
#include "vision/a11y-libs.h"

/* ---- nodes ---------------------------------------------------------- */

/*
 * The node of (bus, path), added when new; -1 when out of memory, for
 * WIRE_NULL_PATH or for a bus name that is not one (libdbus aborts the process
 * when a call is addressed to it, and the name is the application's).
 */
static int node_of(a11y_wire *w, const char *bus, const char *path)
{
	if (strcmp(path, WIRE_NULL_PATH) == 0 || !dbus_validate_bus_name(bus, NULL))
		return -1;
	char *key = g_strconcat(bus, " ", path, NULL);
	gpointer found = g_hash_table_lookup(w->index, key);
	if (found != NULL) {
		g_free(key);
		return GPOINTER_TO_INT(found) - 1;
	}
	if (w->count == w->cap) {
		int cap = w->cap ? w->cap * 2 : 256;
		a11y_wnode *nodes = realloc(w->nodes, (size_t)cap * sizeof(*nodes));
		if (nodes == NULL) {
			g_free(key);
			return -1;
		}
		w->nodes = nodes;
		w->cap = cap;
	}
	a11y_wnode *nd = &w->nodes[w->count];
	*nd = (a11y_wnode){.key = key, .bus = key, .path = key + strlen(bus) + 1, .count = -1};
	key[strlen(bus)] = '\0'; /* bus and path in one allocation: "bus\0path" */
	char *hkey = g_strconcat(bus, " ", path, NULL);
	g_hash_table_insert(w->index, hkey, GINT_TO_POINTER(w->count + 1));
	return w->count++;
}

static void call_drop(a11y_wcall *c)
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

static void node_free(a11y_wnode *nd)
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

DBusMessage *a11y_wire_msg_new(const a11y_wnode *nd, const char *iface, const char *member)
{
	return dbus_message_new_method_call(nd->bus, nd->path, iface, member);
}

DBusMessage *a11y_wire_msg_get(const a11y_wnode *nd, const char *iface, const char *prop)
{
	DBusMessage *m = a11y_wire_msg_new(nd, WIRE_IF_PROPS, "Get");
	if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING,
	                                           &prop, DBUS_TYPE_INVALID)) {
		dbus_message_unref(m);
		return NULL;
	}
	return m;
}

a11y_wcall *a11y_wire_send(a11y_wire *w, const a11y_wnode *nd, DBusMessage *m)
{
	a11y_wcall *call = m != NULL ? calloc(1, sizeof(*call)) : NULL;
	if (call != NULL)
		call->w = w;
	if (call != NULL && w->answer_fn != NULL) {
		dbus_message_set_serial(m, (dbus_uint32_t)w->calls + 1); /* as sending would */
		call->reply = w->answer_fn(w->answer_ctx, m);
	} else if (call != NULL) {
		long left = base_ms_until(w->deadline);
		long wait = left < w->patience_ms ? left : w->patience_ms;
		DBusConnection *c = strcmp(nd->bus, w->bus) == 0 ? w->app_conn : w->bus_conn;
		call->patient = wait == w->patience_ms;
		if (w->hung || wait <= 0 ||
		    !dbus_connection_send_with_reply(c, m, &call->pending, (int)wait))
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
DBusMessage *a11y_wire_answer(a11y_wcall *c)
{
	if (c == NULL)
		return NULL;
	DBusMessage *r = c->reply;
	if (c->pending != NULL && c->w->hung) {
		dbus_pending_call_cancel(c->pending); /* it would wait its patience again */
		dbus_pending_call_unref(c->pending);
	} else if (c->pending != NULL) {
		dbus_pending_call_block(c->pending);
		r = dbus_pending_call_steal_reply(c->pending);
		dbus_pending_call_unref(c->pending);
		/* libdbus's own answer to a call whose time ran out */
		if (r != NULL && c->patient && dbus_message_is_error(r, DBUS_ERROR_NO_REPLY))
			c->w->hung = true;
	}
	free(c);
	if (r != NULL && dbus_message_get_type(r) != DBUS_MESSAGE_TYPE_METHOD_RETURN) {
		dbus_message_unref(r);
		r = NULL;
	}
	return r;
}

/* The first argument of r (unreffed) as a basic value of `type`, through a variant. */
bool a11y_wire_arg_basic(DBusMessage *r, int type, void *out)
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

int a11y_wire_ref_at(a11y_wire *w, DBusMessageIter *it)
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

int a11y_wire_arg_ref(a11y_wire *w, DBusMessage *r)
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
		n = a11y_wire_ref_at(w, &it);
	}
	dbus_message_unref(r);
	return n;
}

/* ---- the toolkit's cache ------------------------------------------ */

void a11y_wire_read_states(DBusMessageIter *it, uint32_t states[2])
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
	unsigned f = WIRE_IFACES_KNOWN;
	dbus_message_iter_recurse(it, &a);
	while (dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_STRING) {
		const char *s;
		dbus_message_iter_get_basic(&a, &s);
		f |= strcmp(s, WIRE_IF_COMP) == 0 ? WIRE_HAS_COMP : strcmp(s, WIRE_IF_TEXT) == 0 ? WIRE_HAS_TEXT
		   : strcmp(s, WIRE_IF_VALUE) == 0 ? WIRE_HAS_VALUE : 0;
		dbus_message_iter_next(&a);
	}
	return f;
}

int a11y_wire_kid_get(const a11y_wnode *p, int i)
{
	if (p->kids != NULL)
		return p->kids[i];
	gpointer v = p->far ? g_hash_table_lookup(p->far, GINT_TO_POINTER(i + 1)) : NULL;
	return v != NULL ? GPOINTER_TO_INT(v) - 3 : WIRE_KID_UNKNOWN;
}

void a11y_wire_link_kid(a11y_wire *w, int parent, int index, int n)
{
	if (parent < 0 || index < 0)
		return;
	a11y_wnode *p = &w->nodes[parent];
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
			p->kids[i] = WIRE_KID_UNKNOWN;
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
	*n = a11y_wire_ref_at(w, &s);
	dbus_message_iter_next(&s); /* the application */
	dbus_message_iter_next(&s);
	*parent = a11y_wire_ref_at(w, &s);
	if (*n < 0)
		return true;
	a11y_wnode *nd = &w->nodes[*n];
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
	a11y_wire_read_states(&s, nd->states);
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
	a11y_wnode *root = &w->nodes[0];
	DBusMessage *r = a11y_wire_answer(a11y_wire_send(w, root, dbus_message_new_method_call(
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
			a11y_wire_link_kid(w, links[3 * i + 1], links[3 * i + 2], links[3 * i]);
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
	if (w->bus == NULL || node_of(w, w->bus, WIRE_ROOT_PATH) != 0) {
		a11y_wire_destroy(w);
		return NULL;
	}
	if (cache)
		read_cache(w);
	return w;
}

a11y_wire *a11y_wire_new(AtspiAccessible *app, int64_t deadline, int patience_ms, bool cache)
{
	a11y_wire *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	AtspiApplication *a = app->parent.app;
	w->bus_conn = dbus_connection_ref(atspi_get_a11y_bus());
	w->app_conn = dbus_connection_ref(a != NULL && a->bus != NULL ? a->bus : w->bus_conn);
	w->deadline = deadline;
	w->patience_ms = patience_ms > 0 ? patience_ms : 1;
	return wire_start(w, a != NULL && a->bus_name != NULL ? a->bus_name : "", cache);
}

a11y_wire *a11y_wire_new_detached(const char *bus, a11y_wire_answer_fn *fn, void *ctx,
                                  bool cache)
{
	const char *why;
	if (!a11y_libs_load(&why))
		return NULL;
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

bool a11y_wire_hung(const a11y_wire *w)
{
	return w->hung;
}

int a11y_wire_calls(const a11y_wire *w)
{
	return w->calls;
}

#endif /* DESKHAND_HAVE_ATSPI */
