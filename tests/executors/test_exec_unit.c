/*
 * Unit tests for the pure parts of executors/ and `deskhand exec`: the
 * output kept for the model (head, tail, omitted count, UTF-8 boundaries,
 * invalid bytes, NULs), environment scrubbing, the block protocol
 * (markers, frames, report lines) and argument parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cli/cli.h"
#include "executors/exec-internal.h"
#include "executors/exec.h"
#include "executors/sandbox.h"

/* ---- output ------------------------------------------------------------ */

static char *text_of(exec_output *o, size_t *head_len, size_t *total, size_t *omitted)
{
	size_t len;
	char *t = exec_output_text(o, &len, head_len, total, omitted);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	return t;
}

static void output_fits(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(10);
	assert_int_equal(exec_output_feed(o, EXEC_STDOUT, "hello", 5), 5);
	exec_output_feed(o, EXEC_STDERR, "world", 5);
	size_t head, total, omitted;
	char *t = text_of(o, &head, &total, &omitted);
	assert_string_equal(t, "helloworld");
	assert_int_equal(total, 10);
	assert_int_equal(omitted, 0);
	assert_int_equal(head, 10);
	free(t);
	exec_output_destroy(o);
}

static void output_head_and_tail(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(10);
	char buf[100];
	for (int i = 0; i < 100; i++)
		buf[i] = (char)('a' + i % 26);
	/* Only the first five bytes belong to the head. */
	assert_int_equal(exec_output_feed(o, EXEC_STDOUT, buf, 100), 5);
	assert_int_equal(exec_output_feed(o, EXEC_STDOUT, "XYZ", 3), 0);
	size_t head, total, omitted;
	char *t = text_of(o, &head, &total, &omitted);
	assert_int_equal(total, 103);
	assert_int_equal(omitted, 93);
	assert_int_equal(head, 5);
	/* 100 bytes: ...,'t','u','v'(97 % 26 = 19 -> 't'); tail: chars 95..99 + XYZ. */
	assert_string_equal(t, "abcde\n\u2026 93 characters omitted \u2026\nuvXYZ");
	free(t);
	exec_output_destroy(o);
}

static void output_counts_characters_not_bytes(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(4);
	/* Six two-byte characters: 12 bytes, 6 characters. */
	const char *e = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa8\xc3\xa8\xc3\xa8";
	/* Head = 2 characters = the first 4 bytes. */
	size_t shown = exec_output_feed(o, EXEC_STDOUT, e, strlen(e));
	assert_int_equal(shown, 4);
	size_t total, omitted;
	char *t = text_of(o, NULL, &total, &omitted);
	assert_int_equal(total, 6);
	assert_int_equal(omitted, 2);
	assert_string_equal(t, "\xc3\xa9\xc3\xa9\n\u2026 2 characters omitted \u2026\n\xc3\xa8\xc3\xa8");
	free(t);
	exec_output_destroy(o);
}

static void output_joins_split_sequences(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(100);
	/* "€" (e2 82 ac) cut across three chunks, with stderr in between: the
	 * streams are decoded separately. */
	exec_output_feed(o, EXEC_STDOUT, "\xe2", 1);
	exec_output_feed(o, EXEC_STDERR, "!", 1);
	exec_output_feed(o, EXEC_STDOUT, "\x82", 1);
	exec_output_feed(o, EXEC_STDOUT, "\xac", 1);
	size_t total;
	char *t = text_of(o, NULL, &total, NULL);
	assert_string_equal(t, "!\xe2\x82\xac");
	assert_int_equal(total, 2);
	free(t);
	exec_output_destroy(o);
}

