/*
 * Unit tests for os/keys: key-combination parsing, strict UTF-8, the
 * character -> keysym mapping, and the typing planner against a synthetic
 * keymap (which characters use existing keys at which level, which take
 * spare keycodes, how rounds are cut, and that every keystroke decodes to
 * its character under the binding in force when it is typed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xkbcommon/xkbcommon.h>

#include "base/base.h"
#include "os/keys.h"
#include "os/os.h"

/* ---- parsing ----------------------------------------------------------- */

static void expect_combo(const char *text, int n, ...)
{
	os_combo c;
	bool ok = os_key_parse(text, &c);
	if (!ok)
		fail_msg("'%s' did not parse: %s", text, os_error());
	assert_int_equal(c.count, n);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		uint32_t want = va_arg(ap, uint32_t);
		if (c.keysyms[i] != want)
			fail_msg("'%s' part %d: 0x%x, want 0x%x", text, i, c.keysyms[i], want);
	}
	va_end(ap);
}

static void expect_parse_error(const char *text, const char *needle)
{
	os_combo c;
	if (os_key_parse(text, &c))
		fail_msg("'%s' parsed but should not", text);
	if (strstr(os_error(), needle) == NULL)
		fail_msg("'%s': error '%s' does not mention '%s'", text, os_error(), needle);
}

static void test_parse_aliases(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint32_t keysym;
	} cases[] = {
		{"ctrl", XKB_KEY_Control_L}, {"control", XKB_KEY_Control_L},
		{"shift", XKB_KEY_Shift_L}, {"alt", XKB_KEY_Alt_L},
		{"super", XKB_KEY_Super_L}, {"win", XKB_KEY_Super_L},
		{"windows", XKB_KEY_Super_L}, {"cmd", XKB_KEY_Super_L},
		{"meta", XKB_KEY_Super_L}, {"enter", XKB_KEY_Return},
		{"return", XKB_KEY_Return}, {"esc", XKB_KEY_Escape},
		{"escape", XKB_KEY_Escape}, {"del", XKB_KEY_Delete},
		{"delete", XKB_KEY_Delete}, {"backspace", XKB_KEY_BackSpace},
		{"tab", XKB_KEY_Tab}, {"space", XKB_KEY_space},
		{"pgup", XKB_KEY_Prior}, {"pageup", XKB_KEY_Prior},
		{"pgdn", XKB_KEY_Next}, {"pagedown", XKB_KEY_Next},
		{"home", XKB_KEY_Home}, {"end", XKB_KEY_End},
		{"up", XKB_KEY_Up}, {"down", XKB_KEY_Down},
		{"left", XKB_KEY_Left}, {"right", XKB_KEY_Right},
		{"insert", XKB_KEY_Insert}, {"capslock", XKB_KEY_Caps_Lock},
		{"printscreen", XKB_KEY_Print}, {"print", XKB_KEY_Print},
		{"menu", XKB_KEY_Menu}, {"plus", XKB_KEY_plus},
		{"altgr", XKB_KEY_ISO_Level3_Shift},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		expect_combo(cases[i].name, 1, cases[i].keysym);
		/* Aliases ignore case. */
		char upper[32];
		size_t k;
		for (k = 0; cases[i].name[k] != '\0'; k++)
			upper[k] = (char)(cases[i].name[k] >= 'a' && cases[i].name[k] <= 'z'
			                  ? cases[i].name[k] - 32 : cases[i].name[k]);
		upper[k] = '\0';
		expect_combo(upper, 1, cases[i].keysym);
	}
}

