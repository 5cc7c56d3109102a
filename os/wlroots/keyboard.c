/*
 * os/wlroots/keyboard — keys and exact typing through a
 * zwp_virtual_keyboard_v1 whose keymap deskhand writes itself: each key it
 * needs holds one keysym (letters in a combination hold both cases, so
 * that Shift works as on a real keyboard), no layout is assumed, and any
 * character — outside the BMP, in no layout at all — is one keystroke.
 *
 * Ordering, which is what makes typing exact: a client receives the keymap
 * and the key events on one connection, in the order the compositor sends
 * them, so keys sent after a keymap are decoded with it. Where that is not
 * enough is a client that reads a new keymap late (Xwayland's X clients
 * refetch theirs after a MappingNotify): a keymap is therefore replaced
 * only when the text needs other characters (one keymap for a whole text
 * of up to CHUNK distinct characters), and only after a guard time since
 * the last keystroke typed with the old one. The keymap is uploaded and
 * the compositor made to hand it to the focused client (a modifiers
 * request after it, then a round trip) before the first key is sent.
 *
 * Keys pressed by key_down stay pressed until key_up or close; at close
 * they are released before the virtual keyboard is destroyed (a compositor
 * releases a destroyed device's keys itself, but the client would see no
 * release), so they cannot outlive the process as XTest's can.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "base/base.h"
#include "os/keys.h"
#include "os/wlroots/wlroots-internal.h"
#include "virtual-keyboard-unstable-v1-client-protocol.h"

/* xkb keycodes 9..254: evdev 1..246, inside X's 8..255 (Xwayland). */
#define KC_FIRST 9
#define KC_LAST 254
#define NSLOT (KC_LAST - KC_FIRST + 1)
/* Distinct characters per keymap when typing (room left for held keys). */
#define CHUNK 200
/* Rest after the last keystroke before the keymap changes under it. */
#define GUARD_MS 150
/* Keystrokes between round trips: our queue to the compositor stays short. */
#define FLOW_EVERY 64

struct slot {
	uint32_t sym[2];        /* level 1 and 2 (0: one level) */
};

struct os_wl_keyboard {
	struct zwp_virtual_keyboard_v1 *vk;
	struct xkb_context *ctx;
	struct xkb_keymap *keymap;      /* what was uploaded, compiled here */
	struct xkb_state *state;        /* for the modifiers we must send */
	struct slot slot[NSLOT];
	bool held[NSLOT];               /* pressed by key_down */
	uint32_t mods[4];               /* last sent: depressed latched locked group */
	int64_t last_key_ns;            /* last keystroke under this keymap */
	/* The seat had no keyboard before ours: see keymap_upload. */
	bool fresh_seat;
};

/* ---- the keymap ---------------------------------------------------------------- */

static bool is_letter(uint32_t sym)
{
	return xkb_keysym_to_lower(sym) != xkb_keysym_to_upper(sym);
}

/* The real modifier a modifier keysym's key sets ("" for none). */
static const char *modmap_of(uint32_t sym)
{
	switch (sym) {
	case XKB_KEY_Shift_L: case XKB_KEY_Shift_R: return "Shift";
	case XKB_KEY_Caps_Lock: return "Lock";
	case XKB_KEY_Control_L: case XKB_KEY_Control_R: return "Control";
	case XKB_KEY_Alt_L: case XKB_KEY_Alt_R: case XKB_KEY_Meta_L: case XKB_KEY_Meta_R:
		return "Mod1";
	case XKB_KEY_Num_Lock: return "Mod2";
	case XKB_KEY_Super_L: case XKB_KEY_Super_R: case XKB_KEY_Hyper_L: case XKB_KEY_Hyper_R:
		return "Mod4";
	case XKB_KEY_ISO_Level3_Shift: case XKB_KEY_Mode_switch: return "Mod5";
	}
	return "";
}

static bool append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return false;
		if ((size_t)n < *cap - *len) {
			*len += (size_t)n;
			return true;
		}
		char *nb = realloc(*buf, *cap * 2 + (size_t)n);
		if (nb == NULL)
			return false;
		*buf = nb;
		*cap = *cap * 2 + (size_t)n;
	}
}

