/*
 * executors/sandbox — the parent's side of what the sandbox keeps out of
 * the code's reach besides the X socket: paths hidden and pinned (deskhand's
 * own files, a path session bus, the X authority file, the Wayland
 * compositor's, its command socket's and PipeWire's sockets), the TCP ports
 * of the X server and of a TCP session bus, what strict binds back for code
 * granted the display, and deskhand's own command line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/sandbox-internal.h"

const char *const sandbox_system_dirs[] = {
	"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/opt", "/boot", NULL,
};

/* The X server listens on 6000 + display number; displays 0-63 cover
 * every local server in practice (Xvfb's default range stops there). */
#define SB_X_TCP_FIRST 6000
#define SB_X_TCP_LAST 6063

/* Adds every directory above `real` (not "/") to the pinned list, parents
 * first, each once. */
static bool pin_parents(sandbox_plan *p, const char *real)
{
	char buf[SB_PATH_MAX];
	size_t len = strlen(real);
	memcpy(buf, real, len + 1);
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		bool seen = false;
		for (int k = 0; k < p->n_pinned && !seen; k++)
			seen = strcmp(p->pinned[k], buf) == 0;
		if (!seen) {
			if (p->n_pinned == SB_PINNED_MAX)
				return sandbox_fail("too many directories to pin above %s", real);
			memcpy(p->pinned[p->n_pinned++], buf, i + 1);
		}
		buf[i] = '/';
	}
	return true;
}

bool sandbox_plan_hide(sandbox_plan *p, const char *path)
{
	if (p->profile == SANDBOX_OFF || path == NULL || path[0] == '\0')
		return true;
	char real[PATH_MAX], ws[PATH_MAX];
	/* Missing, or out of this uid's reach and so of its code's too. */
	if (realpath(path, real) == NULL)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES
		       ? true : sandbox_fail("cannot hide %s: %s", path, strerror(errno));
	if (strlen(real) >= SB_PATH_MAX)
		return sandbox_fail("the path %s is too long to hide", real);
	const char *w = realpath(p->workspace, ws) != NULL ? ws : p->workspace;
	if (sandbox_path_under(w, real))
		return sandbox_fail("the workspace %s is inside %s, which holds deskhand's own "
		                    "files and is hidden from the code: choose another "
		                    "workspace", p->workspace, real);
	for (int k = 0; k < p->n_hidden; k++)
		if (strcmp(p->hidden[k], real) == 0)
			return true;
	if (p->n_hidden == SB_HIDDEN_MAX)
		return sandbox_fail("too many paths to hide (at most %d)", SB_HIDDEN_MAX);
	if (!pin_parents(p, real))
		return false;
	memcpy(p->hidden[p->n_hidden++], real, strlen(real) + 1);
	return true;
}

const char *sandbox_plan_hidden_path(const sandbox_plan *p, int i)
{
	return i >= 0 && i < p->n_hidden ? p->hidden[i] : NULL;
}

/* True when the resolved path `real` is inside a runtime directory hidden
 * whole (the private tmpfs covers it, and whatever is created there later). */
static bool runtime_dir_covers(const sandbox_plan *p, const char *real)
{
	for (int k = 0; k < p->n_runtime_dirs; k++)
		if (sandbox_path_under(real, p->runtime_dir[k]))
			return true;
	return false;
}

/* The same for a path not yet resolved (a name the environment gives). */
static bool in_hidden_runtime_dir(const sandbox_plan *p, const char *path)
{
	char real[PATH_MAX];
	return runtime_dir_covers(p, realpath(path, real) != NULL ? real : path);
}

bool sandbox_plan_hides(const sandbox_plan *p, const char *path)
{
	if (p->profile == SANDBOX_OFF || path == NULL || path[0] != '/')
		return false;
	char real[PATH_MAX];
	const char *r = realpath(path, real) != NULL ? real : path;
	if (runtime_dir_covers(p, r))
		return true;
	for (int k = 0; k < p->n_hidden; k++)
		if (sandbox_path_under(r, p->hidden[k]))
			return true;
	return false;
}

int sandbox_plan_denied_ports(const sandbox_plan *p, unsigned short *ports, int max)
{
	for (int i = 0; i < p->n_denied_ports && i < max; i++)
		ports[i] = p->denied_ports[i];
	return p->n_denied_ports;
}

