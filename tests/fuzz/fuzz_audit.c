/*
 * The audit log verifier (a log on disk is text anyone with write access
 * may have edited): any bytes pass or fail with the offending line and a
 * reason; the counts never exceed the lines.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/safety/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	agent_audit_report rep;
	memset(&rep, 0x5a, sizeof(rep));
	bool ok = agent_audit_verify((const char *)data, size, &rep);
	fuzz_check(rep.by_user + rep.by_policy <= rep.executed && rep.executed <= rep.lines,
	           "counts: %zu lines, %zu executed", rep.lines, rep.executed);
	fuzz_check(strnlen(rep.problem, sizeof(rep.problem)) < sizeof(rep.problem),
	           "problem not terminated");
	if (ok)
		fuzz_check(rep.bad_line == 0 && rep.problem[0] == '\0', "passed with a problem");
	else
		fuzz_check(rep.bad_line >= 1 && rep.problem[0] != '\0', "failed without saying where");
	return 0;
}