static void test_parse_combinations(void **state)
{
	(void)state;
	expect_combo("ctrl+shift+t", 3, XKB_KEY_Control_L, XKB_KEY_Shift_L, XKB_KEY_t);
	expect_combo("alt+F4", 2, XKB_KEY_Alt_L, XKB_KEY_F4);
	expect_combo("alt+f4", 2, XKB_KEY_Alt_L, XKB_KEY_F4);
	expect_combo("Return", 1, XKB_KEY_Return);
	expect_combo("KP_Enter", 1, XKB_KEY_KP_Enter);
	expect_combo("kp_enter", 1, XKB_KEY_KP_Enter);
	expect_combo("super", 1, XKB_KEY_Super_L);
	expect_combo("ctrl++", 2, XKB_KEY_Control_L, XKB_KEY_plus);
	expect_combo("ctrl+plus", 2, XKB_KEY_Control_L, XKB_KEY_plus);
	expect_combo("+", 1, XKB_KEY_plus);
	expect_combo("ctrl+alt+Delete", 3, XKB_KEY_Control_L, XKB_KEY_Alt_L, XKB_KEY_Delete);
	expect_combo("CTRL+Shift+T", 3, XKB_KEY_Control_L, XKB_KEY_Shift_L, XKB_KEY_T);
	expect_combo("ctrl+minus", 2, XKB_KEY_Control_L, XKB_KEY_minus);
	expect_combo("ctrl+-", 2, XKB_KEY_Control_L, XKB_KEY_minus);
	expect_combo("Shift_R", 1, XKB_KEY_Shift_R);
	expect_combo("XF86AudioMute", 1, XKB_KEY_XF86AudioMute);
}

static void test_parse_characters(void **state)
{
	(void)state;
	expect_combo("a", 1, XKB_KEY_a);
	expect_combo("A", 1, XKB_KEY_A);          /* single characters keep case */
	expect_combo("1", 1, XKB_KEY_1);
	expect_combo(" ", 1, XKB_KEY_space);
	expect_combo("é", 1, 0xe9u);
	expect_combo("ctrl+ж", 2, XKB_KEY_Control_L, 0x1000436u);
	expect_combo("😀", 1, 0x101f600u);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_parse_error("", "empty");
	expect_parse_error("ctrl+", "ends with '+'");
	expect_parse_error("ctrl+foo", "'foo'");
	expect_parse_error("frobnicate+a", "'frobnicate'");
	expect_parse_error("++", "ends with '+'");
	expect_parse_error("a++b", "expected '+'");
	expect_parse_error("ab", "'ab'");
	expect_parse_error("a+b+c+d+e+f+g+h+i", "too many");
	expect_parse_error("ctrl+\xff", "unknown key name");
	expect_parse_error("ctrl+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	                   "too long");
}

/* ---- UTF-8 --------------------------------------------------------------- */

static void test_utf8_valid(void **state)
{
	(void)state;
	const char *s = "aé€😀\n";
	uint32_t out[16];
	size_t bad = 99;
	long n = os_utf8_decode(s, strlen(s), out, &bad);
	assert_int_equal(n, 5);
	assert_int_equal(out[0], 'a');
	assert_int_equal(out[1], 0xe9);
	assert_int_equal(out[2], 0x20ac);
	assert_int_equal(out[3], 0x1f600);
	assert_int_equal(out[4], '\n');
	/* Boundaries: U+007F, U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF. */
	const char edges[] = "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"
	                     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
	n = os_utf8_decode(edges, sizeof(edges) - 1, out, &bad);
	assert_int_equal(n, 7);
	assert_int_equal(out[6], 0x10ffff);
	for (uint32_t cp = 1; cp <= 0x10ffff; cp += 97) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		char buf[4];
		int len = base_utf8_encode(cp, buf);
		uint32_t back;
		assert_int_equal(os_utf8_decode(buf, (size_t)len, &back, NULL), 1);
		assert_int_equal(back, cp);
	}
}

static void expect_invalid(const char *s, size_t len, size_t offset)
{
	uint32_t out[16];
	size_t bad = 999;
	long n = os_utf8_decode(s, len, out, &bad);
	if (n != -1)
		fail_msg("decoded %ld code points from invalid input", n);
	assert_int_equal(bad, offset);
}

