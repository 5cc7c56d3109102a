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

enum { SCAN_CLEAN = 0, SCAN_FOUND = 1, SCAN_ERROR = 2 };

/* Reads all of fd, refusing more than AGENT_SCAN_MAX_INPUT bytes. */
static char *read_all(int fd, const char *name, size_t *out_len)
{
	char *text = agent_read_fd(fd, AGENT_SCAN_MAX_INPUT, out_len);
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

int cmd_scan(int argc, char **argv)
{
	const char *lang_name = NULL, *rules_path = NULL, *file = NULL;
	bool json = false, check = false, user_rules = true, normalized = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "--check-rules") == 0) {
			check = true;
		} else if (strcmp(a, "--no-user-rules") == 0) {
			user_rules = false;
		} else if (strcmp(a, "--normalized") == 0) {
			normalized = true;
		} else if (strcmp(a, "--lang") == 0 || strcmp(a, "--rules") == 0) {
			if (i + 1 >= argc)
				return cli_usage_error("scan", "scan: %s needs a value", a);
			if (strcmp(a, "--lang") == 0)
				lang_name = argv[++i];
			else
				rules_path = argv[++i];
		} else if (strcmp(a, "--") == 0) {
			if (i + 1 < argc && file == NULL && i + 2 == argc) {
				file = argv[++i];
			} else {
				return cli_usage_error("scan", "scan: expected one FILE after --");
			}
		} else if (a[0] == '-' && a[1] != '\0') {
			return cli_usage_error("scan", "scan: unknown option '%s'", a);
		} else if (file == NULL) {
			file = a;
		} else {
			return cli_usage_error("scan", "scan: only one FILE, got '%s' too", a);
		}
	}
	if (file == NULL && !check)
		return cli_usage_error("scan", "scan: name a FILE, or - for standard input");

	agent_scan_lang lang = AGENT_SCAN_SHELL;
	if (lang_name != NULL && !agent_scan_lang_parse(lang_name, &lang))
		return cli_usage_error("scan", "scan: unknown language '%s' (shell, python, javascript)",
		                       lang_name);

	agent_scan_rules *rules = agent_scan_rules_load(rules_path, user_rules);
	if (rules == NULL) {
		cli_error("scan: %s", agent_scan_error());
		return SCAN_ERROR;
	}
	int status = SCAN_ERROR;
	char *code = NULL;
	agent_scan_result *res = NULL;

	if (check) {
		size_t n = 0;
		if (!agent_scan_rules_check_examples(rules, &n)) {
			cli_error("scan: %s", agent_scan_error());
			goto out;
		}
		printf("%zu rules, %zu examples pass (%s)\n", agent_scan_rules_count(rules), n,
		       agent_scan_rules_origin(rules));
		status = SCAN_CLEAN;
		if (file == NULL)
			goto out;
	}

	size_t len = 0;
	const char *name = strcmp(file, "-") == 0 ? "standard input" : file;
	if (strcmp(file, "-") == 0) {
		code = read_all(STDIN_FILENO, name, &len);
	} else {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("scan: %s: %s", file, strerror(errno));
			status = SCAN_ERROR;
			goto out;
		}
		code = read_all(fd, name, &len);
		close(fd);
	}
	if (code == NULL) {
		status = SCAN_ERROR;
		goto out;
	}
	if (lang_name == NULL &&
	    !agent_scan_lang_guess(strcmp(file, "-") == 0 ? NULL : file, code, len, &lang)) {
		cli_error("scan: cannot tell the language of %s: use --lang shell|python|javascript", name);
		status = SCAN_ERROR;
		goto out;
	}
	if (normalized) {
		size_t nlen = 0;
		char *text = agent_scan_normalize(lang, code, len, &nlen);
		if (text == NULL) {
			cli_error("scan: %s", agent_scan_error());
			status = SCAN_ERROR;
			goto out;
		}
		fwrite(text, 1, nlen, stdout);
		free(text);
		status = SCAN_CLEAN;
		goto out;
	}
	res = agent_scan(rules, lang, code, len);
	if (res == NULL) {
		cli_error("scan: %s: %s", name, agent_scan_error());
		status = SCAN_ERROR;
		goto out;
	}
	if (json) {
		if (print_json(file, lang, res) != SCAN_CLEAN) {
			status = SCAN_ERROR;
			goto out;
		}
	} else {
		for (size_t i = 0; i < res->count; i++) {
			const agent_scan_finding *f = &res->findings[i];
			printf("%d:%s:%s: %s\n", f->line, agent_scan_severity_name(f->severity),
			       f->rule_id, f->message);
		}
	}
	status = res->count > 0 ? SCAN_FOUND : SCAN_CLEAN;
out:
	if (fflush(stdout) != 0 && status != SCAN_ERROR) {
		cli_error("scan: cannot write the output: %s", strerror(errno));
		status = SCAN_ERROR;
	}
	agent_scan_result_destroy(res);
	free(code);
	agent_scan_rules_destroy(rules);
	return status;
}
