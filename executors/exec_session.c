/*
 * executors/exec — sessions: the process tree, the run loop, timeouts,
 * interrupts and restarts.
 *
 * Processes of one session:
 *
 *   deskhand ──clone(namespaces)──> supervisor ──fork──> interpreter ──> code's children
 *
 * The supervisor is the first process of the session's namespaces (pid 1
 * of its pid namespace; under `off` a child subreaper). It reaps orphans,
 * relays an interrupt as SIGINT to the interpreter and the processes the
 * block started in its process group (see interrupt_block), reports
 * the interpreter's exit, and by exiting takes every process of the session
 * with it (the kernel kills a pid namespace whose init dies; under `off` it
 * kills its descendants one generation after another). It never execs: it
 * is a copy of deskhand running only the async-signal-safe code below,
 * made non-dumpable so the code cannot read its memory.
 *
 * Descriptors (all others are closed in both children):
 *   supervisor: 0-2 /dev/null, 3 control socket to deskhand, 4-7 the
 *               interpreter's ends of the pipes (until it is forked)
 *   interpreter: 0 /dev/null, 1 stdout pipe, 2 stderr pipe, 3 blocks in,
 *               4 end-of-block reports out
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executors/exec-internal.h"
#include "executors/sandbox-internal.h"

extern char **environ;

#ifndef P_PIDFD
#define P_PIDFD 3       /* Linux 5.4; glibc 2.36's idtype_t lacks the name */
#endif

#define GRACE_MS 2000           /* after SIGINT, before killing everything */
#define READY_TIMEOUT_MS 30000  /* from clone to a successful execve */
#define DRAIN_MS 1000           /* reading what a dead interpreter left */
#define SETTLE_POLL_MS 5        /* after a report, until the interpreter is idle */

/* deskhand -> supervisor, one datagram each. */
struct sup_cmd {
	char kind;                 /* 'I' interrupt the block, 'K' end the session */
	unsigned long long since;  /* 'I': when the block began, clock ticks since boot */
};

/* Supervisor -> deskhand, one datagram each. */
struct sup_msg {
	char kind;        /* 'R' interpreter started, 'E' set-up failed, 'X' interpreter exited */
	int status;       /* 'X': wait status */
	int err;          /* 'E': errno */
	char step[120];   /* 'E': what failed */
};

struct exec_session {
	exec_lang lang;
	bool display;
	sandbox_profile profile;
	unsigned timeout_ms;
	size_t max_output;
	bool (*watch)(void *user);
	void *watch_user;
	char *workspace;
	char *interp;
	char *argv[10];
	char **envp;
	sandbox_plan *plan;
	uid_t uid;
	gid_t gid;

	bool alive;
	bool started;              /* an interpreter ran at least once */
	char ended_why[96];        /* how the previous interpreter ended */
	pid_t sup_pid;
	int sup_pidfd, sup_fd, code_fd, ctl_fd, out_fd, err_fd;
	/* Seen from here: the interpreter's pid, the link naming the blocks
	 * pipe in /proc ("pipe:[INODE]"), its thread count when idle before
	 * any block ran, and whether work of a block was left running. */
	pid_t interp_pid;
	char blocks_link[48];
	int base_threads;
	bool lingering;

	int intr_r, intr_w;
	bool own_intr;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CLOCK_BOOTTIME in clock ticks, rounded down as /proc's start times are. */
static unsigned long long boot_ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long tick_ns = 1000000000ull / (unsigned long long)(hz > 0 ? hz : 100);
	return ((unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec) /
	       tick_ns;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void exec_config_init(exec_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sandbox = SANDBOX_STANDARD;
	cfg->timeout_ms = EXEC_DEFAULT_TIMEOUT_MS;
	cfg->max_output = EXEC_DEFAULT_MAX_OUTPUT;
}

void exec_result_finish(exec_result *res)
{
	if (res == NULL)
		return;
	free(res->output);
	memset(res, 0, sizeof(*res));
}

/* ===================================================================== */
/* Child side: async-signal-safe only (see executors/sandbox_child.c).   */
/* ===================================================================== */

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

static bool parse_pid(const char *name, pid_t *out)
{
	long v = 0;
	if (*name == '\0')
		return false;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > INT_MAX / 10)
			return false;
		v = v * 10 + (*name - '0');
	}
	*out = (pid_t)v;
	return true;
}

/* What the supervisor reads of a process in /proc/PID/stat. */
struct proc_info {
	pid_t ppid;
	pid_t pgrp;
	unsigned long long start;     /* clock ticks since boot */
};

/* Reads /proc/PID/stat without stdio; false when the process is gone. */
static bool proc_info_read(pid_t pid, struct proc_info *out)
{
	char path[40] = "/proc/", buf[1024];
	size_t n = 6;
	char digits[16];
	int d = 0;
	do {
		digits[d++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid > 0);
	while (d > 0)
		path[n++] = digits[--d];
	memcpy(path + n, "/stat", 6);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	const char *p = strrchr(buf, ')');       /* the name may contain anything */
	if (p == NULL || p[1] != ' ')
		return false;
	/* Fields after the name, counted as proc(5) does: 3 state, 4 ppid,
	 * 5 pgrp, ..., 22 starttime. */
	p += 2;
	for (int field = 3; field <= 22; field++) {
		unsigned long long v = 0;
		bool digits_only = *p != '\0' && *p != ' ';
		for (; *p != '\0' && *p != ' '; p++) {
			if (*p >= '0' && *p <= '9')
				v = v * 10 + (unsigned long long)(*p - '0');
			else
				digits_only = false;
		}
		if (*p == ' ')
			p++;
		else if (field < 22)
			return false;
		if (field == 4 || field == 5 || field == 22) {
			if (!digits_only)
				return false;
			if (field == 4)
				out->ppid = (pid_t)v;
			else if (field == 5)
				out->pgrp = (pid_t)v;
			else
				out->start = v;
		}
	}
	return true;
}

/* Calls fn for every process listed in this pid namespace's /proc. */
static void each_process(void (*fn)(pid_t pid, void *arg), void *arg)
{
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	char buf[8192];
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			pid_t pid;
			if (parse_pid(name, &pid))
				fn(pid, arg);
			off += reclen;
		}
	}
	close(dfd);
}

