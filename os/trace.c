/*
 * os/trace — phase marks for benchmarks: with DESKHAND_TRACE set, each
 * mark writes "deskhand-trace WHAT SECONDS" (CLOCK_MONOTONIC, the clock a
 * benchmark's time.monotonic() reads) to standard error, so a benchmark can
 * split one call into process start, connection, set-up, keystrokes and
 * the final waits. Unset, a mark costs one cached getenv.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "os/os.h"

void os_trace(const char *what)
{
	static int on = -1;
	if (on < 0) {
		const char *v = getenv("DESKHAND_TRACE");
		on = v != NULL && v[0] != '\0';
	}
	if (!on)
		return;
	int64_t t = base_now_ns();
	fprintf(stderr, "deskhand-trace %s %lld.%09lld\n", what, (long long)(t / 1000000000),
	        (long long)(t % 1000000000));
}
