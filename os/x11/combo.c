/*
 * os/combo — key combinations through XTest ("ctrl+shift+t"): parsed into
 * keysyms, pressed in order with Shift added where a key needs it, held,
 * released in reverse; keysyms missing from the keymap are bound to spare
 * keycodes for the moment and the keymap restored after.
 */
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>
#include <stdlib.h>
#include <string.h>

#include "os/x11/input-internal.h"

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
static bool combo_keys(os_x11 *d, const os_combo *c, bool allow_bind,
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
	int nspare = os_input_spares(d, &km, spare);
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

static void mark_used(os_x11 *d, const uint8_t *codes, int n)
{
	for (int i = 0; i < n; i++)
		if (d->input->bound[codes[i]]) {
			os_input_used(d, codes[i], 0);
			os_input_used(d, codes[i], 1);
		}
	os_input_epoch_end(d);
}

static void release_reverse(os_x11 *d, const uint8_t *press, int n)
{
	for (int i = n - 1; i >= 0; i--)
		XTestFakeKeyEvent(d->dpy, press[i], False, CurrentTime);
}

/* Shared by combo and hold: press all, wait hold_ms, release in reverse. */
static bool key_press_release(os_x11 *d, const os_combo *c, int hold_ms)
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
		ok = os_input_sync(d);
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

bool os_x11_key_combo(os_x11 *d, const os_combo *c)
{
	return key_press_release(d, c, 0);
}

bool os_x11_key_hold(os_x11 *d, const os_combo *c, int ms)
{
	if (ms < 0)
		return os_fail("hold time %d ms is negative", ms);
	return key_press_release(d, c, ms);
}

bool os_x11_key_down(os_x11 *d, const os_combo *c)
{
	uint8_t press[2 * OS_COMBO_MAX];
	int n = 0;
	if (!combo_keys(d, c, false, press, &n))
		return false;
	for (int i = 0; i < n; i++)
		XTestFakeKeyEvent(d->dpy, press[i], True, CurrentTime);
	return os_input_sync(d);
}

bool os_x11_key_up(os_x11 *d, const os_combo *c)
{
	uint8_t press[2 * OS_COMBO_MAX];
	int n = 0;
	if (!combo_keys(d, c, false, press, &n))
		return false;
	release_reverse(d, press, n);
	return os_input_sync(d);
}