static void kill_if_child(pid_t pid, void *arg)
{
	struct proc_info info;
	if (proc_info_read(pid, &info) && info.ppid == *(const pid_t *)arg)
		kill(pid, SIGKILL);
}

/* SIGKILLs every process whose parent is this one (a subreaper's view). */
static void kill_children(void)
{
	pid_t self = getpid();
	each_process(kill_if_child, &self);
}

struct block_group {
	pid_t interp;
	unsigned long long since;
};

static void interrupt_if_foreground(pid_t pid, void *arg)
{
	const struct block_group *b = arg;
	struct proc_info info;
	if (pid != b->interp && proc_info_read(pid, &info) && info.pgrp == b->interp &&
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
	each_process(interrupt_if_foreground, &b);
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

static _Noreturn void supervisor_main(const exec_session *s, int sup, int code_r,
                                      int ctl_w, int out_w, int err_w)
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
	static const int target[] = {0, 1, 2, 3, 4, 5, 6, 7};
	int src[] = {devnull, devnull, devnull, sup, code_r, ctl_w, out_w, err_w};
	if (!child_place_fds(src, target, 8)) {
		child_report(sup, true, "arranging descriptors", errno);
		_exit(1);
	}
	sup = 3;
	setsid();
	if (!sandbox_child_enter_ns(s->plan, s->uid, s->gid, &fail)) {
		child_report(sup, true, fail.step, fail.err);
		_exit(1);
	}
	if (s->profile == SANDBOX_OFF && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		child_report(sup, true, "becoming a subreaper", errno);
		_exit(1);
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	int st[2];
	if (sfd < 0 || pipe2(st, O_CLOEXEC) != 0) {
		child_report(sup, true, "creating the supervisor's descriptors", errno);
		_exit(1);
	}
	pid_t interp = sandbox_raw_clone(0);
	if (interp < 0) {
		child_report(sup, true, "forking the interpreter", errno);
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
		send(sup, &m, sizeof(m), MSG_NOSIGNAL);
		supervisor_finish(s, interp);
	}
	memset(&m, 0, sizeof(m));
	m.kind = 'R';
	send(sup, &m, sizeof(m), MSG_NOSIGNAL);

	for (;;) {
		struct pollfd p[2] = {{sup, POLLIN, 0}, {sfd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			supervisor_finish(s, interp);
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) > 0)
				;
			int status;
			pid_t w;
			while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
				if (w == interp) {
					memset(&m, 0, sizeof(m));
					m.kind = 'X';
					m.status = status;
					send(sup, &m, sizeof(m), MSG_NOSIGNAL);
					supervisor_finish(s, interp);
				}
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct sup_cmd cmd;
			memset(&cmd, 0, sizeof(cmd));
			ssize_t n = recv(sup, &cmd, sizeof(cmd), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || cmd.kind == 'K')
				supervisor_finish(s, interp);
			if (cmd.kind == 'I' && n == (ssize_t)sizeof(cmd))
				interrupt_block(interp, cmd.since);
		}
	}
}

/* ===================================================================== */
/* Parent side                                                            */
/* ===================================================================== */

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Stops every process of the session and reaps its supervisor; the
 * descriptors stay open so that what was written can still be read. */
static void session_terminate(exec_session *s)
{
	if (!s->alive || s->sup_pid <= 0)
		return;
	if (s->profile == SANDBOX_OFF) {
		/* The supervisor hunts down the descendants itself. */
		struct sup_cmd k = {'K', 0};
		send(s->sup_fd, &k, sizeof(k), MSG_NOSIGNAL);
		struct pollfd p = {s->sup_pidfd, POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, 3000);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			kill(s->sup_pid, SIGKILL);
	} else {
		/* pid 1 of the namespace: the kernel kills the rest with it. */
		kill(s->sup_pid, SIGKILL);
	}
	int status;
	while (waitpid(s->sup_pid, &status, 0) < 0 && errno == EINTR)
		;
	s->sup_pid = 0;
}

static void session_kill(exec_session *s)
{
	if (!s->alive)
		return;
	session_terminate(s);
	close_fd(&s->sup_pidfd);
	close_fd(&s->sup_fd);
	close_fd(&s->code_fd);
	close_fd(&s->ctl_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	s->alive = false;
}

/* ---- when is a block's work done? ------------------------------------------
 *
 * The driver's report cannot be trusted alone: the code runs in the same
 * process and can learn the marker (from the driver's variables, memory or
 * the blocks pipe) and report the end while it keeps working. What the code
 * cannot fake is the kernel's view, read here from the host's /proc: the
 * interpreter's main thread blocked reading the blocks pipe (node: waiting
 * in its event loop), how many threads it has, which processes of the
 * session are alive.
 */

static void find_interp(pid_t pid, void *arg)
{
	exec_session *s = arg;
	struct proc_info info;
	if (s->interp_pid == 0 && proc_info_read(pid, &info) && info.ppid == s->sup_pid)
		s->interp_pid = pid;
}

/* Threads of the interpreter, -1 when it cannot be read. */
static int interp_threads(const exec_session *s)
{
	char path[48];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->interp_pid);
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	char buf[4096];
	int n = 0;
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			n += buf[off + 19] != '.';
			off += reclen;
		}
	close(dfd);
	return n;
}