static void test_utf8_invalid(void **state)
{
	(void)state;
	expect_invalid("\x80", 1, 0);                   /* lone continuation */
	expect_invalid("ab\xc0\x80", 4, 2);             /* overlong NUL */
	expect_invalid("\xc1\xbf", 2, 0);               /* overlong */
	expect_invalid("\xe0\x80\x80", 3, 0);           /* overlong 3-byte */
	expect_invalid("\xf0\x80\x80\x80", 4, 0);       /* overlong 4-byte */
	expect_invalid("x\xed\xa0\x80", 4, 1);          /* surrogate U+D800 */
	expect_invalid("\xed\xbf\xbf", 3, 0);           /* surrogate U+DFFF */
	expect_invalid("\xf4\x90\x80\x80", 4, 0);       /* above U+10FFFF */
	expect_invalid("\xf5\x80\x80\x80", 4, 0);
	expect_invalid("\xff", 1, 0);
	expect_invalid("ok\xe2\x82", 4, 2);             /* truncated at the end */
	expect_invalid("\xe2\x28\xa1", 3, 0);           /* bad continuation */
	expect_invalid("\xf0\x9f\x98", 3, 0);           /* truncated emoji */
}

static void test_keysym_for_char(void **state)
{
	(void)state;
	assert_int_equal(os_keysym_for_char('\n'), XKB_KEY_Return);
	assert_int_equal(os_keysym_for_char('\t'), XKB_KEY_Tab);
	assert_int_equal(os_keysym_for_char('a'), XKB_KEY_a);
	assert_int_equal(os_keysym_for_char(' '), XKB_KEY_space);
	assert_int_equal(os_keysym_for_char('~'), XKB_KEY_asciitilde);
	assert_int_equal(os_keysym_for_char(0xe9), XKB_KEY_eacute);
	assert_int_equal(os_keysym_for_char(0x436), 0x1000436);
	assert_int_equal(os_keysym_for_char(0x1f600), 0x101f600);
	assert_int_equal(os_keysym_for_char(0), 0);
	assert_int_equal(os_keysym_for_char('\r'), 0);
	assert_int_equal(os_keysym_for_char(0x07), 0);
	assert_int_equal(os_keysym_for_char(0x1b), 0);
	assert_int_equal(os_keysym_for_char(0x7f), 0);
}

static void test_type_check(void **state)
{
	(void)state;
	assert_true(os_type_check("héllo\tworld\n", strlen("héllo\tworld\n")));
	assert_true(os_type_check("", 0));
	assert_false(os_type_check("ab\xc3", 3));
	assert_non_null(strstr(os_error(), "offset 2"));
	assert_false(os_type_check("ab\rc", 4));
	assert_non_null(strstr(os_error(), "U+000D"));
	assert_false(os_type_check("a\0b", 3));
	assert_non_null(strstr(os_error(), "character 2"));
}

/* ---- the planner --------------------------------------------------------- */

#define KM_MIN 8
#define KM_MAX 40
#define KM_PER 4

static uint32_t km_syms[(KM_MAX - KM_MIN + 1) * KM_PER];
static const uint8_t spare_codes[3] = {20, 21, 22};

static void km_set(int code, uint32_t c0, uint32_t c1)
{
	uint32_t *row = &km_syms[(code - KM_MIN) * KM_PER];
	row[0] = c0;
	row[1] = c1;
	row[2] = c0;
	row[3] = c1;
}

/*
 * A small US-like keymap: letters a..e, digits, punctuation on shifted
 * columns, Return, Tab, space, a keypad key, a legacy Cyrillic keysym, and
 * three empty keycodes (20, 21, 22). Every other keycode is taken.
 */
