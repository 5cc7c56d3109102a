/*
 * Private to agent/session: the state of one agent session and the parts
 * its files share — loop.c (main, one user message, Ctrl-C), setup.c
 * (what a session opens and closes), magic.c (the magic commands),
 * console_link.c (the console, attached).
 */
#ifndef DESKHAND_AGENT_INTERNAL_H
#define DESKHAND_AGENT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>

#include "agent/console/console.h"
#include "agent/llm/llm.h"
#include "agent/safety/safety.h"
#include "agent/session/options.h"
#include "agent/tools/tools.h"
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
	struct provider_tools declared;   /* the tools the model is told of */
	char *system_prompt;
	os_display *display;              /* --os; NULL: none */
	agent_audit *audit;
	agent_tools *tools;               /* the desktop as the model's tools see it */
	agent_gate *gate;                 /* created once the rest is open */
	agent_policy_settings settings;   /* in force at the start, for the gate */
	int status;                       /* exit status so far */
	struct provider_usage last_usage; /* of the last answered turn (%tokens) */
	bool have_last_usage;
	bool verbose;
	/* deskhand's own files and directories, out of the code's reach
	 * (NULL-terminated; owned; given to the gate). */
	char *hidden[AGENT_HIDDEN_MAX + 1];
	char *conv_dir;                   /* where the conversation's file is (previews) */
	agent_console *console;           /* --console; NULL: none */
	char *console_file;               /* the links, 0600 beside the audit log (removed at exit) */
} agent_session;

/* setup.c: the settings the session starts with, and what the user is told of them. */
void session_startup(agent_session *s, int argc, char **argv);
/* setup.c: provider, conversation, audit log, desktop, tools, gate, console
 * and prompt; false (told why) when one of them cannot be had. */
bool session_open(agent_session *s);
void session_finish(agent_session *s);
/* setup.c, the parts of session_open an entry point without a model opens
 * (hands.c): false, told why, when one cannot be had. */
bool session_open_audit(agent_session *s);
void session_own_files(agent_session *s);
bool session_open_desktop(agent_session *s);
bool session_open_tools(agent_session *s);
bool session_open_gate(agent_session *s);
/* loop.c: SIGINT (Ctrl-C: agent_cancel; twice: quit), SIGPIPE, SIGXFSZ, the fatal ones. */
void session_install_signals(void);
/* loop.c: a new piece of work starts: no Ctrl-C seen yet. */
void session_interrupt_clear(void);

/* loop.c: saves the conversation and records its digest; false (told why, status 1) on failure. */
bool session_save(agent_session *s);
/* loop.c: the conversation file's SHA-256 as it is on disk, keyed by its
 * real path (*real, which the caller frees). False if it cannot be read. */
bool session_conv_digest(const char *path, char **real, char hex[AGENT_AUDIT_HASH_HEX + 1]);

/* magic.c: a line the user typed that is a magic command. */
void session_magic(agent_session *s, const agent_policy_magic *m);

/* console_link.c: --console served, answering and holding the agent. */
bool session_console_open(agent_session *s);
void session_console_close(agent_session *s);

#endif
