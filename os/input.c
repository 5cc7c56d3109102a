/*
 * os/input — synthetic mouse and keyboard through XTest: pointer motion,
 * buttons, drags and wheel clicks; key combinations pressed in order and
 * released in reverse; the shared pieces of keyboard input (input state on
 * the display, keymap snapshots, temporary spare-keycode bindings and their
 * undoing, the signal guard). Unicode text typing lives in type.c.
 */
#include <X11/Xlib.h>
#include <X11/XKBlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/input-internal.h"

/* ---- time and signals -------------------------------------------------- */

static volatile sig_atomic_t signal_caught;
static const int guarded_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void on_guarded_signal(int sig)
{
	if (signal_caught == 0)
		signal_caught = sig;
}

void os_input_signals_begin(struct os_signal_guard *g)
{
	signal_caught = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guarded_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a sleep between keystrokes must end at once. */
	for (int i = 0; i < 3; i++) {
		sigaction(guarded_signals[i], NULL, &g->old[i]);
		/* Ignored when we were started (nohup: SIGHUP) stays ignored: the
		 * caller asked to outlive it, and re-raising it could not end us. */
		if (g->old[i].sa_handler != SIG_IGN)
			sigaction(guarded_signals[i], &sa, NULL);
	}
}

int os_input_signal_caught(void)
{
	return signal_caught;
}

void os_input_signals_end(struct os_signal_guard *g)
{
	for (int i = 0; i < 3; i++)
		sigaction(guarded_signals[i], &g->old[i], NULL);
	int sig = signal_caught;
	signal_caught = 0;
	if (sig != 0)
		raise(sig);
}

/* Returns early only when `interruptible` and a guarded signal arrived. */
static void sleep_until(int64_t until, bool interruptible)
{
	base_sleep_until(until, interruptible ? &signal_caught : NULL);
}

void os_input_sleep_ms(int ms)
{
	sleep_until(base_now_ns() + ms * BASE_NS_PER_MS, true);
}

/* ---- state, keymap, bindings ------------------------------------------- */

static void input_cleanup(os_display *d)
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

