/*
 * executors/exec — languages: names, the interpreters on PATH, and how each
 * driver is started.
 *
 * Nothing found on PATH is ever run outside the sandbox: a version
 * manager's shim (a script standing for python3) is started as it is,
 * inside the session's sandbox, where it finds the real interpreter itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "executors/exec-internal.h"
#include "executors/sandbox-internal.h"

const char *const exec_lang_names[EXEC_LANG_COUNT] = {
	[EXEC_PYTHON] = "python",
	[EXEC_SHELL] = "shell",
	[EXEC_JAVASCRIPT] = "javascript",
	[EXEC_RUBY] = "ruby",
	[EXEC_R] = "r",
};
BASE_NAME_FUNCTIONS(exec_lang, exec_lang_names, exec_lang_from_name, exec_lang_name, "?")

/* Each language's interpreters, looked up on PATH in this order. */
static const char *const programs[EXEC_LANG_COUNT][3] = {
	[EXEC_PYTHON] = {"python3", NULL},
	[EXEC_SHELL] = {"bash", NULL},
	[EXEC_JAVASCRIPT] = {"node", "nodejs", NULL},
	[EXEC_RUBY] = {"ruby", NULL},
	[EXEC_R] = {"Rscript", NULL},
};

const char *exec_lang_program(exec_lang lang)
{
	return (unsigned)lang < EXEC_LANG_COUNT ? programs[lang][0] : "?";
}

void exec_interpreter_argv(exec_lang lang, const char *interpreter, bool display,
                           char **argv)
{
	int n = 0;
	argv[n++] = (char *)interpreter;
	/* With the display granted only the code the human saw may run: nothing
	 * is imported from the workspace or the user's writable folders (a
	 * planted ast.py, a gem, an .Rprofile) unless that code asks for it. */
	switch (lang) {
	case EXEC_PYTHON:
		if (display)
			argv[n++] = (char *)"-I";   /* no script dir, user site, PYTHON* */
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
		if (display)
			argv[n++] = (char *)"--disable-gems";
		argv[n++] = (char *)"-e";
		argv[n++] = (char *)exec_driver_ruby;
		break;
	case EXEC_R:
		if (display)
			argv[n++] = (char *)"--vanilla";  /* no .Rprofile, .Renviron, .RData */
		argv[n++] = (char *)"-e";
		argv[n++] = (char *)exec_driver_r;
		break;
	default:
		break;
	}
	argv[n] = NULL;
}

/*
 * Whether the file or directory `path` is one that no code could have
 * changed: its real path lies in the system's directories (which the
 * sandbox keeps read-only, also for a deskhand run by root) and it and
 * every directory above it belong to root and are writable by nobody else.
 * ~/.pyenv/shims or a /usr/local/bin given to the user are not.
 */
/*
 * The uid root's files show with here: 0, or, in a user namespace that
 * does not map uid 0 (a batch task run by an ordinary user), the overflow
 * uid every unmapped owner shows as. Only system directories are asked
 * about, where nobody but root puts files.
 */
static uid_t root_seen_as(void)
{
	static int cached = -1;
	if (cached >= 0)
		return (uid_t)cached;
	cached = 0;
	char map[512], ov[32];
	ssize_t n = base_read_small(AT_FDCWD, "/proc/self/uid_map", map, sizeof(map));
	bool zero = n <= 0;
	for (char *l = n > 0 ? map : NULL; l != NULL && *l != '\0';) {
		unsigned long inner, outer, count;
		if (sscanf(l, "%lu %lu %lu", &inner, &outer, &count) == 3 && inner == 0 && count > 0)
			zero = true;
		l = strchr(l, '\n');
		l = l != NULL ? l + 1 : NULL;
	}
	if (!zero && base_read_small(AT_FDCWD, "/proc/sys/kernel/overflowuid", ov, sizeof(ov)) > 0)
		cached = atoi(ov);
	return (uid_t)cached;
}

bool exec_path_trusted(const char *path)
{
	char real[PATH_MAX];
	if (realpath(path, real) == NULL)
		return false;
	bool in_system = false;
	for (const char *const *d = sandbox_system_dirs; *d != NULL && !in_system; d++)
		in_system = sandbox_path_under(real, *d);
	if (!in_system)
		return false;
	size_t len = strlen(real);
	for (size_t i = 1; i <= len; i++) {
		if (real[i] != '/' && real[i] != '\0')
			continue;
		char c = real[i];
		real[i] = '\0';
		struct stat st;
		bool ok = lstat(real, &st) == 0 && (st.st_uid == 0 || st.st_uid == root_seen_as()) &&
		          (st.st_mode & 022) == 0;
		real[i] = c;
		if (!ok)
			return false;
	}
	return true;
}

/* The first executable `prog` in the directories of `path`, in trusted
 * directories only when `trusted`. Writes it to cand. */
static bool path_lookup(const char *path, const char *prog, bool trusted, char *cand,
                        size_t len)
{
	if (!trusted)
		return base_path_find(path, prog, cand, len);
	char dir[PATH_MAX];
	while (base_path_next(&path, dir, sizeof(dir))) {
		if (snprintf(cand, len, "%s/%s", dir, prog) >= (int)len)
			continue;
		if (base_executable_file(cand) && exec_path_trusted(cand))
			return true;
	}
	return false;
}

bool exec_lang_installed(exec_lang lang)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return false;
	char cand[4096];
	for (int p = 0; programs[lang][p] != NULL; p++)
		if (path_lookup(base_path_or_default(getenv("PATH")), programs[lang][p], false,
		                cand, sizeof(cand)))
			return true;
	return false;
}

char *exec_trusted_path(const char *path)
{
	path = base_path_or_default(path);
	char *out = calloc(1, strlen(path) + 1);
	if (out == NULL)
		return NULL;
	size_t n = 0;
	char dir[PATH_MAX];
	while (base_path_next(&path, dir, sizeof(dir))) {
		if (!exec_path_trusted(dir))
			continue;
		if (n > 0)
			out[n++] = ':';
		size_t dlen = strlen(dir);
		memcpy(out + n, dir, dlen + 1);
		n += dlen;
	}
	return out;
}

/* Resolutions of this process, by language and display grant: the first
 * is kept, so that what code does after deskhand started (a script planted
 * in a PATH folder) cannot change which program a later session starts. */
static char *resolved[EXEC_LANG_COUNT][2];

char *exec_interpreter_find(exec_lang lang, const char *path, bool display)
{
	if ((unsigned)lang >= EXEC_LANG_COUNT)
		return exec_fail("unknown language"), NULL;
	const char *const *progs = programs[lang];
	char **slot = &resolved[lang][display ? 1 : 0];
	if (*slot != NULL)
		return strdup(*slot);
	path = base_path_or_default(path);
	char cand[4096];
	for (int p = 0; progs[p] != NULL; p++) {
		if (!path_lookup(path, progs[p], display, cand, sizeof(cand)))
			continue;
		*slot = strdup(cand);
		return strdup(cand);
	}
	if (display && exec_lang_installed(lang))
		exec_fail("code granted the display runs only with an interpreter installed in "
		          "the system's directories (a file no code could have changed); the "
		          "'%s' on PATH is not one", progs[0]);
	else
		exec_fail("%s is not installed (no '%s' found on PATH)", exec_lang_name(lang), progs[0]);
	return NULL;
}

void exec_interpreters_resolve(const char *path)
{
	for (int l = 0; l < EXEC_LANG_COUNT; l++)
		for (int d = 0; d < 2; d++)
			free(exec_interpreter_find((exec_lang)l, path, d != 0));
}
