/*
 * agent/batch/task — one task's life, in its enclosure's first process:
 * the desktop (a private X server, a session bus, the window manager),
 * the setup commands, the apps, the agent (this executable, as a child,
 * with the batch's agent options), the check; then DIR/ID/outcome.json.
 * When this process ends the kernel ends everything the task started.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/batch/batch-internal.h"
#include "agent/batch/task-internal.h"
#include "base/base.h"
#include "os/os.h"

#define TASK_RUNTIME "/tmp/xdg-runtime"
#define TASK_NS_PER_S (1000 * BASE_NS_PER_MS)

enum { TASK_VARS = 16, WM_READY_MS = 10000, APPS_WINDOWS_MS = 30000, AGENT_GRACE_MS = 5000 };

struct life {
	const batch_run *run;
	const batch_task *t;
	task_procs procs;
	char dir[PATH_MAX], ws[PATH_MAX];
	char *vars[TASK_VARS + 1];      /* the task's own variables */
	size_t nvars;
	char **cmd_env;                 /* the commands' environment: no secrets */
	char **secrets;                 /* the agent's alone */
	int log_fd;
	int64_t deadline;               /* setup, apps and agent */
	int agent_exit, check_exit;     /* -1: did not run or did not end */
	char error[600];
};

static bool life_fail(struct life *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool life_fail(struct life *l, const char *fmt, ...)
{
	if (l->error[0] != '\0')
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->error, sizeof(l->error), fmt, ap);
	va_end(ap);
	return false;
}

char *batch_expand(const char *s, const char *id, const char *tasks_dir, const char *workspace)
{
	const char *names[] = {"{id}", "{tasks}", "{workspace}"};
	const char *values[] = {id, tasks_dir, workspace};
	size_t cap = strlen(s) + 1;
	for (const char *p = s; (p = strchr(p, '{')) != NULL; p++)
		cap += PATH_MAX;
	char *out = malloc(cap), *o = out;
	if (out == NULL)
		return NULL;
	while (*s != '\0') {
		size_t k = 0;
		while (k < 3 && (values[k] == NULL || strncmp(s, names[k], strlen(names[k])) != 0))
			k++;
		if (k == 3) {
			*o++ = *s++;
			continue;
		}
		size_t n = strlen(values[k]);
		if (n >= PATH_MAX)
			n = PATH_MAX - 1;
		memcpy(o, values[k], n);
		o += n;
		s += strlen(names[k]);
	}
	*o = '\0';
	return out;
}

/* argv with the task's names replaced. Ownership: batch_strings_free. */
static char **expand_argv(const struct life *l, char *const *argv)
{
	size_t n = 0;
	while (argv[n] != NULL)
		n++;
	char **v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; v != NULL && i < n; i++)
		if ((v[i] = batch_expand(argv[i], l->t->id, l->run->tasks_dir, l->ws)) == NULL) {
			batch_strings_free(v);   /* ends at v[i] */
			return NULL;
		}
	return v;
}

/* Sets NAME=value here (the agent inherits it) and among the task's own. */
static bool put_var(struct life *l, const char *name, const char *value)
{
	if (l->nvars >= TASK_VARS || setenv(name, value, 1) != 0)
		return false;
	size_t n = strlen(name) + strlen(value) + 2;
	if ((l->vars[l->nvars] = malloc(n)) == NULL)
		return false;
	snprintf(l->vars[l->nvars++], n, "%s=%s", name, value);
	return true;
}

/* DIR/ID/name into out (PATH_MAX); the batch refuses an --out so deep that
 * this could not fit. */
static void in_dir(const struct life *l, const char *name, char *out)
{
	if (snprintf(out, PATH_MAX, "%s/%s", l->dir, name) >= PATH_MAX)
		out[0] = '\0';
}

static bool make_dir(struct life *l, const char *sub, mode_t mode, char *out)
{
	char path[PATH_MAX];
	in_dir(l, sub, path);
	if (mkdir(path, mode) != 0 && errno != EEXIST)
		return life_fail(l, "%s: %s", path, strerror(errno));
	if (out != NULL)
		snprintf(out, PATH_MAX, "%s", path);
	return true;
}

static int open_log(struct life *l, const char *name)
{
	char path[PATH_MAX];
	in_dir(l, name, path);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		life_fail(l, "%s: %s", path, strerror(errno));
	return fd;
}

/* The task's folders and variables: its home, its runtime directory (in
 * its private /tmp, short enough for socket paths), its workspace. */