/*
 * 1 when the main thread waits for the next block, 0 when it is doing
 * something else, -1 when this kernel does not tell (no
 * /proc/PID/syscall): then the driver's report is all there is.
 */
static int interp_idle(const exec_session *s)
{
	if (s->interp_pid == 0)
		return -1;
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)s->interp_pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	char *end;
	long nr = strtol(buf, &end, 10);
	if (end == buf)
		return 0;                   /* "running" */
	unsigned long arg0 = strtoul(end, NULL, 16);
	if (s->lang == EXEC_JAVASCRIPT)
		return nr == SYS_epoll_pwait
#ifdef SYS_epoll_wait
		       || nr == SYS_epoll_wait
#endif
#ifdef SYS_epoll_pwait2
		       || nr == SYS_epoll_pwait2
#endif
		       ;
	if (nr != SYS_read || arg0 > INT_MAX)
		return 0;
	char link[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%lu", (int)s->interp_pid, arg0);
	ssize_t l = readlink(path, link, sizeof(link) - 1);
	if (l <= 0)
		return 0;
	link[l] = '\0';
	return strcmp(link, s->blocks_link) == 0;
}

/* After the interpreter started: who it is, and its threads once its
 * driver waits for the first block (node starts several). */
static void note_interpreter(exec_session *s, long long deadline)
{
	struct stat st;
	s->interp_pid = 0;
	s->base_threads = -1;
	s->lingering = false;
	s->blocks_link[0] = '\0';
	if (fstat(s->code_fd, &st) == 0)
		snprintf(s->blocks_link, sizeof(s->blocks_link), "pipe:[%llu]",
		         (unsigned long long)st.st_ino);
	/* A /proc mounted for another pid namespace (deskhand itself started
	 * in a fresh one) names other processes: then nothing is read there. */
	char self[32];
	ssize_t l = readlink("/proc/self", self, sizeof(self) - 1);
	if (l <= 0)
		return;
	self[l] = '\0';
	if (atol(self) != (long)getpid())
		return;
	each_process(find_interp, s);
	if (s->interp_pid == 0)
		return;
	while (interp_idle(s) == 0 && now_ms() < deadline) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	s->base_threads = interp_threads(s);
}

struct session_procs {
	pid_t sup, interp;
	unsigned long long since;
	size_t n;
	struct { pid_t pid, ppid; unsigned long long start; } p[1024];
};

static void collect_proc(pid_t pid, void *arg)
{
	struct session_procs *sp = arg;
	struct proc_info info;
	if (sp->n < sizeof(sp->p) / sizeof(sp->p[0]) && proc_info_read(pid, &info)) {
		sp->p[sp->n].pid = pid;
		sp->p[sp->n].ppid = info.ppid;
		sp->p[sp->n].start = info.start;
		sp->n++;
	}
}

/* Processes of the session other than the interpreter started since
 * `since`: the descendants of the supervisor (orphans come back to it). */
static int block_processes(const exec_session *s, unsigned long long since)
{
	struct session_procs *sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return 0;
	each_process(collect_proc, sp);
	char *in = calloc(sp->n, 1);
	int count = 0;
	for (bool grew = in != NULL; grew;) {
		grew = false;
		for (size_t i = 0; i < sp->n; i++) {
			if (in[i])
				continue;
			bool child = sp->p[i].ppid == s->sup_pid;
			for (size_t j = 0; !child && j < sp->n; j++)
				child = in[j] && sp->p[j].pid == sp->p[i].ppid;
			if (child) {
				in[i] = 1;
				grew = true;
				count += sp->p[i].pid != s->interp_pid && sp->p[i].start >= since;
			}
		}
	}
	free(in);
	free(sp);
	return count;
}

/* What the block left running after it said it was done, for its message. */
static void lingering_note(exec_session *s, unsigned long long since, char *note, size_t size)
{
	note[0] = '\0';
	if (s->interp_pid == 0)
		return;
	bool earlier = s->lingering;
	int threads = interp_threads(s);
	int extra = s->base_threads > 0 && threads > s->base_threads ? threads - s->base_threads : 0;
	int procs = block_processes(s, since);
	s->lingering = extra > 0 || procs > 0;
	note[0] = '\0';
	if (s->lingering)
		snprintf(note, size, "work is still running after the block reported its end: "
		         "%d thread%s of the interpreter besides its own, %d process%s this block "
		         "started; what they print from now on is labelled as output of an earlier "
		         "block's background work", extra, extra == 1 ? "" : "s", procs,
		         procs == 1 ? "" : "es");
	else if (earlier)
		snprintf(note, size, "background work of an earlier block was running during "
		         "this block: part of this output may be its");
}

