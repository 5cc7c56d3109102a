/*
 * The accessibility wire (vision/a11y-wire.c): what an application answers
 * on the accessibility bus. A detached read (a11y_wire_new_detached) walks
 * a tree as vision/a11y.c does (cache, properties, children in lists and
 * one by one, boxes, hit tests, texts); every call it sends is answered
 * from the input, in order: the first byte of each answer picks its form
 *  - none, or an error;
 *  - a raw message: a length and that many bytes, demarshalled
 *    (libdbus checks the wire format; whatever passes is used as is);
 *  - a value of a shape from a table (a wrong type for the call, mostly);
 *  - the shape the call expects, its values from the input: references
 *    to a few bus names (valid or not) and paths, so they meet, cycle and
 *    point at unknown nodes; counts and indices near the caps; a cache of
 *    20,000+ items.
 * libdbus aborts on a call addressed to an invalid bus name or a getter
 * of the wrong type, so such a slip is a crash here. Checked: what the
 * read returns stays within what its header promises (boxes clamped, hit
 * indices among the container's children, texts cut at the length asked).
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"

#if DESKHAND_HAVE_ATSPI

#include "vision/a11y-wire.h"

typedef struct src {
	const uint8_t *data;
	size_t size, pos;
} src;

static unsigned byte(src *s)
{
	return s->pos < s->size ? s->data[s->pos++] : 0;
}

static bool more(const src *s)
{
	return s->pos < s->size;
}

static uint32_t u32(src *s)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v = v << 8 | byte(s);
	return v;
}

/* An int near the edges that matter more often than a random one. */
static int32_t i32(src *s)
{
	static const int32_t near[] = {0, 1, -1, 2, 3, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025,
	                               4096, 4097, 20000, 100000, INT32_MAX, INT32_MIN,
	                               INT32_MAX - 1, INT32_MIN + 1, 1 << 28, (1 << 28) + 1};
	unsigned b = byte(s);
	if (b < 2 * sizeof(near) / sizeof(near[0]))
		return near[b / 2];
	return b < 200 ? (int32_t)(b - 100) : (int32_t)u32(s);
}

static const char *const buses[] = {"", ":1.5", ":1.7", "org.a11y.other", "x", "bad bus",
                                    ":1.5.", "a..b", ":", "org.a11y.atspi.Registry"};

static void path_of(src *s, char *buf, size_t size)
{
	unsigned b = byte(s);
	if (b % 8 == 0)
		snprintf(buf, size, "/org/a11y/atspi/accessible/root");
	else if (b % 8 == 1)
		snprintf(buf, size, "/org/a11y/atspi/null");
	else
		snprintf(buf, size, "/org/a11y/atspi/accessible/%u", b / 8);
}

/* A reference (so). */
static bool put_ref(DBusMessageIter *it, src *s)
{
	DBusMessageIter st;
	char path[64];
	const char *bus = buses[byte(s) % (sizeof(buses) / sizeof(buses[0]))], *p = path;
	path_of(s, path, sizeof(path));
	return dbus_message_iter_open_container(it, DBUS_TYPE_STRUCT, NULL, &st) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &bus) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_OBJECT_PATH, &p) &&
	       dbus_message_iter_close_container(it, &st);
}

/* A string from the input: printable ASCII, so always valid UTF-8. */
static bool put_str(DBusMessageIter *it, src *s)
{
	char buf[300];
	unsigned n = byte(s);
	if (n == 255)
		n = sizeof(buf) - 1; /* long: longer than the texts asked */
	for (unsigned i = 0; i < n; i++)
		buf[i] = (char)(' ' + byte(s) % 95);
	buf[n] = '\0';
	const char *p = buf;
	return dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &p);
}

static bool put_i32(DBusMessageIter *it, int32_t v)
{
	return dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &v);
}

static bool put_u32(DBusMessageIter *it, uint32_t v)
{
	return dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &v);
}

/* ---- values of any shape ------------------------------------------ */

