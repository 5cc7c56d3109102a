/*
 * Private to agent/loop.c and agent/gate.c: the state of one agent session.
 */
#ifndef DESKHAND_AGENT_INTERNAL_H
#define DESKHAND_AGENT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>

#include "agent/audit.h"
#include "agent/conversation.h"
#include "agent/options.h"
#include "agent/policy.h"
#include "agent/provider.h"
#include "agent/scan.h"
#include "agent/terminal.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

/* Set by the SIGINT handler; the provider and waits poll it. */
extern volatile sig_atomic_t agent_cancel;
/* The code sessions the SIGINT handler interrupts (async-signal-safe). */
extern exec_sessions *volatile agent_exec_for_signals;

typedef struct agent_session {
	agent_options *opt;
	agent_term *term;
	struct provider *provider;
	struct conv *conv;
	struct provider_tools tools;
	char *system_prompt;
	agent_policy_settings settings;
	agent_scan_rules *rules;        /* loaded on first scan */
	agent_audit *audit;
	exec_sessions *exec;            /* sessions per language, created lazily */
	sandbox_profile sandbox;
	/* The desktop (only with --os). */
	os_display *display;
	vision_view view;               /* the last screenshot the model was sent */
	int monitor;                    /* the monitor the model sees, fixed at start */
	bool have_last_pointer;
	int last_px, last_py;           /* where deskhand left the pointer */
	bool verbose;
	bool end_run;                   /* a BLOCK with end_run: stop now */
	bool audit_broken;              /* a record failed: nothing more runs */
	int status;                     /* exit status so far */
	unsigned next_id;               /* for ids of actions without a call id */
	struct provider_usage last_usage; /* of the last answered turn (%tokens) */
	bool have_last_usage;
} agent_session;

/* The outcome of one tool call, ready for conv_msg_add_tool_result. */
typedef struct agent_tool_result {
	char *text;
	bool is_error;
	struct conv_image image;        /* path == NULL: no screenshot */
} agent_tool_result;

/*
 * The gate: runs (or refuses) one tool call from the model's last message.
 * Always produces a result for the model; sets s->end_run when the policy
 * ends the run. Ownership: free the result with agent_tool_result_finish.
 */
void agent_gate_tool_call(agent_session *s, const struct conv_block *call,
                          agent_tool_result *res);
void agent_tool_result_finish(agent_tool_result *r);

/*
 * Every audit record of a running session passes through here with the
 * record's result. The log is the evidence that nothing ran without a yes,
 * so once a line cannot be written nothing more runs: the user is told why
 * once, s->audit_broken and s->end_run are set, and the gate refuses every
 * later proposal (audit.h: a failed approval record counts as a denial).
 * Returns ok.
 */
bool agent_session_logged(agent_session *s, bool ok);

/*
 * Takes the model's view of the screen (settle first when `settle`), stores
 * the PNG beside the conversation and updates s->view. False with a message
 * in `err` on failure.
 */
bool agent_screenshot(agent_session *s, bool settle, struct conv_image *img,
                      char *err, size_t errlen);

#endif
