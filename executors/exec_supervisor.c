/*
 * executors/exec — the processes inside a session's namespaces: the
 * supervisor and the interpreter it forks (see exec_session.c for the tree
 * and the descriptors each holds).
 *
 * The supervisor never execs: it is a copy of deskhand running only
 * async-signal-safe code (see executors/sandbox_child.c), made non-dumpable
 * so the code cannot read its memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/exec-internal.h"
#include "executors/sandbox-internal.h"

/*
 * Moves src[i] to target[i] for n descriptors, whatever overlaps exist
 * between the two sets, then closes every descriptor above the highest
 * target. Targets are small and distinct.
 */
static bool child_place_fds(const int *src, const int *target, int n)
{
	int tmp[8];
	int top = 0;
	for (int i = 0; i < n; i++) {
		tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 64);
		if (tmp[i] < 0)
			return false;
		if (target[i] > top)
			top = target[i];
	}
	for (int i = 0; i < n; i++) {
		if (dup2(tmp[i], target[i]) < 0)
			return false;
		close(tmp[i]);
	}
	return syscall(SYS_close_range, top + 1, ~0u, 0) == 0 || errno == ENOSYS;
}

static void child_reset_signals(void)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);     /* SIGKILL/SIGSTOP refuse: fine */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child_copy_step(struct sup_msg *m, const char *step)
{
	size_t n = strlen(step);
	if (n >= sizeof(m->step))
		n = sizeof(m->step) - 1;
	memcpy(m->step, step, n);
	m->step[n] = '\0';
}

static void child_report(int fd, bool sock, const char *step, int err)
{
	struct sup_msg m;
	memset(&m, 0, sizeof(m));
	m.kind = 'E';
	m.err = err;
	child_copy_step(&m, step);
	if (sock)
		send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	else if (write(fd, &m, sizeof(m)) < 0)
		return;
}

/* The interpreter's process, forked by the supervisor: fds 4-7 hold its
 * pipe ends, st_w reports a failure before exec (close-on-exec, so a
 * successful exec shows as end of file). */
static _Noreturn void interpreter_main(const exec_session *s, int st_w)
{
	sandbox_failure fail = {"", 0};
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* Its own session and process group, whose pgid is its pid: what the
	 * code starts joins the group, where an interrupt finds it. */
	setsid();
	child_reset_signals();
	static const int target[] = {0, 1, 2, 3, 4, 5};
	int src[] = {0, 6, 7, 4, 5, st_w};
	if (!child_place_fds(src, target, 6)) {
		child_report(st_w, false, "arranging descriptors", errno);
		_exit(127);
	}
	st_w = 5;
	fcntl(st_w, F_SETFD, FD_CLOEXEC);
	if (chdir(s->workspace) != 0) {
		child_report(st_w, false, "entering the workspace", errno);
		_exit(127);
	}
	if (!sandbox_child_confine(s->plan, s->uid, s->gid, &fail)) {
		child_report(st_w, false, fail.step, fail.err);
		_exit(127);
	}
	execve(s->interp, s->argv, s->envp);
	child_report(st_w, false, "starting the interpreter", errno);
	_exit(127);
}

static void kill_if_child(pid_t pid, void *arg)
{
	base_proc_info info;
	if (base_proc_stat(pid, &info) && info.ppid == *(const pid_t *)arg)
		kill(pid, SIGKILL);
}

/* SIGKILLs every process whose parent is this one (a subreaper's view). */
static void kill_children(void)
{
	pid_t self = getpid();
	exec_each_process(kill_if_child, &self);
}

struct block_group {
	pid_t interp;
	unsigned long long since;
};

static void interrupt_if_foreground(pid_t pid, void *arg)
{
	const struct block_group *b = arg;
	base_proc_info info;
	if (pid != b->interp && base_proc_stat(pid, &info) && info.pgrp == b->interp &&
	    info.start >= b->since)
		kill(pid, SIGINT);
}

/*
 * SIGINT to the interpreter and to the processes of its process group
 * started since the block began (`since`, clock ticks since boot, the unit
 * of /proc's start times): what the block runs in the foreground. What an
 * earlier block left running in the background — a GUI program — is
 * spared, as a terminal's job control would spare it. (A process an
 * earlier block started within the same tick as this block counts as this
 * block's.)
 */
static void interrupt_block(pid_t interp, unsigned long long since)
{
	struct block_group b = {interp, since};
	kill(interp, SIGINT);
	exec_each_process(interrupt_if_foreground, &b);
}

/*
 * Ends the session from inside: in a pid namespace, exiting is enough;
 * under `off` the supervisor is a subreaper, so it kills its children,
 * reaps them, and repeats until orphans stop appearing.
 */