static const char *const shapes[] = {
	"s", "i", "u", "d", "b", "y", "n", "q", "x", "t", "o", "g", "v", "(so)", "a(so)",
	"au", "ai", "as", "(iiii)", "(ii)", "(iii)", "a{sv}", "(so)(so)", "ay", "a(iiii)",
	"((so)(so)(so)iiassusau)", "a((so)(so)(so)iiassusau)", "a((so)(so)(so)a(so)assusau)",
	"a((so)(so)(so)iiassus)", "(sa(so))", "av",
};
#define SHAPES (sizeof(shapes) / sizeof(shapes[0]))

static bool fill(DBusMessageIter *it, DBusSignatureIter *si, src *s, int depth);

static bool fill_basic(DBusMessageIter *it, int type, src *s)
{
	char path[64];
	const char *p = path;
	switch (type) {
	case DBUS_TYPE_STRING:
		return put_str(it, s);
	case DBUS_TYPE_OBJECT_PATH:
		path_of(s, path, sizeof(path));
		return dbus_message_iter_append_basic(it, type, &p);
	case DBUS_TYPE_SIGNATURE:
		p = shapes[byte(s) % SHAPES];
		return dbus_message_iter_append_basic(it, type, &p);
	case DBUS_TYPE_BOOLEAN: {
		dbus_bool_t b = byte(s) & 1;
		return dbus_message_iter_append_basic(it, type, &b);
	}
	case DBUS_TYPE_DOUBLE: {
		static const double ds[] = {0, -1, 1e300, -1e300, 0.5, __builtin_nan(""),
		                            __builtin_inf()};
		double d = ds[byte(s) % (sizeof(ds) / sizeof(ds[0]))];
		return dbus_message_iter_append_basic(it, type, &d);
	}
	default: {
		/* Integers of every width take the 8 bytes of a uint64 (little
		 * endian here: the narrow ones read its low bytes). */
		uint64_t v = (uint64_t)(int64_t)i32(s);
		return dbus_message_iter_append_basic(it, type, &v);
	}
	}
}

static bool fill_container(DBusMessageIter *it, DBusSignatureIter *si, src *s, int depth)
{
	int type = dbus_signature_iter_get_current_type(si);
	DBusSignatureIter sub;
	DBusMessageIter c;
	char *esig = NULL;
	const char *inner = NULL;
	bool ok;
	if (type == DBUS_TYPE_VARIANT) {
		inner = depth < 3 ? shapes[byte(s) % SHAPES] : "i";
	} else if (type == DBUS_TYPE_ARRAY) {
		dbus_signature_iter_recurse(si, &sub);
		inner = esig = dbus_signature_iter_get_signature(&sub);
		if (esig == NULL)
			return false;
	}
	ok = dbus_message_iter_open_container(it, type, inner, &c);
	if (ok && type == DBUS_TYPE_ARRAY) {
		unsigned n = depth < 3 ? byte(s) % 8 : 0;
		for (unsigned i = 0; ok && i < n; i++) {
			dbus_signature_iter_recurse(si, &sub);
			ok = fill(&c, &sub, s, depth + 1);
		}
	} else if (ok && type == DBUS_TYPE_VARIANT) {
		dbus_signature_iter_init(&sub, inner);
		ok = fill(&c, &sub, s, depth + 1);
	} else if (ok) { /* a struct or a dict entry: each member */
		dbus_signature_iter_recurse(si, &sub);
		do
			ok = fill(&c, &sub, s, depth + 1);
		while (ok && dbus_signature_iter_next(&sub));
	}
	ok = dbus_message_iter_close_container(it, &c) && ok;
	dbus_free(esig);
	return ok;
}

/* One complete value of the type at si. */
static bool fill(DBusMessageIter *it, DBusSignatureIter *si, src *s, int depth)
{
	int type = dbus_signature_iter_get_current_type(si);
	if (dbus_type_is_basic(type))
		return fill_basic(it, type, s);
	return fill_container(it, si, s, depth);
}

static bool put_any(DBusMessage *r, src *s)
{
	DBusMessageIter it;
	DBusSignatureIter si;
	dbus_message_iter_init_append(r, &it);
	dbus_signature_iter_init(&si, shapes[byte(s) % SHAPES]);
	bool ok = true;
	do
		ok = fill(&it, &si, s, 0);
	while (ok && dbus_signature_iter_next(&si));
	return ok;
}

/* ---- the shapes the calls expect ----------------------------------- */

