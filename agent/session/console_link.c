/*
 * agent/session/console_link — --console attached to the session: the
 * page served (agent/console), its answers beside the terminal's, its
 * pause, take-over and stop between the actions of a batch, and the
 * links, told to the terminal and to a 0600 file beside the audit log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/session/agent-internal.h"

static agent_gate_hold console_hold(void *ctx)
{
	switch (agent_console_hold_here(ctx)) {
	case AGENT_CONSOLE_TOOK_OVER: return AGENT_GATE_TOOK_OVER;
	case AGENT_CONSOLE_STOP: return AGENT_GATE_STOP;
	default: return AGENT_GATE_GO;
	}
}

/* The links go to the terminal and to a 0600 file beside the audit log, nowhere else. */
static void console_links(agent_session *s)
{
	agent_console *c = s->console;
	if (agent_console_is_remote(c))
		agent_term_warning(s->term, "the console listens on a non-loopback address: anyone "
		                   "who can reach it may try it; put it behind TLS you provide "
		                   "(plain HTTP shows the links and cookies to the network)");
	agent_term_notice(s->term, "console (approver, one use): %s", agent_console_url(c, true));
	agent_term_notice(s->term, "console (observer, read-only, one use): %s",
	                  agent_console_url(c, false));
	const char *log = agent_audit_path(s->audit);
	s->console_file = malloc(strlen(log) + sizeof(".console"));
	if (s->console_file == NULL)
		return;
	sprintf(s->console_file, "%s.console", log);
	unlink(s->console_file);
	int fd = open(s->console_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		agent_term_warning(s->term, "cannot write %s: %s", s->console_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "{\"approver\":\"%s\",\"observer\":\"%s\",\"port\":%d}\n",
	        agent_console_url(c, true), agent_console_url(c, false), agent_console_port(c));
	fclose(f);
}

/* --console: serve the page, and let it answer and hold the agent. */
bool session_console_open(agent_session *s)
{
	agent_console_config cfg = {
		.listen = s->opt->console,
		.allow_remote = s->opt->console_allow_remote,
		.display = s->display != NULL ? os_display_name(s->display) : NULL,
		.cancel = &agent_cancel,
	};
	s->console = agent_console_start(&cfg);
	if (s->console == NULL) {
		agent_term_error(s->term, "%s", agent_console_error());
		return false;
	}
	agent_audit_set_listener(s->audit, agent_console_audit_line, s->console);
	agent_term_set_remote(s->term, AGENT_TERM_CONSOLE, agent_console_remote(s->console));
	agent_gate_set_hold(s->gate, console_hold, s->console);
	console_links(s);
	return true;
}

void session_console_close(agent_session *s)
{
	if (s->console == NULL)
		return;
	agent_term_set_remote(s->term, AGENT_TERM_CONSOLE, NULL);
	if (s->audit != NULL)
		agent_audit_set_listener(s->audit, NULL, NULL);
	if (s->gate != NULL)
		agent_gate_set_hold(s->gate, NULL, NULL);
	agent_console_destroy(s->console);
	s->console = NULL;
	if (s->console_file != NULL)
		unlink(s->console_file);
	free(s->console_file);
	s->console_file = NULL;
}