static bool session_start(exec_session *s)
{
	int code_p[2] = {-1, -1}, ctl_p[2] = {-1, -1}, out_p[2] = {-1, -1},
	    err_p[2] = {-1, -1}, sup_sp[2] = {-1, -1};
	if (pipe2(code_p, O_CLOEXEC) != 0 || pipe2(ctl_p, O_CLOEXEC) != 0 ||
	    pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sup_sp) != 0) {
		exec_fail("cannot create the session's pipes: %s", strerror(errno));
		goto fail;
	}
	pid_t pid = sandbox_raw_clone(sandbox_plan_clone_flags(s->plan));
	if (pid < 0) {
		int err = errno;
		exec_fail("cannot start the %s sandbox: creating its namespaces failed: %s%s",
		          sandbox_profile_name(s->profile), strerror(err),
		          err == EPERM || err == ENOSPC ?
		          " (are unprivileged user namespaces disabled? `deskhand doctor` tells)" : "");
		goto fail;
	}
	if (pid == 0)
		supervisor_main(s, sup_sp[1], code_p[0], ctl_p[1], out_p[1], err_p[1]);
	close_fd(&code_p[0]);
	close_fd(&ctl_p[1]);
	close_fd(&out_p[1]);
	close_fd(&err_p[1]);
	close_fd(&sup_sp[1]);
	s->sup_pid = pid;
	s->sup_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->sup_fd = sup_sp[0];
	s->code_fd = code_p[1];
	s->ctl_fd = ctl_p[0];
	s->out_fd = out_p[0];
	s->err_fd = err_p[0];
	s->alive = true;
	if (s->sup_pidfd < 0) {
		exec_fail("pidfd_open: %s (Linux 5.3 or newer is needed)", strerror(errno));
		session_kill(s);
		return false;
	}
	set_nonblock(s->code_fd);
	set_nonblock(s->ctl_fd);
	set_nonblock(s->out_fd);
	set_nonblock(s->err_fd);
	set_nonblock(s->sup_fd);

	long long deadline = now_ms() + READY_TIMEOUT_MS;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			exec_fail("the %s interpreter did not start within %d s",
			          exec_lang_name(s->lang), READY_TIMEOUT_MS / 1000);
			session_kill(s);
			return false;
		}
		struct pollfd p[2] = {{s->sup_fd, POLLIN, 0}, {s->sup_pidfd, POLLIN, 0}};
		int r = poll(p, 2, (int)left);
		if (r < 0 && errno != EINTR) {
			exec_fail("poll: %s", strerror(errno));
			session_kill(s);
			return false;
		}
		struct sup_msg m;
		ssize_t n = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(m) && m.kind == 'R')
			break;
		if (n == (ssize_t)sizeof(m) && m.kind == 'E') {
			m.step[sizeof(m.step) - 1] = '\0';
			if (s->profile == SANDBOX_OFF)
				exec_fail("cannot start %s: %s: %s", s->interp, m.step, strerror(m.err));
			else
				exec_fail("the %s sandbox could not be set up (%s: %s); it never runs "
				          "weaker than promised — `deskhand doctor` lists what this "
				          "machine supports", sandbox_profile_name(s->profile), m.step,
				          strerror(m.err));
			session_kill(s);
			return false;
		}
		if (n == 0 || (p[1].revents & POLLIN)) {
			exec_fail("the session's supervisor ended before the interpreter started");
			session_kill(s);
			return false;
		}
	}
	s->started = true;
	note_interpreter(s, deadline);
	return true;
fail:
	for (int i = 0; i < 2; i++) {
		close_fd(&code_p[i]);
		close_fd(&ctl_p[i]);
		close_fd(&out_p[i]);
		close_fd(&err_p[i]);
		close_fd(&sup_sp[i]);
	}
	return false;
}

/* Code granted the display finds programs only where no code could have
 * put one (exec_trusted_path): `ls` in its text is the system's ls. */
static bool trust_path(char **envp)
{
	for (char **e = envp; *e != NULL; e++) {
		if (strncmp(*e, "PATH=", 5) != 0)
			continue;
		char *dirs = exec_trusted_path(*e + 5);
		char *entry = dirs != NULL ? malloc(strlen(dirs) + 6) : NULL;
		if (entry == NULL) {
			free(dirs);
			return false;
		}
		memcpy(entry, "PATH=", 5);
		memcpy(entry + 5, dirs, strlen(dirs) + 1);
		free(dirs);
		free(*e);
		*e = entry;
	}
	return true;
}

void exec_session_destroy(exec_session *s)
{
	if (s == NULL)
		return;
	session_kill(s);
	if (s->own_intr) {
		close_fd(&s->intr_r);
		close_fd(&s->intr_w);
	}
	sandbox_plan_destroy(s->plan);
	sandbox_env_destroy(s->envp);
	free(s->interp);
	free(s->workspace);
	free(s);
}

