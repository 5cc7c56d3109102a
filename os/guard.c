/*
 * os/guard — the signal guard every backend's input keeps: while an action
 * presses keys or holds a button, SIGINT/SIGTERM/SIGHUP only set a flag the
 * action polls, so that it releases what it pressed before the signal
 * takes effect; and the interruptible sleep between paced events.
 */
#include <signal.h>
#include <string.h>

#include "base/base.h"
#include "os/backend.h"

static volatile sig_atomic_t signal_caught;
static const int guarded_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void on_guarded_signal(int sig)
{
	if (signal_caught == 0)
		signal_caught = sig;
}

void os_input_signals_begin(struct os_signal_guard *g)
{
	signal_caught = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guarded_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a sleep between keystrokes must end at once. */
	for (int i = 0; i < 3; i++) {
		sigaction(guarded_signals[i], NULL, &g->old[i]);
		/* Ignored when we were started (nohup: SIGHUP) stays ignored: the
		 * caller asked to outlive it, and re-raising it could not end us. */
		if (g->old[i].sa_handler != SIG_IGN)
			sigaction(guarded_signals[i], &sa, NULL);
	}
}

int os_input_signal_caught(void)
{
	return signal_caught;
}

void os_input_signals_end(struct os_signal_guard *g)
{
	for (int i = 0; i < 3; i++)
		sigaction(guarded_signals[i], &g->old[i], NULL);
	int sig = signal_caught;
	signal_caught = 0;
	if (sig != 0)
		raise(sig);
}

/* Returns early only when `interruptible` and a guarded signal arrived. */
static void sleep_until(int64_t until, bool interruptible)
{
	base_sleep_until(until, interruptible ? &signal_caught : NULL);
}

void os_input_sleep_ms(int ms)
{
	sleep_until(base_now_ns() + ms * BASE_NS_PER_MS, true);
}