/* A cache item (so)(so)(so)iiassusau; `big`: item i of a made-up tree. */
static bool put_item(DBusMessageIter *a, src *s, int i, unsigned big)
{
	DBusMessageIter st, as, au;
	char me[64], up[64];
	const char *bus = ":1.5", *pm = me, *pu = up, *name = "item", *desc = "";
	const char *ifaces[] = {"org.a11y.atspi.Accessible", "org.a11y.atspi.Component",
	                        "org.a11y.atspi.Text", "org.a11y.atspi.Value"};
	int32_t index, count;
	uint32_t role, states[2];
	unsigned nif;
	if (big) { /* a tree of fan-out `big` under the root, every node showing */
		int parent = i ? (i - 1) / (int)big : -1;
		snprintf(me, sizeof(me), i ? "/org/a11y/atspi/accessible/%d" :
		         "/org/a11y/atspi/accessible/root", i);
		snprintf(up, sizeof(up), parent > 0 ? "/org/a11y/atspi/accessible/%d" :
		         parent == 0 ? "/org/a11y/atspi/accessible/root" : "/org/a11y/atspi/null",
		         parent);
		index = (i - 1) % (int)big;
		count = (int32_t)big;
		role = (uint32_t)(i % 120);
		states[0] = 1u << 25 | 1u << 30;
		states[1] = 0;
		nif = 2 + (unsigned)i % 3;
	} else {
		bus = buses[byte(s) % (sizeof(buses) / sizeof(buses[0]))];
		path_of(s, me, sizeof(me));
		path_of(s, up, sizeof(up));
		index = i32(s);
		count = i32(s);
		role = byte(s);
		states[0] = u32(s);
		states[1] = u32(s);
		nif = byte(s) % 5;
	}
	bool ok = dbus_message_iter_open_container(a, DBUS_TYPE_STRUCT, NULL, &st);
	DBusMessageIter ref;
	const char *refs[][2] = {{bus, pm}, {bus, "/org/a11y/atspi/accessible/root"}, {bus, pu}};
	for (int r = 0; ok && r < 3; r++) {
		ok = dbus_message_iter_open_container(&st, DBUS_TYPE_STRUCT, NULL, &ref) &&
		     dbus_message_iter_append_basic(&ref, DBUS_TYPE_STRING, &refs[r][0]) &&
		     dbus_message_iter_append_basic(&ref, DBUS_TYPE_OBJECT_PATH, &refs[r][1]) &&
		     dbus_message_iter_close_container(&st, &ref);
	}
	ok = ok && put_i32(&st, index) && put_i32(&st, count) &&
	     dbus_message_iter_open_container(&st, DBUS_TYPE_ARRAY, "s", &as);
	for (unsigned k = 0; ok && k < nif; k++)
		ok = dbus_message_iter_append_basic(&as, DBUS_TYPE_STRING, &ifaces[k]);
	ok = ok && dbus_message_iter_close_container(&st, &as) &&
	     (big ? dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) : put_str(&st, s)) &&
	     put_u32(&st, role) && dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &desc) &&
	     dbus_message_iter_open_container(&st, DBUS_TYPE_ARRAY, "u", &au) &&
	     put_u32(&au, states[0]) && put_u32(&au, states[1]) &&
	     dbus_message_iter_close_container(&st, &au);
	return dbus_message_iter_close_container(a, &st) && ok;
}

static bool put_items(DBusMessageIter *it, src *s)
{
	DBusMessageIter a;
	unsigned b = byte(s), n = b % 64, big = 0;
	/* Past the read's cap of 20,000 (rarely: a second each under ASan). */
	if (b == 255 && byte(s) == 255) {
		big = 1 + byte(s) % 70;
		n = 20000 + byte(s);
	}
	bool ok = dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY,
	                                           "((so)(so)(so)iiassusau)", &a);
	for (unsigned i = 0; ok && i < n && (big || more(s)); i++)
		ok = put_item(&a, s, (int)i, big);
	return dbus_message_iter_close_container(it, &a) && ok;
}