static void deny_port(sandbox_plan *p, long port)
{
	if (port <= 0 || port > 65535 || p->n_denied_ports == SB_DENIED_PORTS_MAX)
		return;
	for (int i = 0; i < p->n_denied_ports; i++)
		if (p->denied_ports[i] == port)
			return;
	p->denied_ports[p->n_denied_ports++] = (unsigned short)port;
}

/* The value of key=... in one D-Bus address ("unix:path=/tmp/x,guid=..."),
 * unescaped (%XX); false when absent or too long. */
static bool dbus_value(const char *addr, size_t len, const char *key, char *out,
                       size_t size)
{
	size_t k = strlen(key);
	const char *colon = memchr(addr, ':', len);
	for (const char *s = colon ? colon + 1 : addr + len; s < addr + len;) {
		const char *end = memchr(s, ',', (size_t)(addr + len - s));
		if (end == NULL)
			end = addr + len;
		if ((size_t)(end - s) > k && strncmp(s, key, k) == 0 && s[k] == '=') {
			size_t o = 0;
			for (const char *c = s + k + 1; c < end; c++) {
				unsigned v;
				if (*c == '%' && end - c >= 3 && sscanf(c + 1, "%2x", &v) == 1) {
					c += 2;
				} else {
					v = (unsigned char)*c;
				}
				if (o + 1 >= size || v == 0)
					return false;
				out[o++] = (char)v;
			}
			out[o] = '\0';
			return true;
		}
		s = end + 1;
	}
	return false;
}

/* Closes each door of a D-Bus address list ("a;b"): a path socket is
 * hidden, a TCP port denied. An abstract socket needs nothing here (the
 * abstract-socket scoping covers it); unix:runtime= lives in the runtime
 * directory, which is hidden already. */
static bool close_dbus(sandbox_plan *p, const char *list)
{
	char val[SB_PATH_MAX];
	for (const char *a = list; a != NULL && *a != '\0';) {
		const char *semi = strchr(a, ';');
		size_t len = semi ? (size_t)(semi - a) : strlen(a);
		if (len > 5 && strncmp(a, "unix:", 5) == 0 &&
		    dbus_value(a, len, "path", val, sizeof(val)) && val[0] == '/' &&
		    !sandbox_plan_hide(p, val))
			return false;
		if ((strncmp(a, "tcp:", 4) == 0 || strncmp(a, "nonce-tcp:", 10) == 0) &&
		    dbus_value(a, len, "port", val, sizeof(val)))
			deny_port(p, strtol(val, NULL, 10));
		a = semi ? semi + 1 : a + len;
	}
	return true;
}

/* dbus-launch's autolaunch files, ~/.dbus/session-bus/<machine>-<display>,
 * name the bus of each X display in a line DBUS_SESSION_BUS_ADDRESS='...'. */
static bool close_dbus_files(sandbox_plan *p, const char *home)
{
	char dir[SB_PATH_MAX];
	if (home == NULL || home[0] != '/' ||
	    snprintf(dir, sizeof(dir), "%s/.dbus/session-bus", home) >= (int)sizeof(dir))
		return true;
	DIR *d = opendir(dir);
	if (d == NULL)
		return true;
	bool ok = true;
	for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
		char path[SB_PATH_MAX + 256], line[2048];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "re");
		while (ok && f != NULL && fgets(line, sizeof(line), f) != NULL) {
			static const char key[] = "DBUS_SESSION_BUS_ADDRESS='";
			if (strncmp(line, key, sizeof(key) - 1) != 0)
				continue;
			char *v = line + sizeof(key) - 1, *q = strchr(v, '\'');
			if (q != NULL)
				*q = '\0';
			ok = close_dbus(p, v);
		}
		if (f != NULL)
			fclose(f);
	}
	closedir(d);
	return ok;
}

/* The accessibility bus (AT-SPI: it reads and drives every application)
 * lives in the runtime directory, hidden already, or, where there is none,
 * in ~/.cache/at-spi: that folder is hidden too. */
static bool close_atspi_cache(sandbox_plan *p, const char *home)
{
	char dir[SB_PATH_MAX];
	if (home == NULL || home[0] != '/' ||
	    snprintf(dir, sizeof(dir), "%s/.cache/at-spi", home) >= (int)sizeof(dir))
		return true;
	return sandbox_plan_hide(p, dir);
}

/* dir/name, or name when it is absolute; false when neither makes an
 * absolute path that fits. */
static bool door_path(const char *dir, const char *name, char *buf, size_t size)
{
	if (name == NULL || name[0] == '\0')
		return false;
	if (name[0] == '/')
		return (size_t)snprintf(buf, size, "%s", name) < size;
	return dir != NULL && dir[0] == '/' &&
	       (size_t)snprintf(buf, size, "%s/%s", dir, name) < size;
}

