/*
 * executors/sandbox — the kernel sandbox that deskhand's interpreters run in.
 *
 * Three profiles:
 *   off       no confinement at all (the code runs like a program you start)
 *   standard  (default) the code may read the machine and use the network,
 *             but cannot reach the X display, see deskhand's secrets, change
 *             the system, escape its process tree or exhaust the machine
 *   strict    standard, plus no network and writes only in the workspace and
 *             a private temporary directory
 *
 * What every profile but `off` applies (each layer is checked; if one that
 * the profile promises fails, the sandbox refuses to start and says why —
 * it never runs weaker than promised):
 *   - a user namespace (the code has no capability over anything outside
 *     it), a pid namespace with its own /proc (the code sees and signals only
 *     its own processes; when the session's first process dies every other
 *     one dies with it) and a mount namespace;
 *   - a cap on the number of tasks: pid_max of the pid namespace (Linux
 *     >= 6.14; binds root too) or, without it, RLIMIT_NPROC counted inside
 *     the session's own user namespace (binds every uid but root);
 *   - no_new_privs, no capabilities, rlimits (no core files, open files,
 *     file size, data segment — never the address space, which V8 reserves
 *     by the gigabyte);
 *   - terminals of its own: a fresh devpts instance on /dev/pts (and
 *     /dev/ptmx), so the user's terminals cannot be opened by name;
 *   - a seccomp filter: everything allowed but a denylist answered with
 *     EPERM (ptrace, the mount family, namespaces, bpf, keyrings, modules,
 *     clock setting, personality changes, TIOCSTI...) and clone3/io_uring
 *     answered with ENOSYS so that libc and libuv fall back; when deskhand
 *     runs as root, setgroups() succeeds without doing anything (the code is
 *     uid 0 without capabilities, and programs that believe they are root,
 *     xterm among them, give up when it fails);
 *   - the X display out of reach: an empty read-only tmpfs over
 *     /tmp/.X11-unix (the path socket) and Landlock's abstract-socket
 *     scoping (the @/tmp/.X11-unix/XN socket), unless the run was granted
 *     the display;
 *   - the session's other ways to the desktop out of reach: the user's
 *     runtime directory ($XDG_RUNTIME_DIR, /run/user/UID: D-Bus, Wayland,
 *     sway's and Hyprland's IPC, PipeWire, the accessibility bus) becomes
 *     an empty private tmpfs, unless the run was granted the display; a
 *     workspace inside it is refused. Where it is not private (so cannot
 *     be covered whole), the Wayland, compositor-IPC and PipeWire sockets
 *     in it are hidden one by one, and so are those the environment names
 *     anywhere ($WAYLAND_DISPLAY, $SWAYSOCK, $I3SOCK, $PIPEWIRE_REMOTE,
 *     /tmp/hypr); under strict with the grant, what of these lies below
 *     /tmp is bound back over the private /tmp;
 *   - a scrubbed environment (no API keys, tokens, secrets, passwords, no
 *     DISPLAY/XAUTHORITY/WAYLAND_DISPLAY/SWAYSOCK/I3SOCK/
 *     HYPRLAND_INSTANCE_SIGNATURE/PIPEWIRE_REMOTE unless the display was
 *     granted).
 * strict adds a network namespace (a private loopback only) and Landlock
 * write rules (workspace, private /tmp and /dev/shm, /dev/null & co.).
 *
 * Life cycle: the parent prepares a sandbox_plan (everything that allocates:
 * the compiled seccomp program, paths, the environment); the child, after a
 * clone() with sandbox_plan_clone_flags(), calls sandbox_child_enter_ns()
 * in the namespaces' first process and sandbox_child_confine() in the
 * process that will exec the code. The child functions make system calls
 * only: no allocation, no stdio, no locks, so they are safe after fork()
 * or a raw clone() in a multi-threaded program.
 *
 * Error convention: functions that can fail return false or NULL and leave
 * the reason in sandbox_error() (per thread). Nothing here exits or prints.
 *
 * Part of the door of executors/ (exec.h includes it); only executors/
 * knows libseccomp and the kernel's namespaces, Landlock and seccomp.
 */
#ifndef DESKHAND_SANDBOX_H
#define DESKHAND_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The reason for the last failure on this thread; never NULL. */
const char *sandbox_error(void);

typedef enum sandbox_profile {
	SANDBOX_OFF,
	SANDBOX_STANDARD,
	SANDBOX_STRICT,
	SANDBOX_PROFILE_COUNT
} sandbox_profile;

/* "off", "standard", "strict", by the profile: the one table of their names
 * (--sandbox, the config file, deskhand exec; lists in messages). */
