/*
 * os/gnome/input — the mouse and keys through the RemoteDesktop session:
 * absolute motion in the stream of the monitor holding the point, evdev
 * buttons, discrete wheel steps, keysyms. What Mutter 43 does with each
 * was measured (type.c's comment has the findings).
 *
 * Every call is synchronous: it returns when Mutter has answered the last
 * D-Bus call, and Mutter answers a Notify* once it has queued the event.
 * Presses and releases go back to back: Mutter stamps each event when it
 * takes it, and a client once holding the seat's keyboard and pointer saw
 * every event of a burst (a double click is a double click).
 *
 * The position last sent is kept for "here"; the pointer's position is
 * only ever what capture.c observes.
 */
#include <gio/gio.h>
#include <stdio.h>

#include "base/base.h"
#include "os/gnome/gnome-internal.h"
#include "os/gnome/gnome-libs.h"

/* linux/input-event-codes.h, not included so as not to depend on it */
#define BTN_LEFT 0x110
#define BTN_RIGHT 0x111
#define BTN_MIDDLE 0x112
#define BTN_SIDE 0x113
#define BTN_EXTRA 0x114

/* Mutter's axes for NotifyPointerAxisDiscrete */
#define AXIS_VERTICAL 0u
#define AXIS_HORIZONTAL 1u

/* A client takes up a new seat capability in a few ms (30 ms was enough
 * here for GTK 3 and wlrecord); twice that, as for wlroots' seat. */
#define SETTLE_MS 60
/* A keysym no keymap holds (U+FFFE, a noncharacter): Mutter creates the
 * virtual keyboard for it, finds no key and sends nothing. */
#define WAKE_KEYSYM 0x100fffeu

/*
 * Mutter 43 adds the session's virtual pointer to the seat with its first
 * pointer event; on a seat that had none (headless) clients then ask for
 * a wl_pointer, and what comes before they have it is lost. A relative
 * motion of 0,0 adds it without moving anything.
 */
static bool pointer_wake(struct os_gnome_display *g)
{
	if (!os_gnome_alive(g))
		return false;
	if (g->pointer_awake)
		return true;
	if (!os_gnome_rd(g, "NotifyPointerMotionRelative", g_variant_new("(dd)", 0.0, 0.0),
	                 "adding the pointer"))
		return false;
	g->pointer_awake = true;
	os_input_sleep_ms(SETTLE_MS);
	return true;
}

/* The same for the keyboard: its first key, one Mutter finds in no keymap,
 * adds it (measured: a first real key was lost, 'b' after it arrived). */
static bool keyboard_wake(struct os_gnome_display *g)
{
	if (!os_gnome_alive(g))
		return false;
	if (g->keyboard_awake)
		return true;
	if (!os_gnome_rd(g, "NotifyKeyboardKeysym", g_variant_new("(ub)", WAKE_KEYSYM, TRUE),
	                 "adding the keyboard") ||
	    !os_gnome_rd(g, "NotifyKeyboardKeysym", g_variant_new("(ub)", WAKE_KEYSYM, FALSE),
	                 "adding the keyboard"))
		return false;
	g->keyboard_awake = true;
	os_input_sleep_ms(SETTLE_MS);
	return true;
}

bool os_gnome_key_send(struct os_gnome_display *g, uint32_t keysym, bool down)
{
	if (!keyboard_wake(g))
		return false;
	return os_gnome_rd(g, "NotifyKeyboardKeysym", g_variant_new("(ub)", keysym, down),
	                   down ? "pressing a key" : "releasing a key");
}

/* Absolute motion to screen point (x,y), in its monitor's stream. */
static bool send_motion(struct os_gnome_display *g, int x, int y)
{
	int i = os_gnome_monitor_at(g, x, y);
	if (i < 0)
		return false;
	const struct os_gnome_monitor *m = &g->mon[i];
	if (m->stream_path == NULL)
		return os_fail("monitor %s has no screen-cast stream", m->connector);
	double s = m->scale > 0 ? m->scale : 1;
	/* Before the call: Mutter's cursor report may arrive before its reply. */
	g->motion_ns = base_now_ns();
	g->motion_unseen = true;
	if (!os_gnome_rd(g, "NotifyPointerMotionAbsolute",
	                 g_variant_new("(sdd)", m->stream_path, (x - m->logical.x) * s,
	                               (y - m->logical.y) * s),
	                 "moving the pointer"))
		return false;
	g->sent_x = x;
	g->sent_y = y;
	g->sent_any = true;
	return true;
}

