/* Unit tests: the streaming Markdown renderer, fed whole and byte by byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "agent/ui/markdown.h"
#include "agent/util/textutil.h"

static void sink(const char *s, size_t n, void *user)
{
	agent_buf_append(user, s, n);
}

/* Renders `in` in fragments of `step` bytes (0: all at once). */
static char *render(const char *in, bool color, size_t step)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_md md;
	agent_md_init(&md, color, sink, &b);
	size_t n = strlen(in);
	if (step == 0)
		step = n ? n : 1;
	for (size_t i = 0; i < n; i += step)
		agent_md_feed(&md, in + i, n - i < step ? n - i : step);
	agent_md_finish(&md);
	return agent_buf_steal(&b);
}

static void same_at_every_split(const char *in, const char *want)
{
	for (size_t step = 0; step <= 7; step++) {
		char *got = render(in, true, step);
		assert_string_equal(got, want);
		free(got);
	}
}

static void test_plain_passthrough(void **state)
{
	(void)state;
	const char *in = "# Title\n**bold** and `x`\n```py\nprint(1)\n```\n";
	char *got = render(in, false, 3);
	assert_string_equal(got, in);
	free(got);
}

static void test_bold_italic_code(void **state)
{
	(void)state;
	same_at_every_split("a **b** *c* `d`\n",
		"a \033[0;1mb\033[0m \033[0;3mc\033[0m \033[0;36md\033[0m\n");
}

static void test_heading(void **state)
{
	(void)state;
	same_at_every_split("## Plan\nnext\n", "\033[0;1;35mPlan\033[0m\nnext\n");
}

static void test_not_a_heading(void **state)
{
	(void)state;
	same_at_every_split("#include <x>\n", "#include <x>\n");
}

static void test_lists_and_quotes(void **state)
{
	(void)state;
	same_at_every_split("- one\n2. two\n> q\n",
		"• one\n\033[1m2.\033[0m two\n\033[2m│\033[0m q\n");
}

static void test_code_block_label(void **state)
{
	(void)state;
	same_at_every_split("```python\nx = 2*3\n```\nafter\n",
		"\033[2m── python ──\033[0m\n\033[0;36mx = 2*3\n\033[0m\033[0mafter\n");
}

static void test_lone_star_is_literal(void **state)
{
	(void)state;
	same_at_every_split("2 * 3\n", "2 * 3\n");
}

static void test_unclosed_styles_reset_at_end(void **state)
{
	(void)state;
	char *got = render("**open", true, 1);
	assert_string_equal(got, "\033[0;1mopen\033[0m");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_passthrough),
		cmocka_unit_test(test_bold_italic_code),
		cmocka_unit_test(test_heading),
		cmocka_unit_test(test_not_a_heading),
		cmocka_unit_test(test_lists_and_quotes),
		cmocka_unit_test(test_code_block_label),
		cmocka_unit_test(test_lone_star_is_literal),
		cmocka_unit_test(test_unclosed_styles_reset_at_end),
	};
	return cmocka_run_group_tests_name("markdown", tests, NULL, NULL);
}
