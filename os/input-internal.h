/*
 * Private to os/input.c and os/type.c: the input state kept on the display
 * (XTest availability, temporary keymap bindings to undo), keymap
 * snapshots, and the signal guard that keeps keys and the keymap from being
 * left changed when SIGINT/SIGTERM/SIGHUP arrive mid-action.
 */
#ifndef DESKHAND_OS_INPUT_INTERNAL_H
#define DESKHAND_OS_INPUT_INTERNAL_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "os/keys.h"
#include "os/os-internal.h"

/*
 * Spare keycodes hold no keysym in the user's keymap, so undoing a binding
 * means writing NoSymbol back; `bound` remembers which ones are changed.
 */
struct os_input_state {
	bool bound[256];
	/* When each spare slot (keycode, column) was last typed: see guard. */
	struct timespec last_use[256][2];
	int shift_code;         /* a keycode with Shift (0: none) */
};

/*
 * How long a keycode must have rested after its last keystroke before it
 * may be rebound (or restored). A client looks a key up in its own copy of
 * the keymap, refreshed lazily after MappingNotify; if the binding changes
 * again before the client has read the key event, it types the new
 * character. Nothing in the protocol tells when another client has read its
 * events, so this bounds how far behind the target client may fall.
 */
#define OS_TYPE_GUARD_MS 80

/* The input state of d, created on first use after checking XTest. */
struct os_input_state *os_input_state(os_display *d);

/*
 * Snapshot of the core keymap. Ownership: km->syms is malloc'ed, the caller
 * frees it (free((void *)km->syms)).
 */
bool os_input_keymap(os_display *d, os_keymap *km);

/* Binds spare keycode `code` to columns syms[0], syms[1]; queued, not synced. */
void os_input_bind(os_display *d, uint8_t code, const uint32_t syms[2]);
/*
 * Waits until every bound keycode has rested for the guard time, then
 * writes NoSymbol back to each and syncs. Returns false (os_error) on an X
 * error or a lost connection.
 */
bool os_input_restore(os_display *d);

/* Sleeps until `until` (CLOCK_MONOTONIC) or until a guarded signal arrives. */
void os_input_sleep_until(const struct timespec *until);
void os_input_sleep_ms(int ms);
struct timespec os_input_now(void);
struct timespec os_input_add_ms(struct timespec t, int ms);
bool os_input_before(const struct timespec *a, const struct timespec *b);

/*
 * While a guard is active, SIGINT/SIGTERM/SIGHUP only set a flag, which the
 * action polls between events; os_input_signals_end puts the previous
 * dispositions back and re-raises the signal that arrived, if any, after the
 * caller has undone its changes. Not nestable.
 */
struct os_signal_guard {
	struct sigaction old[3];
};
void os_input_signals_begin(struct os_signal_guard *g);
/* The signal caught since begin, 0 for none. */
int os_input_signal_caught(void);
void os_input_signals_end(struct os_signal_guard *g);

#endif