static exec_session *session_create(exec_lang lang, bool display, const exec_config *cfg,
                                    int intr_r, int intr_w)
{
	exec_config def;
	if (cfg == NULL) {
		exec_config_init(&def);
		cfg = &def;
	}
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language"), NULL;
	exec_session *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return exec_fail("out of memory"), NULL;
	s->sup_pidfd = s->sup_fd = s->code_fd = s->ctl_fd = s->out_fd = s->err_fd = -1;
	s->intr_r = intr_r;
	s->intr_w = intr_w;
	s->lang = lang;
	s->display = display;
	s->profile = cfg->sandbox;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : EXEC_DEFAULT_TIMEOUT_MS;
	s->max_output = cfg->max_output ? cfg->max_output : EXEC_DEFAULT_MAX_OUTPUT;
	s->watch = cfg->watch;
	s->watch_user = cfg->watch_user;
	s->uid = geteuid();
	s->gid = getegid();
	char *const *base = cfg->environ ? cfg->environ : environ;

	char cwd[PATH_MAX];
	const char *ws = cfg->workspace;
	if (ws == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			exec_fail("cannot read the current directory: %s", strerror(errno));
			goto fail;
		}
		ws = cwd;
	}
	s->workspace = realpath(ws, NULL);
	if (s->workspace == NULL) {
		exec_fail("workspace %s: %s", ws, strerror(errno));
		goto fail;
	}
	if (display && sandbox_env_get(base, "DISPLAY") == NULL) {
		exec_fail("the display was granted, but DISPLAY is not set");
		goto fail;
	}
	s->interp = exec_interpreter_find(lang, sandbox_env_get(base, "PATH"), display);
	if (s->interp == NULL)
		goto fail;
	exec_interpreter_argv(lang, s->interp, display, s->argv);
	s->envp = sandbox_env_create(s->profile, display, base, s->workspace);
	if (s->envp == NULL) {
		exec_fail("%s", sandbox_error());
		goto fail;
	}
	if (display && !trust_path(s->envp)) {
		exec_fail("out of memory");
		goto fail;
	}
	s->plan = sandbox_plan_create(s->profile, display, s->workspace, base, cfg->limits);
	if (s->plan == NULL) {
		exec_fail("%s", sandbox_error());
		goto fail;
	}
	for (const char *const *h = cfg->hidden; h != NULL && *h != NULL; h++) {
		if (!sandbox_plan_hide(s->plan, *h)) {
			exec_fail("%s", sandbox_error());
			goto fail;
		}
	}
	if (intr_r < 0) {
		int p[2];
		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
			exec_fail("pipe: %s", strerror(errno));
			goto fail;
		}
		s->intr_r = p[0];
		s->intr_w = p[1];
		s->own_intr = true;
	}
	if (!session_start(s))
		goto fail;
	return s;
fail:
	exec_session_destroy(s);
	return NULL;
}

exec_session *exec_session_create(exec_lang lang, bool display, const exec_config *cfg)
{
	return session_create(lang, display, cfg, -1, -1);
}

const char *exec_session_interpreter(const exec_session *s)
{
	return s->interp;
}

void exec_session_interrupt(exec_session *s)
{
	int saved = errno;
	char c = 'I';
	if (s != NULL && s->intr_w >= 0 && write(s->intr_w, &c, 1) < 0)
		errno = saved;
	errno = saved;
}

/* A write to the blocks pipe that cannot raise SIGPIPE in deskhand when
 * the interpreter has just died. */
static ssize_t write_no_sigpipe(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t n = write(fd, buf, len);
	int err = errno;
	if (n < 0 && err == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

struct run_state {
	exec_session *s;
	exec_output *out;
	exec_output_fn fn;
	void *user;
	bool out_open, err_open;
};

/* Reads what is there on one output pipe; false at end of file. */
static bool pump_output(struct run_state *rs, int fd, exec_stream stream)
{
	char buf[65536];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN;
		}
		if (n == 0)
			return false;
		if (rs->fn != NULL)
			rs->fn(buf, (size_t)n, stream, rs->user);
		exec_output_feed(rs->out, stream, buf, (size_t)n);
		if ((size_t)n < sizeof(buf))
			return true;
	}
	return true;
}

/* Reads both output pipes until they are empty (or closed), or until
 * deadline when wait_eof asks to see the writers gone. */
static void drain_output(struct run_state *rs, bool wait_eof, long long deadline)
{
	for (;;) {
		struct pollfd p[2];
		int n = 0, io = -1, ie = -1;
		if (rs->out_open) {
			io = n;
			p[n++] = (struct pollfd){rs->s->out_fd, POLLIN, 0};
		}
		if (rs->err_open) {
			ie = n;
			p[n++] = (struct pollfd){rs->s->err_fd, POLLIN, 0};
		}
		if (n == 0)
			return;
		long long left = wait_eof ? deadline - now_ms() : 0;
		int r = poll(p, (nfds_t)n, left > 0 ? (int)left : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		if (io >= 0 && p[io].revents)
			rs->out_open = pump_output(rs, rs->s->out_fd, EXEC_STDOUT);
		if (ie >= 0 && p[ie].revents)
			rs->err_open = pump_output(rs, rs->s->err_fd, EXEC_STDERR);
	}
}

static const char *signal_name(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	return abbrev ? abbrev : "?";
}

static void describe_exit(char *buf, size_t size, int wstatus, int *status)
{
	if (WIFEXITED(wstatus)) {
		*status = WEXITSTATUS(wstatus);
		snprintf(buf, size, "exited with status %d", *status);
	} else if (WIFSIGNALED(wstatus)) {
		*status = 128 + WTERMSIG(wstatus);
		snprintf(buf, size, "was killed by signal %d (SIG%s)", WTERMSIG(wstatus),
		         signal_name(WTERMSIG(wstatus)));
	} else {
		*status = 128 + SIGKILL;
		snprintf(buf, size, "ended");
	}
}

/* Restarts a session whose interpreter ended (between blocks or before);
 * the note tells the model its variables are gone. */
static bool ensure_alive(exec_session *s, exec_result *res, char *note, size_t size)
{
	if (s->alive) {
		/* Did the interpreter end between blocks (a thread called exit)? */
		struct pollfd p = {s->sup_pidfd, POLLIN, 0};
		struct sup_msg m;
		ssize_t c = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_PEEK);
		if ((c == (ssize_t)sizeof(m) && m.kind == 'X') || c == 0 || poll(&p, 1, 0) > 0) {
			int ignored;
			describe_exit(s->ended_why, sizeof(s->ended_why),
			              c == (ssize_t)sizeof(m) ? m.status : SIGKILL, &ignored);
			session_kill(s);
		}
	}
	if (s->alive)
		return true;
	bool again = s->started;
	if (!session_start(s))
		return false;
	if (again) {
		res->restarted = true;
		snprintf(note, size, "a fresh %s session was started (the previous interpreter %s; "
		         "its variables are gone). ", exec_lang_name(s->lang), s->ended_why);
	}
	return true;
}

