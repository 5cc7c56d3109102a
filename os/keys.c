/*
 * os/keys — pure keyboard logic: key names, UTF-8, and the typing planner.
 * See keys.h for the contracts. Keysym names and keysym <-> Unicode
 * conversions come from libxkbcommon's keysym tables, which need no display.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xkbcommon/xkbcommon.h>

#include "base/base.h"
#include "os/keys.h"
#include "os/os.h"
#include "os/backend.h"

long os_utf8_decode(const char *s, size_t len, uint32_t *out,
                    size_t *bad_offset)
{
	size_t i = 0;
	long n = 0;
	while (i < len) {
		size_t l = base_utf8_next(s + i, len - i, &out[n]);
		if (l == 0) {
			if (bad_offset != NULL)
				*bad_offset = i;
			return -1;
		}
		n++;
		i += l;
	}
	return n;
}

uint32_t os_keysym_for_char(uint32_t cp)
{
	if (cp == '\n')
		return XKB_KEY_Return;
	if (cp == '\t')
		return XKB_KEY_Tab;
	if (cp < 0x20 || cp == 0x7f || cp > 0x10ffff)
		return 0;
	if (cp <= 0xff)
		return cp;      /* Latin-1 keysyms equal their code points */
	return 0x01000000 + cp;
}

struct alias {
	const char *name;
	uint32_t keysym;
};

/* Matched case-insensitively, before keysym names. */
static const struct alias aliases[] = {
	{"ctrl", XKB_KEY_Control_L},
	{"control", XKB_KEY_Control_L},
	{"shift", XKB_KEY_Shift_L},
	{"alt", XKB_KEY_Alt_L},
	{"altgr", XKB_KEY_ISO_Level3_Shift},
	{"super", XKB_KEY_Super_L},
	{"win", XKB_KEY_Super_L},
	{"windows", XKB_KEY_Super_L},
	{"cmd", XKB_KEY_Super_L},
	{"meta", XKB_KEY_Super_L},
	{"enter", XKB_KEY_Return},
	{"return", XKB_KEY_Return},
	{"esc", XKB_KEY_Escape},
	{"escape", XKB_KEY_Escape},
	{"del", XKB_KEY_Delete},
	{"delete", XKB_KEY_Delete},
	{"backspace", XKB_KEY_BackSpace},
	{"tab", XKB_KEY_Tab},
	{"space", XKB_KEY_space},
	{"pgup", XKB_KEY_Prior},
	{"pageup", XKB_KEY_Prior},
	{"page_up", XKB_KEY_Prior},
	{"pgdn", XKB_KEY_Next},
	{"pagedown", XKB_KEY_Next},
	{"page_down", XKB_KEY_Next},
	{"home", XKB_KEY_Home},
	{"end", XKB_KEY_End},
	{"up", XKB_KEY_Up},
	{"down", XKB_KEY_Down},
	{"left", XKB_KEY_Left},
	{"right", XKB_KEY_Right},
	{"insert", XKB_KEY_Insert},
	{"ins", XKB_KEY_Insert},
	{"capslock", XKB_KEY_Caps_Lock},
	{"caps", XKB_KEY_Caps_Lock},
	{"printscreen", XKB_KEY_Print},
	{"print", XKB_KEY_Print},
	{"prtsc", XKB_KEY_Print},
	{"menu", XKB_KEY_Menu},
	{"plus", XKB_KEY_plus},
	{"minus", XKB_KEY_minus},
};

uint32_t os_keysym_from_name(const char *name)
{
	size_t len = strlen(name);
	if (len == 0)
		return 0;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(name, aliases[i].name) == 0)
			return aliases[i].keysym;
	/* One character: the keysym that types it ("a", "+", "é", "ж"). */
	uint32_t cps[4];
	if (len <= 4 && os_utf8_decode(name, len, cps, NULL) == 1) {
		uint32_t ks = os_keysym_for_char(cps[0]);
		if (ks != 0 && cps[0] >= 0x20)
			return ks;
	}
	xkb_keysym_t ks = xkb_keysym_from_name(name, XKB_KEYSYM_NO_FLAGS);
	if (ks == XKB_KEY_NoSymbol)
		ks = xkb_keysym_from_name(name, XKB_KEYSYM_CASE_INSENSITIVE);
	return ks;
}