static bool prepare(struct life *l)
{
	char home[PATH_MAX], sub[PATH_MAX];
	snprintf(l->dir, sizeof(l->dir), "%s/%s", l->run->out, l->t->id);
	if ((l->secrets = task_take_secrets()) == NULL)
		return life_fail(l, "out of memory");
	if (!make_dir(l, "workspace", 0755, l->ws) || !make_dir(l, "home", 0700, home))
		return false;
	static const char *const xdg[][2] = {{"XDG_CONFIG_HOME", ".config"},
	                                     {"XDG_DATA_HOME", ".local/share"},
	                                     {"XDG_CACHE_HOME", ".cache"}};
	if (!put_var(l, "HOME", home))
		return life_fail(l, "the task's environment: %s", strerror(errno));
	for (size_t i = 0; i < 3; i++) {
		snprintf(sub, sizeof(sub), "home/%s", xdg[i][1]);
		if (i == 1 && !make_dir(l, "home/.local", 0700, NULL))
			return false;
		if (!make_dir(l, sub, 0700, sub) || !put_var(l, xdg[i][0], sub))
			return life_fail(l, "the task's environment: %s", strerror(errno));
	}
	if (mkdir(TASK_RUNTIME, 0700) != 0 && errno != EEXIST)
		return life_fail(l, "%s: %s", TASK_RUNTIME, strerror(errno));
	if (!put_var(l, "XDG_RUNTIME_DIR", TASK_RUNTIME) ||
	    !put_var(l, "DESKHAND_TASK_ID", l->t->id) ||
	    !put_var(l, "DESKHAND_TASKS_DIR", l->run->tasks_dir) ||
	    !put_var(l, "DESKHAND_WORKSPACE", l->ws) || !put_var(l, "XDG_SESSION_TYPE", "x11"))
		return life_fail(l, "the task's environment: %s", strerror(errno));
	unsetenv("WAYLAND_DISPLAY");
	unsetenv("TMPDIR");
	if (chdir(l->ws) != 0)
		return life_fail(l, "%s: %s", l->ws, strerror(errno));
	return (l->log_fd = open_log(l, "setup.log")) >= 0;
}

static bool desktop(struct life *l)
{
	os_xserver x;
	const char *auth = TASK_RUNTIME "/Xauthority";
	if (!os_xserver_start(l->t->screen_w, l->t->screen_h, auth, l->log_fd, &x))
		return life_fail(l, "the task's X server: %s", os_error());
	task_watch(&l->procs, x.pid, "the X server");
	if (!put_var(l, "DISPLAY", x.display) || !put_var(l, "XAUTHORITY", auth))
		return life_fail(l, "the task's environment: %s", strerror(errno));
	char addr[512];
	if (!os_bus_start(addr, sizeof(addr)))
		return life_fail(l, "the task's session bus: %s", os_error());
	task_watch(&l->procs, os_bus_started_pid(), "the session bus");
	if (!put_var(l, "DBUS_SESSION_BUS_ADDRESS", addr))
		return life_fail(l, "the task's environment: %s", strerror(errno));
	if ((l->cmd_env = task_env(l->vars)) == NULL)
		return life_fail(l, "out of memory");
	return true;
}


/* Starts argv; NULL-safe. -1 with the error set when it cannot. */
static pid_t start(struct life *l, char *const *argv, int out_fd, int err_fd)
{
	char **v = expand_argv(l, argv);
	pid_t pid = v != NULL ? task_spawn(v, l->cmd_env, l->ws, out_fd, err_fd, true) : -1;
	if (pid < 0)
		life_fail(l, "cannot start %s: %s", argv[0], strerror(errno));
	batch_strings_free(v);
	return pid;
}

/*
 * Polls ready(d, arg) on the task's display until it holds or ms pass (not
 * past the task's deadline); false when it never held. The waits below
 * are bounded and only logged: a task may start what never shows.
 */
static bool await_display(const struct life *l, int ms, bool (*ready)(os_display *, void *),
                          void *arg)
{
	os_display *d = os_display_open(getenv("DISPLAY"));
	if (d == NULL)
		return false;
	int64_t until = base_now_ns() + (int64_t)ms * BASE_NS_PER_MS;
	if (until > l->deadline)
		until = l->deadline;
	bool ok;
	while (!(ok = ready(d, arg)) && base_now_ns() < until)
		base_sleep_ms(20, NULL);
	os_display_close(d);
	return ok;
}

static bool wm_ready(os_display *d, void *arg)
{
	(void)arg;
	return os_window_manager_running(d);
}

/*
 * The window manager, before the setup (which may open windows), and
 * waited for: openbox leaves a window mapped while it starts unmanaged
 * for good (2 runs in 10 of pcmanfm), off the client list the apps'
 * wait and the agent's windows read.
 */