/* The keymap text for the slots; malloc'ed, NULL on allocation failure. */
static char *keymap_text(const struct slot *slot)
{
	size_t len = 0, cap = 16384;
	char *t = malloc(cap);
	bool ok = t != NULL;
	ok = ok && append(&t, &len, &cap, "xkb_keymap {\nxkb_keycodes \"deskhand\" {\n"
	                  " minimum = 8;\n maximum = 255;\n");
	for (int i = 0; ok && i < NSLOT; i++)
		ok = append(&t, &len, &cap, " <K%d> = %d;\n", KC_FIRST + i, KC_FIRST + i);
	ok = ok && append(&t, &len, &cap, "};\nxkb_types \"deskhand\" { include \"complete\" };\n"
	                  "xkb_compatibility \"deskhand\" { include \"complete\" };\n"
	                  "xkb_symbols \"deskhand\" {\n");
	for (int i = 0; ok && i < NSLOT; i++) {
		char a[64], b[64];
		if (slot[i].sym[0] == 0)
			continue;
		xkb_keysym_get_name(slot[i].sym[0], a, sizeof(a));
		if (slot[i].sym[1] != 0) {
			xkb_keysym_get_name(slot[i].sym[1], b, sizeof(b));
			ok = append(&t, &len, &cap, " key <K%d> { [ %s, %s ] };\n", KC_FIRST + i, a, b);
		} else {
			ok = append(&t, &len, &cap, " key <K%d> { [ %s ] };\n", KC_FIRST + i, a);
		}
		const char *mod = modmap_of(slot[i].sym[0]);
		if (ok && mod[0] != '\0')
			ok = append(&t, &len, &cap, " modifier_map %s { <K%d> };\n", mod, KC_FIRST + i);
	}
	ok = ok && append(&t, &len, &cap, "};\n};\n");
	if (!ok) {
		free(t);
		return NULL;
	}
	return t;
}

static struct os_wl_keyboard *keyboard_get(struct os_wl_display *w)
{
	if (!os_wl_alive(w))
		return NULL;
	if (w->kb != NULL)
		return w->kb;
	struct os_wl_keyboard *kb = calloc(1, sizeof(*kb));
	if (kb == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	kb->ctx = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	if (kb->ctx == NULL) {
		free(kb);
		os_fail("libxkbcommon: cannot create a context");
		return NULL;
	}
	bool had_keyboard = (w->seat_caps & WL_SEAT_CAPABILITY_KEYBOARD) != 0;
	kb->vk = zwp_virtual_keyboard_manager_v1_create_virtual_keyboard(w->keyboard_manager,
	                                                                  w->seat);
	w->kb = kb;
	kb->fresh_seat = !had_keyboard;
	return kb;
}

/* Compiles and uploads the slots as the keyboard's keymap, then has the
 * compositor pass it on to the focused client before any key. */
static bool keymap_upload(struct os_wl_display *w, struct os_wl_keyboard *kb,
                          const struct slot *slot)
{
	char *text = keymap_text(slot);
	if (text == NULL)
		return os_fail("out of memory");
	bool ok = false;
	struct xkb_keymap *km = xkb_keymap_new_from_string(kb->ctx, text, XKB_KEYMAP_FORMAT_TEXT_V1,
	                                                   XKB_KEYMAP_COMPILE_NO_FLAGS);
	struct xkb_state *st = km != NULL ? xkb_state_new(km) : NULL;
	if (st == NULL) {
		os_fail("libxkbcommon could not compile deskhand's keymap (is xkb-data installed?)");
		goto out;
	}
	size_t size = strlen(text) + 1;
	int fd = os_wl_memfd("deskhand-keymap", size);
	if (fd < 0)
		goto out;
	if (!base_write_all(fd, text, size)) {
		close(fd);
		os_fail("cannot write the keymap to its memfd");
		goto out;
	}
	zwp_virtual_keyboard_v1_keymap(kb->vk, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, fd, (uint32_t)size);
	close(fd);
	/* Held keys keep their keycodes and keysyms: their state carries over. */
	for (int i = 0; i < NSLOT; i++)
		if (kb->held[i])
			xkb_state_update_key(st, (xkb_keycode_t)(KC_FIRST + i), XKB_KEY_DOWN);
	xkb_state_unref(kb->state);
	xkb_keymap_unref(kb->keymap);
	kb->keymap = km;
	kb->state = st;
	km = NULL;
	st = NULL;
	memcpy(kb->slot, slot, sizeof(kb->slot));
	kb->mods[0] = xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_DEPRESSED);
	kb->mods[1] = xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_LATCHED);
	kb->mods[2] = xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_LOCKED);
	kb->mods[3] = xkb_state_serialize_layout(kb->state, XKB_STATE_LAYOUT_EFFECTIVE);
	/* A modifiers request makes a wlroots compositor switch its seat to this
	 * keyboard now, which sends the keymap to the focused client. */
	zwp_virtual_keyboard_v1_modifiers(kb->vk, kb->mods[0], kb->mods[1], kb->mods[2], kb->mods[3]);
	ok = os_wl_roundtrip(w, "uploading the keymap");
	kb->last_key_ns = 0;
	if (ok && kb->fresh_seat) {
		/*
		 * A seat without a keyboard gains one with ours: the compositor
		 * announces the capability, and each client must ask for a
		 * wl_keyboard again before keys can reach it. Keys sent before
		 * that are lost (how wtype loses the first character typed into
		 * a freshly started foot: measured here on a headless sway,
		 * every key of a fast text lost 1 time in 5). The client's
		 * request cannot be observed, so it gets time.
		 */
		kb->fresh_seat = false;
		os_input_sleep_ms(OS_WL_SEAT_SETTLE_MS);
	}
