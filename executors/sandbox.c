/*
 * executors/sandbox — the parent's side: profiles, limits, the scrubbed
 * environment, the seccomp program and the plan a child applies.
 */
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/sandbox-internal.h"

BASE_ERROR_TEXT(, sandbox_err, sandbox_error, sandbox_fail)

/* ---- names ----------------------------------------------------------- */

const char *const sandbox_profile_names[SANDBOX_PROFILE_COUNT] = {
	[SANDBOX_OFF] = "off",
	[SANDBOX_STANDARD] = "standard",
	[SANDBOX_STRICT] = "strict",
};
BASE_NAME_FUNCTIONS(sandbox_profile, sandbox_profile_names, sandbox_profile_from_name,
                    sandbox_profile_name, "?")

static const char *const layer_names[SANDBOX_LAYER_COUNT] = {
	[SANDBOX_LAYER_USERNS] = "user namespace",
	[SANDBOX_LAYER_PIDNS] = "pid namespace",
	[SANDBOX_LAYER_MOUNTNS] = "mount namespace",
	[SANDBOX_LAYER_NETNS] = "network namespace",
	[SANDBOX_LAYER_SECCOMP] = "seccomp",
	[SANDBOX_LAYER_LANDLOCK] = "landlock",
	[SANDBOX_LAYER_SCOPE] = "abstract-socket scoping",
	[SANDBOX_LAYER_TASKS] = "task limit",
};

const char *sandbox_layer_name(sandbox_layer layer)
{
	return base_name_of(BASE_NAMES(layer_names), (int)layer, "?");
}

unsigned sandbox_profile_layers(sandbox_profile profile, bool display)
{
	if (profile == SANDBOX_OFF)
		return 0;
	unsigned l = 1u << SANDBOX_LAYER_USERNS | 1u << SANDBOX_LAYER_PIDNS |
	             1u << SANDBOX_LAYER_MOUNTNS | 1u << SANDBOX_LAYER_SECCOMP |
	             1u << SANDBOX_LAYER_TASKS;
	/* With the display granted, standard needs no Landlock at all; strict
	 * still has its network namespace, where the host's abstract sockets
	 * do not exist, so scoping is not needed there either. */
	if (!display)
		l |= 1u << SANDBOX_LAYER_SCOPE;
	if (profile == SANDBOX_STRICT)
		l |= 1u << SANDBOX_LAYER_NETNS | 1u << SANDBOX_LAYER_LANDLOCK;
	return l;
}

/* ---- limits ---------------------------------------------------------- */

void sandbox_limits_default(sandbox_limits *out)
{
	uint64_t ram = 0;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		ram = (uint64_t)pages * (uint64_t)psize;
	uint64_t data = 8ull << 30;
	if (ram > 0 && ram / 2 < data)
		data = ram / 2;
	if (data < (512ull << 20))
		data = 512ull << 20;
	out->data_bytes = data;
	out->file_bytes = 4ull << 30;
	out->open_files = 4096;
	out->tasks = 1024;
	out->tmp_bytes = 1ull << 30;
}

/* ---- environment ------------------------------------------------------ */

static bool name_contains(const char *name, size_t len, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= len; i++)
		if (strncasecmp(name + i, word, w) == 0)
			return true;
	return false;
}

static bool name_is(const char *name, size_t len, const char *what)
{
	return strlen(what) == len && memcmp(name, what, len) == 0;
}

static bool name_has_prefix(const char *name, size_t len, const char *prefix)
{
	size_t p = strlen(prefix);
	return len >= p && memcmp(name, prefix, p) == 0;
}