static bool send_button(struct os_gnome_display *g, uint32_t code, bool down)
{
	if (!os_gnome_rd(g, "NotifyPointerButton", g_variant_new("(ib)", (gint32)code, down),
	                 down ? "pressing a button" : "releasing a button"))
		return false;
	uint32_t bit = 1u << (code - BTN_LEFT);
	g->buttons_down = down ? g->buttons_down | bit : g->buttons_down & ~bit;
	return true;
}

bool os_gnome_mouse_move(os_display *d, int x, int y)
{
	struct os_gnome_display *g = os_gnome(d);
	if (!os_point_on_screen(d, x, y) || !pointer_wake(g))
		return false;
	return send_motion(g, x, y);
}

bool os_gnome_mouse_click(os_display *d, os_button b, int count)
{
	struct os_gnome_display *g = os_gnome(d);
	uint32_t code = 0;
	if (!os_evdev_button(b, &code))
		return false;
	if (count < 1 || count > 10)
		return os_fail("click count %d is out of range (1..10)", count);
	if (g->buttons_down & (1u << (code - BTN_LEFT)))
		return os_fail("the button is held down (mouse down): release it first");
	if (!pointer_wake(g))
		return false;
	/* One burst: Mutter stamps each event as it takes it, so the client
	 * sees them within a millisecond or two: a double or triple click. */
	for (int i = 0; i < count; i++)
		if (!send_button(g, code, true) || !send_button(g, code, false))
			return false;
	return true;
}

bool os_gnome_mouse_button(os_display *d, os_button b, bool down)
{
	struct os_gnome_display *g = os_gnome(d);
	uint32_t code = 0;
	if (!os_evdev_button(b, &code) || !pointer_wake(g))
		return false;
	bool held = (g->buttons_down & (1u << (code - BTN_LEFT))) != 0;
	/* Mutter refuses a release of a button it does not hold, and a
	 * second press would be a press the client never sees released. */
	if (held == down)
		return down ? os_fail("the button is already held down")
		            : os_fail("the button is not held down");
	return send_button(g, code, down);
}

bool os_gnome_mouse_scroll(os_display *d, os_scroll dir, int amount)
{
	struct os_gnome_display *g = os_gnome(d);
	if ((int)dir < 0 || (int)dir >= OS_SCROLL_COUNT)
		return os_fail("unknown scroll direction %d", (int)dir);
	if (amount < 1 || amount > 1000)
		return os_fail("scroll amount %d is out of range (1..1000)", amount);
	if (!pointer_wake(g))
		return false;
	guint32 axis = dir == OS_SCROLL_UP || dir == OS_SCROLL_DOWN ? AXIS_VERTICAL
	                                                            : AXIS_HORIZONTAL;
	int sign = dir == OS_SCROLL_UP || dir == OS_SCROLL_LEFT ? -1 : 1;
	/* One call: Mutter sends `steps` wheel clicks, one frame each, with
	 * axis_discrete ±1 (measured); NotifyPointerAxis with the wheel flag
	 * made a stray step on the other axis. */
	return os_gnome_rd(g, "NotifyPointerAxisDiscrete",
	                   g_variant_new("(ui)", axis, (gint32)(sign * amount)), "scrolling");
}

/* ---- keys ------------------------------------------------------------------ */

static bool key_held(const struct os_gnome_display *g, uint32_t keysym)
{
	for (int i = 0; i < g->nkeys_down; i++)
		if (g->keys_down[i] == keysym)
			return true;
	return false;
}

static void key_forget(struct os_gnome_display *g, uint32_t keysym)
{
	for (int i = 0; i < g->nkeys_down; i++) {
		if (g->keys_down[i] == keysym) {
			g->keys_down[i] = g->keys_down[--g->nkeys_down];
			return;
		}
	}
}

