/*
 * executors/sandbox — the probe behind `deskhand doctor`: each layer is
 * tried for real in a short-lived child, never just inferred from a
 * version number (except where the kernel offers no other way to know,
 * the per-namespace pid_max).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executors/sandbox-internal.h"

pid_t sandbox_raw_clone(unsigned long flags)
{
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

typedef bool (*probe_fn)(const void *arg, sandbox_failure *fail);

struct probe_report {
	char step[120];
	int err;
};

/*
 * Runs fn in a child created with `flags`; true when it succeeded.
 * On failure, why gets "step: error".
 */
static bool in_child(unsigned long flags, probe_fn fn, const void *arg,
                     char *why, size_t why_size)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		snprintf(why, why_size, "pipe: %s", strerror(errno));
		return false;
	}
	pid_t pid = sandbox_raw_clone(flags);
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		snprintf(why, why_size, "clone: %s", strerror(err));
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		sandbox_failure fail = {"", 0};
		if (fn(arg, &fail))
			_exit(0);
		struct probe_report r;
		memset(&r, 0, sizeof(r));
		size_t n = strlen(fail.step);
		if (n >= sizeof(r.step))
			n = sizeof(r.step) - 1;
		memcpy(r.step, fail.step, n);
		r.err = fail.err;
		if (write(p[1], &r, sizeof(r)) < 0)
			_exit(2);
		_exit(1);
	}
	close(p[1]);
	struct probe_report r;
	memset(&r, 0, sizeof(r));
	ssize_t got;
	do
		got = read(p[0], &r, sizeof(r));
	while (got < 0 && errno == EINTR);
	close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (got == (ssize_t)sizeof(r))
		snprintf(why, why_size, "%s: %s", r.step, strerror(r.err));
	else
		snprintf(why, why_size, "the probe process failed (status 0x%x)", status);
	return false;
}

struct ids {
	uid_t uid;
	gid_t gid;
};

static bool probe_userns(const void *arg, sandbox_failure *fail)
{
	const struct ids *id = arg;
	/* As the sandbox's child does (dumpable for the writes alone: see
	 * sandbox_child_map_ids). */
	int err = sandbox_child_map_ids(0, id->uid, 0, id->gid);
	if (err != 0) {
		fail->step = "writing the uid/gid maps";
		fail->err = err;
		return false;
	}
	return true;
}

static bool probe_pidns(const void *arg, sandbox_failure *fail)
{
	if (!probe_userns(arg, fail))
		return false;
	if (getpid() != 1) {
		fail->step = "not pid 1 in the new namespace";
		fail->err = EINVAL;
		return false;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		fail->step = "mounting its /proc";
		fail->err = errno;
		return false;
	}
	return true;
}

static bool probe_mountns(const void *arg, sandbox_failure *fail)
{
	if (!probe_userns(arg, fail))
		return false;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
		fail->step = "making mounts private";
		fail->err = errno;
		return false;
	}
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0) {
		fail->step = "mounting a tmpfs";
		fail->err = errno;
		return false;
	}
	struct stat st;
	int err;
	if (stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode) &&
	    (err = sandbox_child_mount_devpts()) != 0) {
		fail->step = "mounting a private /dev/pts";
		fail->err = err;
		return false;
	}
	return true;
}

static bool probe_netns(const void *arg, sandbox_failure *fail)
{
	if (!probe_userns(arg, fail))
		return false;
	int err = sandbox_child_loopback_up();
	if (err != 0) {
		fail->step = "bringing up the loopback";
		fail->err = err;
		return false;
	}
	return true;
}

static bool probe_seccomp(const void *arg, sandbox_failure *fail)
{
	const struct sock_fprog *prog = arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) != 0) {
		fail->step = "loading the filter";
		fail->err = errno;
		return false;
	}
	/* A denied call must now answer EPERM, an allowed one its usual. */
	if (syscall(SYS_unshare, 0) != -1 || errno != EPERM) {
		fail->step = "unshare() was not denied";
		fail->err = EINVAL;
		return false;
	}
	if (syscall(SYS_getppid) < 0) {
		fail->step = "getppid() failed";
		fail->err = errno;
		return false;
	}
	return true;
}

static bool probe_landlock(const void *arg, sandbox_failure *fail)
{
	const uint64_t *scoped = arg;
	struct sb_landlock_ruleset_attr attr;
	memset(&attr, 0, sizeof(attr));
	if (*scoped)
		attr.scoped = SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
	else
		attr.handled_access_fs = SB_LL_FS_WRITE_FILE | SB_LL_FS_MAKE_REG;
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0) {
		fail->step = "creating a ruleset";
		fail->err = errno;
		return false;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		fail->step = "restricting a process";
		fail->err = errno;
		return false;
	}
	return true;
}

