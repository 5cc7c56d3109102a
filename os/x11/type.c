/*
 * os/type — types Unicode text exactly. keys.c plans which keycode, Shift
 * state and temporary spare-keycode binding each character takes; this file
 * carries the plan out through XTest, keeping every rebinding away from
 * keystrokes a client may still be decoding, and puts the keymap back
 * (also on errors and on SIGINT/SIGTERM/SIGHUP).
 */
#include <X11/Xlib.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/x11/input-internal.h"

static const char *held_modifier_names(unsigned mods, char *buf, size_t size)
{
	static const char *names[8] = {"Shift", "Lock", "Control", "Mod1 (Alt)",
	                               "Mod2", "Mod3", "Mod4 (Super)", "Mod5"};
	buf[0] = '\0';
	for (int i = 0; i < 8; i++) {
		if (!(mods & (1u << i)))
			continue;
		if (buf[0] != '\0')
			strncat(buf, ", ", size - strlen(buf) - 1);
		strncat(buf, names[i], size - strlen(buf) - 1);
	}
	return buf;
}

/* Carrying out a plan (see run_plan). */
struct type_run {
	os_x11 *d;
	int delay_ms;
	uint32_t cur[256][2];           /* what each spare keycode holds now */
	bool shift_down;
	size_t since_drain;             /* keystrokes since the last drain */
	size_t typed;
	size_t confirmed;               /* of them, those before the server's last reply */
};

static void release_shift(struct type_run *tr)
{
	if (!tr->shift_down)
		return;
	XTestFakeKeyEvent(tr->d->dpy, (unsigned)tr->d->input->shift_code, False, CurrentTime);
	tr->shift_down = false;
}

/*
 * Before a round's bindings: a client decodes a keystroke with the binding
 * current when it gets round to it, so a column is rebound only once the
 * client has handled every keystroke typed with its old binding.
 */
static void settle_rebound_columns(struct type_run *tr, const os_type_plan *plan,
                                   const os_type_round *round)
{
	uint8_t codes[256], cols[256];
	int n = 0;
	for (size_t b = 0; b < round->nbind; b++) {
		const os_type_bind *bd = &plan->binds[round->first_bind + b];
		uint8_t mask = 0;
		for (int col = 0; col < 2; col++)
			if (tr->cur[bd->code][col] != 0 && tr->cur[bd->code][col] != bd->syms[col])
				mask |= (uint8_t)(1 << col);
		if (mask != 0) {
			codes[n] = bd->code;
			cols[n++] = mask;
		}
	}
	os_input_settle(tr->d, codes, cols, n);
}

/* The round's bindings, as one mapping change. */
static bool bind_round(struct type_run *tr, const os_type_plan *plan,
                       const os_type_round *round)
{
	os_x_trap_begin(tr->d);
	for (size_t b = 0; b < round->nbind; b++) {
		const os_type_bind *bd = &plan->binds[round->first_bind + b];
		os_input_bind(tr->d, bd->code, bd->syms);
		tr->cur[bd->code][0] = bd->syms[0];
		tr->cur[bd->code][1] = bd->syms[1];
	}
	os_input_bind_flush(tr->d);
	return os_x_trap_end(tr->d, "binding spare keycodes") == 0;
}

/* One keystroke, with Shift pressed or released first as it needs; every
 * OS_TYPE_DRAIN_EVERY keystrokes the server's queue is drained. */
static void type_stroke(struct type_run *tr, const os_type_stroke *s)
{
	os_x11 *d = tr->d;
	if (s->shift != tr->shift_down) {
		XTestFakeKeyEvent(d->dpy, (unsigned)d->input->shift_code, s->shift, CurrentTime);
		tr->shift_down = s->shift;
	}
	XTestFakeKeyEvent(d->dpy, s->code, True, CurrentTime);
	XTestFakeKeyEvent(d->dpy, s->code, False, CurrentTime);
	if (s->spare)
		os_input_used(d, s->code, s->shift ? 1 : 0);
	tr->typed++;
	if (++tr->since_drain == OS_TYPE_DRAIN_EVERY) {
		tr->since_drain = 0;
		release_shift(tr);
		XSync(d->dpy, False);
		if (!os_x_lost(&d->base))
			tr->confirmed = tr->typed;
		os_input_epoch_end(d);
		os_input_drain(d);
	}
	if (tr->delay_ms > 0) {
		XFlush(d->dpy);
		os_input_sleep_ms(tr->delay_ms);
	}
}

/* Carries out one plan. Leaves Shift released; bindings are undone by the caller. */
static bool run_plan(os_x11 *d, const os_type_plan *plan, int delay_ms,
                     size_t *typed, size_t *confirmed)
{
	struct type_run tr = {.d = d, .delay_ms = delay_ms};
	bool ok = true;
	for (size_t r = 0; r < plan->nrounds && ok; r++) {
		const os_type_round *round = &plan->rounds[r];
		if (os_input_signal_caught() != 0)
			break;
		if (round->nbind > 0) {
			settle_rebound_columns(&tr, plan, round);
			if (os_input_signal_caught() != 0)
				break;
			if (!bind_round(&tr, plan, round)) {
				ok = false;
				break;
			}
			os_trace("bound");
		}
		for (size_t k = 0; k < round->nstroke; k++) {
			type_stroke(&tr, &plan->strokes[round->first_stroke + k]);
			if (os_input_signal_caught() != 0)
				break;
		}
		release_shift(&tr);
		XSync(d->dpy, False);
		if (os_display_dead(d)) {
			ok = false;
			break;
		}
		tr.confirmed = tr.typed;
		os_input_epoch_end(d);
	}
	*typed = tr.typed;
	*confirmed = tr.confirmed;
	return ok;
}