/* Every keysym of c is one Mutter will find (it drops others silently). */
static bool combo_check(struct os_gnome_display *g, const os_combo *c)
{
	if (c->count < 1 || c->count > OS_COMBO_MAX)
		return os_fail("empty key combination");
	for (int i = 0; i < c->count; i++)
		if (!os_gnome_keysym_reachable(g, c->keysyms[i]))
			return false;
	return true;
}

/*
 * Presses the keys in order (Mutter adds Shift or AltGr itself for a
 * keysym at the key's second or third level, around that key), waits
 * hold_ms (-1: leaves them held, remembered in keys_down), releases in
 * reverse. Keys already held by key_down are neither pressed nor released.
 */
static bool combo_run(struct os_gnome_display *g, const os_combo *c, int hold_ms)
{
	if (!combo_check(g, c) || !keyboard_wake(g))
		return false;
	if (hold_ms < 0) {
		int fresh = 0;
		for (int i = 0; i < c->count; i++)
			fresh += !key_held(g, c->keysyms[i]);
		if (g->nkeys_down + fresh > (int)(sizeof(g->keys_down) / sizeof(g->keys_down[0])))
			return os_fail("too many keys held down (8 at most)");
	}
	struct os_signal_guard guard;
	os_input_signals_begin(&guard);
	bool pressed[OS_COMBO_MAX] = {false};
	bool ok = true;
	for (int i = 0; ok && i < c->count; i++) {
		if (key_held(g, c->keysyms[i]))
			continue;
		ok = os_gnome_key_send(g, c->keysyms[i], true);
		pressed[i] = ok;
		if (ok && hold_ms < 0)
			g->keys_down[g->nkeys_down++] = c->keysyms[i];
	}
	char why[256] = "";
	if (!ok)
		snprintf(why, sizeof(why), "%s", os_error());
	if (hold_ms < 0 && ok) {
		os_input_signals_end(&guard);
		return true;
	}
	if (ok && hold_ms > 0)
		os_input_sleep_ms(hold_ms);
	/* Released also after a signal or a failure: never left held. */
	for (int i = c->count - 1; i >= 0; i--) {
		if (!pressed[i])
			continue;
		if (hold_ms < 0)
			key_forget(g, c->keysyms[i]);
		if (!os_gnome_key_send(g, c->keysyms[i], false) && why[0] == '\0')
			snprintf(why, sizeof(why), "%s", os_error());
	}
	int sig = os_input_signal_caught();
	os_input_signals_end(&guard);
	if (why[0] != '\0')
		return os_fail("%s", why);
	if (sig != 0 && hold_ms >= 0)
		return os_fail("keys interrupted by signal %d", sig);
	return true;
}

bool os_gnome_key_combo(os_display *d, const os_combo *c)
{
	return combo_run(os_gnome(d), c, 0);
}

bool os_gnome_key_down(os_display *d, const os_combo *c)
{
	return combo_run(os_gnome(d), c, -1);
}

bool os_gnome_key_up(os_display *d, const os_combo *c)
{
	struct os_gnome_display *g = os_gnome(d);
	if (c->count < 1 || c->count > OS_COMBO_MAX)
		return os_fail("empty key combination");
	/* Only keys deskhand holds: Mutter refuses the release of a key it
	 * does not hold ("Invalid key event"). */
	bool ok = true;
	for (int i = c->count - 1; i >= 0; i--) {
		if (!key_held(g, c->keysyms[i]))
			continue;
		key_forget(g, c->keysyms[i]);
		ok = os_gnome_key_send(g, c->keysyms[i], false) && ok;
	}
	return ok;
}

bool os_gnome_key_hold(os_display *d, const os_combo *c, int ms)
{
	if (ms < 0)
		return os_fail("hold time %d ms is negative", ms);
	return combo_run(os_gnome(d), c, ms);
}

void os_gnome_input_release(struct os_gnome_display *g)
{
	if (!g->dead) {
		while (g->nkeys_down > 0)
			os_gnome_key_send(g, g->keys_down[--g->nkeys_down], false);
		for (uint32_t i = 0; i < 8; i++)
			if (g->buttons_down & (1u << i))
				send_button(g, BTN_LEFT + i, false);
	}
	g->nkeys_down = 0;
	g->buttons_down = 0;
	os_gnome_type_free(g);
}