static void output_invalid_bytes_and_nul(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(100);
	/* ff: invalid; c3 followed by 'x': broken sequence; NUL; an overlong
	 * slash c0 af; a surrogate ed a0 80; a truncated sequence at the end. */
	const char in[] = "a\xff" "b\xc3x\0" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf0\x9f";
	exec_output_feed(o, EXEC_STDOUT, in, sizeof(in) - 1);
	char *t = text_of(o, NULL, NULL, NULL);
	assert_string_equal(t, "a\xef\xbf\xbd" "b\xef\xbf\xbdx\xe2\x90\x80"
	                       "c\xef\xbf\xbd\xef\xbf\xbd"
	                       "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                       "e\xef\xbf\xbd");
	free(t);
	exec_output_destroy(o);
}

static void output_default_and_flood(void **state)
{
	(void)state;
	exec_output *o = exec_output_create(0);
	char buf[4096];
	memset(buf, 'z', sizeof(buf));
	for (int i = 0; i < 2000; i++)
		exec_output_feed(o, EXEC_STDOUT, buf, sizeof(buf));
	size_t total, omitted, len;
	char *t = exec_output_text(o, &len, NULL, &total, &omitted);
	assert_int_equal(total, 2000u * 4096u);
	assert_int_equal(omitted, total - EXEC_DEFAULT_MAX_OUTPUT);
	assert_true(len < EXEC_DEFAULT_MAX_OUTPUT + 100);
	assert_non_null(strstr(t, " characters omitted "));
	free(t);
	exec_output_destroy(o);
	exec_output_destroy(NULL);
}

/* ---- environment ---------------------------------------------------------- */

static void env_blocked_names(void **state)
{
	(void)state;
	static const char *const blocked[] = {
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "DESKHAND_MODEL",
		"GITHUB_TOKEN", "my_secret", "DB_PASSWORD", "MYSQL_PWD_PASSWD",
		"AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "WAYLAND_DISPLAY", "DISPLAY",
		"XAUTHORITY", "GOOGLE_APPLICATION_CREDENTIALS", "some_credential_file",
	};
	static const char *const kept[] = {
		"PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "PYTHONPATH", "EDITOR",
	};
	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++)
		assert_true(sandbox_env_blocked(blocked[i], strlen(blocked[i]), false));
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		assert_false(sandbox_env_blocked(kept[i], strlen(kept[i]), false));
	/* A display grant lets the X variables through, never the keys. */
	assert_false(sandbox_env_blocked("DISPLAY", 7, true));
	assert_false(sandbox_env_blocked("XAUTHORITY", 10, true));
	/* The compositor's doors pass with the grant (it drives the desktop). */
	static const char *const desktop[] = {
		"WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE",
		"PIPEWIRE_REMOTE",
	};
	for (size_t i = 0; i < sizeof(desktop) / sizeof(desktop[0]); i++) {
		assert_true(sandbox_env_blocked(desktop[i], strlen(desktop[i]), false));
		assert_false(sandbox_env_blocked(desktop[i], strlen(desktop[i]), true));
	}
	assert_true(sandbox_env_blocked("WAYLAND_SOCKET", 14, true));
	assert_true(sandbox_env_blocked("OPENAI_API_KEY", 14, true));
	/* The name ends at len: "PATH" is not "PATH_TOKEN". */
	assert_false(sandbox_env_blocked("PATH_TOKEN", 4, false));
}

static bool env_has(char **env, const char *entry)
{
	for (; *env != NULL; env++)
		if (strcmp(*env, entry) == 0)
			return true;
	return false;
}

static size_t env_count(char **env)
{
	size_t n = 0;
	while (env[n] != NULL)
		n++;
	return n;
}

static void env_build(void **state)
{
	(void)state;
	static char e0[] = "PATH=/usr/bin", e1[] = "OPENAI_API_KEY=sk-1", e2[] = "DISPLAY=:3",
	            e3[] = "PWD=/elsewhere", e4[] = "TMPDIR=/var/tmp", e5[] = "noequals",
	            e6[] = "=empty", e7[] = "GH_TOKEN=t", e8[] = "LANG=C.UTF-8";
	char *base[] = {e0, e1, e2, e3, e4, e5, e6, e7, e8, NULL};
	char **e = sandbox_env_create(SANDBOX_STANDARD, false, base, "/ws");
	assert_non_null(e);
	assert_true(env_has(e, "PATH=/usr/bin"));
	assert_true(env_has(e, "LANG=C.UTF-8"));
	assert_true(env_has(e, "TMPDIR=/var/tmp"));
	assert_true(env_has(e, "PWD=/ws"));
	assert_false(env_has(e, "PWD=/elsewhere"));
	assert_false(env_has(e, "OPENAI_API_KEY=sk-1"));
	assert_false(env_has(e, "DISPLAY=:3"));
	assert_false(env_has(e, "GH_TOKEN=t"));
	assert_int_equal(env_count(e), 4);
	sandbox_env_destroy(e);

	e = sandbox_env_create(SANDBOX_STRICT, true, base, "/ws");
	assert_true(env_has(e, "DISPLAY=:3"));
	assert_true(env_has(e, "TMPDIR=/tmp"));
	assert_false(env_has(e, "TMPDIR=/var/tmp"));
	assert_false(env_has(e, "OPENAI_API_KEY=sk-1"));
	sandbox_env_destroy(e);

	/* off is no sandbox: everything passes but PWD is made true. */
	e = sandbox_env_create(SANDBOX_OFF, false, base, "/ws");
	assert_true(env_has(e, "OPENAI_API_KEY=sk-1"));
	assert_true(env_has(e, "DISPLAY=:3"));
	assert_true(env_has(e, "PWD=/ws"));
	sandbox_env_destroy(e);
	sandbox_env_destroy(NULL);
}