static os_keymap synthetic_keymap(void)
{
	memset(km_syms, 0, sizeof(km_syms));
	for (int c = KM_MIN; c <= KM_MAX; c++)
		km_set(c, XKB_KEY_F1 + (uint32_t)(c % 12), 0);
	km_set(10, XKB_KEY_a, XKB_KEY_A);
	km_set(11, XKB_KEY_b, XKB_KEY_B);
	km_set(12, XKB_KEY_c, XKB_KEY_C);
	km_set(13, XKB_KEY_1, XKB_KEY_exclam);
	km_set(14, XKB_KEY_equal, XKB_KEY_plus);
	km_set(15, XKB_KEY_Return, 0);
	km_set(16, XKB_KEY_Tab, XKB_KEY_ISO_Left_Tab);
	km_set(17, XKB_KEY_space, 0);
	km_set(18, XKB_KEY_KP_1, XKB_KEY_KP_End);  /* keypad: never for '1' */
	km_set(19, XKB_KEY_Cyrillic_a, XKB_KEY_Cyrillic_A);
	km_set(25, XKB_KEY_KP_2, XKB_KEY_2);       /* '2' only on a shifted column */
	for (int i = 0; i < 3; i++)
		km_set(spare_codes[i], 0, 0);
	os_keymap km = {.min_code = KM_MIN, .max_code = KM_MAX, .per_code = KM_PER,
	                .syms = km_syms};
	return km;
}

static size_t decode(const char *s, uint32_t *out)
{
	long n = os_utf8_decode(s, strlen(s), out, NULL);
	assert_true(n >= 0);
	return (size_t)n;
}

static void test_keymap_queries(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint8_t spare[16];
	assert_int_equal(os_keymap_spare(&km, spare, 16), 3);
	assert_memory_equal(spare, spare_codes, 3);
	bool shift = true;
	assert_int_equal(os_keymap_find(&km, XKB_KEY_a, &shift), 10);
	assert_false(shift);
	assert_int_equal(os_keymap_find(&km, XKB_KEY_plus, &shift), 14);
	assert_true(shift);
	assert_int_equal(os_keymap_find(&km, XKB_KEY_1, &shift), 13);
	assert_false(shift);
	assert_int_equal(os_keymap_find(&km, XKB_KEY_KP_1, &shift), 18);
	/* U+0430 is found through the legacy keysym of a Cyrillic layout. */
	assert_int_equal(os_keymap_find(&km, 0x1000430, &shift), 19);
	assert_false(shift);
	assert_int_equal(os_keymap_find(&km, 0x1000436, &shift), 0);
	assert_int_equal(os_keymap_get(&km, 99, 0), 0);
}

/* The keysym each keystroke of `plan` produces, under the bindings in force. */
static void simulate(const os_keymap *km, const os_type_plan *plan,
                     const uint32_t *cps, size_t n, int nspare)
{
	uint32_t bound[256][2];
	memset(bound, 0, sizeof(bound));
	long typed_round[256][2];
	for (int c = 0; c < 256; c++)
		typed_round[c][0] = typed_round[c][1] = -1;
	size_t next = 0;
	assert_true(plan->nrounds >= 1);
	for (size_t r = 0; r < plan->nrounds; r++) {
		const os_type_round *round = &plan->rounds[r];
		assert_int_equal(round->first_stroke, next);
		for (size_t b = 0; b < round->nbind; b++) {
			const os_type_bind *bd = &plan->binds[round->first_bind + b];
			bool is_spare = false;
			for (int i = 0; i < nspare; i++)
				is_spare |= bd->code == spare_codes[i];
			assert_true(is_spare);
			for (int col = 0; col < 2; col++) {
				/* A column is never rebound in a round that types it. */
				if (bound[bd->code][col] != bd->syms[col])
					assert_true(typed_round[bd->code][col] < (long)r);
				bound[bd->code][col] = bd->syms[col];
			}
			/* (K, NoSymbol) would be read as (lower(K), upper(K)). */
			assert_int_not_equal(bd->syms[0], 0);
			assert_int_not_equal(bd->syms[1], 0);
		}
		size_t distinct_slots = 0;
		bool seen[256][2];
		memset(seen, 0, sizeof(seen));
		for (size_t k = 0; k < round->nstroke; k++) {
			const os_type_stroke *s = &plan->strokes[round->first_stroke + k];
			assert_int_equal(s->index, next);
			int col = s->shift ? 1 : 0;
			uint32_t got = s->spare ? bound[s->code][col]
			                        : os_keymap_get(km, s->code, col);
			uint32_t want = os_keysym_for_char(cps[next]);
			if (got != want) {
				/* An existing key may carry a legacy keysym for the char. */
				assert_false(s->spare);
				assert_int_equal(xkb_keysym_to_utf32(got), cps[next]);
			}
			if (s->spare) {
				typed_round[s->code][col] = (long)r;
				if (!seen[s->code][col])
					distinct_slots++;
				seen[s->code][col] = true;
			}
			next++;
		}
		/* Only the last round may end with slots to spare. */
		if (r + 1 < plan->nrounds)
			assert_int_equal(distinct_slots, (size_t)(2 * nspare));
	}
	assert_int_equal(next, n);
	assert_int_equal(plan->nstrokes, n);
}

