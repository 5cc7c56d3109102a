/*
 * Unit tests of base/: the error text (per thread, errno kept, cut at its
 * size), the clock and its sleeps (signals, cancelling from another
 * thread), the UTF-8 decoder and encoder (every invalid form), whole
 * reads, the write loop through short writes and EINTR, atomic
 * replacement (nothing left behind on any failure, a read-only directory
 * included), /proc/PID/stat (a name with ')' and spaces in it) and enum
 * names (holes, NULL, near misses, lists cut to their buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "tests/lib/testfs.h"

BASE_ERROR_TEXT(static, t_err, t_error, t_fail)

/* ---- error text ------------------------------------------------------ */

static void *other_thread_error(void *arg)
{
	(void)arg;
	return (void *)t_error();
}

static void test_error_text(void **state)
{
	(void)state;
	assert_string_equal(t_error(), "");
	errno = ENOENT;
	assert_false(t_fail("cannot open %s: %d", "x", 7));
	assert_int_equal(errno, ENOENT);
	assert_string_equal(t_error(), "cannot open x: 7");
	/* Per thread: another thread has a reason of its own, still empty. */
	pthread_t t;
	void *seen = NULL;
	assert_int_equal(pthread_create(&t, NULL, other_thread_error, NULL), 0);
	pthread_join(t, &seen);
	assert_string_equal((const char *)seen, "");
	/* A reason longer than the buffer is cut, NUL-terminated. */
	char long_text[3000];
	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	t_fail("%s", long_text);
	assert_int_equal(strlen(t_error()), sizeof(t_err.text) - 1);
	assert_string_equal(base_error(), "");
}

/* ---- the clock ------------------------------------------------------- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* SIGALRM every `us` microseconds, its handler without SA_RESTART, so
 * that blocking calls return EINTR or short. 0 stops it. */
static void alarm_every(long us)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = us > 0 ? on_alarm : SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void test_clock(void **state)
{
	(void)state;
	int64_t a = base_now_ns();
	int64_t b = base_now_ns();
	assert_true(b >= a);
	long long ms = base_now_ms();
	assert_true(ms >= a / 1000000);
	long left = base_ms_until(base_now_ns() + 5000LL * 1000000);
	assert_true(left > 0 && left <= 5000);
	assert_true(base_ms_until(base_now_ns() - 1000000) <= 0);
}

static void test_sleep(void **state)
{
	(void)state;
	/* A deadline already past, a negative time: at once. */
	assert_true(base_sleep_until(base_now_ns() - 1, NULL));
	assert_true(base_sleep_ms(-5, NULL));
	assert_true(base_sleep_ms(0, NULL));
	/* Signals do not cut a sleep short without a flag. */
	alarms = 0;
	alarm_every(2000);
	int64_t until = base_now_ns() + 30LL * 1000000;
	assert_true(base_sleep_until(until, NULL));
	alarm_every(0);
	assert_true(base_now_ns() >= until);
	assert_true(alarms > 0);
	/* A flag set before: false at once (a minute would time the test out). */
	volatile sig_atomic_t cancel = 1;
	assert_false(base_sleep_ms(60000, &cancel));
	cancel = 0;
	assert_true(base_sleep_ms(1, &cancel));
}

static void *cancel_soon(void *arg)
{
	base_sleep_ms(20, NULL);
	*(volatile sig_atomic_t *)arg = 1;
	return NULL;
}

static void test_sleep_cancelled_from_another_thread(void **state)
{
	(void)state;
	/* No signal reaches the sleeping thread: the flag is looked at anyway. */
	volatile sig_atomic_t cancel = 0;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, cancel_soon, (void *)&cancel), 0);
	assert_false(base_sleep_ms(60000, &cancel));
	pthread_join(t, NULL);
}

/* ---- UTF-8 ----------------------------------------------------------- */

