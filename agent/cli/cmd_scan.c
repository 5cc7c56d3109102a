/*
 * deskhand scan: the code scanner on a file or standard input.
 *
 * Exit status (its own convention, like grep's): 0 no findings, 1 findings,
 * 2 error (bad arguments, unreadable input, unknown language, bad rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent/cli/cli.h"
#include "agent/safety/safety.h"
#include "agent/util/textutil.h"
#include "base/base.h"

enum { SCAN_CLEAN = 0, SCAN_FOUND = 1, SCAN_ERROR = 2 };

/* Reads all of fd, refusing more than AGENT_SCAN_MAX_INPUT bytes. */
static char *read_all(int fd, const char *name, size_t *out_len)
{
	char *text = base_read_fd(fd, AGENT_SCAN_MAX_INPUT, out_len);
	if (text == NULL && errno == EFBIG)
		cli_error("scan: %s: input too large (the limit is %u MiB)", name,
		          AGENT_SCAN_MAX_INPUT >> 20);
	else if (text == NULL)
		cli_error("scan: %s: %s", name, strerror(errno));
	return text;
}

static int print_json(const char *file, agent_scan_lang lang, const agent_scan_result *res)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_CreateArray();
	if (o == NULL || arr == NULL) {
		cJSON_Delete(o);
		cJSON_Delete(arr);
		cli_error("scan: out of memory");
		return SCAN_ERROR;
	}
	cJSON_AddStringToObject(o, "file", file);
	cJSON_AddStringToObject(o, "language", agent_scan_lang_name(lang));
	cJSON_AddItemToObject(o, "findings", arr);
	for (size_t i = 0; i < res->count; i++) {
		const agent_scan_finding *f = &res->findings[i];
		cJSON *fo = cJSON_CreateObject();
		if (fo == NULL)
			break;
		cJSON_AddItemToArray(arr, fo);
		cJSON_AddNumberToObject(fo, "line", f->line);
		cJSON_AddStringToObject(fo, "severity", agent_scan_severity_name(f->severity));
		cJSON_AddStringToObject(fo, "rule", f->rule_id);
		cJSON_AddStringToObject(fo, "message", f->message);
		cJSON_AddStringToObject(fo, "excerpt", f->excerpt);
	}
	cJSON_AddStringToObject(o, "worst", agent_scan_severity_name(res->worst));
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL) {
		cli_error("scan: out of memory");
		return SCAN_ERROR;
	}
	puts(text);
	free(text);
	return SCAN_CLEAN;
}

struct scan_args {
	const char *lang_name, *rules_path, *file;
	bool json, check, user_rules, normalized;
};

/* Reads the flags into `a`. Returns -1 when they are good, else the exit status. */
static int scan_options(int argc, char **argv, struct scan_args *a)
{
	a->user_rules = true;
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (strcmp(f, "--json") == 0) {
			a->json = true;
		} else if (strcmp(f, "--check-rules") == 0) {
			a->check = true;
		} else if (strcmp(f, "--no-user-rules") == 0) {
			a->user_rules = false;
		} else if (strcmp(f, "--normalized") == 0) {
			a->normalized = true;
		} else if (strcmp(f, "--lang") == 0 || strcmp(f, "--rules") == 0) {
			if (i + 1 >= argc)
				return cli_usage_error("scan", "scan: %s needs a value", f);
			*(strcmp(f, "--lang") == 0 ? &a->lang_name : &a->rules_path) = argv[++i];
		} else if (strcmp(f, "--") == 0) {
			if (!(i + 1 < argc && a->file == NULL && i + 2 == argc))
				return cli_usage_error("scan", "scan: expected one FILE after --");
			a->file = argv[++i];
		} else if (f[0] == '-' && f[1] != '\0') {
			return cli_usage_error("scan", "scan: unknown option '%s'", f);
		} else if (a->file == NULL) {
			a->file = f;
		} else {
			return cli_usage_error("scan", "scan: only one FILE, got '%s' too", f);
		}
	}
	if (a->file == NULL && !a->check)
		return cli_usage_error("scan", "scan: name a FILE, or - for standard input");
	return -1;
}