bool sandbox_env_blocked(const char *name, size_t len, bool display)
{
	/* The providers' configuration, including base URLs and organisation
	 * ids that carry no KEY/TOKEN in their names. */
	static const char *const prefixes[] = {
		"OPENAI_", "ANTHROPIC_", "DESKHAND_", "AZURE_OPENAI_", "OPENROUTER_",
		"MISTRAL_", "GROQ_", "GEMINI_", "COHERE_", "DEEPSEEK_", "TOGETHER_",
		"HF_", "HUGGINGFACE", "AWS_", "GOOGLE_APPLICATION_CREDENTIALS",
	};
	static const char *const words[] = {
		"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
	};
	static const char *const exact[] = {
		"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
		/* A descriptor number: the session closes inherited ones. */
		"WAYLAND_SOCKET",
		/* The accessibility bus and the switches that make toolkits seek
		 * it (set by deskhand for what it starts, see agent/cli/main.c). */
		"AT_SPI_BUS_ADDRESS", "QT_ACCESSIBILITY", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON",
		"GNOME_ACCESSIBILITY",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (name_has_prefix(name, len, prefixes[i]))
			return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (name_contains(name, len, words[i]))
			return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (name_is(name, len, exact[i]))
			return true;
	/* The desktop's own doors: the X display, the Wayland compositor, its
	 * command socket (sway's and i3's IPC, Hyprland's instance, which names
	 * its sockets) and PipeWire's (screen casts). Code granted the display
	 * needs them to drive it; other code learns nothing from them. */
	static const char *const desktop[] = {
		"DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK",
		"HYPRLAND_INSTANCE_SIGNATURE", "PIPEWIRE_REMOTE",
	};
	for (size_t i = 0; !display && i < sizeof(desktop) / sizeof(desktop[0]); i++)
		if (name_is(name, len, desktop[i]))
			return true;
	return false;
}

const char *sandbox_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (; env != NULL && *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

void sandbox_env_destroy(char **env)
{
	if (env == NULL)
		return;
	for (char **e = env; *e != NULL; e++)
		free(*e);
	free(env);
}

static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);
	char *s = malloc(n + v + 2);
	if (s == NULL)
		return NULL;
	memcpy(s, name, n);
	s[n] = '=';
	memcpy(s + n + 1, value, v + 1);
	return s;
}

char **sandbox_env_create(sandbox_profile profile, bool display,
                          char *const *base, const char *workspace)
{
	size_t count = 0;
	for (char *const *e = base; e != NULL && *e != NULL; e++)
		count++;
	char **env = calloc(count + 3, sizeof(*env));
	if (env == NULL)
		goto fail;
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		const char *eq = strchr(base[i], '=');
		if (eq == NULL || eq == base[i])
			continue;
		size_t len = (size_t)(eq - base[i]);
		if (name_is(base[i], len, "PWD") || name_is(base[i], len, "OLDPWD"))
			continue;
		if (profile == SANDBOX_STRICT && name_is(base[i], len, "TMPDIR"))
			continue;
		if (profile != SANDBOX_OFF && sandbox_env_blocked(base[i], len, display))
			continue;
		if ((env[n] = strdup(base[i])) == NULL)
			goto fail;
		n++;
	}
	if ((env[n++] = env_entry("PWD", workspace)) == NULL)
		goto fail;
	if (profile == SANDBOX_STRICT && (env[n++] = env_entry("TMPDIR", "/tmp")) == NULL)
		goto fail;
	return env;
fail:
	sandbox_env_destroy(env);
	sandbox_fail("out of memory building the environment");
	return NULL;
}

/* ---- seccomp ------------------------------------------------------- */

/* Denied with EPERM: whatever lets code watch or change other processes,
 * the mount table, namespaces, the kernel itself, the clock or the
 * terminal's input queue. */
static const char *const denied_eperm[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",
	"unshare", "setns",
	"bpf", "perf_event_open",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",
	"userfaultfd", "open_by_handle_at",
	"reboot", "swapon", "swapoff",
	"settimeofday", "stime", "clock_settime", "clock_settime64",
	"clock_adjtime", "clock_adjtime64", "adjtimex",
};

/* Answered ENOSYS ("no such call"): glibc falls back from clone3 to clone (whose
 * flags the filter can inspect) and libuv from io_uring to epoll. */
static const char *const denied_enosys[] = {
	"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register",
};

static const uint64_t clone_ns_flags[] = {
	0x00020000 /* CLONE_NEWNS */, 0x02000000 /* CLONE_NEWCGROUP */,
	0x04000000 /* CLONE_NEWUTS */, 0x08000000 /* CLONE_NEWIPC */,
	0x10000000 /* CLONE_NEWUSER */, 0x20000000 /* CLONE_NEWPID */,
	0x40000000 /* CLONE_NEWNET */,
};

static bool rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
                 unsigned n, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return true;            /* not a system call of this libseccomp/arch */
	int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (r < 0 && r != -EDOM)      /* -EDOM: absent on one of the arches */
		return sandbox_fail("seccomp: rule for %s: %s", name, strerror(-r));
	return true;
}

/* A context that allows by default, its attributes set; the caller
 * releases it. NULL: said why. */
