/*
 * deskhand doctor: first what is ready and how to fix what is not
 * (cmd_doctor_ready.c), then what of the sandbox works on this machine,
 * tried for real, which profiles can therefore run, and which doors to the desktop
 * and to deskhand's own files the standard profile closes here; in a
 * container, what the sandbox needs of it (cmd_doctor_container.c).
 */
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "agent/session/session.h"
#include "agent/util/textutil.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

extern char **environ;

static void doctor_own_dir(sandbox_plan *plan, agent_dir_kind kind, const char *what)
{
	char dir[PATH_MAX];
	struct stat st;
	if (!agent_own_dir(kind, dir, sizeof(dir)))
		printf("  %-20s no home directory\n", what);
	else if (stat(dir, &st) != 0)
		printf("  %-20s %s (created and hidden when the agent starts)\n", what, dir);
	else if (!sandbox_plan_hide(plan, dir))
		printf("  %-20s %s: %s\n", what, dir, sandbox_error());
}

/* One of the desktop's sockets: where it is and whether code finds it. */
static void doctor_socket(const sandbox_plan *plan, const char *what, const char *path,
                          const char *unset)
{
	struct stat st;
	if (path == NULL)
		printf("  %-20s %s\n", what, unset);
	else
		printf("  %-20s %s: %s%s\n", what, path,
		       sandbox_plan_hides(plan, path) ? "hidden" : "REACHABLE",
		       stat(path, &st) != 0 ? " (not there now)" : "");
}

/* The Wayland compositor, its command socket (sway's IPC runs any command
 * it is sent, Hyprland's likewise) and PipeWire (screen casts), found as
 * their clients would find them. */
static void doctor_desktop_sockets(const sandbox_plan *plan)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *hypr = getenv("HYPRLAND_INSTANCE_SIGNATURE");
	char wl_path[PATH_MAX], ipc[PATH_MAX], pw_path[PATH_MAX];
	const char *ipc_path = getenv("SWAYSOCK");
	bool wl = sandbox_desktop_socket_path(environ, SANDBOX_SOCKET_WAYLAND, wl_path,
	                                      sizeof(wl_path));
	doctor_socket(plan, "Wayland socket", wl ? wl_path : NULL,
	              "(WAYLAND_DISPLAY unset, or no XDG_RUNTIME_DIR to find it in)");
	if (ipc_path == NULL && hypr != NULL && rt != NULL) {
		snprintf(ipc, sizeof(ipc), "%s/hypr/%s/.socket.sock", rt, hypr);
		ipc_path = ipc;
	}
	doctor_socket(plan, "compositor IPC", ipc_path,
	              "(SWAYSOCK and HYPRLAND_INSTANCE_SIGNATURE unset)");
	bool pw = sandbox_desktop_socket_path(environ, SANDBOX_SOCKET_PIPEWIRE, pw_path,
	                                      sizeof(pw_path));
	doctor_socket(plan, "PipeWire", pw ? pw_path : NULL, "(XDG_RUNTIME_DIR unset)");
}

/* The doors the standard profile closes without the display grant, as a
 * session started from here would close them. */
static void doctor_doors(void)
{
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return;
	sandbox_plan *plan = sandbox_plan_create(SANDBOX_STANDARD, false, cwd, environ, NULL);
	printf("doors closed to code (standard profile, no display grant):\n");
	if (plan == NULL) {
		printf("  none: %s\n", sandbox_error());
		return;
	}
	printf("  %-20s /tmp/.X11-unix hidden, abstract sockets scoped away\n", "X socket");
	unsigned short ports[128];
	int n = sandbox_plan_denied_ports(plan, ports, 128);
	printf("  %-20s ", "X over TCP");
	if (n == 0)
		printf("nothing listens on 6000-6063 now (checked again as each session starts)");
	for (int i = 0; i < n && i < 128; i++)
		printf("%s%u%s", i ? ", " : "ports 6000-6063 checked; closed: ", ports[i],
		       ports[i] >= 6000 && ports[i] <= 6063 ? " (X)" : " (session bus)");
	printf("\n");
	const char *bus = getenv("DBUS_SESSION_BUS_ADDRESS");
	printf("  %-20s %s\n", "session bus", bus == NULL ? "(DBUS_SESSION_BUS_ADDRESS unset)"
	       : strstr(bus, "abstract=") ? "abstract socket: scoped away" : "see hidden paths");
	doctor_desktop_sockets(plan);
	doctor_own_dir(plan, AGENT_DIR_CONFIG, "deskhand config");
	doctor_own_dir(plan, AGENT_DIR_DATA, "deskhand data");
	for (int i = 0; sandbox_plan_hidden_path(plan, i) != NULL; i++)
		printf("  %-20s %s\n", "hidden", sandbox_plan_hidden_path(plan, i));
	printf("  %-20s", "read-only");
	for (const char *const *d = sandbox_system_dirs; *d != NULL; d++)
		if (access(*d, F_OK) == 0)
			printf(" %s", *d);
	printf("\n");
	sandbox_plan_destroy(plan);
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : dflt;
}

/* What each feature is for the user, in the order of os_feature. */
static const char *const feature_uses[OS_FEATURE_COUNT] = {
	[OS_FEATURE_CAPTURE] = "screenshots",
	[OS_FEATURE_POINTER] = "mouse",
	[OS_FEATURE_KEYS] = "key combinations",
	[OS_FEATURE_TYPING] = "typing text",
	[OS_FEATURE_WINDOWS] = "windows",
	[OS_FEATURE_OWNERS] = "own-terminal check",
	[OS_FEATURE_POINTER_POSITION] = "kill switch",
	[OS_FEATURE_HELD_KEYS] = "key --down",
};