bool os_key_format(const os_combo *c, char *buf, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return false;
	buf[0] = '\0';
	for (int i = 0; i < c->count; i++) {
		char name[64];
		if (xkb_keysym_get_name(c->keysyms[i], name, sizeof(name)) <= 0)
			return os_fail("keysym 0x%x has no name", (unsigned)c->keysyms[i]);
		int n = snprintf(buf + len, size - len, "%s%s", i ? "+" : "", name);
		if (n < 0 || (size_t)n >= size - len) {
			buf[0] = '\0';
			return os_fail("key combination does not fit in %zu bytes", size);
		}
		len += (size_t)n;
	}
	return true;
}

bool os_keysym_is_modifier(uint32_t ks)
{
	return (ks >= XKB_KEY_Shift_L && ks <= XKB_KEY_Hyper_R) ||
	       (ks >= XKB_KEY_ISO_Lock && ks <= XKB_KEY_ISO_Level5_Lock) ||
	       ks == XKB_KEY_Mode_switch || ks == XKB_KEY_Num_Lock;
}

uint32_t os_keymap_get(const os_keymap *km, int code, int column)
{
	if (code < km->min_code || code > km->max_code || column < 0 ||
	    column >= km->per_code)
		return 0;
	return km->syms[(size_t)(code - km->min_code) * (size_t)km->per_code +
	                (size_t)column];
}

static bool keysym_is_keypad(uint32_t ks)
{
	return ks >= XKB_KEY_KP_Space && ks <= XKB_KEY_KP_Equal;
}

/* The printable character a keysym types, 0 for none (or a keypad key). */
static uint32_t keysym_char(uint32_t ks)
{
	if (ks == 0 || keysym_is_keypad(ks))
		return 0;
	uint32_t cp = xkb_keysym_to_utf32(ks);
	if (cp < 0x20 || cp == 0x7f)
		return 0;
	return cp;
}

int os_keymap_find(const os_keymap *km, uint32_t keysym, bool *shift)
{
	if (keysym == 0)
		return 0;
	int columns = km->per_code < 2 ? km->per_code : 2;
	for (int col = 0; col < columns; col++)
		for (int code = km->min_code; code <= km->max_code; code++)
			if (os_keymap_get(km, code, col) == keysym) {
				*shift = col == 1;
				return code;
			}
	uint32_t want = keysym_char(keysym);
	if (want == 0)
		return 0;
	for (int col = 0; col < columns; col++)
		for (int code = km->min_code; code <= km->max_code; code++)
			if (keysym_char(os_keymap_get(km, code, col)) == want) {
				*shift = col == 1;
				return code;
			}
	return 0;
}

int os_keymap_spare(const os_keymap *km, uint8_t *out, int max)
{
	int n = 0;
	for (int code = km->min_code; code <= km->max_code && code <= 255; code++) {
		bool empty = true;
		for (int col = 0; col < km->per_code && empty; col++)
			empty = os_keymap_get(km, code, col) == 0;
		if (!empty)
			continue;
		if (n < max)
			out[n] = (uint8_t)code;
		n++;
	}
	return n;
}

/*
 * Planner state: one slot per (spare keycode, column). Slot 2i is column 0
 * of spare[i], slot 2i + 1 its column 1, so free slots fill both columns of
 * a keycode before the next one: every keycode a round changes is one
 * MappingNotify, and each costs the client a keymap fetch (xterm: ~1 ms;
 * typing 19 characters on 19 keycodes waited 28 ms for it, on 10 about 20).
 */
struct slot {
	uint32_t keysym;        /* assigned character keysym, 0 = none yet */
	long last_round;        /* last round that typed it, -1 = never */
	long last_stroke;       /* breaks ties: least recently used first */
	size_t next_use;        /* next index that types keysym, SIZE_MAX: none */
};

