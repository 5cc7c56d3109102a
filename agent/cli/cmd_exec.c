/*
 * deskhand exec: runs the code on standard input in one sandboxed
 * interpreter session and exits with the code's own status.
 *
 * Output is shown live as the model would keep it: the head streams as it
 * comes (each stream to its own descriptor, bytes untouched); past the
 * --max-output budget the display falls silent, and at the end the
 * "… N characters omitted …" note and the tail follow on stdout.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "executors/exec.h"

#define CODE_MAX (16u << 20)

static exec_session *running_session;

static void on_interrupt(int sig)
{
	(void)sig;
	exec_session_interrupt(running_session);
}

int cli_exec_parse(int argc, char **argv, cli_exec_args *out)
{
	memset(out, 0, sizeof(*out));
	out->sandbox = SANDBOX_STANDARD;
	out->timeout_s = EXEC_DEFAULT_TIMEOUT_MS / 1000;
	out->max_output = EXEC_DEFAULT_MAX_OUTPUT;
	const char *lang = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		long v;
		if (strcmp(a, "--sandbox") == 0) {
			if (!has_value)
				return cli_usage_error("exec", "--sandbox needs a profile");
			if (!sandbox_profile_from_name(argv[++i], &out->sandbox)) {
				char list[64];
				base_names_join(BASE_NAMES(sandbox_profile_names), ", ", NULL, list,
				                sizeof(list));
				return cli_usage_error("exec", "unknown sandbox profile '%s' (%s)", argv[i],
				                       list);
			}
		} else if (strcmp(a, "--timeout") == 0) {
			if (!has_value)
				return cli_usage_error("exec", "--timeout needs a number of seconds");
			if (!cli_parse_int(argv[++i], 1, 86400, "--timeout", &v))
				return cli_usage("exec");
			out->timeout_s = (unsigned)v;
		} else if (strcmp(a, "--max-output") == 0) {
			if (!has_value)
				return cli_usage_error("exec", "--max-output needs a number of characters");
			if (!cli_parse_int(argv[++i], 16, 100000000, "--max-output", &v))
				return cli_usage("exec");
			out->max_output = (size_t)v;
		} else if (strcmp(a, "--workspace") == 0) {
			if (!has_value || argv[i + 1][0] == '\0')
				return cli_usage_error("exec", "--workspace needs a directory");
			out->workspace = argv[++i];
		} else if (strcmp(a, "--display") == 0) {
			out->display = true;
		} else if (a[0] == '-' && a[1] != '\0') {
			return cli_usage_error("exec", "unknown option '%s'", a);
		} else if (lang == NULL) {
			lang = a;
		} else {
			return cli_usage_error("exec", "one language only (got '%s' after '%s')", a, lang);
		}
	}
	char langs[64];
	base_names_join(BASE_NAMES(exec_lang_names), ", ", NULL, langs, sizeof(langs));
	if (lang == NULL)
		return cli_usage_error("exec", "which language? (%s)", langs);
	if (!exec_lang_from_name(lang, &out->lang))
		return cli_usage_error("exec", "unknown language '%s' (%s)", lang, langs);
	return CLI_OK;
}

static void show_live(const char *chunk, size_t len, exec_stream stream, void *user)
{
	exec_output *view = user;
	size_t head = exec_output_feed(view, stream, chunk, len);
	/* A closed stdout must not stop the code: what cannot be written is dropped. */
	(void)base_write_all(stream == EXEC_STDERR ? 2 : 1, chunk, head);
}

static char *read_code(size_t *len)
{
	return base_read_fd(STDIN_FILENO, CODE_MAX, len);
}

int cmd_exec(int argc, char **argv)
{
	cli_exec_args a;
	int rc = cli_exec_parse(argc, argv, &a);
	if (rc != CLI_OK)
		return rc;
	size_t len = 0;
	char *code = read_code(&len);
	if (code == NULL) {
		cli_error("exec: cannot read the code from standard input: %s",
		          errno == EFBIG ? "more than 16 MiB" : strerror(errno));
		return CLI_FAIL;
	}
	if (memchr(code, '\0', len) != NULL) {
		cli_error("exec: the code contains a NUL byte; nothing was run");
		free(code);
		return CLI_FAIL;
	}

	/* deskhand's own directories stay out of the code's reach here too. */
	char own[2][PATH_MAX];
	const char *hidden[3] = {NULL, NULL, NULL};
	int n_hidden = 0;
	if (agent_own_dir(AGENT_DIR_CONFIG, own[0], sizeof(own[0])))
		hidden[n_hidden++] = own[0];
	if (agent_own_dir(AGENT_DIR_DATA, own[1], sizeof(own[1])))
		hidden[n_hidden++] = own[1];
	exec_config cfg;
	exec_config_init(&cfg);
	cfg.hidden = hidden;
	cfg.sandbox = a.sandbox;
	cfg.workspace = a.workspace;
	cfg.timeout_ms = a.timeout_s * 1000u;
	cfg.max_output = a.max_output;
	signal(SIGPIPE, SIG_IGN);
	exec_session *s = exec_session_create(a.lang, a.display, &cfg);
	if (s == NULL) {
		cli_error("exec: %s", exec_error());
		free(code);
		return CLI_FAIL;
	}
	exec_output *view = exec_output_create(a.max_output);
	if (view == NULL) {
		cli_error("exec: out of memory");
		exec_session_destroy(s);
		free(code);
		return CLI_FAIL;
	}
	running_session = s;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	exec_result res;
	bool ran = exec_session_run(s, code, len, show_live, view, &res);
	free(code);
	if (!ran) {
		cli_error("exec: %s", exec_error());
		rc = CLI_FAIL;
	} else {
		if (res.chars_omitted > 0)
			(void)base_write_all(1, res.output + res.output_head_len,
			                     res.output_len - res.output_head_len);
		if (res.message[0] != '\0')
			cli_error("%s", res.message);
		rc = res.status;
	}
	exec_result_finish(&res);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	running_session = NULL;
	exec_session_destroy(s);
	exec_output_destroy(view);
	return rc;
}