static void test_utf8_valid(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} ok[] = {
		{"a", 1, 'a'}, {"\0", 1, 0}, {"\x7f", 1, 0x7f},
		{"\xc2\x80", 2, 0x80}, {"\xdf\xbf", 2, 0x7ff},
		{"\xe0\xa0\x80", 3, 0x800}, {"\xed\x9f\xbf", 3, 0xd7ff},
		{"\xee\x80\x80", 3, 0xe000}, {"\xef\xbf\xbf", 3, 0xffff},
		{"\xf0\x90\x80\x80", 4, 0x10000}, {"\xf4\x8f\xbf\xbf", 4, 0x10ffff},
		{"\xe2\x82\xac", 3, 0x20ac}, {"\xf0\x9f\x99\x82", 4, 0x1f642},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t cp = 0xdeadbeef;
		/* Followed by more text: only the first sequence counts. */
		char buf[8];
		memcpy(buf, ok[i].s, ok[i].len);
		buf[ok[i].len] = 'z';
		assert_int_equal(base_utf8_next(buf, ok[i].len + 1, &cp), ok[i].len);
		assert_int_equal(cp, ok[i].cp);
		char enc[4];
		assert_int_equal(base_utf8_encode(ok[i].cp, enc), (int)ok[i].len);
		assert_memory_equal(enc, ok[i].s, ok[i].len);
	}
}

static void test_utf8_invalid(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
	} bad[] = {
		{"", 0},                        /* nothing */
		{"\x80", 1},                    /* a lone continuation byte */
		{"\xbf", 1},
		{"\xc0\xaf", 2},                /* overlong '/' */
		{"\xc1\xbf", 2},                /* overlong */
		{"\xe0\x80\xaf", 3},            /* overlong, 3 bytes */
		{"\xe0\x9f\xbf", 3},
		{"\xf0\x80\x80\xaf", 4},        /* overlong, 4 bytes */
		{"\xf0\x8f\xbf\xbf", 4},
		{"\xed\xa0\x80", 3},            /* surrogates */
		{"\xed\xbf\xbf", 3},
		{"\xf4\x90\x80\x80", 4},        /* above U+10FFFF */
		{"\xf5\x80\x80\x80", 4},
		{"\xfe", 1}, {"\xff", 1},
		{"\xe2\x82", 2},                /* truncated */
		{"\xf0\x9f\x99", 3},
		{"\xc2", 1},
		{"\xe2\x28\xa1", 3},            /* a continuation that is not one */
		{"\xc2\xc2", 2},
		{"\xf0\x9f\x99\x41", 4},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t cp = 0x1234;
		if (base_utf8_next(bad[i].s, bad[i].len, &cp) != 0)
			fail_msg("case %zu decoded", i);
		assert_int_equal(cp, 0x1234);   /* untouched */
	}
	/* A valid sequence cut by n. */
	uint32_t cp;
	assert_int_equal(base_utf8_next("\xe2\x82\xac", 2, &cp), 0);
}

static void test_utf8_round_trip(void **state)
{
	(void)state;
	for (uint32_t cp = 0; cp <= 0x10ffff; cp += cp < 0x1000 ? 1 : 97) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		char buf[4];
		int n = base_utf8_encode(cp, buf);
		uint32_t back = 0;
		assert_int_equal(base_utf8_next(buf, (size_t)n, &back), (size_t)n);
		assert_int_equal(back, cp);
	}
}

/* ---- reading --------------------------------------------------------- */

static void test_read(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char path[4200], big[10000];
	snprintf(path, sizeof(path), "%s/f", dir);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	testfs_write(path, big);
	size_t len = 0;
	char *text = base_read_file(path, sizeof(big) - 1, &len);
	assert_non_null(text);
	assert_int_equal(len, sizeof(big) - 1);
	assert_string_equal(text, big);
	free(text);
	errno = 0;
	assert_null(base_read_file(path, 100, &len));
	assert_int_equal(errno, EFBIG);
	testfs_write(path, "");
	text = base_read_file(path, 0, NULL);
	assert_non_null(text);
	assert_string_equal(text, "");
	free(text);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_null(base_read_file(path, 100, NULL));
	assert_int_equal(errno, ENOENT);
	/* A directory opens but does not read. */
	assert_null(base_read_file(dir, 100, NULL));
	assert_int_equal(errno, EISDIR);
	rmdir(dir);
	free(dir);
}

