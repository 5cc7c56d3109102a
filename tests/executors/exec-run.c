/*
 * exec-run — drives executors/exec.h for the integration tests: runs each
 * block given on the command line in the conversation's set of sessions
 * and prints everything the library reports, length-prefixed so that any
 * bytes survive:
 *
 *   exec-run [--sandbox P] [--timeout-ms N] [--max-output N] [--workspace D]
 *            [--data-bytes N] BLOCK...
 *   BLOCK = LANG[+display][!MS|!/TEXT]:CODE  or  wait:PATH
 *     wait:PATH  no block: waits (up to 60 s) until PATH exists, so code
 *             that signals through a file decides when the next block starts
 *     !MS     interrupt from SIGALRM after MS ms
 *     !/TEXT  interrupt (the same way) once the block's output holds TEXT:
 *             the code says when it is running, so no guess at the
 *             machine's speed is needed
 *
 *   chunk STREAM LEN\n BYTES\n                      for each streamed chunk
 *   result STATUS TIMED_OUT INTERRUPTED RESTARTED ENDED TOTAL OMITTED LEN\n OUTPUT\n
 *   message LEN\n TEXT\n
 *   error LEN\n TEXT\n                              when a block could not run
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "executors/exec.h"

static exec_sessions *set;

static void on_alarm(int sig)
{
	(void)sig;
	exec_sessions_interrupt(set);     /* the async-signal-safe path */
}

static void emit(const char *head, const char *data, size_t len)
{
	printf("%s %zu\n", head, len);
	fwrite(data, 1, len, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

static void arm(long ms)
{
	struct itimerval it;
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* The !/TEXT trigger: what has been seen of the block's output so far. */
static const char *trigger;
static char seen[4096];
static size_t n_seen;

static void on_chunk(const char *chunk, size_t len, exec_stream stream, void *user)
{
	(void)user;
	if (trigger != NULL) {
		size_t k = len < sizeof(seen) - 1 - n_seen ? len : sizeof(seen) - 1 - n_seen;
		memcpy(seen + n_seen, chunk, k);
		n_seen += k;
		seen[n_seen] = '\0';
		if (strstr(seen, trigger) != NULL) {
			trigger = NULL;
			arm(1);
		}
	}
	printf("chunk %d %zu\n", (int)stream, len);
	fwrite(chunk, 1, len, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	exec_config cfg;
	exec_config_init(&cfg);
	sandbox_limits limits;
	sandbox_limits_default(&limits);
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (i + 1 >= argc) {
			fprintf(stderr, "exec-run: %s needs a value\n", argv[i]);
			return 2;
		}
		if (strcmp(argv[i], "--sandbox") == 0) {
			if (!sandbox_profile_from_name(argv[i + 1], &cfg.sandbox))
				return 2;
		} else if (strcmp(argv[i], "--timeout-ms") == 0) {
			cfg.timeout_ms = (unsigned)strtoul(argv[i + 1], NULL, 10);
		} else if (strcmp(argv[i], "--max-output") == 0) {
			cfg.max_output = strtoul(argv[i + 1], NULL, 10);
		} else if (strcmp(argv[i], "--workspace") == 0) {
			cfg.workspace = argv[i + 1];
		} else if (strcmp(argv[i], "--data-bytes") == 0) {
			limits.data_bytes = strtoull(argv[i + 1], NULL, 10);
			cfg.limits = &limits;
		} else {
			fprintf(stderr, "exec-run: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	set = exec_sessions_create(&cfg);
	if (set == NULL) {
		fprintf(stderr, "exec-run: %s\n", exec_error());
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	for (; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		if (colon == NULL) {
			fprintf(stderr, "exec-run: block without LANG: %s\n", argv[i]);
			return 2;
		}
		*colon = '\0';
		if (strcmp(argv[i], "wait") == 0) {
			for (int k = 0; k < 6000 && access(colon + 1, F_OK) != 0; k++)
				usleep(10000);
			continue;
		}
		long alarm_ms = 0;
		char *bang = strchr(argv[i], '!');
		trigger = NULL;
		n_seen = 0;
		seen[0] = '\0';
		if (bang != NULL) {
			*bang = '\0';
			if (bang[1] == '/')
				trigger = bang + 2;
			else
				alarm_ms = strtol(bang + 1, NULL, 10);
		}
		bool display = false;
		char *plus = strchr(argv[i], '+');
		if (plus != NULL) {
			*plus = '\0';
			display = strcmp(plus + 1, "display") == 0;
		}
		exec_lang lang;
		if (!exec_lang_from_name(argv[i], &lang)) {
			fprintf(stderr, "exec-run: unknown language %s\n", argv[i]);
			return 2;
		}
		const char *code = colon + 1;
		arm(alarm_ms);
		exec_result res;
		bool ok = exec_sessions_run(set, lang, display, code, strlen(code), on_chunk, NULL,
		                            &res);
		arm(0);
		if (!ok) {
			emit("error", exec_error(), strlen(exec_error()));
			continue;
		}
		printf("result %d %d %d %d %d %zu %zu", res.status, res.timed_out, res.interrupted,
		       res.restarted, res.session_ended, res.chars_total, res.chars_omitted);
		emit("", res.output, res.output_len);
		emit("message", res.message, strlen(res.message));
		exec_result_finish(&res);
	}
	exec_sessions_destroy(set);
	return 0;
}
