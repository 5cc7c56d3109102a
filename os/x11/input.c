/*
 * os/input — what synthetic input through XTest shares: the input state on
 * the display, keymap snapshots, temporary spare-keycode bindings and
 * their undoing once the client has read its keystrokes (the signal
 * guard is os/guard.c's). The mouse lives in mouse.c, key combinations in combo.c, Unicode
 * text typing in type.c.
 */
#include <X11/Xlib.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/x11/input-internal.h"

/* ---- state, keymap, bindings ------------------------------------------- */

static void input_cleanup(os_x11 *d)
{
	if (d->input == NULL)
		return;
	if (!os_display_dead(d))
		os_input_restore(d);
	os_peer_release(&d->input->peer);
	if (d->input->xkb != NULL)
		XkbFreeKeyboard(d->input->xkb, 0, True);
	free(d->input);
	d->input = NULL;
}

struct os_input_state *os_input_state(os_x11 *d)
{
	if (d->input != NULL)
		return d->input;
	if (os_display_dead(d))
		return NULL;
	int ev, err, major, minor;
	if (!XTestQueryExtension(d->dpy, &ev, &err, &major, &minor)) {
		os_fail("the X server %s has no XTEST extension: cannot send input",
		        d->base.name);
		return NULL;
	}
	struct os_input_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	XModifierKeymap *mm = XGetModifierMapping(d->dpy);
	if (mm != NULL) {
		for (int i = 0; i < mm->max_keypermod; i++) {
			KeyCode kc = mm->modifiermap[ShiftMapIndex * mm->max_keypermod + i];
			if (kc != 0) {
				st->shift_code = kc;
				break;
			}
		}
		XFreeModifiermap(mm);
	}
	st->peer.diag_fd = -1;
	d->input = st;
	d->input_cleanup = input_cleanup;
	return st;
}

bool os_input_keymap(os_x11 *d, os_keymap *km)
{
	int min, max, per = 0;
	XDisplayKeycodes(d->dpy, &min, &max);
	KeySym *ks = XGetKeyboardMapping(d->dpy, (KeyCode)min, max - min + 1, &per);
	if (ks == NULL || per <= 0) {
		if (ks != NULL)
			XFree(ks);
		return os_fail("cannot read the keyboard mapping of %s", d->base.name);
	}
	size_t n = (size_t)(max - min + 1) * (size_t)per;
	uint32_t *syms = malloc(n * sizeof(*syms));
	if (syms == NULL) {
		XFree(ks);
		return os_fail("out of memory");
	}
	for (size_t i = 0; i < n; i++)
		syms[i] = (uint32_t)ks[i];
	XFree(ks);
	km->min_code = min;
	km->max_code = max;
	km->per_code = per;
	km->syms = syms;
	return true;
}

void os_input_bind(os_x11 *d, uint8_t code, const uint32_t syms[2])
{
	struct os_input_state *st = d->input;
	st->bound[code] = true;
	st->pending[code] = true;
	st->cur[code][0] = syms[0];
	st->cur[code][1] = syms[1];
}

void os_input_mark_spare(os_x11 *d, const uint8_t *spare, int n)
{
	for (int i = 0; i < n; i++)
		d->input->spare[spare[i]] = true;
}

/* Writes keycodes [lo, hi] from st->cur in one mapping change. */
static void write_run(os_x11 *d, int lo, int hi)
{
	struct os_input_state *st = d->input;
	KeySym ks[256 * 2];
	for (int c = lo; c <= hi; c++) {
		ks[(c - lo) * 2] = st->cur[c][0];
		ks[(c - lo) * 2 + 1] = st->cur[c][1];
	}
	XChangeKeyboardMapping(d->dpy, lo, 2, ks, hi - lo + 1);
}

/* Writes the keycodes marked in want[] in runs (see os_input_bind_flush). */
static void write_runs(os_x11 *d, const bool *want)
{
	struct os_input_state *st = d->input;
	int lo = -1, hi = -1;
	for (int c = 0; c < 256; c++) {
		if (!want[c])
			continue;
		bool joins = lo >= 0;
		for (int g = hi + 1; joins && g < c; g++)
			joins = st->spare[g] || st->bound[g];
		if (!joins) {
			if (lo >= 0)
				write_run(d, lo, hi);
			lo = c;
		}
		hi = c;
	}
	if (lo >= 0)
		write_run(d, lo, hi);
}

