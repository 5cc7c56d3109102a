/*
 * executors/enclosure — a batch task's walls (see sandbox.h): the first
 * process of new user, mount and pid namespaces, with /tmp, /dev/shm and
 * the named directories covered, what must stay bound back, and a /proc
 * of its own. The parent is single-threaded (deskhand batch), so the child
 * goes on running ordinary code after the walls are up.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executors/sandbox-internal.h"

/* Why the walls could not go up, sent from the child to the parent. */
static void child_fail(int fd, const char *step, int err)
{
	char msg[300];
	int n = snprintf(msg, sizeof(msg), "%s: %s", step, strerror(err));
	if (err == EPERM || err == EACCES)
		snprintf(msg + n, sizeof(msg) - (size_t)n, "%s",
		         " (in a container: see deskhand doctor; podman needs "
		         "--security-opt unmask=ALL and a seccomp profile that allows "
		         "namespaces)");
	if (write(fd, msg, strlen(msg)) < 0) {
		/* The parent sees the exit status anyway. */
	}
	_exit(125);
}

static int tmpfs(const char *path, const char *opts)
{
	return mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0 ? 0 : errno;
}

/* Opens what must stay seen, before anything covers it. */
static int hold(const char *path, int fd)
{
	int h = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h < 0)
		child_fail(fd, path, errno);
	return h;
}

static void bind_back(const char *path, int held, int fd)
{
	int err;
	if ((err = sandbox_child_make_dirs(path)) != 0 ||
	    (err = sandbox_child_bind_fd(held, path)) != 0)
		child_fail(fd, path, err);
	close(held);
}

/* The private /tmp and /dev/shm, what must stay bound back over them, the
 * covers (a kept folder that holds one is covered there too), and the
 * task's own folder back over its cover. */
static void build_walls(const sandbox_enclosure *e, uid_t uid, gid_t gid, int fd)
{
	int kept[SANDBOX_ENCLOSURE_MAX], own = -1;
	size_t nkept = 0;
	int err = sandbox_child_map_ids(uid, uid, gid, gid);
	if (err != 0)
		child_fail(fd, "the task's user namespace (uid_map)", err);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		child_fail(fd, "making the task's mounts private", errno);
	for (; nkept < SANDBOX_ENCLOSURE_MAX && e->keep[nkept] != NULL; nkept++)
		kept[nkept] = hold(e->keep[nkept], fd);
	if (e->own != NULL)
		own = hold(e->own, fd);
	if ((err = tmpfs("/tmp", "mode=1777")) != 0)
		child_fail(fd, "the task's private /tmp", err);
	if (access("/dev/shm", F_OK) == 0 && (err = tmpfs("/dev/shm", "mode=1777")) != 0)
		child_fail(fd, "the task's private /dev/shm", err);
	for (size_t i = 0; i < nkept; i++)
		bind_back(e->keep[i], kept[i], fd);
	for (size_t i = 0; i < SANDBOX_ENCLOSURE_MAX && e->cover[i] != NULL; i++) {
		if ((err = sandbox_child_make_dirs(e->cover[i])) != 0 ||
		    (err = tmpfs(e->cover[i], "mode=0755")) != 0)
			child_fail(fd, e->cover[i], err);
	}
	if (own >= 0)
		bind_back(e->own, own, fd);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		child_fail(fd, "the task's /proc", errno);
}

/* setgroups() as a success that changes nothing, for a task run by root:
 * its programs believe they are root and reset their groups before they
 * start a child (xterm's initgroups()), and give up when that fails, as
 * it must without CAP_SETGID. The groups stay the ones it has. */
static int groups_noop(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return ENOMEM;
	int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(setgroups), 0);
	int nr32 = seccomp_syscall_resolve_name("setgroups32");
	if (r == 0 && nr32 != __NR_SCMP_ERROR && nr32 >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), nr32, 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r < 0 ? -r : r;
}

int sandbox_enclosure_powerless(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	int err = geteuid() == 0 ? groups_noop() : 0;
	return err != 0 ? err : sandbox_child_drop_capabilities();
}

pid_t sandbox_enclosure_enter(const sandbox_enclosure *e)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		sandbox_fail("a pipe for the task's enclosure: %s", strerror(errno));
		return -1;
	}
	uid_t uid = getuid();
	gid_t gid = getgid();
	fflush(NULL);
	/* clone(2) without a stack is fork(2) into new namespaces: the child
	 * is pid 1 of its own pid namespace, and its death ends every process
	 * the task started, however deep. */
	long pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | SIGCHLD,
	                   NULL, NULL, NULL, 0L);
	if (pid < 0) {
		int err = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		sandbox_fail("new namespaces for the task: %s%s", strerror(err),
		             err == EPERM || err == ENOSPC
		                 ? " (user namespaces are off here: see deskhand doctor)"
		                 : "");
		return -1;
	}
	if (pid == 0) {
		close(pipefd[0]);
		build_walls(e, uid, gid, pipefd[1]);
		close(pipefd[1]);
		return 0;
	}
	close(pipefd[1]);
	char msg[320];
	ssize_t n;
	do
		n = read(pipefd[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n <= 0)
		return (pid_t)pid;
	msg[n] = '\0';
	while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
		;
	sandbox_fail("the task's enclosure: %s", msg);
	return -1;
}

bool sandbox_enclosure_probe(void)
{
	sandbox_enclosure none = {{NULL}, {NULL}, NULL};
	pid_t pid = sandbox_enclosure_enter(&none);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return false;
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	sandbox_fail("the task's enclosure ended with status %d", st);
	return false;
}