extern const char *const sandbox_profile_names[SANDBOX_PROFILE_COUNT];
/* The name <-> the enum (base_name_index: exact); "?" for no profile. */
bool sandbox_profile_from_name(const char *name, sandbox_profile *out);
const char *sandbox_profile_name(sandbox_profile profile);

/* ---- layers and the probe (deskhand doctor) ------------------------- */

typedef enum sandbox_layer {
	SANDBOX_LAYER_USERNS,    /* unprivileged user namespace */
	SANDBOX_LAYER_PIDNS,     /* pid namespace with its own /proc */
	SANDBOX_LAYER_MOUNTNS,   /* mount namespace, tmpfs mounts */
	SANDBOX_LAYER_NETNS,     /* network namespace with a loopback */
	SANDBOX_LAYER_SECCOMP,   /* seccomp filter (libseccomp) */
	SANDBOX_LAYER_LANDLOCK,  /* Landlock file-system rules */
	SANDBOX_LAYER_SCOPE,     /* Landlock abstract-unix-socket scoping (ABI 6) */
	SANDBOX_LAYER_TASKS,     /* a cap on the number of tasks */
	SANDBOX_LAYER_COUNT
} sandbox_layer;

/* Short human name of a layer ("user namespace", "seccomp", ...). */
const char *sandbox_layer_name(sandbox_layer layer);

/* Bit (1u << layer) for each layer a profile needs; a display grant drops
 * the abstract-socket scoping. `off` needs nothing. */
unsigned sandbox_profile_layers(sandbox_profile profile, bool display);

typedef struct sandbox_probe {
	bool ok[SANDBOX_LAYER_COUNT];
	/* "ok ..." details or why not; NUL-terminated. */
	char detail[SANDBOX_LAYER_COUNT][200];
	int landlock_abi;                /* 0 when Landlock is unavailable */
} sandbox_probe;

/*
 * Tries each layer for real in short-lived child processes (a namespace is
 * created, a filter is loaded, a tmpfs is mounted...) and records what
 * works. Takes a few milliseconds; never changes anything outside the
 * children. Always fills `out` completely.
 */
void sandbox_probe_run(sandbox_probe *out);

/*
 * Whether `profile` can run given a probe. On false writes the first
 * missing layer and its reason into why (when why is not NULL).
 */
bool sandbox_probe_allows(const sandbox_probe *probe, sandbox_profile profile,
                          bool display, char *why, size_t why_size);

/* ---- limits ---------------------------------------------------------- */

typedef struct sandbox_limits {
	uint64_t data_bytes;     /* RLIMIT_DATA */
	uint64_t file_bytes;     /* RLIMIT_FSIZE (a larger write fails EFBIG) */
	uint64_t open_files;     /* RLIMIT_NOFILE */
	unsigned tasks;          /* processes + threads in the session */
	uint64_t tmp_bytes;      /* size of strict's private /tmp */
} sandbox_limits;

/*
 * Defaults: data = half the RAM, at most 8 GiB; files 4 GiB; 4096 open
 * files; 1024 tasks; 1 GiB of private /tmp. An rlimit is never raised
 * above the hard limit deskhand itself inherited (so an outer ulimit
 * still binds).
 */
void sandbox_limits_default(sandbox_limits *out);

/* ---- the environment -------------------------------------------------- */

/*
 * True when an environment variable with this name must not reach
 * sandboxed code: the model providers' variables (OPENAI_*, ANTHROPIC_*,
 * DESKHAND_*...), anything whose name contains KEY, TOKEN, SECRET,
 * PASSWORD, PASSWD or CREDENTIAL (any case), the agent sockets
 * (SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS), the
 * accessibility bus and toolkit switches (AT_SPI_BUS_ADDRESS,
 * QT_ACCESSIBILITY, QT_LINUX_ACCESSIBILITY_ALWAYS_ON, GNOME_ACCESSIBILITY) and the
 * desktop's variables (DISPLAY, XAUTHORITY, WAYLAND_DISPLAY, SWAYSOCK,
 * I3SOCK, HYPRLAND_INSTANCE_SIGNATURE, PIPEWIRE_REMOTE) unless `display` is
 * set, in which case they pass. WAYLAND_SOCKET (a descriptor number) never.
 * `name` is the part before '='; `len` its length.
 */
bool sandbox_env_blocked(const char *name, size_t len, bool display);

/*
 * Builds the environment for code under `profile` from `base` (NULL-
 * terminated "NAME=value" strings): `off` keeps everything; the others drop
 * what sandbox_env_blocked() names and entries without '='. Then PWD is
 * set to `workspace` and, under strict, TMPDIR to the private /tmp.
 * Returns a NULL-terminated array; the caller frees it with
 * sandbox_env_destroy(). NULL on allocation failure.
 */
