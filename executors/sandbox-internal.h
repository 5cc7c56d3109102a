/*
 * executors/sandbox — what the parent-side and child-side halves of the
 * sandbox share. Not a public header: only executors/ includes it.
 */
#ifndef DESKHAND_SANDBOX_INTERNAL_H
#define DESKHAND_SANDBOX_INTERNAL_H

#include <linux/filter.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "base/base.h"
#include "executors/sandbox.h"

/* True when `path` is `dir` or lies beneath it (both absolute). */
bool sandbox_path_under(const char *path, const char *dir);

/* Records a reason for sandbox_error(); returns false. */
bool sandbox_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SB_PATH_MAX 1024
#define SB_HIDDEN_MAX 32
#define SB_PINNED_MAX 48
#define SB_DENIED_PORTS_MAX 80
#define SB_KEPT_MAX 6

/*
 * Landlock, written out here because Debian 12's kernel headers stop at
 * ABI 2 while the features used (truncate, scoping) came with ABI 3 and 6.
 * The values are the kernel's UAPI and never change.
 */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define SB_LANDLOCK_CREATE_RULESET_VERSION (1u << 0)
#define SB_LANDLOCK_RULE_PATH_BENEATH 1
#define SB_LL_FS_EXECUTE (1ull << 0)
#define SB_LL_FS_WRITE_FILE (1ull << 1)
#define SB_LL_FS_READ_FILE (1ull << 2)
#define SB_LL_FS_READ_DIR (1ull << 3)
#define SB_LL_FS_REMOVE_DIR (1ull << 4)
#define SB_LL_FS_REMOVE_FILE (1ull << 5)
#define SB_LL_FS_MAKE_CHAR (1ull << 6)
#define SB_LL_FS_MAKE_DIR (1ull << 7)
#define SB_LL_FS_MAKE_REG (1ull << 8)
#define SB_LL_FS_MAKE_SOCK (1ull << 9)
#define SB_LL_FS_MAKE_FIFO (1ull << 10)
#define SB_LL_FS_MAKE_BLOCK (1ull << 11)
#define SB_LL_FS_MAKE_SYM (1ull << 12)
#define SB_LL_FS_REFER (1ull << 13)     /* ABI 2 */
#define SB_LL_FS_TRUNCATE (1ull << 14)  /* ABI 3 */
#define SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)  /* ABI 6 */
#define SB_LL_SCOPE_SIGNAL (1ull << 1)                /* ABI 6 */

struct sb_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct sb_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* How the number of tasks is capped. */
typedef enum sandbox_task_mode {
	SB_TASKS_NONE,
	SB_TASKS_PID_MAX,   /* pid_max of the session's pid namespace */
	SB_TASKS_NPROC,     /* RLIMIT_NPROC inside the session's user namespace */
} sandbox_task_mode;

struct sandbox_plan {
	sandbox_profile profile;
	bool display;
	char workspace[SB_PATH_MAX];
	sandbox_limits limits;
	sandbox_task_mode tasks_mode;
	int landlock_abi;
	bool landlock_scope;      /* abstract sockets and signals scoped */
	bool landlock_fs;         /* strict's write rules */
	bool workspace_in_tmp;    /* strict must bind it back over its /tmp */
	bool workspace_in_shm;
	struct sock_fprog seccomp;
	char pid_max_text[24];
	char tmp_options[64];
	/* The user's runtime directories, hidden without the display grant. */
	char runtime_dir[2][SB_PATH_MAX];
	int n_runtime_dirs;
	/* Under strict with the display granted: what lives below /tmp and
	 * the granted code needs (the X socket directory, a runtime directory
	 * or compositor socket there), bound back over the private /tmp. */
	char kept[SB_KEPT_MAX][SB_PATH_MAX];
	int n_kept;
	/* Hidden paths (sandbox_plan_hide and the desktop's other doors) and
	 * the directories above them, pinned as mount points (parents first)
	 * so that nothing can be renamed into their place. */
	char hidden[SB_HIDDEN_MAX][SB_PATH_MAX];
	int n_hidden;
	char pinned[SB_PINNED_MAX][SB_PATH_MAX];
	int n_pinned;
	/* A Landlock ruleset (standard without the display) allowing TCP
	 * connections to every port but the X server's and a TCP session
	 * bus's; -1 when not used. Shared by the plans of this process. */
	int net_ruleset;
	unsigned short denied_ports[SB_DENIED_PORTS_MAX];
	int n_denied_ports;
	/* Where deskhand's own command line and environment strings live in
	 * memory: the session's first process is a copy of deskhand, and its
	 * /proc/1/cmdline is readable by the code. Wiped there. */
	unsigned long arg_start, arg_end, env_start, env_end;
};


/* Bit of the Landlock network access right TCP connect (ABI 4). */
#define SB_LL_NET_CONNECT_TCP (1ull << 1)
#define SB_LANDLOCK_RULE_NET_PORT 2
struct sb_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

/* Closes the desktop's other doors named by `env` (see sandbox_plan_create)
 * and notes where deskhand's argv lives. After the profile and the Landlock
 * ABI are set. */
bool sandbox_plan_close_doors(sandbox_plan *plan, char *const *env);

/* The compiled denylist, built on first use and kept for the process. */
bool sandbox_seccomp_program(struct sock_fprog *out);
/* Highest Landlock ABI, 0 when unavailable. */
int sandbox_landlock_abi(void);
bool sandbox_kernel_at_least(int major, int minor);
/* Which task cap works for this process; false (with why) when none. */
bool sandbox_task_cap(sandbox_task_mode *mode, char *why, size_t why_size);

/*
 * fork() without glibc's atfork handlers, with namespace flags: a raw
 * clone(2) whose child continues on a copy of the caller's stack. The child
 * may only make system calls (see sandbox_child.c).
 */
pid_t sandbox_raw_clone(unsigned long flags);

/* Child-side pieces the probe reuses. All async-signal-safe. */
int sandbox_child_map_ids(uid_t inner_uid, uid_t outer_uid, gid_t inner_gid,
                          gid_t outer_gid);
int sandbox_child_loopback_up(void);
int sandbox_child_write_file(const char *path, const char *text);
/* mkdir -p (0755), for a bind-mount target inside a fresh tmpfs. */
int sandbox_child_make_dirs(const char *path);
/* Bind-mounts (recursively) what the O_PATH descriptor fd names onto target. */
int sandbox_child_bind_fd(int fd, const char *target);
/* Mounts a fresh devpts instance on /dev/pts and makes /dev/ptmx its
 * ptmx; 0 or an errno. In a mount namespace the caller owns. */
int sandbox_child_mount_devpts(void);

#endif