/* The code to scan: the file, or standard input for "-". NULL: said why. */
static char *scan_input(const char *file, const char *name, size_t *len)
{
	if (strcmp(file, "-") == 0)
		return read_all(STDIN_FILENO, name, len);
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("scan: %s: %s", file, strerror(errno));
		return NULL;
	}
	char *code = read_all(fd, name, len);
	close(fd);
	return code;
}

/* Scans (or shows the normalised text of) the code; returns the exit status. */
static int scan_and_report(const struct scan_args *a, const agent_scan_rules *rules,
                           agent_scan_lang lang, const char *name, const char *code,
                           size_t len)
{
	if (a->normalized) {
		size_t nlen = 0;
		char *text = agent_scan_normalize(lang, code, len, &nlen);
		if (text == NULL) {
			cli_error("scan: %s", agent_scan_error());
			return SCAN_ERROR;
		}
		fwrite(text, 1, nlen, stdout);
		free(text);
		return SCAN_CLEAN;
	}
	agent_scan_result *res = agent_scan(rules, lang, code, len);
	if (res == NULL) {
		cli_error("scan: %s: %s", name, agent_scan_error());
		return SCAN_ERROR;
	}
	int status = res->count > 0 ? SCAN_FOUND : SCAN_CLEAN;
	if (a->json) {
		if (print_json(a->file, lang, res) != SCAN_CLEAN)
			status = SCAN_ERROR;
	} else {
		for (size_t i = 0; i < res->count; i++) {
			const agent_scan_finding *f = &res->findings[i];
			/* A user's rules file names and explains its own rules. */
			char *id = agent_show_dup(f->rule_id, 0);
			char *msg = agent_show_dup(f->message, 0);
			printf("%d:%s:%s: %s\n", f->line, agent_scan_severity_name(f->severity),
			       id ? id : "?", msg ? msg : "?");
			free(id);
			free(msg);
		}
	}
	agent_scan_result_destroy(res);
	return status;
}

int cmd_scan(int argc, char **argv)
{
	struct scan_args a;
	memset(&a, 0, sizeof(a));
	int status = scan_options(argc, argv, &a);
	if (status >= 0)
		return status;
	agent_scan_lang lang = AGENT_SCAN_SHELL;
	if (a.lang_name != NULL && !agent_scan_lang_parse(a.lang_name, &lang))
		return cli_usage_error("scan", "scan: unknown language '%s' (shell, python, javascript)",
		                       a.lang_name);
	agent_scan_rules *rules = agent_scan_rules_load(a.rules_path, a.user_rules);
	if (rules == NULL) {
		cli_error("scan: %s", agent_scan_error());
		return SCAN_ERROR;
	}
	status = SCAN_ERROR;
	char *code = NULL;
	if (a.check) {
		size_t n = 0;
		if (!agent_scan_rules_check_examples(rules, &n)) {
			cli_error("scan: %s", agent_scan_error());
			goto out;
		}
		printf("%zu rules, %zu examples pass (%s)\n", agent_scan_rules_count(rules), n,
		       agent_scan_rules_origin(rules));
		status = SCAN_CLEAN;
		if (a.file == NULL)
			goto out;
	}
	size_t len = 0;
	bool from_stdin = strcmp(a.file, "-") == 0;
	const char *name = from_stdin ? "standard input" : a.file;
	status = SCAN_ERROR;
	if ((code = scan_input(a.file, name, &len)) == NULL)
		goto out;
	if (a.lang_name == NULL &&
	    !agent_scan_lang_guess(from_stdin ? NULL : a.file, code, len, &lang)) {
		cli_error("scan: cannot tell the language of %s: use --lang shell|python|javascript", name);
		goto out;
	}
	status = scan_and_report(&a, rules, lang, name, code, len);
out:
	if (fflush(stdout) != 0 && status != SCAN_ERROR) {
		cli_error("scan: cannot write the output: %s", strerror(errno));
		status = SCAN_ERROR;
	}
	free(code);
	agent_scan_rules_destroy(rules);
	return status;
}
