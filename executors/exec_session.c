/*
 * executors/exec — a session's life: its process tree, started, ended and
 * destroyed. One block's run is exec_run.c, the processes inside the
 * namespaces exec_supervisor.c, what /proc tells of them exec_proc.c.
 *
 * Processes of one session:
 *
 *   deskhand ──clone(namespaces)──> supervisor ──fork──> interpreter ──> code's children
 *
 * The supervisor is the first process of the session's namespaces (pid 1
 * of its pid namespace; under `off` a child subreaper). It reaps orphans,
 * relays an interrupt as SIGINT to the interpreter and the processes the
 * block started in its process group (see interrupt_block in
 * exec_supervisor.c), reports
 * the interpreter's exit, and by exiting takes every process of the session
 * with it (the kernel kills a pid namespace whose init dies; under `off` it
 * kills its descendants one generation after another). It never execs: it
 * is a copy of deskhand running only the async-signal-safe code of
 * exec_supervisor.c and exec_proc.c's readers, made non-dumpable so the code cannot read its memory.
 *
 * Descriptors (all others are closed in both children):
 *   supervisor: 0-2 /dev/null, 3 control socket to deskhand, 4-7 the
 *               interpreter's ends of the pipes (until it is forked)
 *   interpreter: 0 /dev/null, 1 stdout pipe, 2 stderr pipe, 3 blocks in,
 *               4 end-of-block reports out
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/exec-internal.h"
#include "executors/sandbox-internal.h"

extern char **environ;

#define READY_TIMEOUT_MS 30000  /* from clone to a successful execve */

unsigned long long exec_boot_ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long tick_ns = 1000000000ull / (unsigned long long)(hz > 0 ? hz : 100);
	return ((unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec) /
	       tick_ns;
}

void exec_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void exec_config_init(exec_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sandbox = SANDBOX_STANDARD;
	cfg->timeout_ms = EXEC_DEFAULT_TIMEOUT_MS;
	cfg->max_output = EXEC_DEFAULT_MAX_OUTPUT;
}

