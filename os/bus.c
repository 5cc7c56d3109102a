/*
 * The display's session bus (see os.h): found where toolkits look for it,
 * or started privately with dbus-run-session's semantics.
 *
 * Why a private directory and not dbus-daemon's default (unix:tmpdir=,
 * an abstract socket on many builds): a path socket in a 0700 directory
 * named in DBUS_SESSION_BUS_ADDRESS is a door the sandbox knows how to
 * close (executors/ hides the path it names), and nobody else's process
 * on the machine can reach it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "os/backend.h"
#include "os/os.h"

extern char **environ;

/* How long dbus-daemon may take to print its address. */
#define BUS_START_MS 10000
/* How long it may take to leave after SIGTERM before SIGKILL. */
#define BUS_STOP_MS 3000

/* The bus this process started (one at most). */
static struct {
	pid_t pid;
	char dir[PATH_MAX];
	char socket[PATH_MAX + 8];
} started;

/* ---- finding a bus -------------------------------------------------- */

/* Whether something accepts a connection on this AF_UNIX name (abstract:
 * a leading NUL). */
static bool unix_answers(const char *name, size_t len)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	if (len == 0 || len >= sizeof(sa.sun_path))
		return false;
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&sa,
	                  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	                              (name[0] != '\0'))) == 0;
	close(fd);
	return ok;
}

/* key=value of one address entry, %XX unescaped into out; the length, or
 * -1 when absent or too long. */
static long entry_value(const char *entry, size_t len, const char *key, char *out,
                        size_t size)
{
	size_t k = strlen(key);
	const char *colon = memchr(entry, ':', len);
	for (const char *s = colon ? colon + 1 : entry + len; s < entry + len;) {
		const char *end = memchr(s, ',', (size_t)(entry + len - s));
		if (end == NULL)
			end = entry + len;
		if ((size_t)(end - s) > k && strncmp(s, key, k) == 0 && s[k] == '=') {
			size_t o = 0;
			for (const char *c = s + k + 1; c < end; c++) {
				unsigned v = (unsigned char)*c;
				if (*c == '%' && end - c >= 3 && sscanf(c + 1, "%2x", &v) == 1)
					c += 2;
				if (o + 1 >= size)
					return -1;
				out[o++] = (char)v;
			}
			out[o] = '\0';
			return (long)o;
		}
		s = end + 1;
	}
	return -1;
}

/*
 * Whether a D-Bus address list ("a;b") can be reached: a unix path or
 * abstract socket only when something accepts on it (a bus that ended
 * leaves its address behind); any other transport (TCP, launchd) is
 * taken on trust.
 */
bool os_bus_address_reachable(const char *list)
{
	char val[PATH_MAX];
	for (const char *a = list; a != NULL && *a != '\0';) {
		const char *semi = strchr(a, ';');
		size_t len = semi ? (size_t)(semi - a) : strlen(a);
		long n;
		if (len > 5 && strncmp(a, "unix:", 5) == 0) {
			if ((n = entry_value(a, len, "path", val, sizeof(val))) > 0 &&
			    unix_answers(val, (size_t)n))
				return true;
			if ((n = entry_value(a, len, "abstract", val + 1, sizeof(val) - 1)) >= 0) {
				val[0] = '\0';
				if (unix_answers(val, (size_t)n + 1))
					return true;
			}
		} else if (len > 0) {
			return true;
		}
		a = semi ? semi + 1 : a + len;
	}
	return false;
}

bool os_bus_root_stale(os_display *d)
{
	char *prop = os_root_string(d, "AT_SPI_BUS");
	bool stale = prop != NULL && !os_bus_address_reachable(prop);
	free(prop);
	return stale;
}

bool os_bus_find(os_display *d, char *where, size_t size)
{
	const char *env = getenv("AT_SPI_BUS_ADDRESS");
	if (env != NULL && os_bus_address_reachable(env)) {
		snprintf(where, size, "AT_SPI_BUS_ADDRESS");
		return true;
	}
	char *prop = d != NULL ? os_root_string(d, "AT_SPI_BUS") : NULL;
	bool root = prop != NULL && os_bus_address_reachable(prop);
	free(prop);
	if (root) {
		snprintf(where, size, "AT_SPI_BUS on the root window");
		return true;
	}
	env = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (env != NULL && os_bus_address_reachable(env)) {
		snprintf(where, size, "DBUS_SESSION_BUS_ADDRESS");
		return true;
	}
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char path[PATH_MAX];
	if (rt != NULL && rt[0] == '/' &&
	    snprintf(path, sizeof(path), "%s/bus", rt) < (int)sizeof(path) &&
	    unix_answers(path, strlen(path))) {
		snprintf(where, size, "%s", path);
		return true;
	}
	return false;
}

/* ---- starting one --------------------------------------------------- */

/* dbus-daemon on PATH, resolved before fork (execve searches nothing). */
static bool find_daemon(char *out, size_t size)
{
	if (base_path_find(base_path_or_default(getenv("PATH")), "dbus-daemon", out, size))
		return true;
	return os_fail("dbus-daemon is not installed (package dbus-daemon)");
}

/*
 * The daemon's environment: this process's, without the addresses of
 * buses that do not answer and without the model providers' keys and
 * other secrets (the services it activates need none of them).
 */
