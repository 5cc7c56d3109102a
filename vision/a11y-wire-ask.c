/*
 * What the walk asks of one node on the wire (see a11y-wire.h): its
 * properties in waves, its children (in one call or one by one), its box
 * and hit tests at points, its text or value.
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vision/a11y-wire-internal.h"
#include "vision/a11y-libs.h"

/* ---- properties ----------------------------------------------------- */

static void states_from(DBusMessage *r, uint32_t states[2])
{
	DBusMessageIter it;
	states[0] = states[1] = 0;
	if (r != NULL && dbus_message_iter_init(r, &it))
		a11y_wire_read_states(&it, states);
	if (r != NULL)
		dbus_message_unref(r);
}

void a11y_wire_props(a11y_wire *w, const int *ns, int k)
{
	a11y_wcall **p = calloc((size_t)(k > 0 ? k : 1) * 4, sizeof(*p));
	if (p == NULL)
		return;
	for (int j = 0; j < k; j++) {
		const a11y_wnode *nd = &w->nodes[ns[j]];
		if (nd->props)
			continue;
		p[4 * j] = a11y_wire_send(w, nd, a11y_wire_msg_new(nd, WIRE_IF_ACC, "GetState"));
		p[4 * j + 1] = a11y_wire_send(w, nd, a11y_wire_msg_new(nd, WIRE_IF_ACC, "GetRole"));
		p[4 * j + 2] = a11y_wire_send(w, nd, a11y_wire_msg_get(nd, WIRE_IF_ACC, "Name"));
		p[4 * j + 3] = a11y_wire_send(w, nd, a11y_wire_msg_get(nd, WIRE_IF_ACC, "ChildCount"));
	}
	for (int j = 0; j < k; j++) {
		a11y_wnode *nd = &w->nodes[ns[j]];
		/* A node listed twice was asked twice: both answers are taken. */
		bool sent = p[4 * j] || p[4 * j + 1] || p[4 * j + 2] || p[4 * j + 3];
		if (nd->props && !sent)
			continue;
		dbus_uint32_t role = 0;
		dbus_int32_t count = 0;
		states_from(a11y_wire_answer(p[4 * j]), nd->states);
		if (!a11y_wire_arg_basic(a11y_wire_answer(p[4 * j + 1]), DBUS_TYPE_UINT32, &role))
			role = ATSPI_ROLE_INVALID;
		free(nd->name);
		nd->name = NULL;
		if (!a11y_wire_arg_basic(a11y_wire_answer(p[4 * j + 2]), DBUS_TYPE_STRING, &nd->name))
			nd->name = NULL;
		if (!a11y_wire_arg_basic(a11y_wire_answer(p[4 * j + 3]), DBUS_TYPE_INT32, &count) || count < 0)
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
	a11y_wcall *p = w->nodes[n].kids_call;
	w->nodes[n].kids_call = NULL;
	if (p == NULL)
		p = a11y_wire_send(w, &w->nodes[n], a11y_wire_msg_new(&w->nodes[n], WIRE_IF_ACC, "GetChildren"));
	DBusMessage *r = a11y_wire_answer(p);
	DBusMessageIter it, a;
	int count = w->nodes[n].count, i = 0;
	if (r != NULL && dbus_message_iter_init(r, &it) &&
	    dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_ARRAY) {
		dbus_message_iter_recurse(&it, &a);
		for (; i < count && dbus_message_iter_get_arg_type(&a) == DBUS_TYPE_STRUCT; i++) {
			int kid = a11y_wire_ref_at(w, &a);
			a11y_wire_link_kid(w, n, i, kid >= 0 ? kid : WIRE_KID_NONE);
			dbus_message_iter_next(&a);
		}
	}
	for (; i < count; i++)
		a11y_wire_link_kid(w, n, i, WIRE_KID_NONE);
	if (r != NULL)
		dbus_message_unref(r);
}

void a11y_wire_want_children(a11y_wire *w, int n, int list_max)
{
	a11y_wnode *nd = &w->nodes[n];
	if (nd->kids_call != NULL || nd->count <= 0 || nd->count > list_max)
		return;
	for (int i = 0; i < nd->count; i++)
		if (a11y_wire_kid_get(nd, i) == WIRE_KID_UNKNOWN) {
			nd->kids_call = a11y_wire_send(w, nd, a11y_wire_msg_new(nd, WIRE_IF_ACC, "GetChildren"));
			return;
		}
}

static DBusMessage *msg_child_at(const a11y_wnode *nd, int i)
{
	DBusMessage *m = a11y_wire_msg_new(nd, WIRE_IF_ACC, "GetChildAtIndex");
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
		missing = a11y_wire_kid_get(&w->nodes[n], i) == WIRE_KID_UNKNOWN;
	if (!missing)
		return;
	if (count <= list_max) {
		list_children(w, n);
		return;
	}
	a11y_wcall **p = calloc((size_t)(to - from), sizeof(*p));
	if (p == NULL)
		return;
	for (int i = from; i < to; i++)
		if (a11y_wire_kid_get(&w->nodes[n], i) == WIRE_KID_UNKNOWN)
			p[i - from] = a11y_wire_send(w, &w->nodes[n], msg_child_at(&w->nodes[n], i));
	for (int i = from; i < to; i++) {
		if (a11y_wire_kid_get(&w->nodes[n], i) != WIRE_KID_UNKNOWN)
			continue;
		int kid = a11y_wire_arg_ref(w, a11y_wire_answer(p[i - from]));
		a11y_wire_link_kid(w, n, i, kid >= 0 ? kid : WIRE_KID_NONE);
	}
	free(p);
}

int a11y_wire_child(a11y_wire *w, int n, int i, int list_max)
{
	if (i < 0 || i >= a11y_wire_child_count(w, n))
		return -1;
	if (a11y_wire_kid_get(&w->nodes[n], i) == WIRE_KID_UNKNOWN)
		a11y_wire_children(w, n, i, i + 1, list_max);
	int kid = a11y_wire_kid_get(&w->nodes[n], i);
	return kid >= 0 ? kid : -1;
}

/* ---- boxes and hit tests ------------------------------------------ */

void a11y_wire_want_box(a11y_wire *w, int n)
{
	a11y_wnode *nd = &w->nodes[n];
	if (nd->box_known || nd->box_call != NULL)
		return;
	if ((nd->ifaces & WIRE_IFACES_KNOWN) && !(nd->ifaces & WIRE_HAS_COMP)) {
		nd->box_known = true;
		return;
	}
	DBusMessage *m = a11y_wire_msg_new(nd, WIRE_IF_COMP, "GetExtents");
	dbus_uint32_t screen = ATSPI_COORD_TYPE_SCREEN;
	if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_UINT32, &screen, DBUS_TYPE_INVALID)) {
		dbus_message_unref(m);
		m = NULL;
	}
	nd->box_call = a11y_wire_send(w, nd, m);
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
	a11y_wnode *nd = &w->nodes[n];
	if (!nd->box_known) {
		DBusMessage *r = a11y_wire_answer(nd->box_call);
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
	const a11y_wnode *nd = &w->nodes[n];
	if (nd->ifaces & WIRE_IFACES_KNOWN)
		return nd->ifaces & WIRE_HAS_COMP;
	return !nd->box_failed;
}