void exec_result_finish(exec_result *res)
{
	if (res == NULL)
		return;
	free(res->output);
	memset(res, 0, sizeof(*res));
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Stops every process of the session and reaps its supervisor; the
 * descriptors stay open so that what was written can still be read. */
void exec_session_terminate(exec_session *s)
{
	if (!s->alive || s->sup_pid <= 0)
		return;
	if (s->profile == SANDBOX_OFF) {
		/* The supervisor hunts down the descendants itself. */
		struct sup_cmd k = {'K', 0};
		send(s->sup_fd, &k, sizeof(k), MSG_NOSIGNAL);
		struct pollfd p = {s->sup_pidfd, POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, 3000);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			kill(s->sup_pid, SIGKILL);
	} else {
		/* pid 1 of the namespace: the kernel kills the rest with it. */
		kill(s->sup_pid, SIGKILL);
	}
	int status;
	while (waitpid(s->sup_pid, &status, 0) < 0 && errno == EINTR)
		;
	s->sup_pid = 0;
}

void exec_session_kill(exec_session *s)
{
	if (!s->alive)
		return;
	exec_session_terminate(s);
	exec_close_fd(&s->sup_pidfd);
	exec_close_fd(&s->sup_fd);
	exec_close_fd(&s->code_fd);
	exec_close_fd(&s->ctl_fd);
	exec_close_fd(&s->out_fd);
	exec_close_fd(&s->err_fd);
	exec_forget_interpreter(s);
	s->alive = false;
}

/* The session's pipes and socket: [0] the reading end, [1] the writing end
 * (for sup, [0] deskhand's end, [1] the supervisor's). */
struct session_pipes {
	int code[2], ctl[2], out[2], err[2], sup[2];
};

static bool open_pipes(struct session_pipes *sp)
{
	if (pipe2(sp->code, O_CLOEXEC) != 0 || pipe2(sp->ctl, O_CLOEXEC) != 0 ||
	    pipe2(sp->out, O_CLOEXEC) != 0 || pipe2(sp->err, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp->sup) != 0)
		return exec_fail("cannot create the session's pipes: %s", strerror(errno));
	return true;
}

static void close_pipes(struct session_pipes *sp)
{
	for (int i = 0; i < 2; i++) {
		exec_close_fd(&sp->code[i]);
		exec_close_fd(&sp->ctl[i]);
		exec_close_fd(&sp->out[i]);
		exec_close_fd(&sp->err[i]);
		exec_close_fd(&sp->sup[i]);
	}
}

/* Keeps deskhand's ends of the pipes, closing the supervisor's; false (the
 * session killed) when the supervisor cannot be watched through a pidfd. */
static bool adopt_supervisor(exec_session *s, pid_t pid, struct session_pipes *sp)
{
	exec_close_fd(&sp->code[0]);
	exec_close_fd(&sp->ctl[1]);
	exec_close_fd(&sp->out[1]);
	exec_close_fd(&sp->err[1]);
	exec_close_fd(&sp->sup[1]);
	s->sup_pid = pid;
	s->sup_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->sup_fd = sp->sup[0];
	s->code_fd = sp->code[1];
	s->ctl_fd = sp->ctl[0];
	s->out_fd = sp->out[0];
	s->err_fd = sp->err[0];
	s->alive = true;
	if (s->sup_pidfd < 0) {
		exec_fail("pidfd_open: %s (Linux 5.3 or newer is needed)", strerror(errno));
		exec_session_kill(s);
		return false;
	}
	set_nonblock(s->code_fd);
	/* One page: full while a token waits (see exec_poke_driver). */
	if (fcntl(s->code_fd, F_SETPIPE_SZ, 4096) < 0) {
		exec_fail("cannot size the blocks pipe: %s", strerror(errno));
		exec_session_kill(s);
		return false;
	}
	set_nonblock(s->ctl_fd);
	set_nonblock(s->out_fd);
	set_nonblock(s->err_fd);
	set_nonblock(s->sup_fd);
	return true;
}

/* Records why the supervisor could not start the interpreter ('E'). */
static void setup_failed(const exec_session *s, struct sup_msg *m)
{
	m->step[sizeof(m->step) - 1] = '\0';
	if (s->profile == SANDBOX_OFF)
		exec_fail("cannot start %s: %s: %s", s->interp, m->step, strerror(m->err));
	else
		exec_fail("the %s sandbox could not be set up (%s: %s); it never runs "
		          "weaker than promised — `deskhand doctor` lists what this "
		          "machine supports", sandbox_profile_name(s->profile), m->step,
		          strerror(m->err));
}

/* Waits until `deadline` for the supervisor's word that the interpreter
 * runs; false with exec_error() otherwise. */
static bool await_interpreter(exec_session *s, long long deadline)
{
	for (;;) {
		long long left = deadline - base_now_ms();
		if (left <= 0)
			return exec_fail("the %s interpreter did not start within %d s",
			                 exec_lang_name(s->lang), READY_TIMEOUT_MS / 1000);
		struct pollfd p[2] = {{s->sup_fd, POLLIN, 0}, {s->sup_pidfd, POLLIN, 0}};
		int r = poll(p, 2, (int)left);
		if (r < 0 && errno != EINTR)
			return exec_fail("poll: %s", strerror(errno));
		struct sup_msg m;
		ssize_t n = recv(s->sup_fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(m) && m.kind == 'R')
			return true;
		if (n == (ssize_t)sizeof(m) && m.kind == 'E') {
			setup_failed(s, &m);
			return false;
		}
		if (n == 0 || (p[1].revents & POLLIN))
			return exec_fail("the session's supervisor ended before the interpreter "
			                 "started");
	}
}

bool exec_session_start(exec_session *s)
{
	struct session_pipes sp = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
	if (!open_pipes(&sp)) {
		close_pipes(&sp);
		return false;
	}
	pid_t pid = sandbox_raw_clone(sandbox_plan_clone_flags(s->plan));
	if (pid < 0) {
		int err = errno;
		exec_fail("cannot start the %s sandbox: creating its namespaces failed: %s%s",
		          sandbox_profile_name(s->profile), strerror(err),
		          err == EPERM || err == ENOSPC ?
		          " (are unprivileged user namespaces disabled? `deskhand doctor` tells)" : "");
		close_pipes(&sp);
		return false;
	}
	if (pid == 0)
		exec_supervisor_main(s, sp.sup[1], sp.code[0], sp.ctl[1], sp.out[1], sp.err[1]);
	if (!adopt_supervisor(s, pid, &sp))
		return false;
	long long deadline = base_now_ms() + READY_TIMEOUT_MS;
	if (!await_interpreter(s, deadline)) {
		exec_session_kill(s);
		return false;
	}
	s->started = true;
	s->oom_kills = exec_oom_kills();
	exec_note_interpreter(s, deadline);
	return true;
}

/* Code granted the display finds programs only where no code could have
 * put one (exec_trusted_path): `ls` in its text is the system's ls. */
static bool trust_path(char **envp)
{
	for (char **e = envp; *e != NULL; e++) {
		if (strncmp(*e, "PATH=", 5) != 0)
			continue;
		char *dirs = exec_trusted_path(*e + 5);
		char *entry = dirs != NULL ? malloc(strlen(dirs) + 6) : NULL;
		if (entry == NULL) {
			free(dirs);
			return false;
		}
		memcpy(entry, "PATH=", 5);
		memcpy(entry + 5, dirs, strlen(dirs) + 1);
		free(dirs);
		free(*e);
		*e = entry;
	}
	return true;
}

void exec_session_destroy(exec_session *s)
{
	if (s == NULL)
		return;
	exec_session_kill(s);
	if (s->own_intr) {
		exec_close_fd(&s->intr_r);
		exec_close_fd(&s->intr_w);
	}
	sandbox_plan_destroy(s->plan);
	sandbox_env_destroy(s->envp);
	free(s->interp);
	free(s->workspace);
	free(s);
}

/* A session not yet started, with the settings of cfg. Ownership: the
 * caller destroys it (exec_session_destroy). */
static exec_session *session_alloc(exec_lang lang, bool display, const exec_config *cfg,
                                   int intr_r, int intr_w)
{
	exec_session *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return exec_fail("out of memory"), NULL;
	s->sup_pidfd = s->sup_fd = s->code_fd = s->ctl_fd = s->out_fd = s->err_fd = -1;
	s->syscall_fd = s->task_fd = s->sup_children_fd = -1;
	s->intr_r = intr_r;
	s->intr_w = intr_w;
	s->lang = lang;
	s->display = display;
	s->profile = cfg->sandbox;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : EXEC_DEFAULT_TIMEOUT_MS;
	s->max_output = cfg->max_output ? cfg->max_output : EXEC_DEFAULT_MAX_OUTPUT;
	s->watch = cfg->watch;
	s->watch_user = cfg->watch_user;
	s->uid = geteuid();
	s->gid = getegid();
	return s;
}

/* The workspace's real path (NULL: the current directory). */
static bool resolve_workspace(exec_session *s, const char *ws)
{
	char cwd[PATH_MAX];
	if (ws == NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return exec_fail("cannot read the current directory: %s", strerror(errno));
		ws = cwd;
	}
	s->workspace = realpath(ws, NULL);
	if (s->workspace == NULL)
		return exec_fail("workspace %s: %s", ws, strerror(errno));
	return true;
}

/* The interpreter, its arguments and environment, from `base`. */
static bool prepare_interpreter(exec_session *s, char *const *base)
{
	/* A Wayland session may have no X server at all (no XWayland). */
	if (s->display && sandbox_env_get(base, "DISPLAY") == NULL &&
	    sandbox_env_get(base, "WAYLAND_DISPLAY") == NULL)
		return exec_fail("the display was granted, but neither DISPLAY nor "
		                 "WAYLAND_DISPLAY is set");
	s->interp = exec_interpreter_find(s->lang, sandbox_env_get(base, "PATH"), s->display);
	if (s->interp == NULL)
		return false;
	exec_interpreter_argv(s->lang, s->interp, s->display, s->argv);
	s->envp = sandbox_env_create(s->profile, s->display, base, s->workspace);
	if (s->envp == NULL)
		return exec_fail("%s", sandbox_error());
	if (s->display && !trust_path(s->envp))
		return exec_fail("out of memory");
	return true;
}

/* The sandbox's plan, with the paths code must not see hidden. */
static bool prepare_plan(exec_session *s, char *const *base, const exec_config *cfg)
{
	s->plan = sandbox_plan_create(s->profile, s->display, s->workspace, base, cfg->limits);
	if (s->plan == NULL)
		return exec_fail("%s", sandbox_error());
	for (const char *const *h = cfg->hidden; h != NULL && *h != NULL; h++)
		if (!sandbox_plan_hide(s->plan, *h))
			return exec_fail("%s", sandbox_error());
	return true;
}

/* A session alone has its own interrupt pipe; a set's share the set's. */
static bool own_interrupt_pipe(exec_session *s)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return exec_fail("pipe: %s", strerror(errno));
	s->intr_r = p[0];
	s->intr_w = p[1];
	s->own_intr = true;
	return true;
}

