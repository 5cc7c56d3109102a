/*
 * agent/ui/terminal_input — what the person types: lines through the line
 * editor (or plain lines off a terminal), input that must not count
 * (typed ahead of a question, or by deskhand's own action) discarded, and
 * questions answered here or in the console, whichever answers first. See
 * terminal.h.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "agent/ui/terminal-internal.h"
#include "base/base.h"
#include "config.h"

#if DESKHAND_HAVE_LIBEDIT
#include "agent/ui/terminal-edit.h"
#endif

/* Discards what waits on the terminal; returns how many bytes it was. */
static int discard_pending(agent_term *t)
{
	int pending = 0;
	if (!t->tty_in || t->json)
		return 0;
	if (ioctl(STDIN_FILENO, FIONREAD, &pending) != 0 || pending <= 0)
		return 0;
	if (tcflush(STDIN_FILENO, TCIFLUSH) != 0)
		return 0;
	return pending;
}

/*
 * A question counts only keys pressed after it appeared: text typed ahead
 * for the next task, a "y" among it, must never answer a confirmation.
 */
static void discard_typeahead(agent_term *t)
{
	int pending = discard_pending(t);
	if (pending > 0)
		agent_term_notice(t, "%d typed-ahead character%s discarded: a question takes "
		                  "only keys pressed after it appears", pending,
		                  pending == 1 ? "" : "s");
}

/* Input that deskhand's own action typed into its own terminal. */
static void discard_action_input(agent_term *t)
{
	int pending = discard_pending(t);
	if (pending > 0)
		agent_term_notice(t, "%d character%s discarded: they reached this terminal while "
		                  "deskhand's own action ran, so they were not typed by you",
		                  pending, pending == 1 ? "" : "s");
}

void agent_term_discard_action_input(agent_term *t)
{
	if (t == NULL || !t->tty_in || t->json)
		return;
	discard_action_input(t);
	t->discard_at_read = true;
}

static char *read_plain_line(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	if (n > 0 && line[n - 1] == '\r')
		line[--n] = '\0';
	return line;
}

