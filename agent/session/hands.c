/*
 * agent/session/hands — the parts of a session an entry point without a
 * model opens (see hands.h), in setup.c's order, kept in an agent_session
 * with no provider, conversation or prompt.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/session/agent-internal.h"
#include "agent/session/hands.h"
#include "executors/exec.h"

struct agent_hands {
	agent_session s;
};

static bool hands_open_parts(agent_session *s)
{
	if (!session_open_audit(s))
		return false;
	session_own_files(s);
	if (!agent_audit_session(s->audit, "mcp", &s->settings)) {
		agent_term_error(s->term, "audit log %s: %s", agent_audit_path(s->audit),
		                 agent_audit_error());
		return false;
	}
	if (s->opt->os && !session_open_desktop(s))
		return false;
	if (!session_open_tools(s) || !session_open_gate(s))
		return false;
	return s->opt->console == NULL || session_console_open(s);
}

agent_hands *agent_hands_open(agent_options *opt, agent_term *term, int argc, char **argv,
                              int *status)
{
	agent_hands *h = calloc(1, sizeof(*h));
	*status = 1;
	if (h == NULL)
		return NULL;
	agent_session *s = &h->s;
	s->opt = opt;
	s->term = term;
	s->status = 1;
	session_install_signals();
	session_startup(s, argc, argv);
	if (!hands_open_parts(s)) {
		*status = s->status;
		agent_hands_close(h);
		return NULL;
	}
	*status = 0;
	return h;
}

void agent_hands_close(agent_hands *h)
{
	if (h == NULL)
		return;
	session_finish(&h->s);
	free(h);
}

agent_gate *agent_hands_gate(agent_hands *h)
{
	return h->s.gate;
}

agent_tools *agent_hands_tools(agent_hands *h)
{
	return h->s.tools;
}

agent_audit *agent_hands_audit(agent_hands *h)
{
	return h->s.audit;
}

bool agent_hands_console(const agent_hands *h)
{
	return h->s.console != NULL;
}

void agent_hands_begin(void)
{
	session_interrupt_clear();
}

void agent_hands_interrupt(void)
{
	agent_cancel = 1;
	if (agent_exec_for_signals != NULL)
		exec_sessions_interrupt(agent_exec_for_signals);
}

bool agent_hands_interrupted(void)
{
	return agent_cancel != 0;
}

volatile sig_atomic_t *agent_hands_cancel_flag(void)
{
	return &agent_cancel;
}
