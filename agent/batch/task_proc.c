/*
 * agent/batch/task_proc — the processes of one task, seen from its init
 * (the enclosure's pid 1): starting a command exactly as written (no
 * shell), waiting for one with a deadline while reaping every other that
 * ends (an init inherits the orphans of everything below it), and the
 * environments: the agent's, and the task's commands', which hold no
 * secrets (the model can type into a terminal the task started).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/batch/batch-internal.h"
#include "agent/batch/task-internal.h"
#include "base/base.h"
#include "executors/exec.h"

bool task_proc_init(task_procs *p)
{
	memset(p, 0, sizeof(*p));
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0)
		return false;
	p->sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	return p->sigfd >= 0;
}

pid_t task_spawn(char *const *argv, char *const *env, const char *cwd, int out_fd, int err_fd,
                 bool powerless)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
	/* Its own process group: the terminal's signals and a kill of the
	 * group reach what it started too. */
	setpgid(0, 0);
	int err = powerless ? sandbox_enclosure_powerless() : 0;
	if (err != 0) {
		dprintf(2, "deskhand batch: dropping capabilities: %s\n", strerror(err));
		_exit(127);
	}
	if (cwd != NULL && chdir(cwd) != 0) {
		dprintf(2, "deskhand batch: %s: %s\n", cwd, strerror(errno));
		_exit(127);
	}
	execvpe(argv[0], argv, env);
	dprintf(2, "deskhand batch: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Notes the end of a process the task keeps (the X server, ...). */
static void note_death(task_procs *p, pid_t pid, int status)
{
	for (size_t i = 0; i < TASK_WATCHED_MAX; i++)
		if (p->watched[i].pid == pid) {
			p->watched[i].pid = 0;
			p->watched[i].status = status;
			if (p->died == NULL)
				p->died = p->watched[i].what;
		}
}

void task_watch(task_procs *p, pid_t pid, const char *what)
{
	for (size_t i = 0; i < TASK_WATCHED_MAX; i++)
		if (p->watched[i].pid == 0 && p->watched[i].what == NULL) {
			p->watched[i].pid = pid;
			p->watched[i].what = what;
			return;
		}
}

bool task_wait(task_procs *p, pid_t pid, int64_t deadline_ns, int *status)
{
	for (;;) {
		int st = 0;
		pid_t r;
		while ((r = waitpid(-1, &st, WNOHANG)) > 0) {
			if (r == pid) {
				*status = st;
				return true;
			}
			note_death(p, r, st);
		}
		if (r < 0 && errno == ECHILD)
			return false;
		long left = base_ms_until(deadline_ns);
		if (left <= 0)
			return false;
		struct pollfd f = {p->sigfd, POLLIN, 0};
		if (poll(&f, 1, left > 60000 ? 60000 : (int)left) > 0) {
			struct signalfd_siginfo si;
			while (read(p->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
		}
	}
}

int task_end(task_procs *p, pid_t pid, long grace_ms)
{
	int st = 0;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	if (task_wait(p, pid, base_now_ns() + grace_ms * BASE_NS_PER_MS, &st))
		return st;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	task_wait(p, pid, base_now_ns() + 5000 * BASE_NS_PER_MS, &st);
	return st;
}

/* The names the task's commands must not see besides what the sandbox
 * scrubs from code: other desktops' doors. */
static bool foreign_desktop(const char *e, size_t len)
{
	static const char *const names[] = {"WAYLAND_DISPLAY", "WAYLAND_SOCKET", "SWAYSOCK",
	                                    "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE",
	                                    "PIPEWIRE_REMOTE", "AT_SPI_BUS_ADDRESS",
	                                    "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE",
	                                    "XDG_SESSION_TYPE", "XDG_SEAT", "XDG_VTNR",
	                                    "XDG_SESSION_ID", "TMPDIR"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(e, names[i], len) == 0)
			return true;
	return false;
}

/* Whether extra sets the variable e names. */
static bool overridden(char *const *extra, const char *e, size_t len)
{
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		if (strncmp(extra[i], e, len + 1) == 0)
			return true;
	return false;
}

char **task_env(char *const *extra)
{
	size_t n = 0, m = 0;
	while (environ[n] != NULL)
		n++;
	while (extra != NULL && extra[m] != NULL)
		m++;
	char **env = calloc(n + m + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;
		if (len == 0 || foreign_desktop(environ[i], len) || overridden(extra, environ[i], len))
			continue;
		env[o++] = environ[i];
	}
	for (size_t i = 0; i < m; i++)
		env[o++] = extra[i];
	return env;
}

char **task_take_secrets(void)
{
	size_t n = 0, o = 0;
	while (environ[n] != NULL)
		n++;
	char **taken = calloc(n + 1, sizeof(*taken));
	if (taken == NULL)
		return NULL;
	for (size_t i = 0; environ[i] != NULL;) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;
		if (len == 0 || !sandbox_env_blocked(environ[i], len, true)) {
			i++;
			continue;
		}
		char *name = strndup(environ[i], len);
		if (name == NULL || (taken[o] = strdup(environ[i])) == NULL) {
			free(name);
			batch_strings_free(taken);
			return NULL;
		}
		o++;
		unsetenv(name);   /* environ[i] is now the next entry */
		free(name);
	}
	return taken;
}
