/*
 * os/trace — phase marks for benchmarks: with DESKHAND_TRACE set, each
 * mark writes "deskhand-trace WHAT SECONDS" (CLOCK_MONOTONIC, the clock a
 * benchmark's time.monotonic() reads) to standard error, so a benchmark can
 * split one call into process start, connection, set-up, keystrokes and
 * the final waits. Unset, a mark costs one cached getenv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "deskhand-trace %s %lld.%09ld\n", what, (long long)t.tv_sec,
	        t.tv_nsec);
}