static void display_names(void **state)
{
	(void)state;
	static const char *const local[] = {":0", ":1.0", "unix:0", "unix/:3", "/tmp/launch-x/org:0",
	                                    "", NULL};
	static const char *const tcp[] = {"localhost:10.0", "host:0", "[::1]:0", "tcp/host:0",
	                                  "10.0.0.2:1", "host::0"};
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		assert_true(sandbox_display_is_local(local[i]));
	for (size_t i = 0; i < sizeof(tcp) / sizeof(tcp[0]); i++)
		assert_false(sandbox_display_is_local(tcp[i]));
}

/* ---- protocol ---------------------------------------------------------------- */

static void markers_are_fresh_hex(void **state)
{
	(void)state;
	char a[EXEC_MARKER_LEN + 1], b[EXEC_MARKER_LEN + 1];
	assert_true(exec_marker_new(a));
	assert_true(exec_marker_new(b));
	assert_int_equal(strlen(a), 32);
	assert_int_equal(strspn(a, "0123456789abcdef"), 32);
	assert_string_not_equal(a, b);
	char h[64];
	size_t n = exec_frame_header(h, sizeof(h), a, 1234);
	assert_int_equal(n, 32 + 6);
	assert_memory_equal(h, a, 32);
	assert_string_equal(h + 32, " 1234\n");
}

static void ctl_lines(void **state)
{
	(void)state;
	const char *m = "0123456789abcdef0123456789abcdef";
	exec_ctl_reader r = {.len = 0};
	int status = -1;
	/* A stale or forged marker, garbage and out-of-range statuses are
	 * ignored; a line may arrive in pieces. */
	const char *noise = "ffffffffffffffffffffffffffffffff 0\n"
	                    "0123456789abcdef0123456789abcdef\n"
	                    "0123456789abcdef0123456789abcdef 256\n"
	                    "0123456789abcdef0123456789abcdef 1x\n"
	                    "0123456789abcdef0123456789abcdef -1\n"
	                    "x0123456789abcdef0123456789abcdef 0\n";
	assert_false(exec_ctl_feed(&r, m, noise, strlen(noise), &status));
	assert_false(exec_ctl_feed(&r, m, "0123456789abcdef", 16, &status));
	assert_false(exec_ctl_feed(&r, m, "0123456789abcdef 4", 18, &status));
	assert_true(exec_ctl_feed(&r, m, "2\n", 2, &status));
	assert_int_equal(status, 42);

	/* A line longer than the buffer is dropped whole, even if it ends with
	 * something that looks right. */
	exec_ctl_reader r2 = {.len = 0};
	char longline[400];
	memset(longline, 'a', 300);
	snprintf(longline + 300, 100, "%s 0\n", m);
	assert_false(exec_ctl_feed(&r2, m, longline, strlen(longline), &status));
	assert_true(exec_ctl_feed(&r2, m, "0123456789abcdef0123456789abcdef 7\n", 35, &status));
	assert_int_equal(status, 7);
}

