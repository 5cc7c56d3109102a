/*
 * agent/ui/terminal — the terminal itself: created on stdin/stdout/stderr,
 * held between prompts and given back as found, the line editor's history,
 * the spinner, and the second place that answers (the console). What it
 * shows is terminal_output.c, what it reads terminal_input.c; see
 * terminal.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/ui/terminal-internal.h"
#include "base/base.h"
#include "config.h"

#if DESKHAND_HAVE_LIBEDIT
#include "agent/ui/terminal-edit.h"
#endif

/*
 * Between prompts (while the model thinks or code runs) the terminal is held
 * without canonical input and echo, keeping signals. Without this, a key
 * typed while deskhand works meets the kernel's line discipline instead of
 * the line editor: Ctrl-D becomes an end-of-file marker that turns into a
 * stray character at the next prompt (after which Ctrl-D no longer quits),
 * and typed-ahead text is echoed into the model's output. Held, every key
 * waits as a plain byte for the line editor, which shows and reads it.
 *
 * The terminal as found is kept here, not in agent_term, so that a signal
 * handler can put it back (agent_term_tty_restore).
 */
static struct termios tty_found;
static volatile sig_atomic_t tty_found_valid;

/*
 * Only the terminal's foreground job may set its modes: a background one
 * (deskhand -m TASK &) would be stopped by SIGTTOU, so it leaves the
 * terminal alone. tcgetpgrp is async-signal-safe.
 */
static bool tty_in_foreground(void)
{
	return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

void term_tty_hold(agent_term *t)
{
	if (!t->work_mode || !tty_in_foreground())
		return;
	struct termios w = tty_found;
	w.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL | IEXTEN);
	w.c_lflag |= ISIG;
	w.c_cc[VMIN] = 1;
	w.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &w);
}

void agent_term_tty_restore(void)
{
	if (tty_found_valid && tty_in_foreground())
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_found);
}

void agent_term_tty_release(agent_term *t)
{
	if (t != NULL && t->work_mode)
		agent_term_tty_restore();
}

void agent_term_tty_reclaim(agent_term *t)
{
	if (t != NULL)
		term_tty_hold(t);
}

static void md_sink(const char *s, size_t len, void *user)
{
	(void)user;
	fwrite(s, 1, len, stdout);
}

static agent_term *term_new(bool json, bool borrowed)
{
	agent_term *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->json = json;
	t->borrowed = borrowed;
	t->tty_in = isatty(STDIN_FILENO);
	t->err_tty = isatty(STDERR_FILENO);
	const char *term = getenv("TERM");
	t->color = !json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL &&
	           !(term != NULL && strcmp(term, "dumb") == 0);
	pthread_mutex_init(&t->lock, NULL);
	agent_md_init(&t->md, t->color, md_sink, t);
	agent_show_init(&t->text_show, AGENT_SHOW_LINES);
	agent_show_init(&t->out_show[0], AGENT_SHOW_LINES);
	agent_show_init(&t->out_show[1], AGENT_SHOW_LINES);
#if DESKHAND_HAVE_LIBEDIT
	/* History survives sessions, like a shell's: $XDG_DATA_HOME/deskhand/history.
	 * Setting the line editor up sets the terminal's modes: not from a
	 * background job (it would stop); its first prompt does it later. */
	if (t->tty_in && !json && !borrowed && tty_in_foreground() && term_edit_load()) {
		char dir[4000], path[4096] = "";
		if (agent_own_dir(AGENT_DIR_DATA, dir, sizeof(dir)))
			snprintf(path, sizeof(path), "%s/history", dir);
		using_history();
		stifle_history(1000);
		if (path[0] != '\0') {
			t->history = strdup(path);
			read_history(path);
		}
		/* using_history() has set the line editor up from the terminal as
		 * found. Its mode outside editing becomes the held one, so that no
		 * key meets canonical input between its return and term_tty_hold. */
		if (tcgetattr(STDIN_FILENO, &tty_found) == 0) {
			tty_found_valid = 1;
			t->work_mode = true;
			rl_parse_and_bind("setty -x -icanon -echo -echonl -iexten");
			term_tty_hold(t);
		}
	}
#endif
	return t;
}

agent_term *agent_term_create(bool json)
{
	return term_new(json, false);
}

agent_term *agent_term_create_borrowed(void)
{
	return term_new(false, true);
}

void agent_term_destroy(agent_term *t)
{
	if (t == NULL)
		return;
	agent_term_spinner_stop(t);
	agent_term_text_end(t);
	fflush(stdout);
	free(t->edit_text);
#if DESKHAND_HAVE_LIBEDIT
	if (t->history != NULL) {
		/* Created private: it holds what the user typed. */
		mode_t old = umask(077);
		write_history(t->history);
		umask(old);
	}
#endif
	free(t->history);
	agent_term_tty_release(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

bool agent_term_interactive(const agent_term *t)
{
	return t->tty_in;
}

void agent_term_details(agent_term *t, const char *id, const char *text)
{
	agent_term_print(t, text);
	for (int i = 0; i < AGENT_TERM_REMOTES; i++)
		if (t->have_remote[i] && t->remote[i].details != NULL)
			t->remote[i].details(t->remote[i].ctx, id, text);
}

bool term_any_remote(const agent_term *t)
{
	for (int i = 0; i < AGENT_TERM_REMOTES; i++)
		if (t->have_remote[i])
			return true;
	return false;
}

bool term_remote_answers(const agent_term *t)
{
	for (int i = 0; i < AGENT_TERM_REMOTES; i++)
		if (t->have_remote[i] && !t->remote[i].told_only)
			return true;
	return false;
}

bool agent_term_answerable(const agent_term *t)
{
	return t->tty_in || term_remote_answers(t);
}

void agent_term_set_remote(agent_term *t, agent_term_remote_slot slot, const agent_term_remote *r)
{
	if ((unsigned)slot >= AGENT_TERM_REMOTES)
		return;
	t->have_remote[slot] = r != NULL;
	if (r != NULL)
		t->remote[slot] = *r;
}

const char *agent_term_answered_from(const agent_term *t)
{
	return t->answered_from[0] != '\0' ? t->answered_from : "terminal";
}

char *agent_term_take_edit(agent_term *t)
{
	char *e = t->edit_text;
	t->edit_text = NULL;
	return e;
}

bool agent_term_json(const agent_term *t)
{
	return t->json;
}

/* ---- spinner --------------------------------------------------------- */

static void *spinner_main(void *arg)
{
	agent_term *t = arg;
	static const char *const frames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
	unsigned i = 0;
	while (!t->spinner_stop) {
		pthread_mutex_lock(&t->lock);
		fprintf(stderr, "\r\033[2m%s %s\033[0m\033[K", frames[i++ % 10], t->spinner_label);
		fflush(stderr);
		pthread_mutex_unlock(&t->lock);
		base_sleep_ms(80, NULL);
	}
	pthread_mutex_lock(&t->lock);
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void agent_term_spinner_start(agent_term *t, const char *label)
{
	if (t->json || !t->err_tty || t->spinner_running)
		return;
	snprintf(t->spinner_label, sizeof(t->spinner_label), "%s", label);
	t->spinner_stop = false;
	if (pthread_create(&t->spinner, NULL, spinner_main, t) == 0)
		t->spinner_running = true;
}

void agent_term_spinner_stop(agent_term *t)
{
	if (!t->spinner_running)
		return;
	t->spinner_stop = true;
	pthread_join(t->spinner, NULL);
	t->spinner_running = false;
}
