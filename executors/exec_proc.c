/*
 * executors/exec — what /proc tells of a session's processes: read by the
 * supervisor inside the namespaces (async-signal-safe: no stdio, no
 * allocation) and by deskhand to judge when a block's work is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/exec-internal.h"

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

/* Calls fn for every process listed in this pid namespace's /proc. */
void exec_each_process(void (*fn)(pid_t pid, void *arg), void *arg)
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
	base_proc_info info;
	if (s->interp_pid == 0 && base_proc_stat(pid, &info) && info.ppid == s->sup_pid)
		s->interp_pid = pid;
}

/* Calls fn for each thread id listed in the interpreter's task directory
 * (opened once, read again from its start); the count, -1 unreadable. */
static int each_thread(const exec_session *s, void (*fn)(const char *tid, void *arg),
                       void *arg)
{
	if (s->task_fd < 0 || lseek(s->task_fd, 0, SEEK_SET) != 0)
		return -1;
	char buf[4096];
	int n = 0;
	long got;
	while ((got = syscall(SYS_getdents64, s->task_fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			if (name[0] != '.') {
				n++;
				if (fn != NULL)
					fn(name, arg);
			}
			off += reclen;
		}
	return got < 0 ? -1 : n;
}

int exec_interp_threads(const exec_session *s)
{
	return each_thread(s, NULL, NULL);
}

/* Reads a /proc file held open from its start; its length, -1 unreadable. */
static ssize_t reread(int fd, char *buf, size_t size)
{
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

struct thread_children {
	const exec_session *s;
	bool any, unknown;
};

static void thread_has_children(const char *tid, void *arg)
{
	struct thread_children *tc = arg;
	char path[40], buf[16];
	snprintf(path, sizeof(path), "%s/children", tid);
	ssize_t n = base_read_small(tc->s->task_fd, path, buf, sizeof(buf));
	if (n < 0)
		tc->unknown = true;
	else if (n > 0)
		tc->any = true;
}

/*
 * Whether the session may hold processes besides the interpreter, from the
 * kernel's lists of children: those of each interpreter thread (a fork
 * belongs to the thread that made it), then the supervisor's (where
 * orphans go). Read in this order, a process moving from one list to the
 * other while they are read is seen in one of them. True when unknown.
 */
static bool session_has_others(const exec_session *s)
{
	struct thread_children tc = {s, false, false};
	if (each_thread(s, thread_has_children, &tc) < 0 || tc.unknown || tc.any)
		return true;
	char buf[128];
	ssize_t n = reread(s->sup_children_fd, buf, sizeof(buf));
	if (n < 0 || n == (ssize_t)sizeof(buf) - 1)
		return true;
	for (char *p = buf, *end; *p != '\0'; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid != (long)s->interp_pid)
			return true;
	}
	return false;
}

/*
 * 1 when the main thread waits for the next block, 0 when it is doing
 * something else, -1 when this kernel does not tell (no
 * /proc/PID/syscall): then the driver's report is all there is.
 */
int exec_interp_idle(const exec_session *s)
{
	if (s->interp_pid == 0)
		return -1;
	char path[64], buf[256];
	if (reread(s->syscall_fd, buf, sizeof(buf)) <= 0)
		return -1;
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

void exec_forget_interpreter(exec_session *s)
{
	exec_close_fd(&s->syscall_fd);
	exec_close_fd(&s->task_fd);
	exec_close_fd(&s->sup_children_fd);
	s->interp_pid = 0;
}

/* The interpreter is the supervisor's child: its list names it (a walk of
 * /proc when that list cannot be read). */
static void find_interpreter(exec_session *s)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)s->sup_pid,
	         (int)s->sup_pid);
	s->sup_children_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (reread(s->sup_children_fd, buf, sizeof(buf)) > 0)
		s->interp_pid = (pid_t)atol(buf);
	if (s->interp_pid <= 0) {
		s->interp_pid = 0;
		exec_each_process(find_interp, s);
	}
	if (s->interp_pid == 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)s->interp_pid);
	s->syscall_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->interp_pid);
	s->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Until the driver waits for its first block: a token, and the wait for
 * the driver's read of it (the pipe holds one page, so it is full until
 * then), each time the interpreter is not idle yet. */
static void await_first_read(exec_session *s, long long deadline)
{
	for (int pokes = 1; exec_interp_idle(s) == 0; pokes++) {
		long long left = deadline - base_now_ms();
		if (left <= 0 || !exec_poke_driver(s))
			return;
		struct pollfd p[2] = {{s->code_fd, POLLOUT, 0}, {s->sup_pidfd, POLLIN, 0}};
		if (poll(p, 2, (int)left) > 0 && (p[1].revents & POLLIN))
			return;
		/* Read, yet not waiting (between its read and the next):
		 * each further token a little later. */
		base_sleep_ms(exec_poke_pause_ms(pokes), NULL);
	}
}

/* After the interpreter started: who it is, and its threads once its
 * driver waits for the first block (node starts several). */
void exec_note_interpreter(exec_session *s, long long deadline)
{
	struct stat st;
	exec_forget_interpreter(s);
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
	find_interpreter(s);
	if (s->interp_pid == 0)
		return;
	await_first_read(s, deadline);
	s->base_threads = exec_interp_threads(s);
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
	base_proc_info info;
	if (sp->n < sizeof(sp->p) / sizeof(sp->p[0]) && base_proc_stat(pid, &info)) {
		sp->p[sp->n].pid = pid;
		sp->p[sp->n].ppid = info.ppid;
		sp->p[sp->n].start = info.start;
		sp->n++;
	}
}

/* Processes of the session other than the interpreter started since
 * `since`: the descendants of the supervisor (orphans come back to it). */
int exec_block_processes(const exec_session *s, unsigned long long since)
{
	if (!session_has_others(s))
		return 0;
	struct session_procs *sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return 0;
	exec_each_process(collect_proc, sp);
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
void exec_lingering_note(exec_session *s, unsigned long long since, char *note, size_t size)
{
	note[0] = '\0';
	if (s->interp_pid == 0)
		return;
	bool earlier = s->lingering;
	int threads = exec_interp_threads(s);
	int extra = s->base_threads > 0 && threads > s->base_threads ? threads - s->base_threads : 0;
	int procs = exec_block_processes(s, since);
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

long long exec_oom_kills(void)
{
	char buf[16384];
	if (base_read_small(AT_FDCWD, "/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	const char *at = strstr(buf, "\noom_kill ");
	return at != NULL ? atoll(at + 10) : -1;
}