static bool probe_pid_max(const void *arg, sandbox_failure *fail)
{
	if (!probe_pidns(arg, fail))
		return false;
	int err = sandbox_child_write_file("/proc/sys/kernel/pid_max", "1025");
	if (err != 0) {
		fail->step = "setting pid_max of the pid namespace";
		fail->err = err;
		return false;
	}
	return true;
}

static void set(sandbox_probe *p, sandbox_layer l, bool ok, const char *detail)
{
	p->ok[l] = ok;
	snprintf(p->detail[l], sizeof(p->detail[l]), "%s", detail);
}

void sandbox_probe_run(sandbox_probe *out)
{
	memset(out, 0, sizeof(*out));
	struct ids id = {geteuid(), getegid()};
	char why[200], text[200];

	bool userns = in_child(CLONE_NEWUSER, probe_userns, &id, why, sizeof(why));
	set(out, SANDBOX_LAYER_USERNS, userns, userns ? "ok" : why);

	static const struct {
		sandbox_layer layer;
		unsigned long flags;
		probe_fn fn;
	} ns[] = {
		{SANDBOX_LAYER_PIDNS, CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS, probe_pidns},
		{SANDBOX_LAYER_MOUNTNS, CLONE_NEWUSER | CLONE_NEWNS, probe_mountns},
		{SANDBOX_LAYER_NETNS, CLONE_NEWUSER | CLONE_NEWNET, probe_netns},
	};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (!userns) {
			set(out, ns[i].layer, false, "needs a user namespace");
			continue;
		}
		bool ok = in_child(ns[i].flags, ns[i].fn, &id, why, sizeof(why));
		set(out, ns[i].layer, ok, ok ? "ok" : why);
	}

	struct sock_fprog prog;
	if (!sandbox_seccomp_program(&prog)) {
		set(out, SANDBOX_LAYER_SECCOMP, false, sandbox_error());
	} else {
		bool ok = in_child(0, probe_seccomp, &prog, why, sizeof(why));
		snprintf(text, sizeof(text), "ok (%u instructions)", prog.len);
		set(out, SANDBOX_LAYER_SECCOMP, ok, ok ? text : why);
	}

	out->landlock_abi = sandbox_landlock_abi();
	if (out->landlock_abi < 1) {
		set(out, SANDBOX_LAYER_LANDLOCK, false,
		    "not offered by this kernel (not built in, or missing from lsm=)");
	} else {
		uint64_t scoped = 0;
		bool ok = in_child(0, probe_landlock, &scoped, why, sizeof(why));
		snprintf(text, sizeof(text), "ok (ABI %d)", out->landlock_abi);
		set(out, SANDBOX_LAYER_LANDLOCK, ok, ok ? text : why);
	}
	if (out->landlock_abi < 6) {
		snprintf(text, sizeof(text), "needs Landlock ABI 6 (Linux 6.12); this kernel "
		         "has %d", out->landlock_abi);
		set(out, SANDBOX_LAYER_SCOPE, false, text);
	} else {
		uint64_t scoped = 1;
		bool ok = in_child(0, probe_landlock, &scoped, why, sizeof(why));
		set(out, SANDBOX_LAYER_SCOPE, ok, ok ? "ok (Landlock)" : why);
	}

	sandbox_task_mode mode;
	if (!sandbox_task_cap(&mode, why, sizeof(why))) {
		set(out, SANDBOX_LAYER_TASKS, false, why);
	} else if (mode == SB_TASKS_NPROC) {
		set(out, SANDBOX_LAYER_TASKS, true,
		    "ok (RLIMIT_NPROC inside the session's user namespace; no cgroup used)");
	} else if (!userns) {
		set(out, SANDBOX_LAYER_TASKS, false, "needs a user namespace");
	} else {
		bool ok = in_child(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS, probe_pid_max,
		                   &id, why, sizeof(why));
		set(out, SANDBOX_LAYER_TASKS, ok,
		    ok ? "ok (pid_max of the session's pid namespace; no cgroup used)" : why);
	}
}

bool sandbox_probe_allows(const sandbox_probe *probe, sandbox_profile profile,
                          bool display, char *why, size_t why_size)
{
	unsigned need = sandbox_profile_layers(profile, display);
	for (int l = 0; l < SANDBOX_LAYER_COUNT; l++) {
		if ((need & 1u << l) && !probe->ok[l]) {
			if (why != NULL)
				snprintf(why, why_size, "%s: %s", sandbox_layer_name((sandbox_layer)l),
				         probe->detail[l]);
			return false;
		}
	}
	return true;
}