static void names(void **state)
{
	(void)state;
	exec_lang l;
	assert_true(exec_lang_from_name("python", &l) && l == EXEC_PYTHON);
	assert_true(exec_lang_from_name("shell", &l) && l == EXEC_SHELL);
	assert_true(exec_lang_from_name("javascript", &l) && l == EXEC_JAVASCRIPT);
	assert_true(exec_lang_from_name("ruby", &l) && l == EXEC_RUBY);
	assert_true(exec_lang_from_name("r", &l) && l == EXEC_R);
	assert_false(exec_lang_from_name("Python", &l));
	assert_false(exec_lang_from_name("cobol", &l));
	assert_false(exec_lang_from_name(NULL, &l));
	assert_string_equal(exec_lang_name(EXEC_JAVASCRIPT), "javascript");
	sandbox_profile p;
	assert_true(sandbox_profile_from_name("strict", &p) && p == SANDBOX_STRICT);
	assert_true(sandbox_profile_from_name("off", &p) && p == SANDBOX_OFF);
	assert_false(sandbox_profile_from_name("lenient", &p));
	assert_string_equal(sandbox_profile_name(SANDBOX_STANDARD), "standard");
	/* Layers per profile. */
	assert_int_equal(sandbox_profile_layers(SANDBOX_OFF, false), 0);
	unsigned std = sandbox_profile_layers(SANDBOX_STANDARD, false);
	assert_true(std & 1u << SANDBOX_LAYER_SCOPE);
	assert_false(std & 1u << SANDBOX_LAYER_NETNS);
	assert_false(sandbox_profile_layers(SANDBOX_STANDARD, true) & 1u << SANDBOX_LAYER_SCOPE);
	unsigned strict = sandbox_profile_layers(SANDBOX_STRICT, false);
	assert_true(strict & 1u << SANDBOX_LAYER_NETNS);
	assert_true(strict & 1u << SANDBOX_LAYER_LANDLOCK);
}

/* ---- arguments ----------------------------------------------------------------- */

static int parse(cli_exec_args *a, int argc, ...)
{
	char *argv[16];
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	return cli_exec_parse(argc, argv, a);
}

static void exec_arguments(void **state)
{
	(void)state;
	cli_exec_args a;
	assert_int_equal(parse(&a, 2, "exec", "python"), CLI_OK);
	assert_int_equal(a.lang, EXEC_PYTHON);
	assert_int_equal(a.sandbox, SANDBOX_STANDARD);
	assert_int_equal(a.timeout_s, 120);
	assert_int_equal(a.max_output, 2800);
	assert_null(a.workspace);
	assert_false(a.display);

	assert_int_equal(parse(&a, 11, "exec", "--sandbox", "strict", "--timeout", "5",
	                       "--max-output", "100", "--workspace", "/tmp", "--display",
	                       "shell"), CLI_OK);
	assert_int_equal(a.lang, EXEC_SHELL);
	assert_int_equal(a.sandbox, SANDBOX_STRICT);
	assert_int_equal(a.timeout_s, 5);
	assert_int_equal(a.max_output, 100);
	assert_string_equal(a.workspace, "/tmp");
	assert_true(a.display);

	assert_int_equal(parse(&a, 1, "exec"), CLI_USAGE);
	assert_int_equal(parse(&a, 2, "exec", "cobol"), CLI_USAGE);
	assert_int_equal(parse(&a, 3, "exec", "python", "shell"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--sandbox", "loose", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 2, "exec", "--sandbox"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--timeout", "0", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--timeout", "1.5", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--timeout", "99999999999", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--max-output", "-3", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 4, "exec", "--workspace", "", "python"), CLI_USAGE);
	assert_int_equal(parse(&a, 3, "exec", "--verbose", "python"), CLI_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_fits),
		cmocka_unit_test(output_head_and_tail),
		cmocka_unit_test(output_counts_characters_not_bytes),
		cmocka_unit_test(output_joins_split_sequences),
		cmocka_unit_test(output_invalid_bytes_and_nul),
		cmocka_unit_test(output_default_and_flood),
		cmocka_unit_test(env_blocked_names),
		cmocka_unit_test(env_build),
		cmocka_unit_test(display_names),
		cmocka_unit_test(markers_are_fresh_hex),
		cmocka_unit_test(ctl_lines),
		cmocka_unit_test(names),
		cmocka_unit_test(exec_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