static void test_plan_existing_keys(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint32_t cps[32];
	size_t n = decode("aB1!+\n\t 2а", cps);
	os_type_plan plan;
	assert_true(os_type_plan_make(&km, spare_codes, 3, cps, n, &plan));
	assert_int_equal(plan.nrounds, 1);
	assert_int_equal(plan.nbinds, 0);
	static const struct {
		uint8_t code;
		bool shift;
	} want[] = {{10, false}, {11, true}, {13, false}, {13, true}, {14, true},
	            {15, false}, {16, false}, {17, false}, {25, true}, {19, false}};
	assert_int_equal(plan.nstrokes, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < plan.nstrokes; i++) {
		assert_int_equal(plan.strokes[i].code, want[i].code);
		assert_int_equal(plan.strokes[i].shift, want[i].shift);
		assert_false(plan.strokes[i].spare);
	}
	simulate(&km, &plan, cps, n, 3);
	os_type_plan_finish(&plan);
}

static void test_plan_spare_columns(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint32_t cps[32];
	/* Six distinct missing characters fill the six slots: one round. */
	size_t n = decode("éжΩ中😀ñaéж", cps);
	os_type_plan plan;
	assert_true(os_type_plan_make(&km, spare_codes, 3, cps, n, &plan));
	assert_int_equal(plan.nrounds, 1);
	/* Both columns of a spare keycode before the next keycode. */
	assert_int_equal(plan.strokes[0].code, 20);
	assert_false(plan.strokes[0].shift);
	assert_int_equal(plan.strokes[1].code, 20);
	assert_true(plan.strokes[1].shift);
	assert_int_equal(plan.strokes[2].code, 21);
	assert_false(plan.strokes[2].shift);
	assert_int_equal(plan.strokes[3].code, 21);
	assert_true(plan.strokes[3].shift);
	assert_int_equal(plan.strokes[4].code, 22);
	/* Repeated characters reuse their slot. */
	assert_int_equal(plan.strokes[7].code, 20);
	assert_false(plan.strokes[7].shift);
	assert_int_equal(plan.strokes[8].code, 20);
	assert_true(plan.strokes[8].shift);
	/* One mapping change per keycode, both columns set. */
	assert_int_equal(plan.nbinds, 3);
	assert_int_equal(plan.binds[0].syms[0], 0xe9);
	assert_int_equal(plan.binds[0].syms[1], 0x1000436);
	simulate(&km, &plan, cps, n, 3);
	os_type_plan_finish(&plan);

	/* A seventh character needs a second round. */
	n = decode("éжΩ中😀ñ€", cps);
	assert_true(os_type_plan_make(&km, spare_codes, 3, cps, n, &plan));
	assert_int_equal(plan.nrounds, 2);
	assert_int_equal(plan.rounds[1].nbind, 1);
	/* No character comes back: the least recently used slot goes, é's. */
	assert_int_equal(plan.strokes[6].code, 20);
	assert_false(plan.strokes[6].shift);
	simulate(&km, &plan, cps, n, 3);
	os_type_plan_finish(&plan);
}