static scmp_filter_ctx seccomp_context(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL) {
		sandbox_fail("seccomp: cannot initialise libseccomp");
		return NULL;
	}
	/* The same rules for the 32-bit ABIs a 64-bit process can still
	 * reach; anything else gets ENOSYS rather than a kill. */
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		seccomp_arch_add(ctx, SCMP_ARCH_X86);
		seccomp_arch_add(ctx, SCMP_ARCH_X32);
	} else if (seccomp_arch_native() == SCMP_ARCH_AARCH64) {
		seccomp_arch_add(ctx, SCMP_ARCH_ARM);
	}
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {
		sandbox_fail("seccomp: cannot set filter attributes");
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/* The calls denied whatever their arguments. */
static bool seccomp_deny_calls(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < sizeof(denied_eperm) / sizeof(denied_eperm[0]); i++)
		if (!rule(ctx, SCMP_ACT_ERRNO(EPERM), denied_eperm[i], 0, NULL))
			return false;
	for (size_t i = 0; i < sizeof(denied_enosys) / sizeof(denied_enosys[0]); i++)
		if (!rule(ctx, SCMP_ACT_ERRNO(ENOSYS), denied_enosys[i], 0, NULL))
			return false;
	/* setgroups() as a no-op that succeeds, when deskhand (and so the code)
	 * runs as root: such code is uid 0 without any capability, and programs
	 * that believe they are root reset their groups before they start a
	 * child, and give up when that fails (xterm calls initgroups() and its
	 * shell never runs). It could not have changed anything: the code holds
	 * no CAP_SETGID and its namespaces deny setgroups; the groups it keeps
	 * are the ones it already had. An ordinary user's code still gets the
	 * kernel's EPERM (nothing it runs expects otherwise). */
	if (geteuid() == 0) {
		static const char *const groups[] = {"setgroups", "setgroups32"};
		for (size_t i = 0; i < 2; i++)
			if (!rule(ctx, SCMP_ACT_ERRNO(0), groups[i], 0, NULL))
				return false;
	}
	return true;
}

/* The calls denied for some arguments only. */
static bool seccomp_deny_arguments(scmp_filter_ctx ctx)
{
	/* clone() with any namespace flag. (clone3 hides its flags in memory,
	 * hence ENOSYS above.) */
	for (size_t i = 0; i < sizeof(clone_ns_flags) / sizeof(clone_ns_flags[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i],
		                                clone_ns_flags[i]);
		if (!rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &c))
			return false;
	}
	/* The terminal's input queue (typing into the user's shell) and the
	 * console's selection: compared on the low 32 bits, which is all the
	 * kernel looks at. */
	static const uint64_t ioctls[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; i < 2; i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]);
		if (!rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c))
			return false;
	}
	/* personality(): only PER_LINUX (0) and the query 0xffffffff pass.
	 * libseccomp cannot put two tests on one argument, so "the low 32 bits
	 * are neither all 0 nor all 1" is written as "somewhere a 1 bit is
	 * followed (cyclically) by a 0 bit", which holds for exactly those
	 * values: 32 rules of one masked comparison each. */
	for (unsigned b = 0; b < 32; b++) {
		uint64_t one = 1ull << b, next = 1ull << ((b + 1) % 32);
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, one | next, one);
		if (!rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &c))
			return false;
	}
	return true;
}

/* The filter as a BPF program (libseccomp exports only to a file
 * descriptor, hence the memfd) and its length in *len. malloc'ed, the
 * caller's. NULL: said why. */
static struct sock_filter *seccomp_export(scmp_filter_ctx ctx, unsigned short *len)
{
	int memfd = memfd_create("deskhand-seccomp", MFD_CLOEXEC);
	if (memfd < 0) {
		sandbox_fail("seccomp: memfd_create: %s", strerror(errno));
		return NULL;
	}
	struct sock_filter *prog = NULL;
	int r = seccomp_export_bpf(ctx, memfd);
	off_t size = r < 0 ? 0 : lseek(memfd, 0, SEEK_END);
	if (r < 0) {
		sandbox_fail("seccomp: cannot export the filter: %s", strerror(-r));
	} else if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
	           size / (off_t)sizeof(struct sock_filter) > 0xffff) {
		sandbox_fail("seccomp: the exported filter has an odd size (%lld bytes)",
		             (long long)size);
	} else if ((prog = malloc((size_t)size)) == NULL) {
		sandbox_fail("seccomp: out of memory");
	} else if (pread(memfd, prog, (size_t)size, 0) != size) {
		free(prog);
		prog = NULL;
		sandbox_fail("seccomp: cannot read back the filter");
	} else {
		*len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	}
	close(memfd);
	return prog;
}