static _Noreturn void supervisor_finish(const exec_session *s, pid_t interp)
{
	if (s->profile == SANDBOX_OFF) {
		for (int round = 0; round < 2000; round++) {
			kill(-interp, SIGKILL);
			kill_children();
			int st;
			pid_t w;
			while ((w = waitpid(-1, &st, WNOHANG)) > 0)
				;
			if (w < 0 && errno == ECHILD)
				break;
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	_exit(0);
}

/* The supervisor's control socket once the descriptors are in place. */
#define SUP_FD 3

/*
 * Closes the code's ports, places the descriptors (see exec_session.c) and
 * enters the sandbox's namespaces; on failure reports why and exits.
 */
static void supervisor_enter(const exec_session *s, int sup, int code_r, int ctl_w,
                             int out_w, int err_w)
{
	sandbox_failure fail = {"", 0};
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	child_reset_signals();
	/* If deskhand died before the line above, nobody holds the other end. */
	struct pollfd alive = {sup, POLLIN, 0};
	if (poll(&alive, 1, 0) > 0 && (alive.revents & POLLHUP))
		_exit(1);
	if (!sandbox_child_close_ports(s->plan, &fail)) {
		child_report(sup, true, fail.step, fail.err);
		_exit(1);
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		child_report(sup, true, "opening /dev/null", errno);
		_exit(1);
	}
	static const int target[] = {0, 1, 2, SUP_FD, 4, 5, 6, 7};
	int src[] = {devnull, devnull, devnull, sup, code_r, ctl_w, out_w, err_w};
	if (!child_place_fds(src, target, 8)) {
		child_report(sup, true, "arranging descriptors", errno);
		_exit(1);
	}
	setsid();
	if (!sandbox_child_enter_ns(s->plan, s->uid, s->gid, &fail)) {
		child_report(SUP_FD, true, fail.step, fail.err);
		_exit(1);
	}
	if (s->profile == SANDBOX_OFF && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		child_report(SUP_FD, true, "becoming a subreaper", errno);
		_exit(1);
	}
}

/*
 * Forks the interpreter and tells deskhand whether its exec succeeded ('R')
 * or what failed before ('E', then the session ends). SIGCHLD is blocked
 * first and read from *sfd, so no exit goes unseen.
 */
static pid_t supervisor_start_interpreter(const exec_session *s, int *sfd)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	*sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	int st[2];
	if (*sfd < 0 || pipe2(st, O_CLOEXEC) != 0) {
		child_report(SUP_FD, true, "creating the supervisor's descriptors", errno);
		_exit(1);
	}
	pid_t interp = sandbox_raw_clone(0);
	if (interp < 0) {
		child_report(SUP_FD, true, "forking the interpreter", errno);
		_exit(1);
	}
	if (interp == 0)
		interpreter_main(s, st[1]);
	close(st[1]);
	for (int fd = 4; fd <= 7; fd++)
		close(fd);

	struct sup_msg m;
	memset(&m, 0, sizeof(m));
	ssize_t got;
	do
		got = read(st[0], &m, sizeof(m));
	while (got < 0 && errno == EINTR);
	close(st[0]);
	if (got == (ssize_t)sizeof(m)) {
		send(SUP_FD, &m, sizeof(m), MSG_NOSIGNAL);
		supervisor_finish(s, interp);
	}
	memset(&m, 0, sizeof(m));
	m.kind = 'R';
	send(SUP_FD, &m, sizeof(m), MSG_NOSIGNAL);
	return interp;
}

/*
 * Reaps what exited; the interpreter's exit is reported, and ends the
 * session. So is its stop (SIGSTOP from outside, or the code's own): a
 * stopped interpreter would hold the block until its timeout and then
 * be reported as slow, and nothing of the session can run on anyway.
 */
static void supervisor_reap(const exec_session *s, int sfd, pid_t interp)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof(si)) > 0)
		;
	int status;
	pid_t w;
	while ((w = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
		if (w != interp)
			continue;
		struct sup_msg m;
		memset(&m, 0, sizeof(m));
		m.kind = 'X';
		m.status = status;      /* WIFSTOPPED for a stop */
		send(SUP_FD, &m, sizeof(m), MSG_NOSIGNAL);
		supervisor_finish(s, interp);
	}
}

/* One command of deskhand's; its end (or a broken socket) ends the session. */
static void supervisor_obey(const exec_session *s, pid_t interp)
{
	struct sup_cmd cmd;
	memset(&cmd, 0, sizeof(cmd));
	ssize_t n = recv(SUP_FD, &cmd, sizeof(cmd), 0);
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0 || cmd.kind == 'K')
		supervisor_finish(s, interp);
	if (cmd.kind == 'I' && n == (ssize_t)sizeof(cmd))
		interrupt_block(interp, cmd.since);
}

_Noreturn void exec_supervisor_main(const exec_session *s, int sup, int code_r,
                                    int ctl_w, int out_w, int err_w)
{
	supervisor_enter(s, sup, code_r, ctl_w, out_w, err_w);
	int sfd;
	pid_t interp = supervisor_start_interpreter(s, &sfd);
	for (;;) {
		struct pollfd p[2] = {{SUP_FD, POLLIN, 0}, {sfd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			supervisor_finish(s, interp);
		}
		if (p[1].revents & POLLIN)
			supervisor_reap(s, sfd, interp);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			supervisor_obey(s, interp);
	}
}