static bool put_refs(DBusMessageIter *it, src *s)
{
	DBusMessageIter a;
	unsigned n = byte(s);
	n = n == 255 ? 5000 : n;
	bool ok = dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "(so)", &a);
	for (unsigned i = 0; ok && i < n && more(s); i++)
		ok = put_ref(&a, s);
	return dbus_message_iter_close_container(it, &a) && ok;
}

static bool put_states(DBusMessageIter *it, src *s)
{
	DBusMessageIter a;
	unsigned n = byte(s) % 4;
	bool ok = dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "u", &a);
	for (unsigned i = 0; ok && i < n; i++)
		ok = put_u32(&a, i == 0 ? (1u << 25 | 1u << 30) ^ u32(s) : u32(s));
	return dbus_message_iter_close_container(it, &a) && ok;
}

static bool put_box(DBusMessageIter *it, src *s)
{
	DBusMessageIter st;
	bool ok = dbus_message_iter_open_container(it, DBUS_TYPE_STRUCT, NULL, &st);
	for (int i = 0; ok && i < 4; i++)
		ok = put_i32(&st, i32(s));
	return dbus_message_iter_close_container(it, &st) && ok;
}

/* A property's value in its variant. */
static bool put_prop(DBusMessageIter *it, const char *prop, src *s)
{
	DBusMessageIter v;
	const char *sig = strcmp(prop, "Name") == 0 ? "s" : strcmp(prop, "Parent") == 0 ? "(so)"
	                : strcmp(prop, "CurrentValue") == 0 ? "d" : "i";
	bool ok = dbus_message_iter_open_container(it, DBUS_TYPE_VARIANT, sig, &v);
	if (ok && sig[0] == 's')
		ok = put_str(&v, s);
	else if (ok && sig[0] == '(')
		ok = put_ref(&v, s);
	else if (ok && sig[0] == 'd')
		ok = fill_basic(&v, DBUS_TYPE_DOUBLE, s);
	else if (ok)
		ok = put_i32(&v, i32(s));
	return dbus_message_iter_close_container(it, &v) && ok;
}

static bool put_expected(DBusMessage *call, DBusMessage *r, src *s)
{
	const char *m = dbus_message_get_member(call), *iface = "", *prop = "";
	DBusMessageIter it;
	dbus_message_iter_init_append(r, &it);
	if (strcmp(m, "GetItems") == 0)
		return put_items(&it, s);
	if (strcmp(m, "GetChildren") == 0)
		return put_refs(&it, s);
	if (strcmp(m, "GetState") == 0)
		return put_states(&it, s);
	if (strcmp(m, "GetExtents") == 0)
		return put_box(&it, s);
	if (strcmp(m, "GetAccessibleAtPoint") == 0 || strcmp(m, "GetChildAtIndex") == 0)
		return put_ref(&it, s);
	if (strcmp(m, "GetText") == 0)
		return put_str(&it, s);
	if (strcmp(m, "GetRole") == 0)
		return put_u32(&it, byte(s) < 200 ? byte(s) : u32(s));
	if (strcmp(m, "Get") == 0 &&
	    dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop,
	                          DBUS_TYPE_INVALID))
		return put_prop(&it, prop, s);
	return put_i32(&it, i32(s)); /* GetIndexInParent */
}

static DBusMessage *demarshal(src *s)
{
	size_t n = byte(s) * 4u;
	if (n == 255 * 4) { /* a big one (a real cache): 3 more bytes, big endian */
		n = (size_t)byte(s) << 16;
		n |= (size_t)byte(s) << 8;
		n |= byte(s);
	}
	n = n < s->size - s->pos ? n : s->size - s->pos;
	DBusMessage *r = dbus_message_demarshal((const char *)s->data + s->pos, (int)n, NULL);
	s->pos += n;
	return r;
}

static DBusMessage *respond(void *ctx, DBusMessage *call)
{
	src *s = ctx;
	if (!more(s))
		return NULL; /* the input ran out: every call after fails */
	unsigned form = byte(s) % 8;
	if (form == 0)
		return NULL;
	if (form == 1)
		return dbus_message_new_error(call, DBUS_ERROR_FAILED, "no");
	if (form == 2)
		return demarshal(s);
	DBusMessage *r = dbus_message_new_method_return(call);
	if (r == NULL)
		return NULL;
	bool ok = form == 3 ? put_any(r, s) : put_expected(call, r, s);
	if (!ok) {
		dbus_message_unref(r);
		r = NULL;
	}
	return r;
}

