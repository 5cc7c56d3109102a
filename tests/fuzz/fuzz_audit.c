/*
 * The audit log verifier (a log on disk is text anyone with write access
 * may have edited): any bytes pass or fail with the offending line and a
 * reason; the counts never exceed the lines. Each input is checked three
 * ways: as it is (the chain), with its lines chained as deskhand writes
 * them (so the rules behind the chain are reached, and the chain itself is
 * never blamed), and, split at its first NUL, as a log and its head file.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/safety/audit.h"
#include "tests/safety/audit_chain.h"

static bool check(bool ok, const agent_audit_report *rep, bool line_known)
{
	fuzz_check(rep->by_user + rep->by_policy <= rep->executed && rep->executed <= rep->lines,
	           "counts: %zu lines, %zu executed", rep->lines, rep->executed);
	fuzz_check(strnlen(rep->problem, sizeof(rep->problem)) < sizeof(rep->problem),
	           "problem not terminated");
	if (ok)
		fuzz_check(rep->bad_line == 0 && rep->problem[0] == '\0', "passed with a problem");
	else
		fuzz_check((rep->bad_line >= 1 || !line_known) && rep->problem[0] != '\0',
		           "failed without saying where");
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	agent_audit_report rep;
	memset(&rep, 0x5a, sizeof(rep));
	check(agent_audit_verify((const char *)data, size, &rep), &rep, true);

	size_t len;
	char *chained = audit_chain((const char *)data, size, &len);
	memset(&rep, 0x5a, sizeof(rep));
	/* The chain's own reports begin so; the rules' quote ids, which may say anything. */
	if (!check(agent_audit_verify(chained, len, &rep), &rep, true))
		fuzz_check(strncmp(rep.problem, "line ", 5) != 0 &&
		           strncmp(rep.problem, "lines ", 6) != 0 &&
		           strncmp(rep.problem, "the log does not begin", 22) != 0,
		           "a chained log blamed on its chain: line %d: %s", rep.bad_line, rep.problem);
	free(chained);

	const uint8_t *nul = memchr(data, '\0', size);
	if (nul != NULL) {
		size_t log_len = (size_t)(nul - data);
		chained = audit_chain((const char *)data, log_len, &len);
		memset(&rep, 0x5a, sizeof(rep));
		check(agent_audit_verify_head(chained, len, (const char *)nul + 1, size - log_len - 1,
		                              &rep), &rep, false);
		free(chained);
	}
	return 0;
}