struct planner {
	os_type_plan *plan;
	size_t cap_rounds, cap_binds, cap_strokes;
	const uint8_t *spare;
	int nspare;
	struct slot *slots;
	long round;
	long bind_of_code[256];         /* bind index in the current round, -1 */
};

static bool grow(void **arr, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * size);
	if (p == NULL)
		return os_fail("out of memory");
	*arr = p;
	*cap = ncap;
	return true;
}

static bool round_open(struct planner *pl)
{
	os_type_plan *plan = pl->plan;
	if (!grow((void **)&plan->rounds, &pl->cap_rounds, plan->nrounds + 1,
	          sizeof(*plan->rounds)))
		return false;
	os_type_round *r = &plan->rounds[plan->nrounds++];
	r->first_bind = plan->nbinds;
	r->nbind = 0;
	r->first_stroke = plan->nstrokes;
	r->nstroke = 0;
	pl->round = (long)plan->nrounds - 1;
	for (int i = 0; i < 256; i++)
		pl->bind_of_code[i] = -1;
	return true;
}

static bool add_stroke(struct planner *pl, uint8_t code, bool shift,
                       bool spare, size_t index)
{
	os_type_plan *plan = pl->plan;
	if (!grow((void **)&plan->strokes, &pl->cap_strokes, plan->nstrokes + 1,
	          sizeof(*plan->strokes)))
		return false;
	plan->strokes[plan->nstrokes++] = (os_type_stroke){
		.code = code, .shift = shift, .spare = spare, .index = (uint32_t)index};
	plan->rounds[plan->nrounds - 1].nstroke++;
	return true;
}

/*
 * A keycode's two columns as bound: a column without a character repeats
 * the other one, because the core protocol reads (K, NoSymbol) as
 * (lower(K), upper(K)) and would turn an unshifted "Ж" into "ж".
 */
static void code_syms(const struct planner *pl, int spare_idx, uint32_t out[2])
{
	uint32_t c0 = pl->slots[2 * spare_idx].keysym;
	uint32_t c1 = pl->slots[2 * spare_idx + 1].keysym;
	out[0] = c0 ? c0 : c1;
	out[1] = c1 ? c1 : c0;
}

static bool bind_slot(struct planner *pl, int slot, uint32_t keysym)
{
	os_type_plan *plan = pl->plan;
	int idx = slot / 2;
	uint8_t code = pl->spare[idx];
	pl->slots[slot].keysym = keysym;
	long b = pl->bind_of_code[code];
	if (b < 0) {
		if (!grow((void **)&plan->binds, &pl->cap_binds, plan->nbinds + 1,
		          sizeof(*plan->binds)))
			return false;
		b = (long)plan->nbinds++;
		plan->rounds[plan->nrounds - 1].nbind++;
		pl->bind_of_code[code] = b;
		plan->binds[b].code = code;
	}
	code_syms(pl, idx, plan->binds[b].syms);
	if (idx + 1 > plan->nspare)
		plan->nspare = idx + 1;
	return true;
}

/*
 * next[i]: the next index after i that types the same character, SIZE_MAX
 * when none. Ownership: malloc'ed, the caller frees; NULL on failure.
 */
static size_t *next_uses(const uint32_t *cps, size_t n)
{
	size_t *next = malloc((n ? n : 1) * sizeof(*next));
	if (next == NULL)
		return NULL;
	/* Open-addressing table from code point to its latest index. */
	size_t cap = 64;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *keys = malloc(cap * sizeof(*keys));
	size_t *vals = malloc(cap * sizeof(*vals));
	if (keys == NULL || vals == NULL) {
		free(keys);
		free(vals);
		free(next);
		return NULL;
	}
	for (size_t k = 0; k < cap; k++)
		keys[k] = UINT32_MAX;
	for (size_t i = n; i-- > 0;) {
		size_t h = (cps[i] * 2654435761u) & (cap - 1);
		while (keys[h] != UINT32_MAX && keys[h] != cps[i])
			h = (h + 1) & (cap - 1);
		next[i] = keys[h] == UINT32_MAX ? SIZE_MAX : vals[h];
		keys[h] = cps[i];
		vals[h] = i;
	}
	free(keys);
	free(vals);
	return next;
}

