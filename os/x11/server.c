/*
 * os/x11/server — a private X server for one task of deskhand batch (see
 * os.h): Xvfb with an authorisation cookie of its own and no TCP. It does
 * listen on the abstract socket as well as the path: clients try the
 * abstract @/tmp/.X11-unix/XN first, and that name is shared by every
 * process of the network namespace whatever its /tmp, so a server that
 * did not hold it would leave its clients to whichever other server on
 * the machine does (they would drive the wrong desktop). Holding it,
 * -displayfd picks a number nobody else holds; what reaches it from
 * outside the task meets the cookie.
 */
#include <X11/Xauth.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "os/backend.h"
#include "os/os.h"

enum { XSERVER_START_MS = 30000 };

/* A cookie for any display number on any address: the file is the task's
 * own, so FamilyWild with no number is exactly "this server". */
static bool write_cookie(const char *path)
{
	unsigned char data[16];
	if (!base_random_bytes(data, sizeof(data)))
		return os_fail("no random bytes for the X cookie: %s", strerror(errno));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return os_fail("%s: %s", path, strerror(errno));
	}
	Xauth a = {.family = FamilyWild,
	           .address_length = 0, .address = (char *)"",
	           .number_length = 0, .number = (char *)"",
	           .name_length = 18, .name = (char *)"MIT-MAGIC-COOKIE-1",
	           .data_length = sizeof(data), .data = (char *)data};
	bool ok = XauWriteAuth(f, &a) == 1;
	ok = fclose(f) == 0 && ok;
	explicit_bzero(data, sizeof(data));
	return ok ? true : os_fail("%s: cannot write the X cookie", path);
}

/* The child: ended with the task (PDEATHSIG), its output to log_fd, the
 * display number on fd 3. Async-signal-safe calls only. */
static _Noreturn void server_child(const char *exe, char **argv, int log_fd, int num_w,
                                   pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 ||
	    dup2(num_w, 3) < 0)
		_exit(127);
	syscall(SYS_close_range, 4, ~0u, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(exe, argv);
	_exit(127);
}

/* The display number Xvfb writes once it accepts connections. */
static bool read_number(int fd, pid_t pid, int *num)
{
	char buf[32];
	size_t got = 0;
	int64_t deadline = base_now_ns() + (int64_t)XSERVER_START_MS * BASE_NS_PER_MS;
	for (;;) {
		long left = base_ms_until(deadline);
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return os_fail("Xvfb did not start within %d s", XSERVER_START_MS / 1000);
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int st = 0;
			waitpid(pid, &st, WNOHANG);
			return os_fail("Xvfb ended before it accepted connections (its log says why)");
		}
		got += (size_t)n;
		buf[got] = '\0';
		if (strchr(buf, '\n') != NULL)
			return sscanf(buf, "%d", num) == 1 ? true : os_fail("Xvfb printed no display");
		if (got + 1 >= sizeof(buf))
			return os_fail("Xvfb printed no display number");
	}
}

bool os_xserver_start(int width, int height, const char *auth_path, int log_fd,
                      os_xserver *out)
{
	char exe[PATH_MAX], screen[48], numfd[8] = "3";
	if (!base_path_find(base_path_or_default(getenv("PATH")), "Xvfb", exe, sizeof(exe)))
		return os_fail("Xvfb is not installed (package xvfb)");
	if (!write_cookie(auth_path))
		return false;
	snprintf(screen, sizeof(screen), "%dx%dx24", width, height);
	/* -noreset: the server keeps its state when the last client leaves
	 * (between a setup command and the apps, say). -nolisten local would
	 * drop the abstract socket: see the top of this file. */
	char *argv[] = {exe, (char *)"-displayfd", numfd, (char *)"-screen", (char *)"0", screen,
	                (char *)"-nolisten", (char *)"tcp",
	                (char *)"-auth", (char *)auth_path, (char *)"-noreset", NULL};
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return os_fail("cannot start Xvfb: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		server_child(exe, argv, log_fd, pfd[1], parent);
	int fork_errno = errno;
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return os_fail("cannot start Xvfb: %s", strerror(fork_errno));
	}
	int num = -1;
	bool ok = read_number(pfd[0], pid, &num);
	close(pfd[0]);
	if (!ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return false;
	}
	out->pid = pid;
	snprintf(out->display, sizeof(out->display), ":%d", num);
	return true;
}