/* One block on its way: what is sent, what came back, how it ends. */
struct block {
	const char *code;
	char marker[EXEC_MARKER_LEN + 1];
	char header[64];
	size_t hlen, sent, total;
	unsigned long long since;  /* boot ticks when the code was sent */
	exec_ctl_reader ctl;
	long long deadline, grace_end, next_watch;
	bool interrupting, timed_out, interrupted, stopped;
	bool got_marker, ended, killed, have_wstatus;
	bool done;                 /* reported, and the interpreter waits for more */
	int status, wstatus;
};

/* Writes as much of the frame (header, then code) as the pipe takes now. */
static void send_code(exec_session *s, struct block *b)
{
	while (b->sent < b->total) {
		const char *src = b->sent < b->hlen ? b->header + b->sent
		                                    : b->code + (b->sent - b->hlen);
		size_t chunk = b->sent < b->hlen ? b->hlen - b->sent : b->total - b->sent;
		ssize_t w = write_no_sigpipe(s->code_fd, src, chunk);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				b->sent = b->total;   /* interpreter gone: its exit says so */
			return;
		}
		b->sent += (size_t)w;
	}
}

/* The supervisor's word: the interpreter exited (with its status), or it died. */
static void read_supervisor(exec_session *s, struct block *b)
{
	struct sup_msg m;
	ssize_t c = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT);
	if (c == (ssize_t)sizeof(m) && m.kind == 'X') {
		b->wstatus = m.status;
		b->have_wstatus = true;
		b->ended = true;
	} else if (c == 0) {
		b->ended = true;
	}
}

/* SIGINT to the block (Ctrl-C or the timeout), then GRACE_MS to stop. */
static void start_interrupt(exec_session *s, struct block *b, long long now)
{
	struct sup_cmd cmd = {'I', b->since};
	send(s->sup_fd, &cmd, sizeof(cmd), MSG_NOSIGNAL);
	b->interrupting = true;
	b->grace_end = now + GRACE_MS;
}

/* One wait for anything: output, the end marker, the interpreter's end, an
 * interrupt request, room to send code; or the deadline. */
static void wait_once(exec_session *s, struct run_state *rs, struct block *b)
{
	struct pollfd p[7];
	int n = 0, i_out = -1, i_err = -1, i_code = -1;
	if (rs->out_open) {
		i_out = n;
		p[n++] = (struct pollfd){s->out_fd, POLLIN, 0};
	}
	if (rs->err_open) {
		i_err = n;
		p[n++] = (struct pollfd){s->err_fd, POLLIN, 0};
	}
	int i_ctl = n;
	p[n++] = (struct pollfd){s->ctl_fd, POLLIN, 0};
	int i_sup = n;
	p[n++] = (struct pollfd){s->sup_fd, POLLIN, 0};
	int i_pid = n;
	p[n++] = (struct pollfd){s->sup_pidfd, POLLIN, 0};
	int i_intr = n;
	p[n++] = (struct pollfd){s->intr_r, POLLIN, 0};
	if (b->sent < b->total) {
		i_code = n;
		p[n++] = (struct pollfd){s->code_fd, POLLOUT, 0};
	}
	long long until = b->interrupting ? b->grace_end : b->deadline;
	if (s->watch != NULL && b->next_watch < until)
		until = b->next_watch;
	long long left = until - now_ms();
	if (b->got_marker && left > SETTLE_POLL_MS)
		left = SETTLE_POLL_MS;      /* reported: look again whether it is so */
	int r = poll(p, (nfds_t)n, left > 0 ? (int)left : 0);
	if (r < 0 && errno != EINTR) {
		exec_fail("poll: %s", strerror(errno));
		b->killed = true;
		return;
	}
	if (r <= 0)
		return;
	if (i_code >= 0 && p[i_code].revents)
		send_code(s, b);
	if (i_out >= 0 && p[i_out].revents)
		rs->out_open = pump_output(rs, s->out_fd, EXEC_STDOUT);
	if (i_err >= 0 && p[i_err].revents)
		rs->err_open = pump_output(rs, s->err_fd, EXEC_STDERR);
	if (p[i_ctl].revents) {
		char buf[256];
		ssize_t c = read(s->ctl_fd, buf, sizeof(buf));
		if (c > 0 && exec_ctl_feed(&b->ctl, b->marker, buf, (size_t)c, &b->status))
			b->got_marker = true;
	}
	if (p[i_sup].revents)
		read_supervisor(s, b);
	if (p[i_pid].revents & POLLIN)
		b->ended = true;
	if (p[i_intr].revents) {
		char junk[64];
		while (read(s->intr_r, junk, sizeof(junk)) > 0)
			;
		if (!b->interrupting) {
			start_interrupt(s, b, now_ms());
			b->interrupted = true;
		}
	}
}

/* Runs the block until its marker, the interpreter's end, or the end of the
 * grace after an interrupt or the timeout. */
static void run_block(exec_session *s, struct run_state *rs, struct block *b)
{
	while (!b->done && !b->ended && !b->killed) {
		wait_once(s, rs, b);
		if (b->ended || b->killed)
			break;
		/* A report is believed once the interpreter really waits for the
		 * next block: code that forged it may still be running. */
		if (b->got_marker && interp_idle(s) != 0) {
			b->done = true;
			break;
		}
		long long now = now_ms();
		if (s->watch != NULL && now >= b->next_watch) {
			b->next_watch = now + EXEC_WATCH_MS;
			if (s->watch(s->watch_user)) {
				/* No grace: what the watch guards must end now. */
				b->stopped = b->killed = true;
				break;
			}
		}
		if (!b->interrupting && now >= b->deadline) {
			start_interrupt(s, b, now);
			b->timed_out = true;
		} else if (b->interrupting && now >= b->grace_end) {
			b->killed = true;
		}
	}
}