out:
	xkb_state_unref(st);
	xkb_keymap_unref(km);
	free(text);
	return ok;
}

/* How a keysym counts as present: TYPED only at a key's first level (one
 * keystroke, no Shift); COMBO at either level, letters only on a key that
 * holds both cases (so that Shift+letter is the upper case). */
enum find_mode { TYPED, COMBO };

/* The slot holding `sym` as `mode` wants it; -1: none. */
static int slot_find(const struct slot *slot, uint32_t sym, enum find_mode mode, int *level)
{
	for (int i = 0; sym != 0 && i < NSLOT; i++) {
		if (mode == COMBO && is_letter(sym) && slot[i].sym[1] == 0)
			continue;
		for (int l = 0; l < (mode == TYPED ? 1 : 2); l++) {
			if (slot[i].sym[l] == sym) {
				*level = l;
				return i;
			}
		}
	}
	return -1;
}

/*
 * Makes the keymap hold every keysym of syms[0..n) (letters in pairs when
 * for COMBO, Shift too when `shift`); uploads a new one only when the
 * current one lacks some. Held keys keep their slots.
 */
static bool keymap_ensure(struct os_wl_display *w, struct os_wl_keyboard *kb,
                          const uint32_t *syms, size_t n, enum find_mode mode, bool shift)
{
	int level;
	bool all = kb->keymap != NULL;
	for (size_t i = 0; all && i < n; i++)
		all = slot_find(kb->slot, syms[i], mode, &level) >= 0;
	if (all && (!shift || slot_find(kb->slot, XKB_KEY_Shift_L, TYPED, &level) >= 0))
		return true;
	struct slot next[NSLOT];
	memset(next, 0, sizeof(next));
	for (int i = 0; i < NSLOT; i++)
		if (kb->held[i])
			next[i] = kb->slot[i];
	int free_at = 0;
	for (size_t i = 0; i <= n; i++) {
		uint32_t sym = i < n ? syms[i] : shift ? XKB_KEY_Shift_L : 0;
		if (sym == 0 || slot_find(next, sym, mode, &level) >= 0)
			continue;
		while (free_at < NSLOT && next[free_at].sym[0] != 0)
			free_at++;
		if (free_at == NSLOT)
			return os_fail("too many different keys for one keymap (%d at most)", NSLOT);
		if (mode == COMBO && is_letter(sym))
			next[free_at] = (struct slot){{xkb_keysym_to_lower(sym), xkb_keysym_to_upper(sym)}};
		else
			next[free_at] = (struct slot){{sym, 0}};
	}
	/* A text typed across keymaps: the client must be done with the keys
	 * of the last one before their keycodes mean something else. */
	if (kb->last_key_ns != 0) {
		int64_t until = kb->last_key_ns + GUARD_MS * BASE_NS_PER_MS;
		base_sleep_until(until, NULL);
	}
	return keymap_upload(w, kb, next);
}

/* ---- keystrokes ----------------------------------------------------------------- */

static void send_key(struct os_wl_keyboard *kb, int slot, bool down)
{
	xkb_keycode_t kc = (xkb_keycode_t)(KC_FIRST + slot);
	zwp_virtual_keyboard_v1_key(kb->vk, os_wl_time_ms(), kc - 8,
	                            down ? WL_KEYBOARD_KEY_STATE_PRESSED
	                                 : WL_KEYBOARD_KEY_STATE_RELEASED);
	xkb_state_update_key(kb->state, kc, down ? XKB_KEY_DOWN : XKB_KEY_UP);
	uint32_t m[4] = {
		xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_DEPRESSED),
		xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_LATCHED),
		xkb_state_serialize_mods(kb->state, XKB_STATE_MODS_LOCKED),
		xkb_state_serialize_layout(kb->state, XKB_STATE_LAYOUT_EFFECTIVE),
	};
	/* The compositor does not derive modifiers from keys: we tell it. */
	if (memcmp(m, kb->mods, sizeof(m)) != 0) {
		memcpy(kb->mods, m, sizeof(m));
		zwp_virtual_keyboard_v1_modifiers(kb->vk, m[0], m[1], m[2], m[3]);
	}
	kb->last_key_ns = base_now_ns();
}