/* ---- the walk ------------------------------------------------------ */

#define WALK_NODES 200
#define LIST_MAX 64 /* vision/a11y.c's VISION_A11Y_BIG */

static void check_node(a11y_wire *w, int n, src *s)
{
	fuzz_check(a11y_wire_name(w, n) != NULL, "node %d has a NULL name", n);
	for (int st = 0; st < 70; st++)
		(void)a11y_wire_has(w, n, (AtspiStateType)st);
	(void)a11y_wire_role(w, n);
	int count = a11y_wire_child_count(w, n);
	fuzz_check(count >= 0, "node %d counts %d children", n, count);
	os_rect box;
	if (a11y_wire_box(w, n, &box)) {
		int lim = 1 << 28;
		fuzz_check(box.width > 0 && box.height > 0 && box.width <= lim && box.height <= lim &&
		           box.x >= -lim && box.x <= lim && box.y >= -lim && box.y <= lim,
		           "box %d,%d %dx%d", box.x, box.y, box.width, box.height);
	}
	(void)a11y_wire_has_component(w, n);
	unsigned op = byte(s);
	if (op & 1) {
		int max = op & 2 ? 100 : 0;
		char *t = a11y_wire_short_text(w, n, max);
		if (t != NULL) {
			int chars = 0;
			for (const char *c = t; *c; c++)
				chars += ((unsigned char)*c & 0xc0) != 0x80;
			/* (or a value: "%g" makes at most 13 characters) */
			fuzz_check(chars <= max || chars <= 13, "text of %d characters asked %d",
			           chars, max);
			free(t);
		}
	}
	if (op & 4) {
		int xs[8], ys[8], idx[8], k = (int)(op >> 3) % 9;
		for (int j = 0; j < k; j++)
			xs[j] = ys[j] = j * 10;
		a11y_wire_hits(w, n, xs, ys, k, idx);
		for (int j = 0; j < k; j++)
			fuzz_check(idx[j] >= -1 && idx[j] < count, "hit index %d of %d", idx[j], count);
	}
}

/* Breadth first, children asked as vision/a11y.c does: ahead in waves. */
static void walk(a11y_wire *w, src *s)
{
	int queue[WALK_NODES], head = 0, tail = 0;
	queue[tail++] = a11y_wire_root(w);
	while (head < tail) {
		int n = queue[head++];
		a11y_wire_props(w, &n, 1);
		a11y_wire_want_children(w, n, LIST_MAX);
		check_node(w, n, s);
		int count = a11y_wire_child_count(w, n);
		int from = count > LIST_MAX ? (int)(byte(s) % 4) * 1000 : 0;
		int to = from + 16, kids[16], k = 0;
		a11y_wire_children(w, n, from, to, LIST_MAX);
		for (int i = from - 1; i <= to; i++) { /* and one outside at each end */
			int kid = a11y_wire_child(w, n, i, LIST_MAX);
			fuzz_check(kid >= -1, "child %d of %d is %d", i, n, kid);
			fuzz_check(kid < 0 || (i >= 0 && i < count), "child %d of %d children", i, count);
			if (kid >= 0 && k < 16)
				kids[k++] = kid; /* duplicates too: a node may be listed twice */
		}
		a11y_wire_props(w, kids, k);
		for (int j = 0; j < k; j++) {
			a11y_wire_want_box(w, kids[j]);
			if (tail < WALK_NODES)
				queue[tail++] = kids[j];
		}
	}
	(void)a11y_wire_calls(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	src s = {data, size, 0};
	bool cache = byte(&s) & 1;
	a11y_wire *w = a11y_wire_new_detached(":1.5", respond, &s, cache);
	fuzz_check(w != NULL, "a detached read of :1.5 failed");
	walk(w, &s);
	a11y_wire_destroy(w);
	/* A read of a bus name that is not one is refused, not sent. */
	fuzz_check(a11y_wire_new_detached("bad bus", respond, &s, false) == NULL,
	           "a read of \"bad bus\"");
	return 0;
}

#else

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0; /* built without AT-SPI: nothing to read */
}

#endif