/* The XKB map for this typing call, fetched on first use; NULL without. */
static XkbDescPtr xkb_map(os_x11 *d)
{
	struct os_input_state *st = d->input;
	if (st->xkb != NULL || st->xkb_failed)
		return st->xkb;
	st->xkb = XkbGetMap(d->dpy, XkbKeyTypesMask | XkbKeySymsMask,
	                    XkbUseCoreKbd);
	st->xkb_failed = st->xkb == NULL || st->xkb->map == NULL ||
	                 st->xkb->map->num_types <= XkbTwoLevelIndex;
	if (st->xkb_failed)
		return NULL;
	for (int c = st->xkb->min_key_code; c <= st->xkb->max_key_code; c++) {
		const XkbSymMapRec *m = &st->xkb->map->key_sym_map[c];
		memcpy(st->orig[c].kt_index, m->kt_index, 4);
		st->orig[c].group_info = m->group_info;
		st->orig[c].width = m->width;
	}
	return st->xkb;
}

static void xkb_forget(struct os_input_state *st)
{
	if (st->xkb != NULL)
		XkbFreeKeyboard(st->xkb, 0, True);
	st->xkb = NULL;
	st->xkb_failed = false;
}

/*
 * Sets `code` in the local map: its two columns (a two-level key, one
 * group) when bound, else its original entry with NoSymbol everywhere (a
 * spare key's). The syms are resized first: that reads the old entry.
 */
static bool xkb_set_key(struct os_input_state *st, XkbDescPtr xkb, int code,
                        bool bound)
{
	const struct os_input_orig *o = &st->orig[code];
	int groups = bound ? 1 : XkbNumGroups(o->group_info);
	int n = bound ? 2 : groups * o->width;
	KeySym *syms = NULL;
	if (n > 0 && (syms = XkbResizeKeySyms(xkb, code, n)) == NULL)
		return false;
	XkbSymMapRec *m = &xkb->map->key_sym_map[code];
	if (bound) {
		m->kt_index[0] = XkbTwoLevelIndex;
		m->group_info = (unsigned char)XkbSetGroupInfo(1, XkbWrapIntoRange, 0);
		m->width = 2;
	} else {
		memcpy(m->kt_index, o->kt_index, 4);
		m->group_info = o->group_info;
		m->width = o->width;
	}
	for (int i = 0; i < n; i++)
		syms[i] = bound ? st->cur[code][i] : NoSymbol;
	return true;
}

/* Writes the keycodes in want[] (bound, or back to empty) in one XKB map
 * change; false when XKB cannot (nothing was sent). */
static bool xkb_write(os_x11 *d, const bool *want, bool bound)
{
	struct os_input_state *st = d->input;
	XkbDescPtr xkb = xkb_map(d);
	if (xkb == NULL)
		return false;
	int lo = -1, hi = -1;
	for (int c = xkb->min_key_code; c <= xkb->max_key_code; c++) {
		if (!want[c])
			continue;
		if (!xkb_set_key(st, xkb, c, bound)) {
			xkb_forget(st);
			st->xkb_failed = true;
			return false;
		}
		lo = lo < 0 ? c : lo;
		hi = c;
	}
	if (lo < 0)
		return true;
	XkbMapChangesRec ch;
	memset(&ch, 0, sizeof(ch));
	ch.changed = XkbKeySymsMask;
	ch.first_key_sym = (KeyCode)lo;
	ch.num_key_syms = (unsigned char)(hi - lo + 1);
	return XkbChangeMap(d->dpy, xkb, &ch);
}

void os_input_bind_flush(os_x11 *d)
{
	struct os_input_state *st = d->input;
	if (!xkb_write(d, st->pending, true))
		write_runs(d, st->pending);
	memset(st->pending, 0, sizeof(st->pending));
}

void os_input_find_peer(os_x11 *d)
{
	struct os_input_state *st = d->input;
	st->have_peer = os_peer_find(d, &st->peer);
}

void os_input_used(os_x11 *d, uint8_t code, int column)
{
	struct os_input_state *st = d->input;
	st->use_epoch[code][column] = st->epoch + 1;
}

void os_input_epoch_end(os_x11 *d)
{
	struct os_input_state *st = d->input;
	st->epoch++;
	int64_t now = base_now_ns();
	for (int c = 0; c < 256; c++)
		for (int col = 0; col < 2; col++)
			if (st->use_epoch[c][col] == st->epoch)
				st->use_time[c][col] = now;
}