static void test_plan_mirrors_unused_column(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint32_t cps[4];
	size_t n = decode("Ж", cps);
	os_type_plan plan;
	assert_true(os_type_plan_make(&km, spare_codes, 1, cps, n, &plan));
	assert_int_equal(plan.nbinds, 1);
	assert_int_equal(plan.binds[0].syms[0], 0x1000416);
	assert_int_equal(plan.binds[0].syms[1], 0x1000416);
	os_type_plan_finish(&plan);
}

/* Deterministic pseudo-random texts over a wide alphabet: invariants hold. */
static void test_plan_random_texts(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	static const uint32_t alphabet[] = {
		'a', 'b', 'c', 'A', '1', '!', '\n', '\t', ' ', 0xe9, 0xf1, 0x3a9,
		0x3b1, 0x436, 0x430, 0x4e2d, 0x6587, 0x1f600, 0x1f680, 0x20ac, 0xdf,
		0x2192, 0x221e, 0xd55c, 0x3093, 0x30ab, 0x1f9ea, 0x2713, 0xa3, 0xb0};
	uint32_t cps[400];
	uint32_t seed = 12345;
	for (int trial = 0; trial < 200; trial++) {
		size_t n = 1 + (size_t)(trial * 7 % 400);
		int width = 2 + trial % 28;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			cps[i] = alphabet[(seed >> 16) % (uint32_t)width];
		}
		int nspare = 1 + trial % 3;
		os_type_plan plan;
		assert_true(os_type_plan_make(&km, spare_codes, nspare, cps, n, &plan));
		simulate(&km, &plan, cps, n, nspare);
		os_type_plan_finish(&plan);
	}
}

static void test_plan_evicts_furthest_next_use(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint32_t cps[32];
	/* One spare keycode, two slots: é and ж; Ω must evict one of them. ж
	 * comes back before é does, so é's slot is given up. */
	size_t n = decode("éжΩжé", cps);
	os_type_plan plan;
	assert_true(os_type_plan_make(&km, spare_codes, 1, cps, n, &plan));
	assert_int_equal(plan.nrounds, 3);
	assert_int_equal(plan.strokes[2].shift, false);     /* Ω took é's column */
	assert_int_equal(plan.strokes[3].shift, true);      /* ж kept its column */
	assert_int_equal(plan.rounds[1].nbind, 1);
	simulate(&km, &plan, cps, n, 1);
	os_type_plan_finish(&plan);
}

static void test_plan_errors(void **state)
{
	(void)state;
	os_keymap km = synthetic_keymap();
	uint32_t cps[8];
	os_type_plan plan;
	cps[0] = 'a';
	cps[1] = 0x07;
	assert_false(os_type_plan_make(&km, spare_codes, 3, cps, 2, &plan));
	assert_non_null(strstr(os_error(), "character 2 (U+0007)"));
	assert_null(plan.strokes);
	cps[0] = 0x436;
	assert_false(os_type_plan_make(&km, spare_codes, 0, cps, 1, &plan));
	assert_non_null(strstr(os_error(), "no unused keycode"));
	/* Nothing missing: no spare keycode needed. */
	cps[0] = 'a';
	assert_true(os_type_plan_make(&km, spare_codes, 0, cps, 1, &plan));
	os_type_plan_finish(&plan);
	os_type_plan_finish(&plan);     /* finishing twice is harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_aliases),
		cmocka_unit_test(test_parse_combinations),
		cmocka_unit_test(test_parse_characters),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_keysym_for_char),
		cmocka_unit_test(test_type_check),
		cmocka_unit_test(test_keymap_queries),
		cmocka_unit_test(test_plan_existing_keys),
		cmocka_unit_test(test_plan_spare_columns),
		cmocka_unit_test(test_plan_mirrors_unused_column),
		cmocka_unit_test(test_plan_random_texts),
		cmocka_unit_test(test_plan_evicts_furthest_next_use),
		cmocka_unit_test(test_plan_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