void a11y_wire_hits(a11y_wire *w, int n, const int *xs, const int *ys, int k, int *idx)
{
	a11y_wcall **p = calloc((size_t)(k > 0 ? k : 1) * 2, sizeof(*p));
	int *hit = calloc((size_t)(k > 0 ? k : 1), sizeof(*hit));
	for (int j = 0; j < k; j++)
		idx[j] = -1;
	if (p == NULL || hit == NULL)
		goto out;
	const a11y_wnode *c = &w->nodes[n];
	for (int j = 0; j < k; j++) {
		DBusMessage *m = a11y_wire_msg_new(c, WIRE_IF_COMP, "GetAccessibleAtPoint");
		dbus_int32_t x = xs[j], y = ys[j];
		dbus_uint32_t screen = ATSPI_COORD_TYPE_SCREEN;
		if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_INT32, &x, DBUS_TYPE_INT32, &y,
		                                           DBUS_TYPE_UINT32, &screen, DBUS_TYPE_INVALID)) {
			dbus_message_unref(m);
			m = NULL;
		}
		p[j] = a11y_wire_send(w, c, m);
	}
	for (int j = 0; j < k; j++)
		hit[j] = a11y_wire_arg_ref(w, a11y_wire_answer(p[j]));
	/* The second wave: each hit's parent and index there. */
	for (int j = 0; j < k; j++) {
		if (hit[j] < 0)
			continue;
		const a11y_wnode *h = &w->nodes[hit[j]];
		p[2 * j] = a11y_wire_send(w, h, a11y_wire_msg_get(h, WIRE_IF_ACC, "Parent"));
		p[2 * j + 1] = a11y_wire_send(w, h, a11y_wire_msg_new(h, WIRE_IF_ACC, "GetIndexInParent"));
	}
	for (int j = 0; j < k; j++) {
		if (hit[j] < 0)
			continue;
		int parent = a11y_wire_arg_ref(w, a11y_wire_answer(p[2 * j]));
		dbus_int32_t i = -1;
		if (!a11y_wire_arg_basic(a11y_wire_answer(p[2 * j + 1]), DBUS_TYPE_INT32, &i))
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
	const a11y_wnode *nd = &w->nodes[n];
	bool known = nd->ifaces & WIRE_IFACES_KNOWN;
	dbus_int32_t chars = 0;
	bool text = (!known || (nd->ifaces & WIRE_HAS_TEXT)) &&
	            a11y_wire_arg_basic(a11y_wire_answer(a11y_wire_send(w, nd, a11y_wire_msg_get(nd, WIRE_IF_TEXT, "CharacterCount"))),
	                      DBUS_TYPE_INT32, &chars);
	if (text) {
		char *s = NULL;
		dbus_int32_t from = 0, to = chars < max ? chars : max;
		DBusMessage *m = chars > 0 ? a11y_wire_msg_new(nd, WIRE_IF_TEXT, "GetText") : NULL;
		if (m != NULL && !dbus_message_append_args(m, DBUS_TYPE_INT32, &from, DBUS_TYPE_INT32,
		                                           &to, DBUS_TYPE_INVALID)) {
			dbus_message_unref(m);
			m = NULL;
		}
		if (!a11y_wire_arg_basic(a11y_wire_answer(a11y_wire_send(w, nd, m)), DBUS_TYPE_STRING, &s))
			s = NULL;
		if (s != NULL)
			utf8_cut(s, max); /* what was asked, whatever came */
		return s ? s : strdup("");
	}
	double val = 0;
	char buf[64] = "";
	if ((!known || (nd->ifaces & WIRE_HAS_VALUE)) &&
	    a11y_wire_arg_basic(a11y_wire_answer(a11y_wire_send(w, nd, a11y_wire_msg_get(nd, WIRE_IF_VALUE, "CurrentValue"))), DBUS_TYPE_DOUBLE,
	              &val))
		snprintf(buf, sizeof(buf), "%g", val);
	return strdup(buf);
}

#endif /* DESKHAND_HAVE_ATSPI */