/* The value of `name` in a NULL-terminated "NAME=value" array (env NULL:
 * none); NULL when unset. Points into env. */
const char *sandbox_env_get(char *const *env, const char *name);

char **sandbox_env_create(sandbox_profile profile, bool display,
                          char *const *base, const char *workspace);
void sandbox_env_destroy(char **env);

/* ---- the enclosure of a batch task ------------------------------------ */

#define SANDBOX_ENCLOSURE_MAX 8

/* What one task of deskhand batch may see of the file system: everything
 * but /tmp and /dev/shm (private, empty) and the `cover` directories
 * (empty: the batch's output folder, holding the other tasks'); `keep`
 * (folders below /tmp it needs, bound back before the covers, which then
 * cover what of them they hold) and `own` (its folder, bound back over its
 * cover). The arrays NULL-terminated; `own` may be NULL. */
typedef struct sandbox_enclosure {
	const char *cover[SANDBOX_ENCLOSURE_MAX];
	const char *keep[SANDBOX_ENCLOSURE_MAX];
	const char *own;
} sandbox_enclosure;

/*
 * Forks the task's first process into new user (the same uid and gid
 * mapped through), mount and pid namespaces, with the walls of `e` up and
 * a /proc of its own: the task sees no other task's files, /tmp (an X
 * server's path socket) or processes, and when this process dies the
 * kernel ends every process the task started. The network namespace is shared: another server's
 * abstract socket is in reach, and an X server's cookie is what guards it.
 * Returns the child's pid in the parent and 0 in the child, which goes on
 * as the task's init (reaping what it starts) and must end with _exit().
 * The caller must be single-threaded. -1 (sandbox_error()) when the
 * namespaces or a wall cannot be made: the child is gone then.
 */
pid_t sandbox_enclosure_enter(const sandbox_enclosure *e);

/*
 * In a child of the enclosure about to execute one of the task's commands:
 * no capabilities, now or after the execve (locked securebits). A task
 * run by root is then uid 0 without the power to take the walls down or
 * to read the agent (which is not dumpable: that binds only the
 * powerless). The agent itself keeps them: its sandbox nests namespaces.
 * 0 or an errno.
 */
int sandbox_enclosure_powerless(void);

/* Whether an enclosure can be made here (deskhand doctor): one is made and
 * ended at once. False with the reason in sandbox_error(). */
bool sandbox_enclosure_probe(void);

/* ---- the plan (parent) and its application (child) ------------------ */

typedef struct sandbox_plan sandbox_plan;

/*
 * True when an X display name is reached through a local socket (":0",
 * "unix:0", ":1.0", a launchd path), false for TCP ("localhost:10.0",
 * "host:0", "[::1]:0", "tcp/host:0"). NULL or "" count as local (nothing
 * to reach).
 */
bool sandbox_display_is_local(const char *display_name);

/*
 * Prepares everything a child needs to enter `profile`: the seccomp
 * program (compiled once per process and cached), the Landlock ABI, the
 * paths. `workspace` must be an absolute path of an existing directory
 * (copied). `env` is the environment the session starts from (NULL-
 * terminated; NULL means none): its DISPLAY (standard keeps the network, so
 * it refuses a display reached over TCP, an ssh -X forwarding, unless the
 * display is granted anyway), DBUS_SESSION_BUS_ADDRESS, AT_SPI_BUS_ADDRESS,
 * XAUTHORITY, HOME, XDG_RUNTIME_DIR, WAYLAND_DISPLAY, SWAYSOCK, I3SOCK,
 * PIPEWIRE_REMOTE and PIPEWIRE_RUNTIME_DIR
 * name the desktop's other doors, which are closed without the grant:
 *   - the X server's TCP ports 6000-6063 (and a session bus on TCP) that
 *     something listens on as the plan is made cannot be connected to
 *     (Landlock; standard only: strict has no network);
 *   - a session bus on a path socket (from the address, or from the files
 *     in ~/.dbus/session-bus), the accessibility bus (AT_SPI_BUS_ADDRESS,
 *     ~/.cache/at-spi) and the X authority file are hidden;
 *   - the Wayland, compositor-IPC and PipeWire sockets that a private
 *     runtime directory does not cover already are hidden (see above).
 * Under standard and strict the system's directories (/usr, /etc, /bin,
 * /lib..., /opt, /boot) are read-only for the code, also when deskhand runs
 * as root. `limits` NULL means defaults. Fails when the profile cannot run
 * here (a layer it needs is missing: "the strict profile needs Landlock
 * ..."), before anything is started.
 * Ownership: the caller owns the plan (sandbox_plan_destroy).
 */