bool sandbox_desktop_socket_path(char *const *env, sandbox_desktop_socket which, char *buf,
                                 size_t size)
{
	const char *rt = sandbox_env_get(env, "XDG_RUNTIME_DIR");
	if (which == SANDBOX_SOCKET_WAYLAND)
		return door_path(rt, sandbox_env_get(env, "WAYLAND_DISPLAY"), buf, size);
	const char *pw = sandbox_env_get(env, "PIPEWIRE_REMOTE");
	const char *pw_dir = sandbox_env_get(env, "PIPEWIRE_RUNTIME_DIR");
	return door_path(pw_dir != NULL ? pw_dir : rt, pw != NULL ? pw : "pipewire-0", buf, size);
}

/* Hides one socket or directory of the desktop's, unless covered already. */
static bool hide_door(sandbox_plan *p, const char *dir, const char *name)
{
	char path[SB_PATH_MAX];
	if (!door_path(dir, name, path, sizeof(path)))
		return true;
	return in_hidden_runtime_dir(p, path) || sandbox_plan_hide(p, path);
}

/* Hides the entries of dir named prefix*suffix (their lock files aside). */
static bool hide_matching(sandbox_plan *p, const char *dir, const char *prefix,
                          const char *suffix)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return true;
	bool ok = true;
	size_t np = strlen(prefix), ns = strlen(suffix);
	for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n > np + ns && strncmp(e->d_name, prefix, np) == 0 &&
		    strcmp(e->d_name + n - ns, suffix) == 0 &&
		    !(n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0))
			ok = hide_door(p, dir, e->d_name);
	}
	closedir(d);
	return ok;
}

/*
 * The Wayland compositor's socket (any client may read the screen or type
 * through the wlroots protocols), its command socket (sway's IPC runs any
 * `exec` it is sent, outside every sandbox; Hyprland's likewise) and
 * PipeWire's (screen casts). In a private runtime directory they are
 * hidden with it, new ones included; a runtime directory that is not
 * private (shared, so it cannot be covered whole) has each one hidden as
 * it is now, and the paths the environment names are hidden wherever they
 * are (sway's socket is in /tmp when XDG_RUNTIME_DIR is unset, Hyprland's
 * were in /tmp/hypr before 0.40). A compositor started after the session
 * in a shared directory is not covered: nothing here can see it coming.
 */
static bool close_compositor(sandbox_plan *p, char *const *env)
{
	const char *rt = sandbox_env_get(env, "XDG_RUNTIME_DIR");
	char uid_dir[64];
	snprintf(uid_dir, sizeof(uid_dir), "/run/user/%u", (unsigned)getuid());
	const char *dirs[2] = {rt, uid_dir};
	for (int i = 0; i < 2; i++) {
		const char *d = dirs[i];
		if (d == NULL || d[0] != '/' || in_hidden_runtime_dir(p, d))
			continue;
		if (!hide_matching(p, d, "wayland-", "") ||
		    !hide_matching(p, d, "sway-ipc.", ".sock") || !hide_door(p, d, "hypr") ||
		    !hide_door(p, d, "pipewire-0") || !hide_door(p, d, "pipewire-0-manager"))
			return false;
	}
	char wl[SB_PATH_MAX], pw[SB_PATH_MAX];
	bool have_wl = sandbox_desktop_socket_path(env, SANDBOX_SOCKET_WAYLAND, wl, sizeof(wl));
	bool have_pw = sandbox_desktop_socket_path(env, SANDBOX_SOCKET_PIPEWIRE, pw, sizeof(pw));
	return hide_door(p, NULL, have_wl ? wl : NULL) &&
	       hide_door(p, NULL, sandbox_env_get(env, "SWAYSOCK")) &&
	       hide_door(p, NULL, sandbox_env_get(env, "I3SOCK")) &&
	       hide_door(p, NULL, have_pw ? pw : NULL) &&
	       hide_door(p, sandbox_env_get(env, "PIPEWIRE_RUNTIME_DIR"), "pipewire-0") &&
	       hide_door(p, NULL, "/tmp/hypr");
}

/* Under strict with the grant: what the granted code needs below /tmp,
 * where the private /tmp would hide it (the child binds each back). */