static void test_read_small(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char path[4200], buf[8];
	snprintf(path, sizeof(path), "%s/f", dir);
	testfs_write(path, "0123456789");
	/* Cut at size - 1, NUL-terminated. */
	assert_int_equal(base_read_small(AT_FDCWD, path, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0123456");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	char whole[64];
	assert_int_equal(base_read_small(dfd, "f", whole, sizeof(whole)), 10);
	assert_string_equal(whole, "0123456789");
	assert_int_equal(base_read_small(dfd, "missing", whole, sizeof(whole)), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(base_read_small(dfd, "f", whole, 0), -1);
	assert_int_equal(errno, EINVAL);
	close(dfd);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* ---- writing --------------------------------------------------------- */

#define PIPE_BYTES (4 << 20)

struct drain {
	int fd;
	unsigned char *got;
	size_t n;
};

/* Reads slowly in small pieces, so the writer keeps blocking. */
static void *drain_run(void *arg)
{
	struct drain *d = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		ssize_t k = read(d->fd, d->got + d->n, 1000);
		if (k <= 0)
			break;
		d->n += (size_t)k;
		if (d->n % 100000 < 1000)
			base_sleep_ms(1, NULL);
	}
	return NULL;
}

static void test_write_all_short_writes(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	unsigned char *data = malloc(PIPE_BYTES);
	struct drain d = {p[0], malloc(PIPE_BYTES + 1000), 0};
	assert_non_null(data);
	assert_non_null(d.got);
	for (size_t i = 0; i < PIPE_BYTES; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 11));
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, drain_run, &d), 0);
	/* Signals make the blocked writes return short (or EINTR). */
	alarms = 0;
	alarm_every(500);
	bool ok = base_write_all(p[1], data, PIPE_BYTES);
	alarm_every(0);
	close(p[1]);
	pthread_join(t, NULL);
	close(p[0]);
	assert_true(ok);
	assert_true(alarms > 0);
	assert_int_equal(d.n, PIPE_BYTES);
	assert_memory_equal(d.got, data, PIPE_BYTES);
	free(data);
	free(d.got);
}

static void test_write_all_failures(void **state)
{
	(void)state;
	/* Nobody reads: EPIPE (SIGPIPE ignored, as deskhand's callers do). */
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	errno = 0;
	assert_false(base_write_all(p[1], "abc", 3));
	assert_int_equal(errno, EPIPE);
	signal(SIGPIPE, old);
	close(p[1]);
	assert_false(base_write_all(-1, "abc", 3));
	assert_int_equal(errno, EBADF);
	assert_true(base_write_all(-1, "", 0));

	/* A file size limit: a short write, then EFBIG. */
	char *dir = testfs_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/f", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	struct rlimit before, small = {1000, 0};
	getrlimit(RLIMIT_FSIZE, &before);
	small.rlim_max = before.rlim_max;
	old = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	char buf[4000];
	memset(buf, 'q', sizeof(buf));
	bool ok = base_write_all(fd, buf, sizeof(buf));
	int e = errno;
	setrlimit(RLIMIT_FSIZE, &before);
	signal(SIGXFSZ, old);
	close(fd);
	assert_false(ok);
	assert_int_equal(e, EFBIG);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 1000);   /* what was written stays */
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* ---- strangers' connections ------------------------------------------ */

/* Whether the far end of a socketpair was shut down (reads its end). */
static bool was_cut(int peer)
{
	char b;
	return recv(peer, &b, 1, MSG_DONTWAIT) == 0;
}

