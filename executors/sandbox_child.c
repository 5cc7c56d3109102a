/*
 * executors/sandbox — the child's side. Everything here runs between a
 * clone() and an execve() in a process copied from a possibly
 * multi-threaded parent, so it makes system calls only: no malloc, no
 * stdio, no locale, nothing that could wait on a lock another thread held
 * at the moment of the copy. Numbers are formatted by hand for that reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "executors/sandbox-internal.h"

static bool failed(sandbox_failure *fail, const char *step, int err)
{
	fail->step = step;
	fail->err = err != 0 ? err : EIO;
	return false;
}

/* Appends the decimal form of v to buf at *pos (bounded by size). */
static void put_u(char *buf, size_t size, size_t *pos, unsigned long long v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0 && *pos + 1 < size)
		buf[(*pos)++] = tmp[--n];
	buf[*pos] = '\0';
}

static void put_s(char *buf, size_t size, size_t *pos, const char *s)
{
	while (*s != '\0' && *pos + 1 < size)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

int sandbox_child_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int err = w < 0 ? errno : ((size_t)w != len ? EIO : 0);
	close(fd);
	return err;
}

static int write_maps(uid_t inner_uid, uid_t outer_uid, gid_t inner_gid, gid_t outer_gid)
{
	char line[64];
	size_t pos = 0;
	int err = sandbox_child_write_file("/proc/self/setgroups", "deny");
	if (err != 0 && err != ENOENT)
		return err;
	put_u(line, sizeof(line), &pos, inner_uid);
	put_s(line, sizeof(line), &pos, " ");
	put_u(line, sizeof(line), &pos, outer_uid);
	put_s(line, sizeof(line), &pos, " 1\n");
	if ((err = sandbox_child_write_file("/proc/self/uid_map", line)) != 0)
		return err;
	pos = 0;
	put_u(line, sizeof(line), &pos, inner_gid);
	put_s(line, sizeof(line), &pos, " ");
	put_u(line, sizeof(line), &pos, outer_gid);
	put_s(line, sizeof(line), &pos, " 1\n");
	return sandbox_child_write_file("/proc/self/gid_map", line);
}

/* deskhand is not dumpable (agent/cli/main.c), which hands this copy's
 * /proc/self to root: an ordinary user could not write its own maps. So
 * the copy is dumpable for the writes alone, as it was before them; root
 * owns /proc/self either way. */
int sandbox_child_map_ids(uid_t inner_uid, uid_t outer_uid, gid_t inner_gid,
                          gid_t outer_gid)
{
	int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	bool toggle = outer_uid != 0 && was == 0;
	if (toggle && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return errno;
	int err = write_maps(inner_uid, outer_uid, inner_gid, outer_gid);
	if (toggle && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 && err == 0)
		err = errno;
	return err;
}

int sandbox_child_loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	int err = 0;
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		err = errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			err = errno;
	}
	close(s);
	return err;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int sandbox_child_make_dirs(const char *path)
{
	char buf[SB_PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof(buf))
		return ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return errno;
		buf[i] = c;
	}
	return 0;
}

int sandbox_child_bind_fd(int fd, const char *target)
{
	char src[40];
	size_t pos = 0;
	put_s(src, sizeof(src), &pos, "/proc/self/fd/");
	put_u(src, sizeof(src), &pos, (unsigned)fd);
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) != 0)
		return errno;
	return 0;
}

/* Binds what the O_PATH descriptor fd names (a directory or a socket)
 * back at its path inside the private /tmp. */
static int bind_back(int fd, const char *path, bool dir)
{
	char parent[SB_PATH_MAX];
	size_t len = strlen(path);
	memcpy(parent, path, len + 1);
	char *slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent)
		*slash = '\0';
	int err = sandbox_child_make_dirs(dir ? path : parent);
	if (err == 0 && !dir) {
		int t = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (t < 0)
			err = errno;
		else
			close(t);
	}
	return err != 0 ? err : sandbox_child_bind_fd(fd, path);
}

/* strict's private /tmp and /dev/shm. They hide whatever lived there, so
 * handles are kept first on what must stay visible: a workspace below
 * them, and for code granted the display what it needs there (the X
 * socket directory, a runtime directory or compositor socket: plan->kept). */
