/*
 * bench/exec — what a warm session buys, and what the sandbox costs.
 *
 *   1. Round trip of `print(1)` in a warm python session (standard
 *      profile) against a fresh `python3 -c 'print(1)'` of the same
 *      interpreter: the ratio must stay at or below 0.1.
 *   2. Set-up cost per session: clone -> namespaces, mounts, limits,
 *      Landlock, seccomp -> execve of the interpreter, for each profile;
 *      the difference to `off` is the sandbox's own price.
 *   3. A new session's first block, end to end.
 *
 * Medians over many runs; one run prints everything.
 *   build/bench/exec-bench [ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executors/exec.h"

extern char **environ;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what)
{
	fprintf(stderr, "exec-bench: %s: %s\n", what, exec_error());
	exit(1);
}

static double fresh_python(const char *python)
{
	char *argv[] = {(char *)python, (char *)"-c", (char *)"print(1)", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	double t0 = now_us();
	pid_t pid;
	if (posix_spawn(&pid, python, &fa, NULL, argv, environ) != 0) {
		fprintf(stderr, "exec-bench: cannot run %s\n", python);
		exit(1);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	posix_spawn_file_actions_destroy(&fa);
	return now_us() - t0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	if (rounds < 5)
		rounds = 5;
	int fresh_rounds = rounds / 5 < 20 ? 20 : rounds / 5;
	int setup_rounds = 20;
	double *t = calloc((size_t)(rounds + fresh_rounds + setup_rounds) + 8, sizeof(double));
	exec_config cfg;
	exec_config_init(&cfg);
	exec_result res;

	/* 1. warm round trip vs a fresh interpreter */
	exec_session *s = exec_session_create(EXEC_PYTHON, false, &cfg);
	if (s == NULL)
		die("python session");
	for (int i = 0; i < 5; i++) {           /* warm up */
		if (!exec_session_run(s, "print(1)", 8, NULL, NULL, &res))
			die("run");
		exec_result_finish(&res);
	}
	for (int i = 0; i < rounds; i++) {
		double t0 = now_us();
		if (!exec_session_run(s, "print(1)", 8, NULL, NULL, &res))
			die("run");
		t[i] = now_us() - t0;
		if (res.status != 0 || strcmp(res.output, "1\n") != 0) {
			fprintf(stderr, "exec-bench: unexpected result %d '%s'\n", res.status,
			        res.output);
			return 1;
		}
		exec_result_finish(&res);
	}
	double warm = median(t, rounds);
	const char *python = exec_session_interpreter(s);
	for (int i = 0; i < fresh_rounds; i++)
		t[i] = fresh_python(python);
	double fresh = median(t, fresh_rounds);
	printf("python: %s\n", python);
	printf("warm session, print(1) round trip (standard) : %8.0f us  (median of %d)\n",
	       warm, rounds);
	printf("fresh python3 -c 'print(1)'                  : %8.0f us  (median of %d)\n",
	       fresh, fresh_rounds);
	printf("ratio warm / fresh                           : %8.3f  (goal <= 0.100)\n",
	       warm / fresh);
	exec_session_destroy(s);

	/* 2. set-up cost per session and 3. first block */
	double setup[3], setup_min[3], first[3];
	for (int p = SANDBOX_OFF; p <= SANDBOX_STRICT; p++) {
		cfg.sandbox = (sandbox_profile)p;
		for (int i = 0; i < setup_rounds; i++) {
			double t0 = now_us();
			exec_session *x = exec_session_create(EXEC_SHELL, false, &cfg);
			if (x == NULL)
				die(sandbox_profile_name((sandbox_profile)p));
			t[i] = now_us() - t0;
			exec_session_destroy(x);
		}
		setup[p] = median(t, setup_rounds);
		setup_min[p] = t[0];             /* sorted by median() */
		for (int i = 0; i < setup_rounds; i++) {
			double t0 = now_us();
			exec_session *x = exec_session_create(EXEC_PYTHON, false, &cfg);
			if (x == NULL || !exec_session_run(x, "print(1)", 8, NULL, NULL, &res))
				die("first block");
			t[i] = now_us() - t0;
			exec_result_finish(&res);
			exec_session_destroy(x);
		}
		first[p] = median(t, setup_rounds);
	}
	printf("\nsession set-up, clone to execve (median of %d, min in brackets):\n",
	       setup_rounds);
	printf("  %-9s %8.0f us [%5.0f]\n", "off", setup[SANDBOX_OFF], setup_min[SANDBOX_OFF]);
	for (int p = SANDBOX_STANDARD; p <= SANDBOX_STRICT; p++)
		printf("  %-9s %8.0f us [%5.0f]  sandbox: +%.0f us [+%.0f]\n",
		       sandbox_profile_name((sandbox_profile)p), setup[p], setup_min[p],
		       setup[p] - setup[SANDBOX_OFF], setup_min[p] - setup_min[SANDBOX_OFF]);
	printf("new python session + first print(1) (median of %d):\n", setup_rounds);
	for (int p = SANDBOX_OFF; p <= SANDBOX_STRICT; p++)
		printf("  %-9s %8.0f us\n", sandbox_profile_name((sandbox_profile)p), first[p]);
	free(t);
	return 0;
}