static void test_conns_keep_only_the_newest_strangers(void **state)
{
	(void)state;
	base_conns *cs = base_conns_new(4, 60000);
	assert_non_null(cs);
	int sv[10][2];
	base_conn *c[10];
	for (int i = 0; i < 10; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		c[i] = base_conns_opened(cs, sv[i][0]);
		assert_non_null(c[i]);
		if (i == 1)
			base_conns_known(cs, c[1]);   /* a session's: never cut */
	}
	/* 9 strangers opened, 4 may stay: the newest. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(was_cut(sv[i][1]), i != 1 && i < 6);
	/* Its request ended: a stranger again, the newest of five, so the
	 * two oldest make room for one more. */
	base_conns_ended(cs, c[1]);
	int extra[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, extra), 0);
	base_conn *e = base_conns_opened(cs, extra[0]);
	assert_true(was_cut(sv[6][1]) && was_cut(sv[7][1]));
	assert_false(was_cut(sv[1][1]) || was_cut(sv[8][1]));
	base_conns_closed(cs, c[8]);        /* closed: gone from the count */
	base_conn *f = base_conns_opened(cs, extra[0]);
	assert_false(was_cut(sv[9][1]) || was_cut(sv[1][1]));
	for (int i = 0; i < 10; i++) {
		if (i != 8)
			base_conns_closed(cs, c[i]);
		close(sv[i][0]);
		close(sv[i][1]);
	}
	base_conns_closed(cs, e);
	base_conns_closed(cs, f);
	close(extra[0]);
	close(extra[1]);
	base_conns_destroy(cs);
	base_conns_destroy(NULL);
	base_conns_known(NULL, NULL);
}