static bool private_tmp(const sandbox_plan *plan, sandbox_failure *fail)
{
	int ws_fd = -1, kept_fd[SB_KEPT_MAX];
	bool kept_dir[SB_KEPT_MAX];
	int err;
	if (plan->workspace_in_tmp || plan->workspace_in_shm) {
		ws_fd = open(plan->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (ws_fd < 0)
			return failed(fail, "opening the workspace", errno);
	}
	for (int i = 0; i < plan->n_kept; i++) {
		kept_fd[i] = open(plan->kept[i], O_PATH | O_CLOEXEC);
		kept_dir[i] = kept_fd[i] >= 0 && is_dir(plan->kept[i]);
	}
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, plan->tmp_options) != 0)
		return failed(fail, "mounting the private /tmp", errno);
	if (is_dir("/dev/shm") &&
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, plan->tmp_options) != 0)
		return failed(fail, "mounting the private /dev/shm", errno);
	for (int i = 0; i < plan->n_kept; i++) {
		if (kept_fd[i] < 0)
			continue;       /* gone meanwhile: nothing to keep */
		if ((err = bind_back(kept_fd[i], plan->kept[i], kept_dir[i])) != 0)
			return failed(fail, "binding the display's sockets back", err);
		close(kept_fd[i]);
	}
	if (ws_fd >= 0) {
		if ((err = sandbox_child_make_dirs(plan->workspace)) != 0)
			return failed(fail, "recreating the workspace path", err);
		if ((err = sandbox_child_bind_fd(ws_fd, plan->workspace)) != 0)
			return failed(fail, "binding the workspace", err);
		close(ws_fd);
	}
	return true;
}