/* Syncs and polls the peer until proven idle; false when unobservable. */
static bool peer_wait_idle(os_x11 *d)
{
	struct os_input_state *st = d->input;
	/*
	 * Two round trips: after the first reply the server may still be
	 * flushing the events to the client's socket in the same pass; the
	 * second request is handled only once that pass is over.
	 */
	XSync(d->dpy, False);
	XSync(d->dpy, False);
	int64_t now = base_now_ns();
	int64_t deadline = now + OS_PEER_WAIT_MS * BASE_NS_PER_MS;
	int64_t quiet_since = 0;
	bool quiet = false;
	unsigned long long quiet_switches = 0;
	for (;;) {
		unsigned long long sw;
		int idle = os_peer_idle(&st->peer, &sw);
		now = base_now_ns();
		if (idle < 0)
			return false;
		if (idle == 0 || !quiet || sw != quiet_switches) {
			quiet = idle > 0;
			quiet_since = now;
			quiet_switches = sw;
		} else if (now >= quiet_since + OS_PEER_QUIET_MS * BASE_NS_PER_MS) {
			return true;
		}
		if (now >= deadline)
			return true;    /* a client that never rests: bounded, go on */
		/* Keep the server dispatching: its pass flushes the client's output. */
		XSync(d->dpy, False);
		base_sleep_until(now + BASE_NS_PER_MS, NULL);
	}
}

/* The guard (OS_TYPE_GUARD_MS), or DESKHAND_TYPE_GUARD_MS (0-60000) for a
 * far side slower than a loaded desktop: a display forwarded over a slow
 * link, or a test machine under heavy load. */
static long type_guard_ms(void)
{
	static long guard = -1;
	if (guard < 0) {
		const char *v = getenv("DESKHAND_TYPE_GUARD_MS");
		char *end = NULL;
		long n = v != NULL ? strtol(v, &end, 10) : -1;
		guard = v != NULL && *v != '\0' && *end == '\0' && n >= 0 && n <= 60000
		        ? n : OS_TYPE_GUARD_MS;
	}
	return guard;
}

void os_input_settle(os_x11 *d, const uint8_t *codes, const uint8_t *cols,
                     int n)
{
	struct os_input_state *st = d->input;
	unsigned long need = 0;
	int64_t last = 0;
	for (int i = 0; i < n; i++) {
		for (int col = 0; col < 2; col++) {
			if (!(cols[i] & (1 << col)))
				continue;
			unsigned long e = st->use_epoch[codes[i]][col];
			if (e > need)
				need = e;
			if (last < st->use_time[codes[i]][col])
				last = st->use_time[codes[i]][col];
		}
	}
	if (need <= st->handled)
		return;
	unsigned long upto = st->epoch;
	if (st->have_peer && peer_wait_idle(d)) {
		st->handled = upto;
		return;
	}
	st->have_peer = false;
	base_sleep_until(last + type_guard_ms() * BASE_NS_PER_MS, NULL);
}

void os_input_drain(os_x11 *d)
{
	struct os_input_state *st = d->input;
	XSync(d->dpy, False);
	if (st->have_peer && peer_wait_idle(d))
		st->handled = st->epoch;
}

bool os_input_restore(os_x11 *d)
{
	struct os_input_state *st = d->input;
	if (st == NULL)
		return true;
	uint8_t codes[256], cols[256];
	int n = 0;
	for (int c = 0; c < 256; c++) {
		if (st->bound[c]) {
			codes[n] = (uint8_t)c;
			cols[n++] = 3;
		}
	}
	if (n == 0)
		return true;
	os_input_settle(d, codes, cols, n);
	os_trace("settled");
	os_x_trap_begin(d);
	bool want[256];
	memcpy(want, st->bound, sizeof(want));
	memset(st->cur, 0, sizeof(st->cur));  /* NoSymbol, as in the user's map */
	if (!xkb_write(d, want, false))
		write_runs(d, want);
	xkb_forget(st);
	memset(st->bound, 0, sizeof(st->bound));
	memset(st->pending, 0, sizeof(st->pending));
	return os_x_trap_end(d, "restoring the keymap") == 0;
}

bool os_input_sync(os_x11 *d)
{
	if (os_display_dead(d))
		return false;
	XSync(d->dpy, False);
	return !os_display_dead(d);
}

int os_input_spares(os_x11 *d, const os_keymap *km, uint8_t spare[256])
{
	int n = os_keymap_spare(km, spare, 256);
	if (n > 256)
		n = 256;
	os_input_mark_spare(d, spare, n);
	return n;
}
