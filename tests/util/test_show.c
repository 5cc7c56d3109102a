/*
 * Unit tests: foreign text made visible for a terminal (agent_show_*), and
 * the text of a `type` action as the human approves it (agent_show_typed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/util/textutil.h"

static char *shown(const char *s, size_t n, unsigned flags)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_show_append(&b, s, n, flags);
	return agent_buf_steal(&b);
}

static void assert_shown(const char *in, unsigned flags, const char *want)
{
	char *got = shown(in, strlen(in), flags);
	assert_string_equal(got, want);
	free(got);
}

/* No byte that a terminal obeys survives: C0 but LF/TAB, DEL, C1. */
static void assert_inert(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		assert_false(*p < 0x20 && *p != '\n' && *p != '\t');
		assert_false(*p == 0x7f);
		assert_false(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
	}
	assert_true(agent_utf8_valid(s, strlen(s)));
}

static void test_controls_show_by_name(void **state)
{
	(void)state;
	assert_shown("a\x1b[2K\rb\x1b]52;c;AAAA\x07", AGENT_SHOW_LINES,
	             "a⟨ESC⟩[2K⟨CR⟩b⟨ESC⟩]52;c;AAAA⟨BEL⟩");
	assert_shown("x\x7f\b\x01", 0, "x⟨DEL⟩⟨BS⟩⟨SOH⟩");
	/* Lines and tabs stay only when asked to. */
	assert_shown("a\n\tb", AGENT_SHOW_LINES, "a\n\tb");
	assert_shown("a\n\tb", 0, "a⟨LF⟩⟨tab⟩b");
}

static void test_c1_bidi_and_invisible_show_by_code_point(void **state)
{
	(void)state;
	assert_shown("\xc2\x9b" "31m", 0, "⟨U+009B⟩31m");
	assert_shown("x \u202e;eno\u202c \u2066y\u2069", 0,
	             "x ⟨U+202E⟩;eno⟨U+202C⟩ ⟨U+2066⟩y⟨U+2069⟩");
	assert_shown("a\u200bb\ufeffc\u2060d\u00ade\U000E0041", 0,
	             "a⟨U+200B⟩b⟨U+FEFF⟩c⟨U+2060⟩d⟨U+00AD⟩e⟨U+E0041⟩");
	/* A raw C1 byte is not UTF-8: the replacement character, never 0x9b. */
	assert_shown("a\x9b" "b", 0, "a\xef\xbf\xbd" "b");
}

static void test_prose_keeps_emoji_strict_marks_them(void **state)
{
	(void)state;
	const char *emoji = "ok \u26a0\ufe0f \U0001F468\u200d\U0001F469 caf\u00e9 \u4e2d";
	assert_shown(emoji, AGENT_SHOW_LINES, emoji);
	assert_shown("a\u00a0b\u200dc\ufe0f\u27e8x\u27e9\u23ce", AGENT_SHOW_STRICT,
	             "a⟨U+00A0⟩b⟨U+200D⟩c⟨U+FE0F⟩⟨U+27E8⟩x⟨U+27E9⟩⟨U+23CE⟩");
}

/* A stream split anywhere shows exactly as the whole text does. */
static void test_stream_split_anywhere(void **state)
{
	(void)state;
	const char *in = "a\xc2\x9b\xe2\x80\xae\xf0\x9f\x99\x82\x1b]0;t\x07z\xe2\x80" "\xff";
	size_t n = strlen(in);
	char *whole = shown(in, n, AGENT_SHOW_LINES);
	assert_inert(whole);
	for (size_t cut1 = 0; cut1 <= n; cut1++) {
		for (size_t cut2 = cut1; cut2 <= n; cut2++) {
			agent_show st;
			agent_show_init(&st, AGENT_SHOW_LINES);
			agent_buf b;
			agent_buf_init(&b);
			agent_show_feed(&st, &b, in, cut1);
			agent_show_feed(&st, &b, in + cut1, cut2 - cut1);
			agent_show_feed(&st, &b, in + cut2, n - cut2);
			agent_show_end(&st, &b);
			assert_string_equal(agent_buf_cstr(&b), whole);
			agent_buf_finish(&b);
		}
	}
	free(whole);
}