int sandbox_child_mount_devpts(void)
{
	/* No gid= option: gid 5 (tty) is not mapped in the session's user
	 * namespace; each new terminal belongs to the group of its opener. */
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	          "newinstance,ptmxmode=0666,mode=620") != 0)
		return errno;
	/* /dev/ptmx must hand out terminals of this instance. A symlink to
	 * pts/ptmx already does; a device node gets the instance's own ptmx
	 * bound over it (the kernel would resolve a devtmpfs node through the
	 * sibling pts directory anyway; the bind does not depend on that). */
	struct stat st;
	if (lstat("/dev/ptmx", &st) == 0 && !S_ISLNK(st.st_mode) &&
	    mount("/dev/pts/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL) != 0)
		return errno;
	return 0;
}

static bool mount_private_devpts(sandbox_failure *fail)
{
	int err = sandbox_child_mount_devpts();
	return err == 0 ? true : failed(fail, "mounting a private /dev/pts", err);
}

/* Makes the mount at path read-only (plus `extra` flags). A remount in a
 * user namespace must keep the flags the kernel locked (nosuid, nodev,
 * noexec, atime), so they are read back first. */
static int remount_ro(const char *path, unsigned long extra)
{
	struct statfs sf;
	if (statfs(path, &sf) != 0)
		return errno;
	unsigned long f = MS_REMOUNT | MS_BIND | MS_RDONLY | extra;
	if (sf.f_flags & ST_NOSUID)
		f |= MS_NOSUID;
	if (sf.f_flags & ST_NODEV)
		f |= MS_NODEV;
	if (sf.f_flags & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sf.f_flags & ST_NOATIME)
		f |= MS_NOATIME;
	if (sf.f_flags & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sf.f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	return mount(NULL, path, NULL, f, NULL) != 0 ? errno : 0;
}

static bool is_real_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The system's directories read-only (a symlink such as /bin -> usr/bin
 * is covered by its target). */
static bool protect_system(sandbox_failure *fail)
{
	for (const char *const *d = sandbox_system_dirs; *d != NULL; d++) {
		if (!is_real_dir(*d))
			continue;
		int err = 0;
		if (mount(*d, *d, NULL, MS_BIND | MS_REC, NULL) != 0)
			err = errno;
		else
			err = remount_ro(*d, 0);
		if (err != 0)
			return failed(fail, "making the system directories read-only", err);
	}
	return true;
}

/* deskhand's own files and the desktop's other doors (sandbox_plan_hide):
 * the directories above them pinned first (a mount point cannot be
 * renamed or removed), then each covered. */
static bool hide_paths(const sandbox_plan *plan, sandbox_failure *fail)
{
	int err = 0;
	for (int i = 0; i < plan->n_pinned; i++)
		if (is_real_dir(plan->pinned[i]) &&
		    mount(plan->pinned[i], plan->pinned[i], NULL, MS_BIND | MS_REC, NULL) != 0)
			return failed(fail, "pinning the directories above hidden paths", errno);
	for (int i = 0; i < plan->n_hidden; i++) {
		const char *h = plan->hidden[i];
		struct stat st;
		if (lstat(h, &st) != 0)
			continue;           /* gone with strict's private /tmp */
		if (S_ISDIR(st.st_mode)) {
			if (mount("tmpfs", h, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			          "size=4k,nr_inodes=2,mode=555") != 0)
				err = errno;
		} else if (mount("/dev/null", h, NULL, MS_BIND, NULL) != 0) {
			err = errno;
		} else {
			/* nodev: opening it fails (EACCES), for reading as for
			 * writing, rather than swallowing what is written. */
			err = remount_ro(h, MS_NODEV);
		}
		if (err != 0)
			return failed(fail, "hiding deskhand's own files", err);
	}
	return true;
}

/* The session's first process is a copy of deskhand: its command line
 * (an --api-key among it) would show in the code's /proc/1/cmdline. */
static void wipe_arg_area(const sandbox_plan *plan)
{
	if (plan->arg_end > plan->arg_start)
		memset((void *)plan->arg_start, 0, plan->arg_end - plan->arg_start);
	if (plan->env_end > plan->env_start)
		memset((void *)plan->env_start, 0, plan->env_end - plan->env_start);
}

bool sandbox_child_close_ports(const sandbox_plan *plan, sandbox_failure *fail)
{
	if (plan->net_ruleset >= 0 &&
	    syscall(SYS_landlock_restrict_self, plan->net_ruleset, 0) != 0)
		return failed(fail, "landlock: closing the X server's TCP ports", errno);
	return true;
}

bool sandbox_child_enter_ns(const sandbox_plan *plan, uid_t uid, gid_t gid,
                            sandbox_failure *fail)
{
	int err;
	if (plan->profile == SANDBOX_OFF)
		return true;
	if ((err = sandbox_child_map_ids(0, uid, 0, gid)) != 0)
		return failed(fail, "user namespace: writing the uid/gid maps", err);
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
		return failed(fail, "mount namespace: making mounts private", errno);

	if (plan->profile == SANDBOX_STRICT && !private_tmp(plan, fail))
		return false;
	/* Terminals of its own, as bubblewrap does: a fresh devpts instance, so
	 * that the user's terminals (deskhand's among them, where the human
	 * confirms actions) cannot be opened by name, read or written. */
	if (is_dir("/dev/pts") && !mount_private_devpts(fail))
		return false;
	/* The X server's path socket: an empty read-only directory on top. */
	if (!plan->display && is_dir("/tmp/.X11-unix") &&
	    mount("tmpfs", "/tmp/.X11-unix", "tmpfs",
	          MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "size=4k,nr_inodes=2,mode=555") != 0)
		return failed(fail, "hiding /tmp/.X11-unix", errno);
	/* The session's sockets (see plan_runtime_dirs): an empty private
	 * directory on top. Under strict, one below /tmp is gone already. */
	for (int i = 0; i < plan->n_runtime_dirs; i++)
		if (is_dir(plan->runtime_dir[i]) &&
		    mount("tmpfs", plan->runtime_dir[i], "tmpfs", MS_NOSUID | MS_NODEV,
		          "size=1m,nr_inodes=256,mode=700") != 0)
			return failed(fail, "hiding the runtime directory", errno);
	if (!protect_system(fail) || !hide_paths(plan, fail))
		return false;
	wipe_arg_area(plan);
	/* A /proc of this pid namespace: the host's processes (deskhand's own
	 * environment and memory among them) become invisible. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return failed(fail, "pid namespace: mounting its /proc", errno);
	if (plan->tasks_mode == SB_TASKS_PID_MAX &&
	    (err = sandbox_child_write_file("/proc/sys/kernel/pid_max",
	                                    plan->pid_max_text)) != 0)
		return failed(fail, "task limit: setting pid_max of the pid namespace", err);
	if (plan->profile == SANDBOX_STRICT && (err = sandbox_child_loopback_up()) != 0)
		return failed(fail, "network namespace: bringing up the loopback", err);
	/* Nobody inside may read this process's memory (a copy of deskhand's). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return failed(fail, "prctl(PR_SET_DUMPABLE)", errno);
	return true;
}

static int limit(int resource, uint64_t want)
{
	struct rlimit rl;
	if (getrlimit(resource, &rl) != 0)
		return errno;
	rlim_t v = (rlim_t)want;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v)
		v = rl.rlim_max;
	rl.rlim_cur = v;
	rl.rlim_max = v;
	return setrlimit(resource, &rl) != 0 ? errno : 0;
}

int sandbox_child_drop_capabilities(void)
{
	int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	           SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
	           SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0)
		return errno;
	for (unsigned long cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno == EINVAL)
				break;      /* past the last capability this kernel knows */
			return errno;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		return errno;
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) != 0)
		return errno;
	return 0;
}

static uint64_t landlock_write_rights(int abi)
{
	uint64_t r = SB_LL_FS_WRITE_FILE | SB_LL_FS_REMOVE_DIR | SB_LL_FS_REMOVE_FILE |
	             SB_LL_FS_MAKE_CHAR | SB_LL_FS_MAKE_DIR | SB_LL_FS_MAKE_REG |
	             SB_LL_FS_MAKE_SOCK | SB_LL_FS_MAKE_FIFO | SB_LL_FS_MAKE_BLOCK |
	             SB_LL_FS_MAKE_SYM;
	if (abi >= 2)
		r |= SB_LL_FS_REFER;
	if (abi >= 3)
		r |= SB_LL_FS_TRUNCATE;
	return r;
}

