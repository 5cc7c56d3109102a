/* Unit tests: UTF-8 validation and repair, the string buffer, the file reader, the sleep. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void test_buf_truncate_reset_and_sticky_oom(void **state)
{
	(void)state;
	agent_buf b;
	agent_buf_init(&b);
	assert_string_equal(agent_buf_cstr(&b), "");
	assert_true(agent_buf_puts(&b, "hello, world"));
	agent_buf_truncate(&b, 5);
	assert_string_equal(agent_buf_cstr(&b), "hello");
	assert_int_equal(b.len, 5);
	agent_buf_truncate(&b, 99);                  /* never longer */
	assert_int_equal(b.len, 5);
	/* A growth that cannot be had sets oom; every later write does nothing. */
	assert_false(agent_buf_reserve(&b, SIZE_MAX / 2));
	assert_true(b.oom);
	assert_false(agent_buf_puts(&b, "more"));
	assert_string_equal(agent_buf_cstr(&b), "");
	agent_buf_reset(&b);
	assert_false(b.oom);
	assert_true(agent_buf_puts(&b, "again"));
	assert_string_equal(agent_buf_cstr(&b), "again");
	agent_buf_finish(&b);
}

static void test_read_fd(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	static char big[100000];
	memset(big, 'x', sizeof(big));
	if (fork() == 0) {
		close(p[0]);
		for (size_t off = 0; off < sizeof(big);)
			off += (size_t)write(p[1], big + off, sizeof(big) - off);
		_exit(0);
	}
	close(p[1]);
	size_t len = 0;
	char *text = base_read_fd(p[0], sizeof(big), &len);
	assert_non_null(text);
	assert_int_equal(len, sizeof(big));
	assert_int_equal(text[len], '\0');
	free(text);
	close(p[0]);
	/* One byte over the limit: refused with EFBIG, nothing returned. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], big, 4097), 4097);
	close(p[1]);
	errno = 0;
	assert_null(base_read_fd(p[0], 4096, &len));
	assert_int_equal(errno, EFBIG);
	close(p[0]);
	/* Empty, and a missing file. */
	assert_int_equal(pipe(p), 0);
	close(p[1]);
	text = base_read_fd(p[0], 10, &len);
	assert_non_null(text);
	assert_int_equal(len, 0);
	assert_string_equal(text, "");
	free(text);
	close(p[0]);
	assert_null(base_read_file("/nonexistent/deskhand", 10, NULL));
	assert_int_equal(errno, ENOENT);
}

/* The one place that knows deskhand's directories: XDG first, then an
 * absolute HOME; relative values count for nothing. */
static void test_own_dirs(void **state)
{
	(void)state;
	char buf[256];
	setenv("XDG_CONFIG_HOME", "/x/config", 1);
	setenv("XDG_DATA_HOME", "relative", 1);
	setenv("HOME", "/home/someone", 1);
	assert_true(agent_own_dir(AGENT_DIR_CONFIG, buf, sizeof(buf)));
	assert_string_equal(buf, "/x/config/deskhand");
	assert_true(agent_own_dir(AGENT_DIR_DATA, buf, sizeof(buf)));
	assert_string_equal(buf, "/home/someone/.local/share/deskhand");
	assert_false(agent_own_dir(AGENT_DIR_DATA, buf, 10));
	assert_int_equal(errno, ENAMETOOLONG);
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "not/absolute", 1);
	assert_false(agent_own_dir(AGENT_DIR_CONFIG, buf, sizeof(buf)));
	assert_int_equal(errno, ENOENT);

	char dir[] = "/tmp/deskhand-dirs-XXXXXX", deep[256];
	assert_non_null(mkdtemp(dir));
	snprintf(deep, sizeof(deep), "%s/a/b/c", dir);
	assert_true(agent_make_dirs(deep));
	assert_true(agent_make_dirs(deep));           /* already there */
	struct stat st;
	assert_int_equal(stat(deep, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(buf, sizeof(buf), "%s/file", dir);
	FILE *f = fopen(buf, "w");
	assert_non_null(f);
	fclose(f);
	assert_false(agent_make_dirs(buf));
	assert_int_equal(errno, ENOTDIR);
	unlink(buf);
	for (int i = 0; i < 3; i++) {
		rmdir(deep);
		*strrchr(deep, '/') = '\0';
	}
	rmdir(dir);
}

static void test_sleep_notices_cancel(void **state)
{
	(void)state;
	volatile sig_atomic_t cancel = 1;
	/* Cancelled before it starts: false at once (a minute's sleep would
	 * run into the test's time limit). */
	assert_false(base_sleep_ms(60000, &cancel));
	cancel = 0;
	assert_true(base_sleep_ms(1, &cancel));
	assert_true(base_sleep_ms(0, NULL));
}

/* RFC 4648's test vectors, both ways of calling. */
static void test_base64(void **state)
{
	(void)state;
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
	                                   "Zm9vYmFy"};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		size_t len = 99;
		char *got = agent_base64((const unsigned char *)in[i], strlen(in[i]), &len);
		assert_non_null(got);
		assert_string_equal(got, want[i]);
		assert_int_equal(len, strlen(want[i]));
		free(got);
		char block[16];
		memset(block, '#', sizeof(block));
		agent_base64_block((const unsigned char *)in[i], strlen(in[i]), block);
		assert_memory_equal(block, want[i], strlen(want[i]));
		assert_int_equal(block[strlen(want[i])], '#'); /* no NUL: exactly its length */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_buf_truncate_reset_and_sticky_oom),
		cmocka_unit_test(test_read_fd),
		cmocka_unit_test(test_own_dirs),
		cmocka_unit_test(test_sleep_notices_cancel),
		cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests_name("textutil", tests, NULL, NULL);
}