sandbox_plan *sandbox_plan_create(sandbox_profile profile, bool display,
                                  const char *workspace, char *const *env,
                                  const sandbox_limits *limits);

/*
 * Hides `path` from the code (standard and strict; a no-op under off): a
 * directory becomes an empty read-only one, a file reads as empty and
 * cannot be written. The path and every directory above it are pinned as
 * mount points, so code cannot rename them away and put something else in
 * their place for a later run (it gets EBUSY). For what deskhand keeps
 * for itself: its configuration, scanner rules, conversations, audit log.
 * A missing path is skipped (nothing to hide); a workspace inside a hidden
 * directory is refused (false, sandbox_error), as is a hidden directory
 * that is the workspace or holds it.
 */
bool sandbox_plan_hide(sandbox_plan *plan, const char *path);

/* A socket of the desktop's as its clients find it from `env`. */
typedef enum sandbox_desktop_socket {
	SANDBOX_SOCKET_WAYLAND,     /* $WAYLAND_DISPLAY, a name in $XDG_RUNTIME_DIR */
	SANDBOX_SOCKET_PIPEWIRE,    /* $PIPEWIRE_REMOTE, else pipewire-0, in
	                             * $PIPEWIRE_RUNTIME_DIR, else $XDG_RUNTIME_DIR */
} sandbox_desktop_socket;

/* The absolute path of `which` into buf; false when `env` names none (or a
 * relative name with no absolute directory to find it in). */
bool sandbox_desktop_socket_path(char *const *env, sandbox_desktop_socket which, char *buf,
                                 size_t size);

/* True when the code would not find `path` (existing or not): it lies in
 * a runtime directory hidden whole or under a hidden path. For deskhand
 * doctor's list of the desktop's sockets. False under off. */
bool sandbox_plan_hides(const sandbox_plan *plan, const char *path);

/* The system's directories, read-only for the code in standard and strict
 * (deskhand run by root would otherwise let its code change the system);
 * NULL-terminated. */
extern const char *const sandbox_system_dirs[];

/* What the plan hides (i from 0; NULL past the end), for deskhand doctor. */
const char *sandbox_plan_hidden_path(const sandbox_plan *plan, int i);

/* The TCP ports the code cannot connect to: of X's 6000-6063 and a TCP
 * session bus's, those something listened on when the plan was made.
 * Writes at most max into ports, returns how many there are (0 when
 * nothing listened, the profile keeps no network or the display is
 * granted). */
int sandbox_plan_denied_ports(const sandbox_plan *plan, unsigned short *ports, int max);

/* NULL is a no-op. */
void sandbox_plan_destroy(sandbox_plan *plan);

sandbox_profile sandbox_plan_profile(const sandbox_plan *plan);

/*
 * The namespace flags for the clone() that creates the session's first
 * process (0 for `off`). That process is then pid 1 of its own pid
 * namespace: when it exits, the kernel kills every process in it.
 */
unsigned long sandbox_plan_clone_flags(const sandbox_plan *plan);

/* Where a child-side step failed: a static step name and an errno. */
typedef struct sandbox_failure {
	const char *step;
	int err;
} sandbox_failure;

/*
 * In the first process of the namespaces (right after the clone): maps the
 * parent's uid/gid to root of the new user namespace, makes mounts private,
 * hides the X socket directory, mounts private terminals (devpts) and a
 * fresh /proc (and strict's private /tmp and /dev/shm), sets the task cap
 * and brings up the private loopback.
 * `uid`/`gid` are the parent's effective ids (getuid() inside a fresh user
 * namespace no longer tells them). No-op for `off`.
 * Async-signal-safe. Returns false with *fail set.
 */
bool sandbox_child_enter_ns(const sandbox_plan *plan, uid_t uid, gid_t gid,
                            sandbox_failure *fail);

/*
 * In the first process of the namespaces, before anything closes its
 * inherited descriptors (the ruleset is one): the TCP ports of
 * sandbox_plan_denied_ports become unreachable for it and everything it
 * starts (Landlock). No-op when there are none. Async-signal-safe.
 */
bool sandbox_child_close_ports(const sandbox_plan *plan, sandbox_failure *fail);

/*
 * In the process about to exec the code, as the last step before execve:
 * a nested user namespace mapping the caller's ids back (so `id` shows the
 * real user and no capability remains over the session's namespaces),
 * rlimits, no_new_privs, capability sets cleared and locked, SIGXFSZ
 * ignored (too large writes fail with EFBIG instead of killing), Landlock,
 * and finally the seccomp filter. Async-signal-safe. Returns false with
 * *fail set; the process must then not exec.
 */
bool sandbox_child_confine(const sandbox_plan *plan, uid_t uid, gid_t gid,
                           sandbox_failure *fail);

#endif