exec_session *exec_session_new(exec_lang lang, bool display, const exec_config *cfg,
                               int intr_r, int intr_w)
{
	exec_config def;
	if (cfg == NULL) {
		exec_config_init(&def);
		cfg = &def;
	}
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language"), NULL;
	exec_session *s = session_alloc(lang, display, cfg, intr_r, intr_w);
	if (s == NULL)
		return NULL;
	char *const *base = cfg->environ ? cfg->environ : environ;
	if (resolve_workspace(s, cfg->workspace) && prepare_interpreter(s, base) &&
	    prepare_plan(s, base, cfg) && (intr_r >= 0 || own_interrupt_pipe(s)) &&
	    exec_session_start(s))
		return s;
	exec_session_destroy(s);
	return NULL;
}

exec_session *exec_session_create(exec_lang lang, bool display, const exec_config *cfg)
{
	return exec_session_new(lang, display, cfg, -1, -1);
}

const char *exec_session_interpreter(const exec_session *s)
{
	return s->interp;
}

void exec_poke_interrupt(int fd)
{
	int saved = errno;
	char c = 'I';
	if (fd >= 0 && write(fd, &c, 1) < 0)
		errno = saved;
	errno = saved;
}

void exec_session_interrupt(exec_session *s)
{
	if (s != NULL)
		exec_poke_interrupt(s->intr_w);
}