/*
 * The slots to press for a combination, in order: Shift inserted before a
 * key whose keysym is its upper level unless Shift is already in it.
 */
static bool combo_slots(struct os_wl_display *w, struct os_wl_keyboard *kb,
                        const os_combo *c, bool ensure, int *press, int *npress)
{
	if (c->count < 1 || c->count > OS_COMBO_MAX)
		return os_fail("empty key combination");
	bool need_shift = false;
	for (int i = 0; i < c->count; i++)
		need_shift = need_shift || (is_letter(c->keysyms[i]) &&
		                            xkb_keysym_to_upper(c->keysyms[i]) == c->keysyms[i]);
	if (ensure && !keymap_ensure(w, kb, c->keysyms, (size_t)c->count, COMBO, need_shift))
		return false;
	int n = 0, level, shift_level;
	bool shift_in = false;
	for (int i = 0; i < c->count; i++) {
		int s = slot_find(kb->slot, c->keysyms[i], COMBO, &level);
		/* Releasing: a key the keymap lacks is not held. */
		if (s < 0 && !ensure)
			continue;
		if (s < 0)
			return os_fail("key 0x%x is missing from the keymap", c->keysyms[i]);
		if (level == 1 && !shift_in)
			press[n++] = slot_find(kb->slot, XKB_KEY_Shift_L, TYPED, &shift_level);
		if (c->keysyms[i] == XKB_KEY_Shift_L || c->keysyms[i] == XKB_KEY_Shift_R)
			shift_in = true;
		if (level == 1)
			shift_in = true;
		press[n++] = s;
	}
	*npress = n;
	return true;
}

/* Presses the combination, waits hold_ms (-1: not at all, and leaves the
 * keys held), releases in reverse. */
static bool combo_run(os_display *d, const os_combo *c, int hold_ms, bool release_only)
{
	struct os_wl_display *w = os_wl(d);
	struct os_wl_keyboard *kb = keyboard_get(w);
	int press[2 * OS_COMBO_MAX], n = 0;
	if (kb == NULL || !combo_slots(w, kb, c, !release_only, press, &n))
		return false;
	if (release_only) {
		for (int i = n - 1; i >= 0; i--) {
			if (kb->held[press[i]])
				send_key(kb, press[i], false);
			kb->held[press[i]] = false;
		}
		return os_wl_roundtrip(w, "releasing keys");
	}
	struct os_signal_guard g;
	os_input_signals_begin(&g);
	for (int i = 0; i < n; i++)
		if (!kb->held[press[i]])
			send_key(kb, press[i], true);
	if (hold_ms < 0) {
		for (int i = 0; i < n; i++)
			kb->held[press[i]] = true;
	} else {
		if (hold_ms > 0 && os_wl_roundtrip(w, "pressing keys"))
			os_input_sleep_ms(hold_ms);
		/* Released also after a signal: a key is never left held. */
		for (int i = n - 1; i >= 0; i--)
			if (!kb->held[press[i]])
				send_key(kb, press[i], false);
	}
	bool ok = os_wl_roundtrip(w, "sending keys");
	int sig = os_input_signal_caught();
	os_input_signals_end(&g);
	if (ok && sig != 0 && hold_ms >= 0)
		return os_fail("keys interrupted by signal %d", sig);
	return ok;
}

bool os_wl_key_combo(os_display *d, const os_combo *c)
{
	return combo_run(d, c, 0, false);
}

bool os_wl_key_down(os_display *d, const os_combo *c)
{
	return combo_run(d, c, -1, false);
}

bool os_wl_key_up(os_display *d, const os_combo *c)
{
	return combo_run(d, c, 0, true);
}

bool os_wl_key_hold(os_display *d, const os_combo *c, int ms)
{
	if (ms < 0)
		return os_fail("hold time %d ms is negative", ms);
	return combo_run(d, c, ms, false);
}

/* ---- typing ----------------------------------------------------------------------- */