static void keep_for_display(sandbox_plan *p, char *const *env)
{
	const char *rt = sandbox_env_get(env, "XDG_RUNTIME_DIR");
	char wl_path[SB_PATH_MAX] = "";
	sandbox_desktop_socket_path(env, SANDBOX_SOCKET_WAYLAND, wl_path, sizeof(wl_path));
	const char *cand[] = {"/tmp/.X11-unix", rt, wl_path, sandbox_env_get(env, "SWAYSOCK"),
	                      sandbox_env_get(env, "I3SOCK"), "/tmp/hypr"};
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		char real[PATH_MAX];
		if (cand[i] == NULL || cand[i][0] != '/' || realpath(cand[i], real) == NULL ||
		    !sandbox_path_under(real, "/tmp") || strcmp(real, "/tmp") == 0 ||
		    strlen(real) >= SB_PATH_MAX || p->n_kept == SB_KEPT_MAX)
			continue;
		bool covered = false;
		for (int k = 0; k < p->n_kept && !covered; k++)
			covered = sandbox_path_under(real, p->kept[k]);
		if (!covered)
			memcpy(p->kept[p->n_kept++], real, strlen(real) + 1);
	}
}

/* Adds to `seen` the local TCP ports in LISTEN state of one /proc/net
 * table ("sl local_address:PORT rem_address st ..."; st 0A is LISTEN). */
static void listening_ports(const char *table, unsigned char *seen)
{
	FILE *f = fopen(table, "re");
	/* Each read walks the kernel's whole table of connections again:
	 * as few reads as possible. */
	static char big[65536];
	if (f != NULL)
		setvbuf(f, big, _IOFBF, sizeof(big));
	char line[512];
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char local[128];
		unsigned st;
		if (sscanf(line, " %*s %127s %*s %x", local, &st) != 2 || st != 0x0A)
			continue;
		const char *colon = strrchr(local, ':');
		unsigned long port = colon ? strtoul(colon + 1, NULL, 16) : 0;
		if (port > 0 && port <= 65535)
			seen[port / 8] |= (unsigned char)(1u << (port % 8));
	}
	if (f != NULL)
		fclose(f);
}

#define SB_TCP_LISTEN 10        /* the kernel's TCP_LISTEN */

/* The same through sock_diag: the kernel walks its table of listening
 * sockets alone, where a read of /proc/net/tcp walks every bucket of the
 * connections' table too (5 ms per session on a 2-core test machine).
 * False when netlink cannot tell (then /proc can). */
static bool diag_listening_ports(int family, unsigned char *seen)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return false;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg;
	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.req.sdiag_family = (unsigned char)family;
	msg.req.sdiag_protocol = IPPROTO_TCP;
	msg.req.idiag_states = 1u << SB_TCP_LISTEN;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	bool done = false, ok = false;
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    (ssize_t)sizeof(msg))
		done = true;
	static long buf[8192 / sizeof(long)];    /* aligned for nlmsghdr */
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; !done && NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				ok = h->nlmsg_type == NLMSG_DONE;
				done = true;
			} else if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				unsigned port = ntohs(m->id.idiag_sport);
				seen[port / 8] |= (unsigned char)(1u << (port % 8));
			}
		}
	}
	close(fd);
	return ok;
}

/* Closing a port costs the session ~50 ms (Landlock allows, it cannot deny:
 * every other port is a rule), so only the ports something listens on as
 * the session starts stay on the list: on most desktops the X server does
 * not listen on TCP at all, and nothing needs closing. */
static void keep_listening_ports(sandbox_plan *p)
{
	unsigned char seen[65536 / 8];
	memset(seen, 0, sizeof(seen));
	if (!diag_listening_ports(AF_INET, seen))
		listening_ports("/proc/net/tcp", seen);
	if (!diag_listening_ports(AF_INET6, seen))
		listening_ports("/proc/net/tcp6", seen);
	int n = 0;
	for (int i = 0; i < p->n_denied_ports; i++) {
		unsigned short port = p->denied_ports[i];
		if (seen[port / 8] & (1u << (port % 8)))
			p->denied_ports[n++] = port;
	}
	p->n_denied_ports = n;
}

/* Landlock allows, it cannot deny: the ruleset handles TCP connect and
 * allows every port but the denied ones (65,472 rules; built once per
 * process for one set of ports, about 30 ms). */