/*
 * Typing cut by the server's end: how much of the text it had taken, so a
 * half-typed text is never taken for typed (n: the characters of the text;
 * strokes go in the text's order, each naming its character).
 */
static void lost_while_typing(os_x11 *d, const os_type_plan *plan, size_t confirmed, size_t n)
{
	size_t chars = confirmed > 0 ? plan->strokes[confirmed - 1].index + 1 : 0;
	if (confirmed < plan->nstrokes && confirmed > 0 &&
	    plan->strokes[confirmed].index == plan->strokes[confirmed - 1].index)
		chars--; /* a character whose strokes were not all confirmed */
	os_fail("typing stopped: lost the connection to the X server %s after %zu of %zu "
	        "characters (the server acknowledged those; the rest was not typed)",
	        d->base.name, chars, n);
}

/*
 * Held modifiers would turn the text into shortcuts; a locked Caps Lock
 * would change its case. The first is refused, the second lifted for
 * the duration: *caps says whether it is locked.
 */
static bool keyboard_ready(os_x11 *d, bool *caps)
{
	XkbStateRec xs;
	if (XkbGetState(d->dpy, XkbUseCoreKbd, &xs) != Success)
		return os_fail("cannot read the keyboard state of %s", d->base.name);
	unsigned held = (unsigned)(xs.base_mods | xs.latched_mods) &
	                (ShiftMask | ControlMask | Mod1Mask | Mod3Mask | Mod4Mask |
	                 Mod5Mask);
	if (held != 0) {
		char names[96];
		return os_fail("cannot type while modifier keys are held down (%s): "
		               "release them first", held_modifier_names(held, names,
		                                                          sizeof(names)));
	}
	*caps = (xs.locked_mods & LockMask) != 0;
	return true;
}

/*
 * Runs the plan with the signals that would leave the keymap changed
 * caught and Caps Lock lifted, then puts the keymap and Caps Lock back.
 * The first error is the one reported; a signal ends typing early and
 * the error says how far it got (n: the characters of the text).
 */
static bool run_plan_guarded(os_x11 *d, const os_type_plan *plan, int delay_ms,
                             bool caps, size_t n)
{
	struct os_signal_guard g;
	os_input_signals_begin(&g);
	if (caps)
		XkbLockModifiers(d->dpy, XkbUseCoreKbd, LockMask, 0);
	size_t typed = 0, confirmed = 0;
	bool ok = run_plan(d, plan, delay_ms, &typed, &confirmed);
	os_trace("typed");
	char reason[sizeof(base_error_text)];
	if (!ok && os_x_lost(&d->base))
		lost_while_typing(d, plan, confirmed, n);
	if (!ok)
		snprintf(reason, sizeof(reason), "%s", os_error());
	bool restored = os_input_restore(d);
	os_trace("restored");
	if (caps && !os_display_dead(d)) {
		XkbLockModifiers(d->dpy, XkbUseCoreKbd, LockMask, LockMask);
		XSync(d->dpy, False);
	}
	int sig = os_input_signal_caught();
	if (!ok)
		os_fail("%s", reason);
	else if (!restored)
		ok = false;
	else if (sig != 0)
		ok = os_fail("typing interrupted by signal %d after %zu of %zu "
		             "characters; the keymap is restored", sig, typed, n);
	os_input_signals_end(&g);
	return ok;
}

/* Checks that the keymap and the keyboard's state allow the plan, then
 * types it. */
static bool type_plan(os_x11 *d, const os_type_plan *plan, int delay_ms, size_t n)
{
	for (size_t i = 0; i < plan->nstrokes; i++)
		if (plan->strokes[i].shift && d->input->shift_code == 0)
			return os_fail("the keymap has no Shift key");
	bool caps = false;
	if (!keyboard_ready(d, &caps))
		return false;
	os_trace("keyboard-state");
	if (plan->nspare > 0)
		os_input_find_peer(d);
	os_trace("peer");
	return run_plan_guarded(d, plan, delay_ms, caps, n);
}

/* Plans the n code points on the current keymap and types them. */
static bool type_codepoints(os_x11 *d, const uint32_t *cps, size_t n, int delay_ms)
{
	os_keymap km = {0};
	if (os_input_state(d) == NULL)
		return false;
	os_trace("input-state");
	if (!os_input_keymap(d, &km))
		return false;
	os_trace("keymap");
	uint8_t spare[256];
	int nspare = os_input_spares(d, &km, spare);
	os_type_plan plan = {0};
	bool ok = os_type_plan_make(&km, spare, nspare, cps, n, &plan);
	os_trace("plan");
	if (ok) {
		ok = type_plan(d, &plan, delay_ms, n);
		os_type_plan_finish(&plan);
	}
	free((void *)km.syms);
	return ok;
}

bool os_x11_type(os_x11 *d, const char *utf8, size_t len, int delay_ms)
{
	uint32_t *cps = NULL;
	size_t n = 0;
	if (!os_text_decode(utf8, len, &cps, &n))
		return false;
	bool ok = n == 0 || type_codepoints(d, cps, n, delay_ms);
	free(cps);
	return ok;
}