/* After the block: the rest of its output, and what is left of the session. */
static void settle_block(exec_session *s, struct run_state *rs, struct block *b,
                         char *how, size_t size)
{
	if (b->done && !b->timed_out) {
		drain_output(rs, false, 0);
	} else if (b->ended) {
		/* The interpreter is gone; the supervisor is taking the rest of
		 * the session down. Read what they wrote until the pipes close. */
		drain_output(rs, true, now_ms() + DRAIN_MS);
		if (!b->have_wstatus) {
			/* The supervisor itself died; its status is all there is. */
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			if (waitid((idtype_t)P_PIDFD, (id_t)s->sup_pidfd, &si, WEXITED | WNOWAIT) == 0)
				b->wstatus = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
			else
				b->wstatus = SIGKILL;
		}
		describe_exit(how, size, b->wstatus, &b->status);
		session_kill(s);
	} else if (b->killed || b->timed_out) {
		/* Nothing survives a timeout, even a block that obeyed SIGINT:
		 * what it started in the background goes too. */
		drain_output(rs, false, 0);
		session_terminate(s);
		drain_output(rs, true, now_ms() + DRAIN_MS);
		session_kill(s);
	}
}

/* The block's status and the message for the model about how it ended. */
static void block_message(exec_session *s, struct block *b, const char *how,
                          char *msg, size_t size)
{
	const char *lang = exec_lang_name(s->lang);
	msg[0] = '\0';
	if (b->stopped) {
		b->status = EXEC_STATUS_STOPPED;
		snprintf(msg, size, "stopped at once: every process of the session was killed; "
		         "the next block starts a fresh %s session", lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped at once");
	} else if (b->timed_out) {
		b->status = EXEC_STATUS_TIMEOUT;
		snprintf(msg, size, "timed out after %u s: interrupted, then every process "
		         "of the session was stopped; the next block starts a fresh %s session",
		         (s->timeout_ms + 999) / 1000, lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped after a timeout");
	} else if (b->interrupted && b->killed) {
		b->status = EXEC_STATUS_INTERRUPTED;
		snprintf(msg, size, "interrupted: the block did not stop within %d s, so "
		         "every process of the session was stopped; the next block starts a "
		         "fresh %s session", GRACE_MS / 1000, lang);
		snprintf(s->ended_why, sizeof(s->ended_why), "was stopped after an interrupt");
	} else if (b->ended) {
		if (b->interrupted && WIFSIGNALED(b->wstatus) && WTERMSIG(b->wstatus) == SIGINT)
			b->status = EXEC_STATUS_INTERRUPTED;
		snprintf(msg, size, "%sthe %s interpreter %s during the block; the next "
		         "block starts a fresh session", b->interrupted ? "interrupted: " : "",
		         lang, how);
		snprintf(s->ended_why, sizeof(s->ended_why), "%s", how);
	} else if (b->interrupted) {
		snprintf(msg, size, "interrupted");
	}
}

#define EARLIER_HEAD "[deskhand: output of an earlier block's background work, written " \
	"after that block ended:]\n"
#define EARLIER_TAIL "\n[deskhand: this block's output:]\n"

/* Whatever arrived between blocks was written by work an earlier block left
 * running: it opens this block's output under a label, never as its own. */
static void take_earlier_output(exec_session *s, struct run_state *rs)
{
	exec_output *earlier = exec_output_create(s->max_output);
	if (earlier == NULL)
		return;
	/* Is what an earlier block left still there? */
	if (s->lingering && s->interp_pid != 0)
		s->lingering = interp_threads(s) > s->base_threads || block_processes(s, 0) > 0;
	struct run_state tmp = {s, earlier, NULL, NULL, true, true};
	drain_output(&tmp, false, 0);
	size_t len = 0, total = 0;
	char *text = exec_output_text(earlier, &len, NULL, &total, NULL);
	if (text != NULL && total > 0) {
		static const char head[] = EARLIER_HEAD, tail[] = EARLIER_TAIL;
		bool nl = len > 0 && text[len - 1] == '\n';
		const char *parts[3] = {head, text, tail + nl};
		size_t lens[3] = {sizeof(head) - 1, len, sizeof(tail) - 1 - nl};
		for (int i = 0; i < 3; i++) {
			if (rs->fn != NULL)
				rs->fn(parts[i], lens[i], EXEC_STDOUT, rs->user);
			exec_output_feed(rs->out, EXEC_STDOUT, parts[i], lens[i]);
		}
	}
	free(text);
	exec_output_destroy(earlier);
}

bool exec_session_run(exec_session *s, const char *code, size_t len,
                      exec_output_fn fn, void *user, exec_result *res)
{
	memset(res, 0, sizeof(*res));
	if (memchr(code, '\0', len) != NULL)
		return exec_fail("the code contains a NUL byte; nothing was run");
	char restart_note[256] = "";
	if (!ensure_alive(s, res, restart_note, sizeof(restart_note)))
		return false;
	/* Interrupt requests made while nothing ran are stale. */
	char junk[64];
	while (read(s->intr_r, junk, sizeof(junk)) > 0)
		;
	struct block b;
	memset(&b, 0, sizeof(b));
	b.code = code;
	if (!exec_marker_new(b.marker))
		return false;
	b.hlen = exec_frame_header(b.header, sizeof(b.header), b.marker, len);
	b.total = b.hlen + len;
	struct run_state rs = {s, exec_output_create(s->max_output), fn, user, true, true};
	if (rs.out == NULL)
		return exec_fail("out of memory");
	/* Taken before the code is sent: every process the block starts
	 * begins at this tick or later (see interrupt_block). */
	take_earlier_output(s, &rs);
	b.since = boot_ticks();
	b.deadline = now_ms() + s->timeout_ms;
	run_block(s, &rs, &b);

	char how[96] = "", msg[300], left_running[300] = "";
	settle_block(s, &rs, &b, how, sizeof(how));
	block_message(s, &b, how, msg, sizeof(msg));
	if (b.done && s->alive)
		lingering_note(s, b.since, left_running, sizeof(left_running));
	res->status = b.status;
	res->timed_out = b.timed_out;
	res->interrupted = b.interrupted;
	res->stopped = b.stopped;
	res->session_ended = !s->alive;
	snprintf(res->message, sizeof(res->message), "%s%s%s%s", restart_note, msg,
	         msg[0] && left_running[0] ? "; " : "", left_running);
	/* Trailing space of the note alone is noise. */
	size_t ml = strlen(res->message);
	while (ml > 0 && res->message[ml - 1] == ' ')
		res->message[--ml] = '\0';
	res->output = exec_output_text(rs.out, &res->output_len, &res->output_head_len,
	                               &res->chars_total, &res->chars_omitted);
	exec_output_destroy(rs.out);
	if (res->output == NULL) {
		res->output = calloc(1, 1);
		res->output_len = res->output_head_len = 0;
	}
	return true;
}

/* ---- sets ------------------------------------------------------------- */

struct exec_sessions {
	exec_config cfg;
	char *workspace;
	char **environ;
	char **hidden;
	sandbox_limits limits;
	bool have_limits;
	exec_session *s[EXEC_LANG_COUNT][2];
	int intr_r, intr_w;
};

/* A deep copy of a NULL-terminated string array (freed with
 * sandbox_env_destroy); NULL on allocation failure. */
static char **strv_dup(const char *const *v)
{
	size_t n = 0;
	while (v != NULL && v[n] != NULL)
		n++;
	char **out = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; out != NULL && i < n; i++) {
		if ((out[i] = strdup(v[i])) == NULL) {
			sandbox_env_destroy(out);
			return NULL;
		}
	}
	return out;
}

exec_sessions *exec_sessions_create(const exec_config *cfg)
{
	exec_sessions *set = calloc(1, sizeof(*set));
	if (set == NULL)
		return exec_fail("out of memory"), NULL;
	set->intr_r = set->intr_w = -1;
	if (cfg != NULL)
		set->cfg = *cfg;
	else
		exec_config_init(&set->cfg);
	char cwd[PATH_MAX];
	const char *ws = set->cfg.workspace;
	if (ws == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			exec_fail("cannot read the current directory: %s", strerror(errno));
			goto fail;
		}
		ws = cwd;
	}
	if ((set->workspace = strdup(ws)) == NULL)
		goto oom;
	set->cfg.workspace = set->workspace;
	char *const *base = set->cfg.environ ? set->cfg.environ : environ;
	if ((set->environ = strv_dup((const char *const *)base)) == NULL ||
	    (set->hidden = strv_dup(set->cfg.hidden)) == NULL)
		goto oom;
	set->cfg.environ = set->environ;
	set->cfg.hidden = (const char *const *)set->hidden;
	/* Before any code of this set runs: which program a session starts
	 * must not depend on what earlier blocks wrote into PATH folders. */
	exec_interpreters_resolve(sandbox_env_get(set->environ, "PATH"));
	if (set->cfg.limits != NULL) {
		set->limits = *set->cfg.limits;
		set->cfg.limits = &set->limits;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
		exec_fail("pipe: %s", strerror(errno));
		goto fail;
	}
	set->intr_r = p[0];
	set->intr_w = p[1];
	return set;
oom:
	exec_fail("out of memory");
fail:
	exec_sessions_destroy(set);
	return NULL;
}

