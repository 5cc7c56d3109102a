/*
 * Private to agent/session/loop.c: the state of one agent session. What the gate
 * needs is its own struct (agent/gate.h), held here.
 */
#ifndef DESKHAND_AGENT_INTERNAL_H
#define DESKHAND_AGENT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>

#include "agent/console/console.h"
#include "agent/llm/llm.h"
#include "agent/safety/safety.h"
#include "agent/session/options.h"
#include "agent/ui/terminal.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

/* Set by the SIGINT handler; the provider and waits poll it. */
extern volatile sig_atomic_t agent_cancel;
/* The code sessions the SIGINT handler interrupts (async-signal-safe). */
extern exec_sessions *volatile agent_exec_for_signals;

#define AGENT_HIDDEN_MAX 10

typedef struct agent_session {
	agent_options *opt;
	agent_term *term;
	struct provider *provider;
	struct conv *conv;
	struct provider_tools tools;
	char *system_prompt;
	agent_gate gate;                /* the audit log, settings, desktop and code sessions */
	int status;                     /* exit status so far */
	struct provider_usage last_usage; /* of the last answered turn (%tokens) */
	bool have_last_usage;
	/* deskhand's own files and directories, out of the code's reach
	 * (NULL-terminated; owned; given to the gate). */
	char *hidden[AGENT_HIDDEN_MAX + 1];
	agent_console *console;         /* --console; NULL: none */
	char *console_file;             /* the links, 0600 beside the audit log (removed at exit) */
} agent_session;

#endif