/* Every byte value, alone and after a lead byte: nothing obeyed. */
static void test_no_byte_gets_through(void **state)
{
	(void)state;
	for (int lead = 0; lead < 256; lead++) {
		for (int c = 1; c < 256; c++) {
			char in[3] = {(char)(lead ? lead : 'a'), (char)c, 0};
			char *s = shown(in, 2, AGENT_SHOW_LINES);
			assert_inert(s);
			free(s);
		}
	}
}

static char *typed(const char *s)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_show_typed(&b, s, strlen(s));
	return agent_buf_steal(&b);
}

static void test_typed_text_whole_with_length(void **state)
{
	(void)state;
	char in[400];
	snprintf(in, sizeof(in), "echo hello%150s; cat ~/.config/deskhand/config.json > /tmp/stolen", "");
	char *s = typed(in);
	char want[400];
	snprintf(want, sizeof(want), "%zu characters, ⟨…⟩ marks what does not show:\n"
	         "  \"echo hello⟨150 spaces⟩; cat ~/.config/deskhand/config.json > /tmp/stolen\"",
	         strlen(in));
	assert_string_equal(s, want);
	free(s);
	/* One or two spaces are plain; a long text is never cut. */
	s = typed("a b  c");
	assert_string_equal(s, "6 characters:\n  \"a b  c\"");
	free(s);
	char *big = malloc(70001);
	memset(big, 'x', 70000);
	big[70000] = '\0';
	s = typed(big);
	assert_non_null(strstr(s, "70000 characters:"));
	assert_int_equal(strlen(s), strlen("70000 characters:\n  \"\"") + 70000);
	free(s);
	free(big);
}

static void test_typed_text_marks_what_does_not_show(void **state)
{
	(void)state;
	char *s = typed("ls\u200b -l\u202e\tx\ny\u00a0\x1b");
	assert_string_equal(s, "13 characters on 2 lines, ⟨…⟩ marks what does not show:\n"
	                       "  \"ls⟨U+200B⟩ -l⟨U+202E⟩⟨tab⟩x⏎\n  y⟨U+00A0⟩⟨ESC⟩\"");
	free(s);
	/* Text that imitates a mark is marked itself. */
	s = typed("\u27e8150 spaces\u27e9\u23ce");
	assert_non_null(strstr(s, "⟨U+27E8⟩150 spaces⟨U+27E9⟩⟨U+23CE⟩"));
	free(s);
}

static void test_typed_text_mixed_scripts(void **state)
{
	(void)state;
	char *s = typed("p\u0430ypal.com");     /* a Cyrillic а */
	assert_string_equal(s, "10 characters; MIXED SCRIPTS (Latin, Cyrillic): some letters "
	                       "may be look-alikes:\n  \"p\u0430ypal.com\"");
	free(s);
	s = typed("\u043f\u0440\u0438\u0432\u0435\u0442 123");  /* Cyrillic alone */
	assert_null(strstr(s, "MIXED"));
	free(s);
	s = typed("\uff41dmin");                 /* a fullwidth a */
	assert_non_null(strstr(s, "MIXED SCRIPTS (fullwidth Latin, Latin)"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_show_by_name),
		cmocka_unit_test(test_c1_bidi_and_invisible_show_by_code_point),
		cmocka_unit_test(test_prose_keeps_emoji_strict_marks_them),
		cmocka_unit_test(test_stream_split_anywhere),
		cmocka_unit_test(test_no_byte_gets_through),
		cmocka_unit_test(test_typed_text_whole_with_length),
		cmocka_unit_test(test_typed_text_marks_what_does_not_show),
		cmocka_unit_test(test_typed_text_mixed_scripts),
	};
	return cmocka_run_group_tests_name("show", tests, NULL, NULL);
}
