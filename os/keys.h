/*
 * os/keys — the pure half of keyboard input: key-name parsing helpers,
 * strict UTF-8 decoding, and the typing planner that decides, for a text and
 * a snapshot of the keymap, which keycode, shift level and temporary spare
 * keycode binding types each character. Nothing here talks to X, so all of
 * it is unit-tested without a server. Private to os/ (and tests/).
 */
#ifndef DESKHAND_OS_KEYS_H
#define DESKHAND_OS_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Decodes strict UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence. `out` must hold `len` entries (a code
 * point never takes less than one byte). Returns the number of code points,
 * or -1 with *bad_offset set to the byte offset of the first invalid
 * sequence; never reads past len.
 */
long os_utf8_decode(const char *s, size_t len, uint32_t *out,
                    size_t *bad_offset);

/*
 * The keysym that produces code point cp when typed: Return for '\n', Tab
 * for '\t', the Latin-1 keysym for U+0020..U+00FF, 0x01000000 + cp for
 * everything else. 0 for characters that cannot be typed (other C0
 * controls, DEL, NUL).
 */
uint32_t os_keysym_for_char(uint32_t cp);

/*
 * Resolves one part of a key combination ("ctrl", "Return", "f4", "+",
 * "é"): aliases first, then a single character, then an X keysym name
 * (exact, then case-insensitively). Returns 0 when the name is unknown.
 */
uint32_t os_keysym_from_name(const char *name);

/* True for modifier keysyms (Shift_L, Control_R, Super_L, ISO_Level3_Shift...). */
bool os_keysym_is_modifier(uint32_t keysym);

/*
 * A snapshot of the core keyboard mapping: `per_code` keysyms for each
 * keycode in [min_code, max_code], column 0 unshifted, column 1 with Shift.
 */
typedef struct os_keymap {
	int min_code, max_code;
	int per_code;
	const uint32_t *syms;
} os_keymap;

/* The keysym at (code, column) or 0 (NoSymbol) outside the map. */
uint32_t os_keymap_get(const os_keymap *km, int code, int column);

/*
 * Where a keysym already lives in the keymap: the lowest keycode that has it
 * in column 0, else the lowest with it in column 1 (then *shift = true).
 * Keypad keysyms are skipped when looking up characters, since their output
 * depends on NumLock. A keysym that stands for a printable character also
 * matches any keysym for the same character (a Cyrillic layout's legacy
 * Cyrillic_a for U+0430). Returns 0 when absent.
 */
int os_keymap_find(const os_keymap *km, uint32_t keysym, bool *shift);

/*
 * Keycodes whose every column is NoSymbol, ascending; the ones typing may
 * bind temporarily. Writes at most `max`, returns how many exist.
 */
int os_keymap_spare(const os_keymap *km, uint8_t *out, int max);

/*
 * The typing plan.
 *
 * A *slot* is one column (0 or 1) of one spare keycode. The plan is a list
 * of rounds; each round first binds some spare keycodes (one mapping change
 * for the whole round), then types keystrokes. Guarantees, checked by
 * tests/os/test_keys.c:
 *   - a slot is never rebound within a round that types it: every character
 *     of a round is looked up under the binding the round started with;
 *   - a rebinding never changes a slot that the same round types, and leaves
 *     the other column of the keycode as it was;
 *   - the slot given up for a new character is the one whose character
 *     comes back last in the text, or never (least recently used on ties),
 *     so the text needs as few rebindings as rounds allow; a character
 *     already bound is typed from its slot instead of being bound again;
 *   - a round ends only when it has no free slot left for a new character.
 * What the plan cannot know is when the target client has decoded the
 * keystrokes of a round; the executor (type.c) therefore waits, before a
 * rebinding changes a column typed since the client was last seen idle,
 * until the client is proven idle (peer.c) or, when it cannot be observed,
 * until a guard time has passed since that column's last keystroke.
 */
typedef struct os_type_bind {
	uint8_t code;
	uint32_t syms[2];      /* the keycode's columns 0 and 1 after binding */
} os_type_bind;

typedef struct os_type_stroke {
	uint8_t code;
	bool shift;
	bool spare;            /* typed through a temporarily bound keycode */
	uint32_t index;        /* which character of the text */
} os_type_stroke;

typedef struct os_type_round {
	size_t first_bind, nbind;      /* into plan->binds */
	size_t first_stroke, nstroke;  /* into plan->strokes */
} os_type_round;

typedef struct os_type_plan {
	os_type_round *rounds;
	size_t nrounds;
	os_type_bind *binds;
	size_t nbinds;
	os_type_stroke *strokes;
	size_t nstrokes;
	int nspare;             /* spare keycodes used by the plan */
} os_type_plan;

/*
 * Plans typing `n` code points under keymap `km`, binding missing
 * characters onto the spare keycodes `spare` (their original columns must be
 * NoSymbol). Fails (false, os_error) on a character that cannot be typed
 * (naming its index), when a character is missing and there is no spare
 * keycode, or on allocation failure.
 * Ownership: on success the caller releases *plan with os_type_plan_finish.
 */
bool os_type_plan_make(const os_keymap *km, const uint8_t *spare, int nspare,
                       const uint32_t *cps, size_t n, os_type_plan *plan);
/* Frees the plan's arrays; a zeroed plan is fine. */
void os_type_plan_finish(os_type_plan *plan);

/*
 * Decodes UTF-8 text to type and checks each character is typable (only
 * \n and \t of the controls), as os_type_check. Ownership: on success
 * *out is malloc'ed, the caller frees it.
 */
bool os_text_decode(const char *utf8, size_t len, uint32_t **out, size_t *n);

#endif