static struct sock_filter *seccomp_prog;   /* built once, kept for the process's life */
static unsigned short seccomp_prog_len;

bool sandbox_seccomp_program(struct sock_fprog *out)
{
	if (seccomp_prog == NULL) {
		scmp_filter_ctx ctx = seccomp_context();
		if (ctx == NULL)
			return false;
		if (seccomp_deny_calls(ctx) && seccomp_deny_arguments(ctx))
			seccomp_prog = seccomp_export(ctx, &seccomp_prog_len);
		seccomp_release(ctx);
		if (seccomp_prog == NULL)
			return false;
	}
	out->filter = seccomp_prog;
	out->len = seccomp_prog_len;
	return true;
}

/* ---- kernel facts ----------------------------------------------------- */

int sandbox_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	                   SB_LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

bool sandbox_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool sandbox_task_cap(sandbox_task_mode *mode, char *why, size_t why_size)
{
	/* pid_max became a per-pid-namespace setting in Linux 6.14. Before
	 * that the file is global: writing it would change the whole
	 * machine, so it is only ever written on a kernel known to scope it. */
	if (sandbox_kernel_at_least(6, 14)) {
		*mode = SB_TASKS_PID_MAX;
		return true;
	}
	if (geteuid() != 0) {
		*mode = SB_TASKS_NPROC;
		return true;
	}
	*mode = SB_TASKS_NONE;
	if (why != NULL)
		snprintf(why, why_size, "no per-namespace pid_max before Linux 6.14, and "
		         "RLIMIT_NPROC does not bind root: run deskhand as an ordinary user");
	return false;
}

/* ---- the plan ----------------------------------------------------------- */

bool sandbox_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void fmt_decimal(char *buf, size_t size, unsigned long long v)
{
	snprintf(buf, size, "%llu", v);
}

bool sandbox_display_is_local(const char *name)
{
	if (name == NULL || name[0] == '\0' || name[0] == '/')
		return true;
	if (strncmp(name, "tcp/", 4) == 0)
		return false;
	if (strncmp(name, "unix/", 5) == 0)
		return true;
	const char *colon = strrchr(name, ':');
	if (colon == NULL)
		return true;                    /* not a display name Xlib accepts */
	size_t host = (size_t)(colon - name);
	if (host > 0 && name[host - 1] == ':')
		return false;                   /* "host::0" is DECnet: not local either */
	return host == 0 || (host == 4 && strncmp(name, "unix", 4) == 0);
}

/*
 * The user's runtime directory ($XDG_RUNTIME_DIR, /run/user/UID) holds the
 * session's sockets: D-Bus, Wayland, PipeWire and PulseAudio, the
 * accessibility bus, key agents. Through them code could take screenshots
 * (a portal, GNOME Shell) or drive applications (AT-SPI) without ever
 * touching the X socket, so without the display grant the code gets an
 * empty private one instead. Only a directory that is the user's own and
 * private (0700, as the XDG spec requires) counts: an XDG_RUNTIME_DIR
 * pointing at /tmp hides nothing. A workspace inside it is refused rather
 * than hidden with it.
 */
static bool plan_runtime_dirs(sandbox_plan *p)
{
	char uid_dir[64];
	snprintf(uid_dir, sizeof(uid_dir), "/run/user/%u", (unsigned)getuid());
	const char *cand[2] = {getenv("XDG_RUNTIME_DIR"), uid_dir};
	char ws[PATH_MAX];
	const char *w = realpath(p->workspace, ws) != NULL ? ws : p->workspace;
	for (int i = 0; i < 2; i++) {
		char real[PATH_MAX];
		struct stat st;
		if (cand[i] == NULL || cand[i][0] != '/' || realpath(cand[i], real) == NULL ||
		    stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
		    (st.st_mode & 077) != 0 || strcmp(real, "/") == 0)
			continue;
		bool seen = false;
		for (int k = 0; k < p->n_runtime_dirs; k++)
			seen = seen || strcmp(p->runtime_dir[k], real) == 0;
		if (seen)
			continue;
		if (strlen(real) >= SB_PATH_MAX) {
			sandbox_fail("the runtime directory path %s is too long to hide", real);
			return false;
		}
		if (sandbox_path_under(w, real)) {
			sandbox_fail("the workspace %s is inside the runtime directory %s, which "
			             "the %s profile hides (its session sockets reach the "
			             "desktop): choose another workspace", p->workspace, real,
			             sandbox_profile_name(p->profile));
			return false;
		}
		memcpy(p->runtime_dir[p->n_runtime_dirs++], real, strlen(real) + 1);
	}
	return true;
}