static char **daemon_env(void)
{
	static const char *const drop[] = {
		"DBUS_SESSION_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE",
		"AT_SPI_BUS_ADDRESS",
	};
	static const char *const secret[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
	                                      "CREDENTIAL"};
	size_t n = 0;
	while (environ[n] != NULL)
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;
		bool keep = len > 0;
		for (size_t k = 0; keep && k < sizeof(drop) / sizeof(drop[0]); k++)
			keep = !(strlen(drop[k]) == len && memcmp(environ[i], drop[k], len) == 0);
		for (size_t k = 0; keep && k < sizeof(secret) / sizeof(secret[0]); k++)
			keep = memmem(environ[i], len, secret[k], strlen(secret[k])) == NULL;
		if (keep)
			env[o++] = environ[i];
	}
	return env;
}

/*
 * The child: its own session (a Ctrl-C at deskhand's terminal is
 * deskhand's to handle, not the bus's), ended with deskhand however
 * deskhand ends (PDEATHSIG), silent, the address on fd 3. Only
 * async-signal-safe calls: deskhand may have threads.
 */
static _Noreturn void daemon_child(const char *exe, char **argv, char **env, int addr_w,
                                   pid_t parent)
{
	setsid();
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	if (getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(addr_w, 3) < 0)
		_exit(127);
	syscall(SYS_close_range, 4, ~0u, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(exe, argv, env);
	_exit(127);
}

/* Reads the address line the daemon prints once it listens. */
static bool read_address(int fd, char *addr, size_t size)
{
	size_t got = 0;
	int64_t deadline = base_now_ns() + BUS_START_MS * BASE_NS_PER_MS;
	for (;;) {
		long left = base_ms_until(deadline);
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return os_fail("dbus-daemon printed no address within %d s", BUS_START_MS / 1000);
		ssize_t n = read(fd, addr + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return os_fail("dbus-daemon ended before it listened");
		got += (size_t)n;
		addr[got] = '\0';
		char *nl = strchr(addr, '\n');
		if (nl != NULL) {
			*nl = '\0';
			return true;
		}
		if (got + 1 >= size)
			return os_fail("dbus-daemon printed an address too long to use");
	}
}

/* The private directory: in the runtime directory when there is one
 * (the sandbox hides it whole), else in /tmp. */
static bool make_dir(void)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	const char *parent = rt != NULL && rt[0] == '/' && stat(rt, &st) == 0 &&
	                     S_ISDIR(st.st_mode) && st.st_uid == geteuid() ? rt : "/tmp";
	int n = snprintf(started.dir, sizeof(started.dir), "%s/deskhand-bus-XXXXXX", parent);
	/* A socket's path must fit sun_path (108 bytes). */
	if (n < 0 || (size_t)n + 5 >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return os_fail("the runtime directory %s is too deep for a socket", parent);
	if (mkdtemp(started.dir) == NULL)
		return os_fail("cannot make a private directory in %s: %s", parent, strerror(errno));
	snprintf(started.socket, sizeof(started.socket), "%s/bus", started.dir);
	return true;
}

static void clean_dir(void)
{
	if (started.socket[0] != '\0')
		unlink(started.socket);
	if (started.dir[0] != '\0')
		rmdir(started.dir);
	started.dir[0] = started.socket[0] = '\0';
}

bool os_bus_start(char *addr, size_t size)
{
	if (started.pid > 0)
		return os_fail("a session bus was started already");
	char exe[PATH_MAX], listen[PATH_MAX + 32];
	if (!find_daemon(exe, sizeof(exe)) || !make_dir())
		return false;
	snprintf(listen, sizeof(listen), "--address=unix:path=%s", started.socket);
	char *argv[] = {exe, (char *)"--session", (char *)"--nofork", listen,
	                (char *)"--print-address=3", NULL};
	char **env = daemon_env();
	int pfd[2] = {-1, -1};
	if (env == NULL || pipe2(pfd, O_CLOEXEC) != 0) {
		free(env);
		clean_dir();
		return os_fail("cannot start dbus-daemon: %s", strerror(errno));
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		daemon_child(exe, argv, env, pfd[1], parent);
	int fork_errno = errno;
	free(env);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		clean_dir();
		return os_fail("cannot start dbus-daemon: %s", strerror(fork_errno));
	}
	started.pid = pid;
	bool ok = read_address(pfd[0], addr, size);
	close(pfd[0]);
	if (ok && setenv("DBUS_SESSION_BUS_ADDRESS", addr, 1) != 0)
		ok = os_fail("cannot set DBUS_SESSION_BUS_ADDRESS: %s", strerror(errno));
	if (!ok) {
		char why[256];
		snprintf(why, sizeof(why), "%s", os_error());
		os_bus_stop();
		return os_fail("%s", why);
	}
	return true;
}

int os_bus_started_pid(void)
{
	return started.pid;
}

/* Waits for the daemon up to ms; true once it is reaped. */
static bool reaped_within(long ms)
{
	for (long waited = 0;; waited += 10) {
		pid_t w = waitpid(started.pid, NULL, WNOHANG);
		if (w == started.pid || (w < 0 && errno == ECHILD))
			return true;
		if (waited >= ms)
			return false;
		base_sleep_ms(10, NULL);
	}
}

void os_bus_stop(void)
{
	if (started.pid <= 0)
		return;
	/* The services it activated (at-spi-bus-launcher and the accessibility
	 * bus it runs) leave on their own when their bus goes. */
	kill(started.pid, SIGTERM);
	if (!reaped_within(BUS_STOP_MS)) {
		kill(started.pid, SIGKILL);
		reaped_within(BUS_STOP_MS);
	}
	started.pid = 0;
	const char *env = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (env != NULL && strstr(env, started.socket) != NULL)
		unsetenv("DBUS_SESSION_BUS_ADDRESS");
	clean_dir();
}