/* Allows `access` beneath path; a missing optional path is skipped. */
static int landlock_allow(int ruleset, const char *path, uint64_t access, bool optional)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return (optional && errno == ENOENT) ? 0 : errno;
	struct sb_landlock_path_beneath_attr rule = {
		.allowed_access = access,
		.parent_fd = fd,
	};
	int err = 0;
	if (syscall(SYS_landlock_add_rule, ruleset, SB_LANDLOCK_RULE_PATH_BENEATH,
	            &rule, 0) != 0)
		err = errno;
	close(fd);
	return err;
}

static bool apply_landlock(const sandbox_plan *plan, sandbox_failure *fail)
{
	struct sb_landlock_ruleset_attr attr;
	memset(&attr, 0, sizeof(attr));
	uint64_t dir_rights = landlock_write_rights(plan->landlock_abi);
	uint64_t file_rights = SB_LL_FS_WRITE_FILE |
	                       (plan->landlock_abi >= 3 ? SB_LL_FS_TRUNCATE : 0);
	if (plan->landlock_fs)
		attr.handled_access_fs = dir_rights;
	if (plan->landlock_scope)
		attr.scoped = SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET | SB_LL_SCOPE_SIGNAL;
	if (attr.handled_access_fs == 0 && attr.scoped == 0)
		return true;
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return failed(fail, "landlock: creating the ruleset", errno);
	int err = 0;
	const char *step = NULL;
	if (plan->landlock_fs) {
		static const char *const dev_files[] = {
			"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx",
		};
		if ((err = landlock_allow(rs, plan->workspace, dir_rights, false)) != 0)
			step = "landlock: allowing writes in the workspace";
		else if ((err = landlock_allow(rs, "/tmp", dir_rights, false)) != 0)
			step = "landlock: allowing writes in the private /tmp";
		else if ((err = landlock_allow(rs, "/dev/shm", dir_rights, true)) != 0)
			step = "landlock: allowing writes in the private /dev/shm";
		else if ((err = landlock_allow(rs, "/dev/pts", file_rights, true)) != 0)
			step = "landlock: allowing terminals";
		for (size_t i = 0; step == NULL && i < sizeof(dev_files) / sizeof(dev_files[0]); i++)
			if ((err = landlock_allow(rs, dev_files[i], file_rights, true)) != 0)
				step = "landlock: allowing /dev/null and friends";
	}
	if (step == NULL && syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		err = errno;
		step = "landlock: restricting the process";
	}
	close(rs);
	return step == NULL ? true : failed(fail, step, err);
}

bool sandbox_child_confine(const sandbox_plan *plan, uid_t uid, gid_t gid,
                           sandbox_failure *fail)
{
	int err;
	if (plan->profile == SANDBOX_OFF)
		return true;
	/* The supervisor made itself non-dumpable and this copy inherited it,
	 * which hands /proc/self to root and would lock us out of our own
	 * uid_map. The code's process is the code's, so it may be dumpable
	 * (execve makes it so anyway). */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return failed(fail, "prctl(PR_SET_DUMPABLE)", errno);
	/* A second user namespace: the code sees its real uid again, and holds
	 * no capability over the namespaces the first one owns (mounts, pid
	 * namespace and its pid_max, network). */
	if (unshare(CLONE_NEWUSER) != 0)
		return failed(fail, "user namespace: nesting the code's namespace", errno);
	if ((err = sandbox_child_map_ids(uid, 0, gid, 0)) != 0)
		return failed(fail, "user namespace: writing the code's uid/gid maps", err);

	const sandbox_limits *l = &plan->limits;
	if ((err = limit(RLIMIT_CORE, 0)) != 0 ||
	    (err = limit(RLIMIT_NOFILE, l->open_files)) != 0 ||
	    (err = limit(RLIMIT_FSIZE, l->file_bytes)) != 0 ||
	    (err = limit(RLIMIT_DATA, l->data_bytes)) != 0 ||
	    (err = limit(RLIMIT_NPROC, l->tasks)) != 0)
		return failed(fail, "setting resource limits", err);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGXFSZ, &sa, NULL) != 0)
		return failed(fail, "ignoring SIGXFSZ", errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return failed(fail, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
	if ((err = sandbox_child_drop_capabilities()) != 0)
		return failed(fail, "dropping capabilities", err);
	if (!apply_landlock(plan, fail))
		return false;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &plan->seccomp) != 0)
		return failed(fail, "seccomp: loading the filter", errno);
	return true;
}