static bool start_wm(struct life *l)
{
	if (l->t->wm == NULL)
		return true;
	pid_t pid = start(l, l->t->wm, l->log_fd, l->log_fd);
	if (pid < 0)
		return false;
	task_watch(&l->procs, pid, "the window manager");
	if (!await_display(l, WM_READY_MS, wm_ready, NULL))
		dprintf(l->log_fd, "--- the window manager (%s) does not answer as an EWMH manager "
		        "after %d s: the setup starts anyway\n", l->t->wm[0], WM_READY_MS / 1000);
	return true;
}

static const char *exit_text(int st, char *buf, size_t size)
{
	if (WIFEXITED(st))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "was killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, size, "ended");
	return buf;
}

static bool run_setup(struct life *l)
{
	for (size_t i = 0; l->t->setup != NULL && l->t->setup[i] != NULL; i++) {
		dprintf(l->log_fd, "--- setup %zu: %s\n", i + 1, l->t->setup[i][0]);
		pid_t pid = start(l, l->t->setup[i], l->log_fd, l->log_fd);
		int st = 0;
		if (pid < 0)
			return false;
		if (!task_wait(&l->procs, pid, l->deadline, &st)) {
			task_end(&l->procs, pid, 1000);
			return life_fail(l, "timed out after %ld s in setup command %zu (%s)",
			                 l->t->timeout_s, i + 1, l->t->setup[i][0]);
		}
		char why[64];
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return life_fail(l, "setup command %zu (%s) %s: see setup.log", i + 1,
			                 l->t->setup[i][0], exit_text(st, why, sizeof(why)));
	}
	return true;
}

static bool enough_windows(os_display *d, void *arg)
{
	size_t *want = arg, n = 0;
	os_window *w = os_windows_list(d, &n);
	os_windows_free(w, n);
	if (n >= want[0])
		return true;
	want[1] = n;
	return false;
}

/* Waits until the apps show as many top-level windows as there are apps
 * (bounded): an agent that looks too early sees an empty screen. */
static void await_windows(struct life *l, size_t napps)
{
	size_t want[2] = {napps, 0};   /* how many, how many seen last */
	if (!await_display(l, APPS_WINDOWS_MS, enough_windows, want))
		dprintf(l->log_fd, "--- the apps show %zu of %zu windows after %d s: the agent "
		        "starts anyway\n", want[1], napps, APPS_WINDOWS_MS / 1000);
}

static bool start_apps(struct life *l)
{
	static const char *const names[] = {"app 1", "app 2", "app 3", "app 4", "app 5",
	                                    "app 6", "app 7", "app 8", "an app"};
	size_t n = 0;
	for (; l->t->apps != NULL && l->t->apps[n] != NULL; n++) {
		pid_t pid = start(l, l->t->apps[n], l->log_fd, l->log_fd);
		if (pid < 0)
			return false;
		task_watch(&l->procs, pid, names[n < 8 ? n : 8]);
	}
	if (n > 0)
		await_windows(l, n);
	return true;
}

/* The agent's command line: the batch's agent options, then what the
 * batch owns (so they win). Ownership: batch_strings_free. */
static char **agent_argv(struct life *l, char *conv, char *audit, char *steps)
{
	size_t n = (size_t)l->run->nagent_args;
	char **v = calloc(n + 24, sizeof(*v));
	if (v == NULL)
		return NULL;
	size_t o = 0;
	v[o++] = strdup(l->run->self);
	for (size_t i = 0; i < n; i++)
		v[o++] = batch_expand(l->run->agent_args[i], l->t->id, l->run->tasks_dir, l->ws);
	const char *own[] = {"--os", "--json", "--display-backend", "x11", "--workspace", l->ws,
	                     "--conversation", conv, "--audit", audit};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		v[o++] = strdup(own[i]);
	if (l->run->config != NULL) {
		v[o++] = strdup("--config");
		v[o++] = strdup(l->run->config);
	}
	if (l->t->max_steps > 0) {
		v[o++] = strdup("--max-steps");
		v[o++] = strdup(steps);
	}
	if (l->run->console) {
		v[o++] = strdup("--console");
		v[o++] = strdup("127.0.0.1:0");
	}
	v[o++] = strdup("-m");
	v[o++] = strdup(l->t->instruction);
	for (size_t i = 0; i < o; i++)
		if (v[i] == NULL) {
			for (size_t k = 0; k < o; k++)
				free(v[k]);
			free(v);
			return NULL;
		}
	return v;
}

/* The console's approver link, from the agent's first notices, to
 * DIR/ID/console.url (0600: the link is the key). */