void exec_sessions_destroy(exec_sessions *set)
{
	if (set == NULL)
		return;
	for (int l = 0; l < EXEC_LANG_COUNT; l++)
		for (int d = 0; d < 2; d++)
			exec_session_destroy(set->s[l][d]);
	close_fd(&set->intr_r);
	close_fd(&set->intr_w);
	sandbox_env_destroy(set->environ);
	sandbox_env_destroy(set->hidden);
	free(set->workspace);
	free(set);
}

bool exec_sessions_run(exec_sessions *set, exec_lang lang, bool display,
                       const char *code, size_t len, exec_output_fn fn, void *user,
                       exec_result *res)
{
	memset(res, 0, sizeof(*res));
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language");
	exec_session **slot = &set->s[lang][display ? 1 : 0];
	if (*slot == NULL) {
		*slot = session_create(lang, display, &set->cfg, set->intr_r, set->intr_w);
		if (*slot == NULL)
			return false;
	}
	return exec_session_run(*slot, code, len, fn, user, res);
}

void exec_sessions_interrupt(exec_sessions *set)
{
	int saved = errno;
	char c = 'I';
	if (set != NULL && set->intr_w >= 0 && write(set->intr_w, &c, 1) < 0)
		errno = saved;
	errno = saved;
}

void exec_sessions_reset(exec_sessions *set, exec_lang lang, bool display)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return;
	exec_session **slot = &set->s[lang][display ? 1 : 0];
	exec_session_destroy(*slot);
	*slot = NULL;
}
