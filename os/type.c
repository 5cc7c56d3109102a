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

#include "os/input-internal.h"

/* Decodes and checks the text; on success *out is malloc'ed (caller frees). */
static bool decode_text(const char *utf8, size_t len, uint32_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	uint32_t *cps = malloc((len ? len : 1) * sizeof(*cps));
	if (cps == NULL)
		return os_fail("out of memory");
	size_t bad = 0;
	long count = os_utf8_decode(utf8, len, cps, &bad);
	if (count < 0) {
		free(cps);
		return os_fail("text is not valid UTF-8 (bad byte 0x%02x at offset %zu)",
		               (unsigned char)utf8[bad], bad);
	}
	for (long i = 0; i < count; i++) {
		if (os_keysym_for_char(cps[i]) == 0) {
			os_fail("character %ld of the text (U+%04X) is a control "
			        "character that cannot be typed (only \\n and \\t are)",
			        i + 1, cps[i]);
			free(cps);
			return false;
		}
	}
	*out = cps;
	*n = (size_t)count;
	return true;
}

bool os_type_check(const char *utf8, size_t len)
{
	uint32_t *cps;
	size_t n;
	if (!decode_text(utf8, len, &cps, &n))
		return false;
	free(cps);
	return true;
}

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

/* Carries out one plan. Leaves Shift released; bindings are undone by the caller. */
static bool run_plan(os_display *d, const os_type_plan *plan, int delay_ms,
                     size_t *typed)
{
	struct os_input_state *st = d->input;
	uint32_t cur[256][2];           /* what each spare keycode holds now */
	memset(cur, 0, sizeof(cur));
	bool shift_down = false;
	bool ok = true;
	size_t since_drain = 0;
	*typed = 0;
	for (size_t r = 0; r < plan->nrounds && ok; r++) {
		const os_type_round *round = &plan->rounds[r];
		if (os_input_signal_caught() != 0)
			break;
		if (round->nbind > 0) {
			/*
			 * A client decodes a keystroke with the binding current when it
			 * gets round to it: a column is rebound only once the client has
			 * handled every keystroke typed with its old binding.
			 */
			uint8_t codes[256], cols[256];
			int n = 0;
			for (size_t b = 0; b < round->nbind; b++) {
				const os_type_bind *bd = &plan->binds[round->first_bind + b];
				uint8_t mask = 0;
				for (int col = 0; col < 2; col++)
					if (cur[bd->code][col] != 0 &&
					    cur[bd->code][col] != bd->syms[col])
						mask |= (uint8_t)(1 << col);
				if (mask != 0) {
					codes[n] = bd->code;
					cols[n++] = mask;
				}
			}
			os_input_settle(d, codes, cols, n);
			if (os_input_signal_caught() != 0)
				break;
			os_x_trap_begin(d);
			for (size_t b = 0; b < round->nbind; b++) {
				const os_type_bind *bd = &plan->binds[round->first_bind + b];
				os_input_bind(d, bd->code, bd->syms);
				cur[bd->code][0] = bd->syms[0];
				cur[bd->code][1] = bd->syms[1];
			}
			if (os_x_trap_end(d, "binding spare keycodes") != 0) {
				ok = false;
				break;
			}
		}
		for (size_t k = 0; k < round->nstroke; k++) {
			const os_type_stroke *s = &plan->strokes[round->first_stroke + k];
			if (s->shift != shift_down) {
				XTestFakeKeyEvent(d->dpy, (unsigned)st->shift_code, s->shift,
				                  CurrentTime);
				shift_down = s->shift;
			}
			XTestFakeKeyEvent(d->dpy, s->code, True, CurrentTime);
			XTestFakeKeyEvent(d->dpy, s->code, False, CurrentTime);
			if (s->spare)
				os_input_used(d, s->code, s->shift ? 1 : 0);
			(*typed)++;
			if (++since_drain == OS_TYPE_DRAIN_EVERY) {
				since_drain = 0;
				if (shift_down) {
					XTestFakeKeyEvent(d->dpy, (unsigned)st->shift_code,
					                  False, CurrentTime);
					shift_down = false;
				}
				XSync(d->dpy, False);
				os_input_epoch_end(d);
				os_input_drain(d);
			}
			if (delay_ms > 0) {
				XFlush(d->dpy);
				os_input_sleep_ms(delay_ms);
			}
			if (os_input_signal_caught() != 0)
				break;
		}
		if (shift_down) {
			XTestFakeKeyEvent(d->dpy, (unsigned)st->shift_code, False,
			                  CurrentTime);
			shift_down = false;
		}
		XSync(d->dpy, False);
		if (os_display_dead(d)) {
			ok = false;
			break;
		}
		os_input_epoch_end(d);
	}
	return ok;
}

bool os_type(os_display *d, const char *utf8, size_t len, int delay_ms)
{
	uint32_t *cps = NULL;
	size_t n = 0;
	os_keymap km = {0};
	os_type_plan plan = {0};
	bool ok = false;

	if (!decode_text(utf8, len, &cps, &n))
		return false;
	if (n == 0) {
		free(cps);
		return true;
	}
	struct os_input_state *st = os_input_state(d);
	if (st == NULL)
		goto out_cps;
	if (!os_input_keymap(d, &km))
		goto out_cps;
	uint8_t spare[256];
	int nspare = os_keymap_spare(&km, spare, 256);
	if (nspare > 256)
		nspare = 256;
	if (!os_type_plan_make(&km, spare, nspare, cps, n, &plan))
		goto out_km;
	for (size_t i = 0; i < plan.nstrokes; i++) {
		if (plan.strokes[i].shift && st->shift_code == 0) {
			os_fail("the keymap has no Shift key");
			goto out_plan;
		}
	}

	/*
	 * Held modifiers would turn the text into shortcuts; a locked Caps Lock
	 * would change its case. The first is refused, the second lifted for
	 * the duration.
	 */
	XkbStateRec xs;
	if (XkbGetState(d->dpy, XkbUseCoreKbd, &xs) != Success) {
		os_fail("cannot read the keyboard state of %s", d->name);
		goto out_plan;
	}
	unsigned held = (unsigned)(xs.base_mods | xs.latched_mods) &
	                (ShiftMask | ControlMask | Mod1Mask | Mod3Mask | Mod4Mask |
	                 Mod5Mask);
	if (held != 0) {
		char names[96];
		os_fail("cannot type while modifier keys are held down (%s): "
		        "release them first", held_modifier_names(held, names,
		                                                   sizeof(names)));
		goto out_plan;
	}
	bool caps = (xs.locked_mods & LockMask) != 0;
	if (plan.nspare > 0)
		os_input_find_peer(d);

	struct os_signal_guard g;
	os_input_signals_begin(&g);
	if (caps)
		XkbLockModifiers(d->dpy, XkbUseCoreKbd, LockMask, 0);
	size_t typed = 0;
	ok = run_plan(d, &plan, delay_ms, &typed);
	char reason[512];
	if (!ok)
		snprintf(reason, sizeof(reason), "%s", os_error());
	bool restored = os_input_restore(d);
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

out_plan:
	os_type_plan_finish(&plan);
out_km:
	free((void *)km.syms);
out_cps:
	free(cps);
	return ok;
}