/* The planner's slots, two per spare keycode, all free. */
static bool slots_create(struct planner *pl)
{
	int nslots = 2 * pl->nspare;
	if (nslots <= 0)
		return true;
	pl->slots = calloc((size_t)nslots, sizeof(*pl->slots));
	if (pl->slots == NULL)
		return os_fail("out of memory");
	for (int i = 0; i < nslots; i++) {
		pl->slots[i].last_round = pl->slots[i].last_stroke = -1;
		pl->slots[i].next_use = SIZE_MAX;
	}
	return true;
}

/*
 * The slot to rebind: among those this round does not type, the one whose
 * character comes back last (or never): the fewest rebindings for the
 * text (Belady's rule), least recently used on ties. -1: the round types
 * them all.
 */
static int slot_to_evict(const struct planner *pl)
{
	int slot = -1;
	for (int s = 0; s < 2 * pl->nspare; s++) {
		const struct slot *c = &pl->slots[s];
		if (c->last_round == pl->round)
			continue;
		if (slot < 0 || c->next_use > pl->slots[slot].next_use ||
		    (c->next_use == pl->slots[slot].next_use &&
		     c->last_stroke < pl->slots[slot].last_stroke))
			slot = s;
	}
	return slot;
}

/* The slot that holds keysym ks, bound now if none does (in a new round
 * when this one types every slot already). -1: failed, os_error says why. */
static int slot_for(struct planner *pl, uint32_t ks)
{
	for (int s = 0; s < 2 * pl->nspare; s++)
		if (pl->slots[s].keysym == ks)
			return s;
	int slot = -1;
	for (int pass = 0; pass < 2 && slot < 0; pass++) {
		slot = slot_to_evict(pl);
		if (slot < 0 && !round_open(pl))
			return -1;
	}
	if (!bind_slot(pl, slot, ks))
		return -1;
	return slot;
}

/* Plans character i of the text: its own key, or a spare one bound to it.
 * next: next_uses() of the text. */
static bool plan_char(struct planner *pl, const os_keymap *km, const uint32_t *cps,
                      size_t i, const size_t *next)
{
	uint32_t ks = os_keysym_for_char(cps[i]);
	if (ks == 0)
		return os_fail("character %zu (U+%04X) is a control character that "
		               "cannot be typed (only \\n and \\t are)", i + 1, cps[i]);
	bool shift = false;
	int code = os_keymap_find(km, ks, &shift);
	if (code > 0)
		return add_stroke(pl, (uint8_t)code, shift, false, i);
	if (pl->nspare == 0)
		return os_fail("character %zu (U+%04X) is not in the keymap and the "
		               "keymap has no unused keycode to bind it to", i + 1, cps[i]);
	int slot = slot_for(pl, ks);
	if (slot < 0)
		return false;
	pl->slots[slot].last_round = pl->round;
	pl->slots[slot].last_stroke = (long)i;
	pl->slots[slot].next_use = next[i];
	return add_stroke(pl, pl->spare[slot / 2], slot % 2 == 1, true, i);
}

bool os_type_plan_make(const os_keymap *km, const uint8_t *spare, int nspare,
                       const uint32_t *cps, size_t n, os_type_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	struct planner pl = {.plan = plan, .spare = spare, .nspare = nspare};
	size_t *next = next_uses(cps, n);
	bool ok = next != NULL ? true : os_fail("out of memory");
	ok = ok && slots_create(&pl) && round_open(&pl);
	for (size_t i = 0; i < n && ok; i++)
		ok = plan_char(&pl, km, cps, i, next);
	free(next);
	free(pl.slots);
	if (!ok)
		os_type_plan_finish(plan);
	return ok;
}

void os_type_plan_finish(os_type_plan *plan)
{
	free(plan->rounds);
	free(plan->binds);
	free(plan->strokes);
	memset(plan, 0, sizeof(*plan));
}

/* ---- text and key names, for every backend ------------------------------ */

bool os_text_decode(const char *utf8, size_t len, uint32_t **out, size_t *n)
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
	if (!os_text_decode(utf8, len, &cps, &n))
		return false;
	free(cps);
	return true;
}

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

