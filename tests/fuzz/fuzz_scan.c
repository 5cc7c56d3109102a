/*
 * The scanner on any code: the first byte picks the language, the rest is
 * the code. Every scan ends (libFuzzer's -timeout catches a slow one) with
 * findings in order, each with a rule, a line inside the code and a clean
 * excerpt; the normalised text is produced for the same input.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/safety/scan.h"
#include "agent/util/textutil.h"

static agent_scan_rules *rules;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rules = agent_scan_rules_builtin();
	fuzz_check(rules != NULL, "builtin rules: %s", agent_scan_error());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	agent_scan_lang lang = (agent_scan_lang)(data[0] % AGENT_SCAN_LANG_COUNT);
	const char *code = (const char *)data + 1;
	size_t len = size - 1;
	agent_scan_result *res = agent_scan(rules, lang, code, len);
	fuzz_check(res != NULL, "scan failed: %s", agent_scan_error());
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += code[i] == '\n';
	for (size_t i = 0; i < res->count; i++) {
		const agent_scan_finding *f = &res->findings[i];
		fuzz_check(f->rule_id && f->message && f->excerpt, "finding %zu incomplete", i);
		fuzz_check(f->line >= 1 && (size_t)f->line <= lines, "line %d of %zu", f->line, lines);
		fuzz_check(f->severity <= res->worst, "worse than worst");
		fuzz_check(i == 0 || res->findings[i - 1].line <= f->line, "findings out of order");
		size_t n = strlen(f->excerpt);
		fuzz_check(agent_utf8_valid(f->excerpt, n), "excerpt not UTF-8");
		for (size_t k = 0; k < n; k++)
			fuzz_check((unsigned char)f->excerpt[k] >= 0x20 && f->excerpt[k] != 0x7f,
			           "control byte in excerpt");
	}
	agent_scan_result_destroy(res);
	size_t nlen;
	char *norm = agent_scan_normalize(lang, code, len, &nlen);
	fuzz_check(norm != NULL, "normalize failed");
	free(norm);
	return 0;
}