struct os_input_state *os_input_state(os_display *d)
{
	if (d->input != NULL)
		return d->input;
	if (os_display_dead(d))
		return NULL;
	int ev, err, major, minor;
	if (!XTestQueryExtension(d->dpy, &ev, &err, &major, &minor)) {
		os_fail("the X server %s has no XTEST extension: cannot send input",
		        d->name);
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

bool os_input_keymap(os_display *d, os_keymap *km)
{
	int min, max, per = 0;
	XDisplayKeycodes(d->dpy, &min, &max);
	KeySym *ks = XGetKeyboardMapping(d->dpy, (KeyCode)min, max - min + 1, &per);
	if (ks == NULL || per <= 0) {
		if (ks != NULL)
			XFree(ks);
		return os_fail("cannot read the keyboard mapping of %s", d->name);
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

void os_input_bind(os_display *d, uint8_t code, const uint32_t syms[2])
{
	struct os_input_state *st = d->input;
	st->bound[code] = true;
	st->pending[code] = true;
	st->cur[code][0] = syms[0];
	st->cur[code][1] = syms[1];
}

void os_input_mark_spare(os_display *d, const uint8_t *spare, int n)
{
	for (int i = 0; i < n; i++)
		d->input->spare[spare[i]] = true;
}

/* Writes keycodes [lo, hi] from st->cur in one mapping change. */
static void write_run(os_display *d, int lo, int hi)
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
static void write_runs(os_display *d, const bool *want)
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
static XkbDescPtr xkb_map(os_display *d)
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
static bool xkb_write(os_display *d, const bool *want, bool bound)
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

void os_input_bind_flush(os_display *d)
{
	struct os_input_state *st = d->input;
	if (!xkb_write(d, st->pending, true))
		write_runs(d, st->pending);
	memset(st->pending, 0, sizeof(st->pending));
}

void os_input_find_peer(os_display *d)
{
	struct os_input_state *st = d->input;
	st->have_peer = os_peer_find(d, &st->peer);
}

void os_input_used(os_display *d, uint8_t code, int column)
{
	struct os_input_state *st = d->input;
	st->use_epoch[code][column] = st->epoch + 1;
}

void os_input_epoch_end(os_display *d)
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
static bool peer_wait_idle(os_display *d)
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
		sleep_until(now + BASE_NS_PER_MS, false);
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

void os_input_settle(os_display *d, const uint8_t *codes, const uint8_t *cols,
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
	sleep_until(last + type_guard_ms() * BASE_NS_PER_MS, false);
}

void os_input_drain(os_display *d)
{
	struct os_input_state *st = d->input;
	XSync(d->dpy, False);
	if (st->have_peer && peer_wait_idle(d))
		st->handled = st->epoch;
}

bool os_input_restore(os_display *d)
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

/* ---- mouse ------------------------------------------------------------- */

static bool mouse_ready(os_display *d)
{
	return os_input_state(d) != NULL;
}

static bool valid_button(os_button b)
{
	if (b != OS_BUTTON_LEFT && b != OS_BUTTON_MIDDLE && b != OS_BUTTON_RIGHT &&
	    b != OS_BUTTON_BACK && b != OS_BUTTON_FORWARD)
		return os_fail("unknown mouse button %d", (int)b);
	return true;
}

/* Syncs so that the events have reached the server before returning. */
static bool input_sync(os_display *d)
{
	if (os_display_dead(d))
		return false;
	XSync(d->dpy, False);
	return !os_display_dead(d);
}

bool os_mouse_move(os_display *d, int x, int y)
{
	if (!os_point_on_screen(d, x, y) || !mouse_ready(d))
		return false;
	XTestFakeMotionEvent(d->dpy, d->screen, x, y, CurrentTime);
	return input_sync(d);
}

bool os_mouse_click(os_display *d, os_button b, int count)
{
	if (!valid_button(b))
		return false;
	if (count < 1 || count > 10)
		return os_fail("click count %d is out of range (1..10)", count);
	if (!mouse_ready(d))
		return false;
	/*
	 * All pairs go out in one burst: the server stamps them within the same
	 * few milliseconds, well inside any toolkit's multi-click interval.
	 */
	for (int i = 0; i < count; i++) {
		XTestFakeButtonEvent(d->dpy, (unsigned)b, True, CurrentTime);
		XTestFakeButtonEvent(d->dpy, (unsigned)b, False, CurrentTime);
	}
	return input_sync(d);
}

bool os_mouse_button(os_display *d, os_button b, bool down)
{
	if (!valid_button(b) || !mouse_ready(d))
		return false;
	XTestFakeButtonEvent(d->dpy, (unsigned)b, down ? True : False, CurrentTime);
	return input_sync(d);
}

#define DRAG_STEPS 12
#define DRAG_STEP_MS 4

bool os_mouse_drag(os_display *d, int x1, int y1, int x2, int y2, os_button b)
{
	int xy[4] = {x1, y1, x2, y2};
	return os_mouse_drag_path(d, xy, 2, b);
}

/* Paced motion from (x0,y0) to (x1,y1); false once a signal came. */
static bool drag_segment(os_display *d, int x0, int y0, int x1, int y1)
{
	for (int i = 1; i <= DRAG_STEPS && os_input_signal_caught() == 0; i++) {
		os_input_sleep_ms(DRAG_STEP_MS);
		int x = x0 + (int)((long)(x1 - x0) * i / DRAG_STEPS);
		int y = y0 + (int)((long)(y1 - y0) * i / DRAG_STEPS);
		XTestFakeMotionEvent(d->dpy, d->screen, x, y, CurrentTime);
		XFlush(d->dpy);
	}
	return os_input_signal_caught() == 0;
}

bool os_mouse_drag_path(os_display *d, const int *xy, int n, os_button b)
{
	if (n < 2 || n > 1024)
		return os_fail("a drag path needs 2 to 1024 points (got %d)", n);
	if (!valid_button(b))
		return false;
	for (int k = 0; k < n; k++)
		if (!os_point_on_screen(d, xy[2 * k], xy[2 * k + 1]))
			return false;
	if (!mouse_ready(d))
		return false;
	struct os_signal_guard g;
	os_input_signals_begin(&g);
	XTestFakeMotionEvent(d->dpy, d->screen, xy[0], xy[1], CurrentTime);
	XTestFakeButtonEvent(d->dpy, (unsigned)b, True, CurrentTime);
	XFlush(d->dpy);
	/*
	 * Toolkits start a drag after the pointer has moved a few pixels with
	 * the button held; several paced steps per segment also let them
	 * scroll or highlight on the way, as with a hand on the mouse.
	 */
	for (int k = 1; k < n; k++)
		if (!drag_segment(d, xy[2 * k - 2], xy[2 * k - 1], xy[2 * k], xy[2 * k + 1]))
			break;
	/* Released even when interrupted: a button is never left held. */
	XTestFakeButtonEvent(d->dpy, (unsigned)b, False, CurrentTime);
	bool ok = input_sync(d);
	int sig = os_input_signal_caught();
	os_input_signals_end(&g);
	if (ok && sig != 0)
		return os_fail("drag interrupted by signal %d", sig);
	return ok;
}

bool os_mouse_scroll(os_display *d, os_scroll dir, int amount)
{
	static const unsigned buttons[] = {
		[OS_SCROLL_UP] = 4, [OS_SCROLL_DOWN] = 5,
		[OS_SCROLL_LEFT] = 6, [OS_SCROLL_RIGHT] = 7,
	};
	if ((int)dir < 0 || (int)dir > OS_SCROLL_RIGHT)
		return os_fail("unknown scroll direction %d", (int)dir);
	if (amount < 1 || amount > 1000)
		return os_fail("scroll amount %d is out of range (1..1000)", amount);
	if (!mouse_ready(d))
		return false;
	for (int i = 0; i < amount; i++) {
		XTestFakeButtonEvent(d->dpy, buttons[dir], True, CurrentTime);
		XTestFakeButtonEvent(d->dpy, buttons[dir], False, CurrentTime);
	}
	return input_sync(d);
}

/* ---- key combinations -------------------------------------------------- */

/* One key to press: its keycode, and whether Shift must be held for it. */
struct combo_key {
	uint8_t code;
	bool shift;
};

/*
 * The keys for a combination, in press order, Shift inserted before a key
 * that sits in the shifted column (xdotool's "ctrl++" is ctrl+shift+equal)
 * unless Shift is already held. Keysyms missing from the keymap are bound to
 * spare keycodes when `allow_bind`; the caller restores them.
 */
static bool combo_keys(os_display *d, const os_combo *c, bool allow_bind,
                       uint8_t *press, int *npress)
{
	struct os_input_state *st = os_input_state(d);
	if (st == NULL)
		return false;
	if (c->count < 1 || c->count > OS_COMBO_MAX)
		return os_fail("empty key combination");
	os_keymap km;
	if (!os_input_keymap(d, &km))
		return false;
	uint8_t spare[256];
	int nspare = os_keymap_spare(&km, spare, 256);
	if (nspare > 256)
		nspare = 256;
	os_input_mark_spare(d, spare, nspare);
	int used_spare = 0;
	bool ok = false;
	bool shift_held = false;
	int n = 0;
	for (int i = 0; i < c->count; i++) {
		uint32_t ks = c->keysyms[i];
		bool shift = false;
		int code = os_keymap_find(&km, ks, &shift);
		if (code == 0) {
			if (!allow_bind) {
				os_fail("key 0x%x is not in the keymap; holding or releasing "
				        "it needs a key of the keymap", ks);
				goto out;
			}
			if (used_spare >= nspare) {
				os_fail("key 0x%x is not in the keymap and no unused keycode "
				        "is left to bind it to", ks);
				goto out;
			}
			code = spare[used_spare++];
			uint32_t syms[2] = {ks, ks};
			os_input_bind(d, (uint8_t)code, syms);
			shift = false;
		}
		if (shift && !shift_held) {
			if (st->shift_code == 0) {
				os_fail("the keymap has no Shift key for key 0x%x", ks);
				goto out;
			}
			press[n++] = (uint8_t)st->shift_code;
			shift_held = true;
		}
		if (ks == XK_Shift_L || ks == XK_Shift_R) {
			if (shift_held && code == st->shift_code)
				continue;   /* already down for an earlier key */
			shift_held = true;
		}
		press[n++] = (uint8_t)code;
	}
	*npress = n;
	ok = true;
out:
	if (used_spare > 0)
		os_input_bind_flush(d);
	free((void *)km.syms);
	if (used_spare > 0) {
		/* Bindings must be in place before the first press reaches a client. */
		XSync(d->dpy, False);
		os_input_find_peer(d);
	}
	return ok;
}

static void mark_used(os_display *d, const uint8_t *codes, int n)
{
	for (int i = 0; i < n; i++)
		if (d->input->bound[codes[i]]) {
			os_input_used(d, codes[i], 0);
			os_input_used(d, codes[i], 1);
		}
	os_input_epoch_end(d);
}

static void release_reverse(os_display *d, const uint8_t *press, int n)
{
	for (int i = n - 1; i >= 0; i--)
		XTestFakeKeyEvent(d->dpy, press[i], False, CurrentTime);
}

/* Shared by combo and hold: press all, wait hold_ms, release in reverse. */
static bool key_press_release(os_display *d, const os_combo *c, int hold_ms)
{
	uint8_t press[2 * OS_COMBO_MAX];
	int n = 0;
	struct os_signal_guard g;
	os_input_signals_begin(&g);
	bool ok = combo_keys(d, c, true, press, &n);
	if (ok) {
		for (int i = 0; i < n; i++)
			XTestFakeKeyEvent(d->dpy, press[i], True, CurrentTime);
		if (hold_ms > 0) {
			XFlush(d->dpy);
			os_input_sleep_ms(hold_ms);
		}
		release_reverse(d, press, n);
		ok = input_sync(d);
		mark_used(d, press, n);
	}
	bool restored = os_input_restore(d);
	int sig = os_input_signal_caught();
	os_input_signals_end(&g);
	if (ok && !restored)
		return false;
	if (ok && sig != 0)
		return os_fail("interrupted by signal %d", sig);
	return ok;
}

bool os_key_combo(os_display *d, const os_combo *c)
{
	return key_press_release(d, c, 0);
}

bool os_key_hold(os_display *d, const os_combo *c, int ms)
{
	if (ms < 0)
		return os_fail("hold time %d ms is negative", ms);
	return key_press_release(d, c, ms);
}

bool os_key_down(os_display *d, const os_combo *c)
{
	uint8_t press[2 * OS_COMBO_MAX];
	int n = 0;
	if (!combo_keys(d, c, false, press, &n))
		return false;
	for (int i = 0; i < n; i++)
		XTestFakeKeyEvent(d->dpy, press[i], True, CurrentTime);
	return input_sync(d);
}

bool os_key_up(os_display *d, const os_combo *c)
{
	uint8_t press[2 * OS_COMBO_MAX];
	int n = 0;
	if (!combo_keys(d, c, false, press, &n))
		return false;
	release_reverse(d, press, n);
	return input_sync(d);
}

/* ---- parsing ----------------------------------------------------------- */

bool os_key_parse(const char *text, os_combo *out)
{
	memset(out, 0, sizeof(*out));
	size_t len = strlen(text);
	if (len == 0)
		return os_fail("empty key combination");
	size_t i = 0;
	while (i < len) {
		size_t start = i, end;
		if (text[i] == '+') {
			end = i + 1;    /* a '+' where a name starts is the key itself */
		} else {
			end = i;
			while (end < len && text[end] != '+')
				end++;
		}
		char part[64];
		if (end - start >= sizeof(part))
			return os_fail("key name '%.*s...' in '%s' is too long", 20,
			               text + start, text);
		memcpy(part, text + start, end - start);
		part[end - start] = '\0';
		uint32_t ks = os_keysym_from_name(part);
		if (ks == 0)
			return os_fail("unknown key name '%s' in '%s'", part, text);
		if (out->count == OS_COMBO_MAX)
			return os_fail("too many keys in '%s' (at most %d)", text,
			               OS_COMBO_MAX);
		out->keysyms[out->count++] = ks;
		i = end;
		if (i == len)
			break;
		if (text[i] != '+')
			return os_fail("expected '+' after '%s' in '%s'", part, text);
		i++;
		if (i == len)
			return os_fail("'%s' ends with '+' but no key after it "
			               "(write ctrl++ or ctrl+plus for the plus key)", text);
	}
	return true;
}

