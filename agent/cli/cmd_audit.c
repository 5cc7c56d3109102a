/*
 * deskhand audit verify: checks audit logs against their hash chain, their
 * head file and the rule that nothing ran without a yes.
 *
 * Exit status: 0 every log verifies, 1 a log fails (each problem printed
 * as "FILE: line N: problem"), 2 bad arguments or a log that could not be
 * read and nothing failing, 3 a log verifies up to an end a crash leaves
 * (one line past its head: see agent_audit_verify_head) and nothing worse.
 * A failing log outranks a crashed one, which outranks an unreadable one:
 * what was found matters more than what could not be looked at.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "agent/safety/safety.h"

enum { AUDIT_OK = 0, AUDIT_FAILS = 1, AUDIT_ERROR = 2, AUDIT_CRASHED = 3 };

/* One log: prints its verdict; returns its exit status. */
static int verify_one(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		cli_error("audit verify: %s: %s", path, strerror(errno));
		return AUDIT_ERROR;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_error("audit verify: %s: not a regular file", path);
		return AUDIT_ERROR;
	}
	if (access(path, R_OK) != 0) {
		cli_error("audit verify: %s: %s", path, strerror(errno));
		return AUDIT_ERROR;
	}
	agent_audit_report rep;
	if (agent_audit_verify_file(path, &rep)) {
		printf("%s: ok: %zu lines, %zu executed (%zu approved by you, %zu by the policy)\n",
		       path, rep.lines, rep.executed, rep.by_user, rep.by_policy);
		return AUDIT_OK;
	}
	if (rep.bad_line > 0)
		printf("%s: line %d: %s\n", path, rep.bad_line, rep.problem);
	else
		printf("%s: %s\n", path, rep.problem);
	return rep.unconfirmed > 0 ? AUDIT_CRASHED : AUDIT_FAILS;
}

static int rank(int status)
{
	switch (status) {
	case AUDIT_FAILS: return 3;
	case AUDIT_CRASHED: return 2;
	case AUDIT_ERROR: return 1;
	default: return 0;
	}
}

static int worse(int a, int b)
{
	return rank(a) >= rank(b) ? a : b;
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_log_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* Every log in the default directory, in name order. */
static int verify_default_dir(void)
{
	char *dir = agent_audit_default_dir();
	if (dir == NULL) {
		cli_error("audit verify: %s", agent_audit_error());
		return AUDIT_ERROR;
	}
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, NULL);
	if (n < 0) {
		int e = errno;
		if (e == ENOENT)
			printf("no audit logs in %s\n", dir);
		else
			cli_error("audit verify: %s: %s", dir, strerror(e));
		free(dir);
		return e == ENOENT ? AUDIT_OK : AUDIT_ERROR;
	}
	char **paths = calloc((size_t)n + 1, sizeof(*paths));
	int status = paths != NULL ? AUDIT_OK : AUDIT_ERROR;
	size_t count = 0;
	for (int i = 0; i < n; i++) {
		if (paths != NULL && is_log_name(names[i]->d_name) &&
		    asprintf(&paths[count], "%s/%s", dir, names[i]->d_name) >= 0)
			count++;
		free(names[i]);
	}
	free(names);
	if (paths != NULL)
		qsort(paths, count, sizeof(*paths), name_order);
	if (paths != NULL && count == 0)
		printf("no audit logs in %s\n", dir);
	for (size_t i = 0; i < count; i++) {
		status = worse(status, verify_one(paths[i]));
		free(paths[i]);
	}
	if (paths == NULL)
		cli_error("audit verify: out of memory");
	free(paths);
	free(dir);
	return status;
}

int cmd_audit(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("audit", "audit: what to do? (verify)");
	if (strcmp(argv[1], "verify") != 0)
		return cli_usage_error("audit", "audit: unknown action '%s' (verify)", argv[1]);
	int first = 2;
	if (first < argc && strcmp(argv[first], "--") == 0)
		first++;
	else
		for (int i = first; i < argc; i++)
			if (argv[i][0] == '-' && argv[i][1] != '\0')
				return cli_usage_error("audit", "audit verify: unknown option '%s'", argv[i]);
	if (first == argc)
		return verify_default_dir();
	int status = AUDIT_OK;
	for (int i = first; i < argc; i++)
		status = worse(status, verify_one(argv[i]));
	return status;
}