/* Types syms[from, to), all in the current keymap; false once a signal
 * came or the connection failed. *acked: the characters before the last
 * of its round trips that came back (the compositor had taken them). */
static bool type_range(struct os_wl_display *w, struct os_wl_keyboard *kb,
                       const uint32_t *syms, size_t from, size_t to, int delay_ms,
                       size_t *acked)
{
	int level;
	for (size_t k = from; k < to; k++) {
		if (os_input_signal_caught() != 0)
			return false;
		int s = slot_find(kb->slot, syms[k], TYPED, &level);
		if (s < 0)
			return os_fail("character %zu is missing from the keymap", k + 1);
		send_key(kb, s, true);
		send_key(kb, s, false);
		if (delay_ms > 0) {
			if (wl_display_flush(w->wl) < 0 && !os_wl_alive(w))
				return false;
			os_input_sleep_ms(delay_ms);
		} else if ((k - from) % FLOW_EVERY == FLOW_EVERY - 1) {
			if (!os_wl_roundtrip(w, "typing"))
				return false;
			*acked = k + 1;
		}
	}
	return true;
}

/* The end of the chunk starting at `from`: at most CHUNK distinct keysyms,
 * collected into set[0..*nset). */
static size_t chunk_end(const uint32_t *syms, size_t n, size_t from, uint32_t *set, size_t *nset)
{
	size_t k = from;
	*nset = 0;
	for (; k < n; k++) {
		size_t j = 0;
		while (j < *nset && set[j] != syms[k])
			j++;
		if (j < *nset)
			continue;
		if (*nset == CHUNK)
			break;
		set[(*nset)++] = syms[k];
	}
	return k;
}

/* The text's keysyms (Return for \n, Tab for \t); malloc'ed. */
static uint32_t *text_keysyms(const char *utf8, size_t len, size_t *n)
{
	uint32_t *syms = malloc((len ? len : 1) * sizeof(*syms));
	if (syms == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	size_t bad;
	long count = os_utf8_decode(utf8, len, syms, &bad);
	for (long i = 0; i < count; i++)
		syms[i] = os_keysym_for_char(syms[i]);
	*n = count > 0 ? (size_t)count : 0;
	return syms;
}

bool os_wl_type(os_display *d, const char *utf8, size_t len, int delay_ms)
{
	struct os_wl_display *w = os_wl(d);
	if (!os_type_check(utf8, len))
		return false;
	struct os_wl_keyboard *kb = keyboard_get(w);
	if (kb == NULL)
		return false;
	for (int i = 0; i < NSLOT; i++)
		if (kb->held[i])
			return os_fail("keys are held down (key down): typing would combine with them");
	size_t n;
	uint32_t *syms = text_keysyms(utf8, len, &n);
	if (syms == NULL)
		return false;
	uint32_t set[CHUNK];
	size_t nset, acked = 0;
	bool ok = true;
	struct os_signal_guard g;
	os_input_signals_begin(&g);
	for (size_t from = 0; ok && from < n && os_input_signal_caught() == 0;) {
		size_t to = chunk_end(syms, n, from, set, &nset);
		unsigned long trips = w->roundtrips;
		ok = keymap_ensure(w, kb, set, nset, TYPED, false);
		if (ok && w->roundtrips != trips)
			acked = from;   /* the new keymap's round trip came back after them */
		ok = ok && type_range(w, kb, syms, from, to, delay_ms, &acked);
		from = to;
	}
	ok = os_wl_roundtrip(w, "typing") && ok;
	int sig = os_input_signal_caught();
	os_input_signals_end(&g);
	free(syms);
	if (!ok && w->dead)
		return os_fail("typing stopped: Wayland display %s: %s, after %zu of %zu "
		               "characters (the compositor had taken at least those; the rest "
		               "may not have been typed)", w->base.name, w->dead_why, acked, n);
	if (ok && sig != 0)
		return os_fail("typing interrupted by signal %d", sig);
	return ok;
}

void os_wl_keyboard_cleanup(struct os_wl_display *w)
{
	struct os_wl_keyboard *kb = w->kb;
	if (kb == NULL)
		return;
	if (!w->dead && kb->state != NULL)
		for (int i = NSLOT - 1; i >= 0; i--)
			if (kb->held[i])
				send_key(kb, i, false);
	zwp_virtual_keyboard_v1_destroy(kb->vk);
	xkb_state_unref(kb->state);
	xkb_keymap_unref(kb->keymap);
	xkb_context_unref(kb->ctx);
	free(kb);
	w->kb = NULL;
}