/* The session, what drives it and what each feature will use, or why it
 * cannot: what a user on this desktop can expect. */
static void doctor_desktop(os_display *d, bool unsupported)
{
	printf("desktop: %s session (XDG_SESSION_TYPE %s, WAYLAND_DISPLAY %s, DISPLAY %s)\n",
	       os_session_is_wayland() ? "a Wayland" : "an X11", env_or("XDG_SESSION_TYPE", "unset"),
	       env_or("WAYLAND_DISPLAY", "unset"), env_or("DISPLAY", "unset"));
	if (d == NULL) {
		printf("  %-20s %s: %s\n", "display", unsupported ? "not driven" : "no", os_error());
		return;
	}
	printf("  %-20s %s backend, %s %s%s%s\n", "display", os_display_backend(d),
	       os_display_session(d), os_display_name(d),
	       os_display_server(d)[0] ? ", served by " : "", os_display_server(d));
	if (os_display_warning(d) != NULL)
		printf("  %-20s %s\n", "warning", os_display_warning(d));
	char *offers = agent_show_dup(os_display_offers(d), 0);
	printf("  %-20s %s\n", "offers", offers != NULL && offers[0] ? offers : "(not listed)");
	free(offers);
	for (int f = 0; f < OS_FEATURE_COUNT; f++) {
		const char *why = NULL;
		const char *how = os_feature_how(d, (os_feature)f, &why);
		if (how != NULL)
			printf("  %-20s %s\n", feature_uses[f], how);
		else
			printf("  %-20s no: %s\n", feature_uses[f], why);
	}
	const char *why = NULL;
	if (os_feature_how(d, OS_FEATURE_POINTER_POSITION, &why) != NULL)
		return;
	/* Bound here to prove it can be, undone when d closes. */
	char key[160];
	if (os_stop_key_arm(d, key, sizeof(key)))
		printf("  %-20s %s, instead of the pointer\n", "stop key", key);
	else
		printf("  %-20s no: %s (--os-auto-approve then needs a terminal for Ctrl-C "
		       "or --console for its Stop)\n", "stop key", os_error());
}

/* The session bus (found, or started when the display has none) and the
 * accessibility bus on it: tried once, for both parts of the report. */
static void a11y_try(cli_doctor_facts *f)
{
	if (f->display == NULL)
		return;
	f->bus_found = agent_session_bus(f->display, f->bus, sizeof(f->bus)) == AGENT_BUS_FOUND;
	f->a11y_ok = vision_a11y_probe(f->display, f->a11y_apps, sizeof(f->a11y_apps), f->a11y_why,
	                               sizeof(f->a11y_why));
}

/* Whether `elements` can work here, and on which applications. */
static void doctor_a11y(const cli_doctor_facts *f)
{
	if (f->display == NULL) {
		printf("%-24s no: no display (%s)\n", "accessibility bus", f->display_why);
		return;
	}
	if (!f->bus_found)
		printf("%-24s %s\n", "session bus", f->bus);
	if (f->a11y_ok) {
		char *shown = agent_show_dup(f->a11y_apps, 0);
		printf("%-24s reachable; applications with a tree: %s\n", "accessibility bus",
		       shown ? shown : "?");
		free(shown);
	} else {
		printf("%-24s no: %s\n", "accessibility bus", f->a11y_why);
	}
}

/* Who can answer deskhand mcp's questions, started from here. */
static void doctor_mcp(void)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	printf("%-24s questions in %s; in the console with --console; the host's own answers "
	       "count only with --trust-host-approvals\n", "deskhand mcp",
	       tty >= 0 ? "this controlling terminal (/dev/tty)"
	                : "no terminal (none controls this process)");
	if (tty >= 0)
		close(tty);
}

int cmd_doctor(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return cli_usage_error("doctor", "doctor takes no arguments");
	sandbox_probe p;
	sandbox_probe_run(&p);
	cli_doctor_facts f = {.probe = &p};
	cli_container_detect(&f.container);
	f.display = os_display_connect(NULL, &f.unsupported);
	snprintf(f.display_why, sizeof(f.display_why), "%s", f.display == NULL ? os_error() : "");
	a11y_try(&f);
	cli_doctor_ready(&f);
	struct utsname u;
	if (uname(&u) == 0)
		printf("kernel %s, deskhand running as uid %d%s\n", u.release, (int)geteuid(),
		       geteuid() == 0 ? " (root)" : "");
	for (int l = 0; l < SANDBOX_LAYER_COUNT; l++)
		printf("%-24s %s%s\n", sandbox_layer_name((sandbox_layer)l),
		       p.ok[l] ? "" : "no: ", p.detail[l]);
	cli_doctor_container(&f);
	bool standard_ok = true;
	for (int prof = SANDBOX_OFF; prof < SANDBOX_PROFILE_COUNT; prof++) {
		char why[320];
		bool ok = sandbox_probe_allows(&p, (sandbox_profile)prof, false, why, sizeof(why));
		bool with_display = sandbox_probe_allows(&p, (sandbox_profile)prof, true, NULL, 0);
		if (prof == SANDBOX_STANDARD)
			standard_ok = ok;
		if (ok)
			printf("profile %-16s can run\n", sandbox_profile_name((sandbox_profile)prof));
		else
			printf("profile %-16s cannot run (%s)%s\n",
			       sandbox_profile_name((sandbox_profile)prof), why,
			       with_display ? "; with --display it can" : "");
	}
	if (standard_ok)
		doctor_doors();
	doctor_desktop(f.display, f.unsupported);
	doctor_a11y(&f);
	doctor_mcp();
	os_display_close(f.display);
	return standard_ok ? CLI_OK : CLI_FAIL;
}
