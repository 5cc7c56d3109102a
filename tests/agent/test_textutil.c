/* Unit tests: UTF-8 validation and repair, the string buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "agent/util/textutil.h"

static void test_valid(void **state)
{
	(void)state;
	const char *ok = "héllo Ζ 漢 🙂";
	assert_true(agent_utf8_valid(ok, strlen(ok)));
	assert_false(agent_utf8_valid("\xc0\xaf", 2));          /* overlong */
	assert_false(agent_utf8_valid("\xed\xa0\x80", 3));      /* surrogate */
	assert_false(agent_utf8_valid("\xf4\x90\x80\x80", 4));  /* > U+10FFFF */
	assert_false(agent_utf8_valid("\xe6\xbc", 2));          /* truncated */
	assert_false(agent_utf8_valid("a\0b", 3));              /* NUL */
}

static void test_sanitize(void **state)
{
	(void)state;
	size_t n;
	char *s = agent_utf8_sanitize("a\xff" "b\0c\xe6\xbc", 7, &n);
	assert_string_equal(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(n, strlen(s));
	free(s);
}

static void test_buf(void **state)
{
	(void)state;
	agent_buf b;
	agent_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		assert_true(agent_buf_printf(&b, "%d,", i));
	assert_true(agent_buf_puts(&b, "end"));
	char *s = agent_buf_steal(&b);
	assert_int_equal(strncmp(s, "0,1,2,", 6), 0);
	assert_int_equal(strcmp(s + strlen(s) - 7, "999,end"), 0);
	free(s);
	assert_null(b.data);
	char *empty = agent_buf_steal(&b);
	assert_string_equal(empty, "");
	free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_buf),
	};
	return cmocka_run_group_tests_name("textutil", tests, NULL, NULL);
}