static void test_conns_cut_a_stranger_past_its_deadline(void **state)
{
	(void)state;
	base_conns *cs = base_conns_new(100, 20);
	int a[2], b[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	base_conn *ca = base_conns_opened(cs, a[0]);
	base_sleep_ms(30, NULL);
	base_conn *cb = base_conns_opened(cs, b[0]);
	assert_true(was_cut(a[1]));
	assert_false(was_cut(b[1]));
	base_conns_closed(cs, ca);
	base_conns_closed(cs, cb);
	base_conns_destroy(cs);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

/* ---- atomic replacement ---------------------------------------------- */

static void assert_file(const char *path, const char *want)
{
	char *text = base_read_file(path, 1 << 20, NULL);
	assert_non_null(text);
	assert_string_equal(text, want);
	free(text);
}

/* Whether dir's filesystem makes O_TMPFILE files (ext4 and tmpfs do). */
static bool unnamed_files_work(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void test_atomic_replace(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	assert_true(base_atomic_replace(path, "first", 5, 0640));
	assert_file(path, "first");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	mode_t um = umask(022);
	umask(um);
	assert_int_equal(st.st_mode & 0777, 0640 & ~um);
	/* Over an existing file, written in pieces. */
	base_atomic a;
	assert_true(base_atomic_begin(&a, path, 0600));
	/* Unnamed until the commit where the filesystem allows: a crash while
	 * writing leaves nothing behind. */
	assert_int_equal(testfs_count(dir), unnamed_files_work(dir) ? 1 : 2);
	assert_true(base_write_all(a.fd, "sec", 3));
	assert_true(base_write_all(a.fd, "ond", 3));
	assert_file(path, "first");     /* readers see the old one until the end */
	assert_true(base_atomic_commit(&a));
	assert_int_equal(a.fd, -1);
	assert_null(a.tmp);
	base_atomic_abort(&a);          /* ended: a no-op */
	assert_file(path, "second");
	assert_int_equal(testfs_count(dir), 1);
	/* Abandoned: the old file stays, the temporary one goes. */
	assert_true(base_atomic_begin(&a, path, 0600));
	assert_true(base_write_all(a.fd, "third", 5));
	base_atomic_abort(&a);
	base_atomic_abort(&a);
	assert_file(path, "second");
	assert_int_equal(testfs_count(dir), 1);
	unlink(path);
	/* A name in the current directory. */
	char cwd[4200];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_true(base_atomic_replace("here", "x", 1, 0600));
	assert_file("here", "x");
	unlink("here");
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(testfs_count(dir), 0);
	rmdir(dir);
	free(dir);
}

static void test_atomic_failures_leave_nothing(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char path[4200];
	/* Not a file name. */
	base_atomic a;
	snprintf(path, sizeof(path), "%s/", dir);
	assert_false(base_atomic_begin(&a, path, 0600));
	assert_int_equal(errno, EISDIR);
	assert_string_equal(base_error(), "not a file name");
	base_atomic_abort(&a);
	assert_false(base_atomic_replace("", "x", 1, 0600));
	/* A directory that does not exist. */
	snprintf(path, sizeof(path), "%s/no/such/f", dir);
	assert_false(base_atomic_replace(path, "x", 1, 0600));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(base_error(), "cannot create a file in"));
	assert_non_null(strstr(base_error(), "No such file or directory"));
	/* The rename fails (a directory is in the way): the temporary file goes. */
	snprintf(path, sizeof(path), "%s/adir", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_false(base_atomic_replace(path, "x", 1, 0600));
	assert_non_null(strstr(base_error(), "cannot replace it"));
	assert_int_equal(testfs_count(dir), 1);
	rmdir(path);
	/* A write fails half-way (a size limit): the old file is untouched. */
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_true(base_atomic_replace(path, "old", 3, 0600));
	struct rlimit before, small = {100, 0};
	getrlimit(RLIMIT_FSIZE, &before);
	small.rlim_max = before.rlim_max;
	void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	char buf[1000];
	memset(buf, 'n', sizeof(buf));
	bool ok = base_atomic_replace(path, buf, sizeof(buf), 0600);
	int e = errno;
	setrlimit(RLIMIT_FSIZE, &before);
	signal(SIGXFSZ, old);
	assert_false(ok);
	assert_int_equal(e, EFBIG);
	assert_file(path, "old");
	assert_int_equal(testfs_count(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/*
 * In a read-only directory, as a user the permissions bind (root's do not:
 * a child drops to nobody first). Exit status: 0 refused with EACCES and
 * a reason, 1 written, 2 another failure.
 */
static int replace_as_nobody(const char *path)
{
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
	                       setuid(65534) != 0))
		return 3;
	if (base_atomic_replace(path, "x", 1, 0644))
		return 1;
	return errno == EACCES && strstr(base_error(), "Permission denied") ? 0 : 2;
}

static void test_atomic_read_only_dir(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char locked[4200], path[4300];
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(locked, sizeof(locked), "%s/locked", dir);
	assert_int_equal(mkdir(locked, 0555), 0);
	assert_int_equal(chmod(locked, 0555), 0);
	snprintf(path, sizeof(path), "%s/f", locked);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(replace_as_nobody(path));
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(testfs_count(locked), 0);
	rmdir(locked);
	rmdir(dir);
	free(dir);
}

/* ---- /proc/PID/stat -------------------------------------------------- */

/* A stat line for `name`, fields 3 on as proc(5) numbers them. */
static void stat_line(char *out, size_t size, const char *name, int fields)
{
	int n = snprintf(out, size, "4242 (%s)", name);
	for (int f = 3; f <= fields; f++) {
		long v = f == 3 ? 0 : f == 4 ? 17 : f == 5 ? 4242 : f == 6 ? 4000
		       : f == 22 ? 987654321 : f >= 48 && f <= 51 ? 1000 * f : f == 18 ? -5 : f;
		if (f == 3)
			n += snprintf(out + n, size - (size_t)n, " S");
		else
			n += snprintf(out + n, size - (size_t)n, " %ld", v);
	}
	snprintf(out + n, size - (size_t)n, "\n");
}

static void test_proc_stat_parse(void **state)
{
	(void)state;
	char line[2048];
	base_proc_info pi;
	/* A name that looks like the fields that follow it. */
	stat_line(line, sizeof(line), "a) R 1 2 (b", 52);
	assert_true(base_proc_stat_parse(line, &pi));
	assert_int_equal(pi.state, 'S');
	assert_int_equal(pi.ppid, 17);
	assert_int_equal(pi.pgrp, 4242);
	assert_int_equal(pi.session, 4000);
	assert_true(pi.start == 987654321ull);
	assert_int_equal(pi.arg_start, 48000);
	assert_int_equal(pi.arg_end, 49000);
	assert_int_equal(pi.env_start, 50000);
	assert_int_equal(pi.env_end, 51000);
	stat_line(line, sizeof(line), "))", 22);
	assert_true(base_proc_stat_parse(line, &pi));
	assert_int_equal(pi.ppid, 17);
	assert_int_equal(pi.arg_start, 0);  /* an older kernel: not told */
	assert_int_equal(pi.env_end, 0);
	stat_line(line, sizeof(line), "x", 49);
	assert_true(base_proc_stat_parse(line, &pi));
	assert_int_equal(pi.arg_start, 0);  /* all four or none */
	/* Too short, no name, nothing after it, a field that is not a number. */
	stat_line(line, sizeof(line), "x", 21);
	assert_false(base_proc_stat_parse(line, &pi));
	assert_int_equal(errno, EINVAL);
	assert_false(base_proc_stat_parse("4242 x S 1 2 3", &pi));
	assert_false(base_proc_stat_parse("4242 (x)", &pi));
	assert_false(base_proc_stat_parse("", &pi));
	stat_line(line, sizeof(line), "x", 52);
	char *ppid = strstr(line, ") S 17 ") + 4;
	ppid[0] = '-';
	assert_false(base_proc_stat_parse(line, &pi));
}

static void test_proc_stat_real(void **state)
{
	(void)state;
	base_proc_info pi;
	assert_true(base_proc_stat(0, &pi));
	assert_int_equal(pi.state, 'R');
	assert_int_equal(pi.ppid, getppid());
	assert_int_equal(pi.pgrp, getpgrp());
	assert_int_equal(pi.session, getsid(0));
	assert_true(pi.arg_start < pi.arg_end);
	base_proc_info by_pid;
	assert_true(base_proc_stat(getpid(), &by_pid));
	assert_true(by_pid.start == pi.start);

	/* A child whose name holds ')' and spaces. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_NAME, "a) Z 1 (b) ");
		char c = 1;
		(void)!write(p[1], &c, 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_true(base_proc_stat(pid, &pi));
	assert_int_equal(pi.ppid, getpid());
	assert_true(pi.state == 'S' || pi.state == 'R');
	assert_true(pi.start >= by_pid.start);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone. */
	assert_false(base_proc_stat(pid, &pi));
	assert_int_equal(errno, ENOENT);
}

/* ---- names of enum values ---------------------------------------------- */

enum t_colour { T_AUTO, T_RED, T_GREEN, T_BLUE, T_COLOUR_COUNT };
/* AUTO has no name: a hole, as the tables of settings have. */
static const char *const t_colours[T_COLOUR_COUNT] = {
	[T_RED] = "red", [T_GREEN] = "green", [T_BLUE] = "blue",
};
bool t_colour_parse(const char *s, enum t_colour *out);
const char *t_colour_name(enum t_colour c);
BASE_NAME_FUNCTIONS(enum t_colour, t_colours, t_colour_parse, t_colour_name, "?")

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(BASE_COUNT(t_colours), T_COLOUR_COUNT);
	assert_int_equal(base_name_index(BASE_NAMES(t_colours), "red"), T_RED);
	assert_int_equal(base_name_index(BASE_NAMES(t_colours), "blue"), T_BLUE);
	/* Exact: no prefix, no longer word, no other case; never the hole. */
	const char *misses[] = {"", "re", "reds", "Red", "RED", " red", "red\n"};
	for (size_t i = 0; i < BASE_COUNT(misses); i++)
		assert_int_equal(base_name_index(BASE_NAMES(t_colours), misses[i]), -1);
	assert_int_equal(base_name_index(BASE_NAMES(t_colours), NULL), -1);
	assert_int_equal(base_name_index(NULL, 3, "red"), -1);
	assert_int_equal(base_name_index(t_colours, 0, "red"), -1);
	/* Counted: the bytes after len do not matter, a NUL inside them does. */
	assert_int_equal(base_name_index_len(BASE_NAMES(t_colours), "greenish", 5), T_GREEN);
	assert_int_equal(base_name_index_len(BASE_NAMES(t_colours), "gre\0n", 5), -1);
	assert_int_equal(base_name_index_len(BASE_NAMES(t_colours), "green", 4), -1);
	assert_int_equal(base_name_index_len(BASE_NAMES(t_colours), NULL, 0), -1);
	assert_int_equal(base_name_index_len(BASE_NAMES(t_colours), "", 0), -1);

	assert_string_equal(base_name_of(BASE_NAMES(t_colours), T_GREEN, "?"), "green");
	assert_string_equal(base_name_of(BASE_NAMES(t_colours), T_AUTO, "?"), "?");
	assert_string_equal(base_name_of(BASE_NAMES(t_colours), -1, "?"), "?");
	assert_string_equal(base_name_of(BASE_NAMES(t_colours), T_COLOUR_COUNT, "?"), "?");
	assert_null(base_name_of(BASE_NAMES(t_colours), 99, NULL));
	assert_null(base_name_of(NULL, 3, 1, NULL));

	enum t_colour c = T_AUTO;
	assert_true(t_colour_parse("green", &c));
	assert_int_equal(c, T_GREEN);
	assert_false(t_colour_parse("purple", &c));
	assert_false(t_colour_parse(NULL, &c));
	assert_int_equal(c, T_GREEN); /* untouched by a refusal */
	assert_string_equal(t_colour_name(T_BLUE), "blue");
	assert_string_equal(t_colour_name(T_AUTO), "?");
	assert_string_equal(t_colour_name((enum t_colour)42), "?");
}

static void test_names_join(void **state)
{
	(void)state;
	char buf[64];
	/* The hole is left out, not an empty name between separators. */
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), "|", NULL, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "red|green|blue");
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), ", ", NULL, buf, sizeof(buf)), 16);
	assert_string_equal(buf, "red, green, blue");
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), NULL, NULL, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "redgreenblue");
	/* The last pair gets its own word, and only the last. */
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), ", ", " or ", buf, sizeof(buf)), 18);
	assert_string_equal(buf, "red, green or blue");
	assert_int_equal(base_names_join(t_colours, 3, ", ", " or ", buf, sizeof(buf)), 12);
	assert_string_equal(buf, "red or green");
	assert_int_equal(base_names_join(t_colours, 2, ", ", " or ", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "red");
	/* A hole at the end: the last name is the last one there is. */
	static const char *const tail_hole[] = {"a", "b", "c", NULL, NULL};
	base_names_join(BASE_NAMES(tail_hole), ", ", " or ", buf, sizeof(buf));
	assert_string_equal(buf, "a, b or c");
	/* Cut to the buffer, always terminated; the whole length is still told. */
	char small[8];
	memset(small, 'x', sizeof(small));
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), "|", NULL, small, sizeof(small)), 14);
	assert_string_equal(small, "red|gre");
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), "|", NULL, small, 1), 14);
	assert_string_equal(small, "");
	assert_int_equal(base_names_join(BASE_NAMES(t_colours), "|", NULL, NULL, 0), 14);
	/* Nothing to join. */
	assert_int_equal(base_names_join(t_colours, 1, "|", NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(base_names_join(NULL, 5, "|", NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

/* PATH: only absolute directories, the first executable match, the default. */
static void test_path(void **state)
{
	(void)state;
	const char *cursor = ":relative::/usr/bin:bin:/bin:";
	char dir[64];
	assert_true(base_path_next(&cursor, dir, sizeof(dir)));
	assert_string_equal(dir, "/usr/bin");
	assert_true(base_path_next(&cursor, dir, sizeof(dir)));
	assert_string_equal(dir, "/bin");
	assert_false(base_path_next(&cursor, dir, sizeof(dir)));
	char out[256];
	assert_true(base_path_find("relative:/nonexistent:/bin", "sh", out, sizeof(out)));
	assert_string_equal(out, "/bin/sh");
	assert_false(base_path_find(".:", "sh", out, sizeof(out)));
	assert_false(base_path_find("/bin", "no-such-program-here", out, sizeof(out)));
	assert_false(base_executable_file("/bin")); /* a directory is no program */
	assert_string_equal(base_path_or_default(""), "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(base_path_or_default("/x"), "/x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_text),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_sleep),
		cmocka_unit_test(test_sleep_cancelled_from_another_thread),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_round_trip),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_small),
		cmocka_unit_test(test_write_all_short_writes),
		cmocka_unit_test(test_write_all_failures),
		cmocka_unit_test(test_conns_keep_only_the_newest_strangers),
		cmocka_unit_test(test_conns_cut_a_stranger_past_its_deadline),
		cmocka_unit_test(test_atomic_replace),
		cmocka_unit_test(test_atomic_failures_leave_nothing),
		cmocka_unit_test(test_atomic_read_only_dir),
		cmocka_unit_test(test_proc_stat_parse),
		cmocka_unit_test(test_proc_stat_real),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names_join),
		cmocka_unit_test(test_path),
	};
	return cmocka_run_group_tests_name("base", tests, NULL, NULL);
}
