/* base/clock — the monotonic clock, deadlines and sleeps; see base.h. */
#include <errno.h>
#include <time.h>

#include "base/base.h"

#define NS_PER_S 1000000000LL
/* How long a cancellable sleep goes without looking at its flag. */
#define CANCEL_SLICE_NS (50 * BASE_NS_PER_MS)

int64_t base_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

long long base_now_ms(void)
{
	return base_now_ns() / BASE_NS_PER_MS;
}

long base_ms_until(int64_t deadline_ns)
{
	return (long)((deadline_ns - base_now_ns()) / BASE_NS_PER_MS);
}

bool base_sleep_until(int64_t deadline_ns, volatile sig_atomic_t *cancel)
{
	for (;;) {
		if (cancel != NULL && *cancel)
			return false;
		int64_t now = base_now_ns();
		if (now >= deadline_ns)
			return true;
		int64_t until = deadline_ns;
		if (cancel != NULL && until - now > CANCEL_SLICE_NS)
			until = now + CANCEL_SLICE_NS;
		struct timespec ts = {.tv_sec = (time_t)(until / NS_PER_S),
		                      .tv_nsec = (long)(until % NS_PER_S)};
		/* Absolute: a signal's EINTR resumes towards the same instant. */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

bool base_sleep_ms(long ms, volatile sig_atomic_t *cancel)
{
	return base_sleep_until(base_now_ns() + (ms > 0 ? ms : 0) * BASE_NS_PER_MS, cancel);
}
