/*
 * os/wlroots/guard — SIGINT/SIGTERM/SIGHUP during a drag, a held key or a
 * typing run only set a flag, so that the button or key is released before
 * the signal takes effect (re-raised at the end). The X11 backend has its
 * own (os/input.c); the two never run in one call.
 */
#include <string.h>

#include "base/base.h"
#include "os/wlroots/wlroots-internal.h"

static volatile sig_atomic_t caught;
static const int guarded[3] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
	if (caught == 0)
		caught = sig;
}

void os_wl_guard_begin(struct os_wl_guard *g)
{
	caught = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a sleep between events must end at once. */
	for (int i = 0; i < 3; i++) {
		sigaction(guarded[i], NULL, &g->old[i]);
		/* nohup's SIGHUP stays ignored: re-raising it could not end us. */
		if (g->old[i].sa_handler != SIG_IGN)
			sigaction(guarded[i], &sa, NULL);
	}
}

int os_wl_guard_caught(void)
{
	return caught;
}

void os_wl_guard_end(struct os_wl_guard *g)
{
	for (int i = 0; i < 3; i++)
		sigaction(guarded[i], &g->old[i], NULL);
	int sig = caught;
	caught = 0;
	if (sig != 0)
		raise(sig);
}

void os_wl_sleep_ms(int ms)
{
	base_sleep_until(base_now_ns() + ms * BASE_NS_PER_MS, &caught);
}