static void console_link(struct life *l, pid_t agent)
{
	char path[PATH_MAX], url[PATH_MAX];
	in_dir(l, "agent.jsonl", path);
	int64_t until = base_now_ns() + 15 * TASK_NS_PER_S;
	for (; base_now_ns() < until; base_sleep_ms(50, NULL)) {
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)agent, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == agent)
			return;
		size_t len = 0;
		char *text = base_read_file(path, 1 << 20, &len);
		const char *at = text ? strstr(text, "console (approver, one use): ") : NULL;
		if (at != NULL && sscanf(at + 29, "%4095[^\"\\ \n]", url) == 1) {
			in_dir(l, "console.url", path);
			char line[PATH_MAX + 2];
			int n = snprintf(line, sizeof(line), "%s\n", url);
			base_atomic_replace(path, line, (size_t)n, 0600);
			free(text);
			return;
		}
		free(text);
	}
}

static bool run_agent(struct life *l)
{
	char conv[PATH_MAX], audit[PATH_MAX], steps[24];
	in_dir(l, "conversation.json", conv);
	in_dir(l, "audit.jsonl", audit);
	snprintf(steps, sizeof(steps), "%ld", l->t->max_steps);
	char **argv = agent_argv(l, conv, audit, steps);
	char **env = task_env(l->secrets);
	int out = open_log(l, "agent.jsonl"), err = open_log(l, "agent.err");
	pid_t pid = -1;
	if (argv != NULL && env != NULL && out >= 0 && err >= 0)
		pid = task_spawn(argv, env, l->ws, out, err, false);
	if (pid < 0)
		life_fail(l, "cannot start the agent: %s", strerror(errno));
	batch_strings_free(argv);
	free(env);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	if (pid < 0)
		return false;
	if (l->run->console)
		console_link(l, pid);
	int st = 0;
	if (!task_wait(&l->procs, pid, l->deadline, &st)) {
		st = task_end(&l->procs, pid, AGENT_GRACE_MS);
		return life_fail(l, "timed out after %ld s: the agent was ended", l->t->timeout_s);
	}
	l->agent_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return true;
}

static void run_check(struct life *l)
{
	char code[16];
	snprintf(code, sizeof(code), "%d", l->agent_exit);
	if (!put_var(l, "DESKHAND_AGENT_EXIT", code)) {
		life_fail(l, "the check's environment: %s", strerror(errno));
		return;
	}
	free(l->cmd_env);
	int out = open_log(l, "check.out");
	if ((l->cmd_env = task_env(l->vars)) == NULL || out < 0) {
		life_fail(l, "cannot start the check: %s", strerror(errno));
		if (out >= 0)
			close(out);
		return;
	}
	pid_t pid = start(l, l->t->check, out, out);
	close(out);
	int st = 0;
	if (pid < 0)
		return;
	if (!task_wait(&l->procs, pid, base_now_ns() + BATCH_CHECK_TIMEOUT_S * TASK_NS_PER_S, &st)) {
		task_end(&l->procs, pid, 1000);
		life_fail(l, "the check did not end within %d s", BATCH_CHECK_TIMEOUT_S);
		return;
	}
	l->check_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void write_outcome(struct life *l)
{
	cJSON *o = cJSON_CreateObject();
	if (l->agent_exit >= 0)
		cJSON_AddNumberToObject(o, "agent_exit", l->agent_exit);
	else
		cJSON_AddNullToObject(o, "agent_exit");
	if (l->check_exit >= 0)
		cJSON_AddNumberToObject(o, "check_exit", l->check_exit);
	else
		cJSON_AddNullToObject(o, "check_exit");
	if (l->error[0] != '\0')
		cJSON_AddStringToObject(o, "error", l->error);
	else
		cJSON_AddNullToObject(o, "error");
	if (l->procs.died != NULL)
		cJSON_AddStringToObject(o, "ended_early", l->procs.died);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char path[PATH_MAX];
	in_dir(l, "outcome.json", path);
	if (s != NULL)
		base_atomic_replace(path, s, strlen(s), 0644);
	free(s);
}

int batch_task_live(const batch_run *run, const batch_task *t)
{
	struct life l = {.run = run, .t = t, .log_fd = -1, .agent_exit = -1, .check_exit = -1};
	l.deadline = base_now_ns() + (int64_t)t->timeout_s * TASK_NS_PER_S;
	if (!task_proc_init(&l.procs))
		life_fail(&l, "cannot watch the task's processes: %s", strerror(errno));
	else if (prepare(&l) && desktop(&l) && start_wm(&l) && run_setup(&l) &&
	         start_apps(&l) && run_agent(&l))
		run_check(&l);
	write_outcome(&l);
	free(l.cmd_env);
	batch_strings_free(l.secrets);
	for (size_t i = 0; i < l.nvars; i++)
		free(l.vars[i]);
	return 0;
}