static int net_ruleset_for(const sandbox_plan *p)
{
	static int cached = -1;
	static unsigned short cached_ports[SB_DENIED_PORTS_MAX];
	static int cached_n = -1;
	if (cached >= 0 && cached_n == p->n_denied_ports &&
	    memcmp(cached_ports, p->denied_ports, sizeof(p->denied_ports[0]) * (size_t)cached_n) == 0)
		return cached;
	struct sb_landlock_ruleset_attr attr = {0, SB_LL_NET_CONNECT_TCP, 0};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return sandbox_fail("landlock: a network ruleset: %s", strerror(errno)), -1;
	(void)fcntl(rs, F_SETFD, FD_CLOEXEC);
	for (unsigned port = 0; port <= 65535; port++) {
		bool denied = false;
		for (int i = 0; i < p->n_denied_ports && !denied; i++)
			denied = p->denied_ports[i] == port;
		struct sb_landlock_net_port_attr r = {SB_LL_NET_CONNECT_TCP, port};
		if (!denied && syscall(SYS_landlock_add_rule, rs, SB_LANDLOCK_RULE_NET_PORT,
		                       &r, 0) != 0) {
			sandbox_fail("landlock: allowing TCP port %u: %s", port, strerror(errno));
			close(rs);
			return -1;
		}
	}
	if (cached >= 0)
		close(cached);
	cached = rs;
	cached_n = p->n_denied_ports;
	memcpy(cached_ports, p->denied_ports, sizeof(p->denied_ports));
	return cached;
}

/* The child wipes these addresses blindly: only when the memory there is
 * readable and holds what /proc/self/cmdline shows (read with
 * process_vm_readv, which fails with EFAULT instead of crashing). */
static bool arg_area_is_ours(unsigned long start, unsigned long end)
{
	char want[257], got[256];
	ssize_t n = base_read_small(AT_FDCWD, "/proc/self/cmdline", want, sizeof(want));
	if (n <= 0 || (unsigned long)n > end - start)
		return false;
	struct iovec local = {got, (size_t)n}, remote = {(void *)start, (size_t)n};
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == n &&
	       memcmp(want, got, (size_t)n) == 0;
}

/* Fields 48-51 of /proc/self/stat: where the kernel finds the strings of
 * /proc/PID/cmdline and /proc/PID/environ. */
static void plan_arg_area(sandbox_plan *p)
{
	base_proc_info self;
	if (base_proc_stat(0, &self) && self.arg_start < self.arg_end &&
	    self.env_start <= self.env_end && arg_area_is_ours(self.arg_start, self.arg_end)) {
		p->arg_start = self.arg_start;
		p->arg_end = self.arg_end;
		p->env_start = self.env_start;
		p->env_end = self.env_end;
	}
}

bool sandbox_plan_close_doors(sandbox_plan *p, char *const *env)
{
	p->net_ruleset = -1;
	if (p->profile == SANDBOX_OFF)
		return true;            /* no namespaces: nothing to wipe or close */
	plan_arg_area(p);
	if (p->display && p->profile == SANDBOX_STRICT)
		keep_for_display(p, env);
	if (p->display)
		return true;
	const char *home = sandbox_env_get(env, "HOME");
	const char *xauth = sandbox_env_get(env, "XAUTHORITY");
	char def[SB_PATH_MAX];
	if ((xauth == NULL || xauth[0] != '/') && home != NULL && home[0] == '/' &&
	    snprintf(def, sizeof(def), "%s/.Xauthority", home) < (int)sizeof(def))
		xauth = def;
	if (xauth != NULL && xauth[0] == '/' && !sandbox_plan_hide(p, xauth))
		return false;
	if (!close_dbus(p, sandbox_env_get(env, "DBUS_SESSION_BUS_ADDRESS")) ||
	    !close_dbus(p, sandbox_env_get(env, "AT_SPI_BUS_ADDRESS")) ||
	    !close_dbus_files(p, home) || !close_atspi_cache(p, home) ||
	    !close_compositor(p, env))
		return false;
	if (p->profile != SANDBOX_STANDARD)
		return true;            /* strict's network namespace reaches nothing */
	for (long port = SB_X_TCP_FIRST; port <= SB_X_TCP_LAST; port++)
		deny_port(p, port);
	keep_listening_ports(p);
	if (p->n_denied_ports == 0)
		return true;
	if (p->landlock_abi < 4)
		return sandbox_fail("the standard profile keeps the X server's TCP ports out of "
		                    "reach with Landlock network rules (ABI 4, Linux 6.7); this "
		                    "kernel has %s", p->landlock_abi ? "an older Landlock"
		                                                     : "no Landlock");
	if ((p->net_ruleset = net_ruleset_for(p)) < 0)
		return false;
	return true;
}