sandbox_plan *sandbox_plan_create(sandbox_profile profile, bool display,
                                  const char *workspace, char *const *env,
                                  const sandbox_limits *limits)
{
	const char *x_display = sandbox_env_get(env, "DISPLAY");
	if (workspace == NULL || workspace[0] != '/')
		return sandbox_fail("workspace must be an absolute path"), NULL;
	if (strlen(workspace) >= SB_PATH_MAX)
		return sandbox_fail("workspace path is too long"), NULL;
	struct stat st;
	if (stat(workspace, &st) != 0)
		return sandbox_fail("workspace %s: %s", workspace, strerror(errno)), NULL;
	if (!S_ISDIR(st.st_mode))
		return sandbox_fail("workspace %s is not a directory", workspace), NULL;

	sandbox_plan *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return sandbox_fail("out of memory"), NULL;
	p->profile = profile;
	p->display = display;
	p->net_ruleset = -1;
	memcpy(p->workspace, workspace, strlen(workspace) + 1);
	if (limits != NULL)
		p->limits = *limits;
	else
		sandbox_limits_default(&p->limits);
	if (p->limits.tasks < 400)
		p->limits.tasks = 400;   /* pid_max below 301 is refused by the kernel */
	if (profile == SANDBOX_OFF)
		return p;

	unsigned need = sandbox_profile_layers(profile, display);
	char why[200];
	if (profile == SANDBOX_STANDARD && !display && !sandbox_display_is_local(x_display)) {
		sandbox_fail("the display %s is reached over TCP, which the standard profile "
		             "(network allowed) cannot fence off: use --sandbox strict, or grant "
		             "the display", x_display);
		goto fail;
	}
	if (!sandbox_task_cap(&p->tasks_mode, why, sizeof(why))) {
		sandbox_fail("the %s profile cannot cap the number of tasks here: %s",
		             sandbox_profile_name(profile), why);
		goto fail;
	}
	p->landlock_abi = sandbox_landlock_abi();
	if ((need & 1u << SANDBOX_LAYER_LANDLOCK) && p->landlock_abi < 1) {
		sandbox_fail("the %s profile needs Landlock, which this kernel does not "
		             "offer (not built in, or not in the lsm= boot list)",
		             sandbox_profile_name(profile));
		goto fail;
	}
	if ((need & 1u << SANDBOX_LAYER_SCOPE) && p->landlock_abi < 6) {
		sandbox_fail("the %s profile keeps the X display's abstract socket out of "
		             "reach with Landlock scoping (ABI 6, Linux 6.12); this kernel "
		             "has %s", sandbox_profile_name(profile),
		             p->landlock_abi ? "an older Landlock" : "no Landlock");
		goto fail;
	}
	if (!sandbox_seccomp_program(&p->seccomp)) {
		char msg[sizeof(base_error_text)];
		snprintf(msg, sizeof(msg), "%s", sandbox_error());
		sandbox_fail("the %s profile needs its seccomp filter: %s",
		             sandbox_profile_name(profile), msg);
		goto fail;
	}
	p->landlock_scope = (need & 1u << SANDBOX_LAYER_SCOPE) != 0;
	p->landlock_fs = (need & 1u << SANDBOX_LAYER_LANDLOCK) != 0;
	fmt_decimal(p->pid_max_text, sizeof(p->pid_max_text), p->limits.tasks + 1ull);
	snprintf(p->tmp_options, sizeof(p->tmp_options), "size=%llu,mode=1777",
	         (unsigned long long)p->limits.tmp_bytes);
	p->workspace_in_tmp = sandbox_path_under(workspace, "/tmp");
	p->workspace_in_shm = sandbox_path_under(workspace, "/dev/shm");
	if (!display && !plan_runtime_dirs(p))
		goto fail;
	if (!sandbox_plan_close_doors(p, env))
		goto fail;
	return p;
fail:
	free(p);
	return NULL;
}

void sandbox_plan_destroy(sandbox_plan *plan)
{
	free(plan);
}

sandbox_profile sandbox_plan_profile(const sandbox_plan *plan)
{
	return plan->profile;
}

unsigned long sandbox_plan_clone_flags(const sandbox_plan *plan)
{
	if (plan->profile == SANDBOX_OFF)
		return 0;
	unsigned long f = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC;
	if (plan->profile == SANDBOX_STRICT)
		f |= CLONE_NEWNET;
	return f;
}
