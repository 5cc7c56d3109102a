/*
 * executors/exec — languages: names, the interpreters on PATH (with
 * version-manager shims resolved), and how each driver is started.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executors/exec-internal.h"

struct lang_info {
	const char *name;
	const char *programs[3];     /* looked up on PATH, in order */
	const char *query_flag;      /* asks a shim for the real binary */
	const char *query_code;
};

static const struct lang_info langs[EXEC_LANG_COUNT] = {
	[EXEC_PYTHON] = {"python", {"python3", NULL}, "-c",
	                 "import sys; sys.stdout.write(sys.executable)"},
	[EXEC_SHELL] = {"shell", {"bash", NULL}, NULL, NULL},
	[EXEC_JAVASCRIPT] = {"javascript", {"node", "nodejs", NULL}, "-e",
	                     "process.stdout.write(process.execPath)"},
	[EXEC_RUBY] = {"ruby", {"ruby", NULL}, "-e", "print RbConfig.ruby"},
	[EXEC_R] = {"r", {"Rscript", NULL}, NULL, NULL},
};

bool exec_lang_from_name(const char *name, exec_lang *out)
{
	for (int i = 0; i < EXEC_LANG_COUNT; i++) {
		if (name != NULL && strcmp(name, langs[i].name) == 0) {
			*out = (exec_lang)i;
			return true;
		}
	}
	return false;
}

const char *exec_lang_name(exec_lang lang)
{
	return (unsigned)lang < EXEC_LANG_COUNT ? langs[lang].name : "?";
}

const char *exec_lang_program(exec_lang lang)
{
	return (unsigned)lang < EXEC_LANG_COUNT ? langs[lang].programs[0] : "?";
}

void exec_interpreter_argv(exec_lang lang, const char *interpreter, char **argv)
{
	int n = 0;
	argv[n++] = (char *)interpreter;
	switch (lang) {
	case EXEC_PYTHON:
		/* -u: unbuffered stdout/stderr, so output streams live and lands
		 * before the end-of-block report. */
		argv[n++] = (char *)"-u";
		argv[n++] = (char *)"-c";
		argv[n++] = (char *)exec_driver_python;
		break;
	case EXEC_SHELL:
		argv[n++] = (char *)"--noprofile";
		argv[n++] = (char *)"--norc";
		argv[n++] = (char *)"-c";
		argv[n++] = (char *)exec_driver_shell;
		argv[n++] = (char *)"bash";
		break;
	case EXEC_JAVASCRIPT:
		argv[n++] = (char *)"-e";
		argv[n++] = (char *)exec_driver_javascript;
		break;
	case EXEC_RUBY:
		argv[n++] = (char *)"-e";
		argv[n++] = (char *)exec_driver_ruby;
		break;
	case EXEC_R:
		argv[n++] = (char *)"-e";
		argv[n++] = (char *)exec_driver_r;
		break;
	default:
		break;
	}
	argv[n] = NULL;
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool is_script(const char *path)
{
	char head[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, head, 2);
	close(fd);
	return n == 2 && head[0] == '#' && head[1] == '!';
}

/* Runs `prog flag code` and returns its stdout (trimmed), or NULL. Bounded
 * to 10 s; the child is killed and reaped whatever happens. */
static char *ask_real_binary(const char *prog, const char *flag, const char *code,
                             const char *cwd, char *const *env)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	char *argv[] = {(char *)prog, (char *)flag, (char *)code, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, prog, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		return NULL;
	}
	char buf[4096];
	size_t len = 0;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long elapsed = (now.tv_sec - start.tv_sec) * 1000 +
		               (now.tv_nsec - start.tv_nsec) / 1000000;
		if (elapsed >= 10000)
			break;
		struct pollfd pfd = {p[0], POLLIN, 0};
		int r = poll(&pfd, 1, (int)(10000 - elapsed));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1)
			break;
	}
	close(p[0]);
	kill(-pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	if (len == 0 || buf[0] != '/')
		return NULL;
	return strdup(buf);
}

/* Shim -> real binary, remembered for the life of the process. deskhand
 * drives sessions from one thread, so a plain table suffices. */
/*
 * The first executable `prog` in the directories of `path` (absolute ones
 * only: an empty or relative PATH entry means the current directory, and an
 * interpreter is never taken from there). Writes it to cand.
 */
static bool path_lookup(const char *path, const char *prog, char *cand, size_t len)
{
	for (const char *dir = path; *dir != '\0';) {
		const char *end = strchr(dir, ':');
		size_t dlen = end ? (size_t)(end - dir) : strlen(dir);
		if (dlen > 0 && dir[0] == '/' && dlen + strlen(prog) + 2 <= len) {
			memcpy(cand, dir, dlen);
			cand[dlen] = '/';
			strcpy(cand + dlen + 1, prog);
			if (is_executable_file(cand))
				return true;
		}
		dir += dlen;
		if (*dir == ':')
			dir++;
	}
	return false;
}

static const char *path_or_default(const char *path)
{
	return path != NULL && path[0] != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
}

bool exec_lang_installed(exec_lang lang)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return false;
	char cand[4096];
	for (int p = 0; langs[lang].programs[p] != NULL; p++)
		if (path_lookup(path_or_default(getenv("PATH")), langs[lang].programs[p], cand,
		                sizeof(cand)))
			return true;
	return false;
}

struct shim_entry {
	char *shim;
	char *real;
};
static struct shim_entry shim_cache[16];

char *exec_interpreter_find(exec_lang lang, const char *path, const char *cwd,
                            char *const *env)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language"), NULL;
	const struct lang_info *li = &langs[lang];
	path = path_or_default(path);
	char cand[4096];
	for (int p = 0; li->programs[p] != NULL; p++) {
		if (!path_lookup(path, li->programs[p], cand, sizeof(cand)))
			continue;
		if (li->query_flag == NULL || !is_script(cand))
			return strdup(cand);
		for (size_t i = 0; i < sizeof(shim_cache) / sizeof(shim_cache[0]); i++)
			if (shim_cache[i].shim && strcmp(shim_cache[i].shim, cand) == 0)
				return strdup(shim_cache[i].real);
		char *real = ask_real_binary(cand, li->query_flag, li->query_code, cwd, env);
		if (real == NULL || !is_executable_file(real)) {
			/* Not a shim we understand: run it as it is. */
			free(real);
			return strdup(cand);
		}
		for (size_t i = 0; i < sizeof(shim_cache) / sizeof(shim_cache[0]); i++) {
			if (shim_cache[i].shim == NULL) {
				shim_cache[i].shim = strdup(cand);
				shim_cache[i].real = strdup(real);
				if (!shim_cache[i].shim || !shim_cache[i].real) {
					free(shim_cache[i].shim);
					free(shim_cache[i].real);
					shim_cache[i].shim = shim_cache[i].real = NULL;
				}
				break;
			}
		}
		return real;
	}
	exec_fail("%s is not installed (no '%s' found on PATH)", li->name, li->programs[0]);
	return NULL;
}