char *agent_term_read_line(agent_term *t, const char *prompt)
{
	agent_term_spinner_stop(t);
	agent_term_text_end(t);
	if (t->discard_at_read) {
		t->discard_at_read = false;
		discard_action_input(t);
	}
#if DESKHAND_HAVE_LIBEDIT
	if (t->tty_in && !t->json && term_edit_load()) {
		char *line = readline(prompt);
		term_tty_hold(t);
		if (line != NULL && line[0] != '\0')
			add_history(line);
		return line;
	}
#endif
	if (t->tty_in && !t->json) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
	return read_plain_line();
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t lead = strspn(s, " \t");
	memmove(s, s + lead, strlen(s + lead) + 1);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

static const char *const answer_names[] = {
	[AGENT_ANSWER_NO] = "no", [AGENT_ANSWER_NONE] = "none", [AGENT_ANSWER_YES] = "yes",
	[AGENT_ANSWER_EDIT] = "edit", [AGENT_ANSWER_DETAILS] = "details",
	[AGENT_ANSWER_SCAN] = "scan",
};

const char *agent_term_answer_name(agent_term_answer a)
{
	return base_name_of(BASE_NAMES(answer_names), (int)a, "no");
}

/* The answers a question may take, by key and by their word (answer_names). */
static const struct {
	char key;
	const char *label;
	agent_term_answer answer;
} ask_opts[] = {
	{'y', "y=run", AGENT_ANSWER_YES},
	{'n', "n=deny", AGENT_ANSWER_NO},
	{'e', "e=edit", AGENT_ANSWER_EDIT},
	{'d', "d=details", AGENT_ANSWER_DETAILS},
	{'s', "s=scan", AGENT_ANSWER_SCAN},
};
#define ASK_OPTS (sizeof(ask_opts) / sizeof(ask_opts[0]))

enum waited { WAITED_INPUT, WAITED_REMOTE, WAITED_INTERRUPT };

/*
 * With a remote attached: waits until standard input has a line to read
 * or a remote has an answer (*which: its slot), or a remote's cancel flag
 * (Ctrl-C, a withdrawal). The end of standard input is seen by the reader,
 * which then stops offering it here.
 *
 * The flags are looked at before each wait and at least every
 * WAIT_CANCEL_MS: a SIGINT that came just before poll, or that another
 * thread (the console's) took, interrupts no poll here, and a question
 * waiting for it would wait for ever.
 */
#define WAIT_CANCEL_MS 200
static bool remote_cancelled(const agent_term *t)
{
	for (int i = 0; i < AGENT_TERM_REMOTES; i++)
		if (t->have_remote[i] && t->remote[i].cancel != NULL && *t->remote[i].cancel)
			return true;
	return false;
}

/* The first remote whose fd is readable now, or -1. */
static int remote_ready(const agent_term *t)
{
	for (int i = 0; i < AGENT_TERM_REMOTES; i++) {
		struct pollfd p = {.fd = t->have_remote[i] ? t->remote[i].fd : -1, .events = POLLIN};
		if (p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			return i;
	}
	return -1;
}

static enum waited wait_terminal_or_remote(agent_term *t, int *which)
{
	for (;;) {
		if (remote_cancelled(t)) {
			/* A place that withdrew the question says so through its fd. */
			*which = remote_ready(t);
			return WAITED_INTERRUPT;
		}
		struct pollfd fds[AGENT_TERM_REMOTES + 1];
		for (int i = 0; i < AGENT_TERM_REMOTES; i++)
			fds[i] = (struct pollfd){.fd = t->have_remote[i] ? t->remote[i].fd : -1,
			                         .events = POLLIN};
		fds[AGENT_TERM_REMOTES] = (struct pollfd){
			.fd = t->stdin_ended ? -1 : STDIN_FILENO, .events = POLLIN};
		int n = poll(fds, AGENT_TERM_REMOTES + 1, WAIT_CANCEL_MS);
		if (n == 0 || (n < 0 && errno == EINTR))
			continue; /* the flags are looked at above; another signal: wait on */
		for (int i = 0; i < AGENT_TERM_REMOTES; i++)
			if (n < 0 || (fds[i].fd >= 0 && (fds[i].revents & POLLIN))) {
				*which = n < 0 ? AGENT_TERM_CONSOLE : i;
				return WAITED_REMOTE;
			}
		if (fds[AGENT_TERM_REMOTES].revents & (POLLIN | POLLHUP | POLLERR))
			return WAITED_INPUT;
	}
}

/* One line for the question, from the line editor or plain input; NULL at end of input. */
static char *ask_read_line(agent_term *t, const char *prompt)
{
	if (!t->json && t->tty_in)
		return agent_term_read_line(t, prompt);
	if (!t->json) {
		agent_term_spinner_stop(t);
		agent_term_text_end(t);
		fputs(prompt, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	return read_plain_line();
}

/* The answer a line gives; *known: it was one of the choices. */
static agent_term_answer parse_answer(char *line, const char *choices, bool *known)
{
	trim(line);
	agent_term_answer ans = AGENT_ANSWER_NO;
	*known = false;
	int word = base_name_index(BASE_NAMES(answer_names), line);
	for (size_t i = 0; i < ASK_OPTS; i++) {
		if (strchr(choices, ask_opts[i].key) == NULL)
			continue;
		if ((line[0] == ask_opts[i].key && line[1] == '\0') ||
		    word == (int)ask_opts[i].answer) {
			ans = ask_opts[i].answer;
			*known = true;
		}
	}
	return ans;
}

/*
 * The terminal's own answer. *remote_first: slot *remote_first's fd turned
 * readable first (the returned answer is then meaningless); -1: it did not.
 */
static agent_term_answer ask_terminal(agent_term *t, const char *prompt, const char *choices,
                                      int *remote_first)
{
	*remote_first = -1;
	bool remotes = term_any_remote(t);
	for (int attempt = 0; attempt < 10; attempt++) {
		char *line;
		if (remotes) {
			/* Asked here and elsewhere at once: the prompt first, then
			 * whichever answers. */
			if (!t->json && !t->stdin_ended) {
				agent_term_spinner_stop(t);
				agent_term_text_end(t);
				fputs(prompt, stdout);
				fputs(t->tty_in ? "" : "\n", stdout);
				fflush(stdout);
			}
			enum waited w = wait_terminal_or_remote(t, remote_first);
			if (w == WAITED_INTERRUPT)
				return AGENT_ANSWER_NONE;  /* Ctrl-C: no answer, which is a no */
			if (w == WAITED_REMOTE)
				return AGENT_ANSWER_NONE;
			line = t->tty_in && !t->json ? agent_term_read_line(t, "") : read_plain_line();
		} else {
			line = ask_read_line(t, prompt);
		}
		if (line == NULL && term_remote_answers(t)) {
			/* The terminal cannot answer any more; the console still can. */
			if (!t->stdin_ended)
				agent_term_notice(t, "the terminal's input ended: the question waits for "
				                  "an answer %s", t->have_remote[AGENT_TERM_CONSOLE] ?
				                  "in the console" : "from the MCP host");
			t->stdin_ended = true;
			attempt--;
			continue;
		}
		if (line == NULL)
			return AGENT_ANSWER_NONE;  /* end of input is a no */
		bool known;
		agent_term_answer ans = parse_answer(line, choices, &known);
		free(line);
		/* Off a terminal, only a clear yes approves: anything else denies. */
		if (!t->tty_in || t->json)
			return ans == AGENT_ANSWER_YES ? AGENT_ANSWER_YES : AGENT_ANSWER_NO;
		if (known)
			return ans;
		fputs("please answer with one of the letters shown\n", stderr);
	}
	return AGENT_ANSWER_NO;
}

/*
 * Ends the question in every remote: the one whose fd turned readable
 * first settles first (its answer wins when it has one), the others are
 * told what counted and whose it was (`who` on entry). Returns the
 * answer that counts.
 */
static agent_term_answer settle_remotes(agent_term *t, int first, agent_term_answer a)
{
	bool won = false;
	char counted[sizeof(t->answered_from)] = "terminal";
	for (int k = -1; k < AGENT_TERM_REMOTES; k++) {
		int i = k < 0 ? first : k;
		if (i < 0 || (k >= 0 && k == first) || !t->have_remote[i])
			continue;
		char who[sizeof(t->answered_from)];
		snprintf(who, sizeof(who), "%s", counted);
		char *edit = NULL;
		agent_term_answer mine = a;
		if (!t->remote[i].settle(t->remote[i].ctx, &mine, &edit, who, sizeof(who)) || won) {
			free(edit);
			continue;
		}
		/* A place that is only told may withdraw a question, never answer it. */
		if (t->remote[i].told_only && mine != AGENT_ANSWER_NONE)
			mine = AGENT_ANSWER_NO;
		won = true;
		a = mine;
		free(t->edit_text);
		t->edit_text = edit;
		snprintf(counted, sizeof(counted), "%s", who);
		snprintf(t->answered_from, sizeof(t->answered_from), "%s", who);
		if (a == AGENT_ANSWER_NONE)
			agent_term_notice(t, "no answer: %s", who);
		else
			agent_term_notice(t, "answered in the %s: %s", who, agent_term_answer_name(a));
	}
	return a;
}

agent_term_answer agent_term_ask_ex(agent_term *t, const char *id, const char *question,
                                    const char *choices, const agent_term_ask_info *info)
{
	t->answered_from[0] = '\0';
	free(t->edit_text);
	t->edit_text = NULL;
	if (t->json) {
		cJSON *ev = term_event("confirmation");
		cJSON_AddStringToObject(ev, "id", id);
		term_add_text(ev, "question", question, strlen(question));
		cJSON_AddStringToObject(ev, "choices", choices);
		term_emit(t, ev);
	}
	char menu[80] = "";
	for (const char *c = choices; *c; c++)
		for (size_t i = 0; i < ASK_OPTS; i++)
			if (ask_opts[i].key == *c) {
				if (menu[0] != '\0')
					strcat(menu, " ");
				strcat(menu, ask_opts[i].label);
			}
	if (!t->json && t->tty_in)
		discard_typeahead(t);
	char prompt[512];
	char *shown = agent_show_dup(question, AGENT_SHOW_LINES);
	snprintf(prompt, sizeof(prompt), "%s [%s] ", shown ? shown : "?", menu);
	free(shown);
	for (int i = 0; i < AGENT_TERM_REMOTES; i++)
		if (t->have_remote[i])
			t->remote[i].open(t->remote[i].ctx, id, question, choices, info);
	int remote_first;
	agent_term_answer a = ask_terminal(t, prompt, choices, &remote_first);
	if (remote_first >= 0 && a == AGENT_ANSWER_NONE)
		a = AGENT_ANSWER_NO; /* what the terminal would say if it had the last word */
	return settle_remotes(t, remote_first, a);
}

agent_term_answer agent_term_ask(agent_term *t, const char *id,
                                 const char *question, const char *choices)
{
	return agent_term_ask_ex(t, id, question, choices, NULL);
}
