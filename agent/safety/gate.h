/*
 * agent/safety/gate — the single gate between the model and the machine.
 *
 * Every tool call the model makes passes agent_gate_tool_call: agent/tools
 * makes it one typed proposal, the gate records it as proposed, scans it
 * when the policy says so, has the policy (pure) decide, puts it to the
 * human when the policy asks, records the decision (flushed to disk
 * before anything runs), and only then runs it through the executors
 * (code) or the computer runner (agent/tools/computer-run.h, which only
 * the gate includes) and records it as executed. Nothing else in the
 * product reaches those (tests/safety/test_one_gate.py checks the built
 * objects).
 *
 * The gate owns: the code sessions, the scanner's rules, where deskhand
 * left the pointer, and whether the run must end; its state is its own
 * (agent_gate_create takes everything it needs once). It may call:
 * policy, scan, audit, agent/tools (proposals, the runner), executors/,
 * os/ (the pointer and monitors, for the kill switch), and the terminal
 * UI (to ask). It never sees the conversation, the provider, the prompt
 * or the options.
 */
#ifndef DESKHAND_AGENT_GATE_H
#define DESKHAND_AGENT_GATE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/audit.h"
#include "agent/safety/policy.h"
#include "agent/tools/tools.h"
#include "agent/ui/terminal.h"
#include "executors/exec.h"

/* What happened while a supervisor held the agent (agent_gate_set_hold). */
typedef enum agent_gate_hold {
	AGENT_GATE_GO,          /* nothing: go on */
	AGENT_GATE_TOOK_OVER,   /* a human drove the desktop: the batch's screen is stale */
	AGENT_GATE_STOP,        /* stop, as the kill switch does */
} agent_gate_hold;

typedef struct agent_gate agent_gate;

/* What the gate is given once; nothing of it is owned by the gate. */
typedef struct agent_gate_config {
	agent_term *term;
	agent_audit *audit;
	agent_tools *tools;               /* proposals, the runner, screenshots */
	const char *preview_dir;          /* where the previews of `d` go (beside the conversation) */
	volatile sig_atomic_t *cancel;    /* set by Ctrl-C */
	exec_sessions *volatile *exec_for_signals; /* where the SIGINT handler finds exec */
	sandbox_profile sandbox;
	const char *workspace;
	const char *const *hidden;        /* deskhand's own files, hidden from code */
	size_t max_output;
	agent_policy_settings settings;   /* as in force at the start */
} agent_gate_config;

/* A gate over cfg's parts (which must outlive it). NULL when out of memory.
 * Ownership: agent_gate_destroy. */
agent_gate *agent_gate_create(const agent_gate_config *cfg);
/* Releases what the gate owns (code sessions, rules, the watch's display
 * connection); NULL is a no-op. */
void agent_gate_destroy(agent_gate *g);

/* The settings in force (the kill switch changes them). */
const agent_policy_settings *agent_gate_settings(const agent_gate *g);
/*
 * %auto_run, %safe_mode, %os_auto_approve: applied by the policy's rules
 * and recorded when they change something; msg says what happened.
 */
agent_policy_change agent_gate_magic(agent_gate *g, const agent_policy_magic *m, char *msg,
                                     size_t len);
void agent_gate_set_verbose(agent_gate *g, bool verbose);
/*
 * Between two actions of a batch, a supervisor may hold the agent
 * (agent/console: pause, take over, stop); NULL: no one can. The callback
 * returns once the agent may go on, saying what happened meanwhile.
 */
void agent_gate_set_hold(agent_gate *g, agent_gate_hold (*hold)(void *ctx), void *ctx);

/* The outcome of one tool call, ready for the conversation. */
typedef struct agent_tool_result {
	char *text;
	bool is_error;
	agent_shot shot;                /* its screenshot (or zoom's image); png NULL: none */
	char *ack;                      /* safety checks the human acknowledged (JSON array); NULL: none */
	bool ends_batch;                /* a computer action failed or was refused */
	bool screenshot_due;            /* its screenshot waits for the end of the batch */
} agent_tool_result;

/* What every call after a failed or refused computer action of the same turn is answered. */
#define AGENT_NOT_EXECUTED "Not executed: an earlier computer action in this turn failed."
/* ... and after the human supervising in the console took over the desktop. */
#define AGENT_TOOK_OVER "Not executed: the human supervising this session took over the " \
	"desktop and acted on it; the screenshot shows the desktop as they left it. " \
	"Look again before acting."

/*
 * Runs (or refuses) one tool call from the model's last message: its
 * end-of-task call, the vendor's safety checks it carries, then the call.
 * Always produces a result for the model. Ownership: free the result with
 * agent_tool_result_finish.
 */
void agent_gate_tool_call(agent_gate *g, const agent_tool_call *call, agent_tool_result *res);
void agent_tool_result_finish(agent_tool_result *r);

/* How a batch of calls left the run. */
typedef enum agent_gate_outcome {
	AGENT_GATE_GO_ON,       /* the model is sent the results */
	AGENT_GATE_END_RUN,     /* the policy or a broken audit log ends the run */
	AGENT_GATE_TASK_DONE,   /* the model ended the task (Qwen's terminate, UI-TARS's finished) */
	AGENT_GATE_END_TURN,    /* a vendor's safety check was declined: wait for the user */
} agent_gate_outcome;

/*
 * Runs the tool calls of one model turn, calls[i] answered in res[i], in
 * order and each decided (and asked) on its own: a batch is never approved
 * as a whole. A computer action that is refused, denied or fails ends the
 * batch: every later call is answered AGENT_NOT_EXECUTED and nothing of it
 * runs; so does the kill switch or Ctrl-C ("not run: ..."). Input actions
 * take no screenshot of their own while more calls follow: one settled
 * screenshot goes with the last result of the batch (always, when the
 * batch holds calls of a dialect whose results carry one). A call
 * carrying a vendor's safety checks has them put to the human first; a
 * declined one ends the batch before the call and the turn with it.
 * Ownership: free each result with agent_tool_result_finish.
 */
agent_gate_outcome agent_gate_tool_calls(agent_gate *g, const agent_tool_call *calls, size_t n,
                                         agent_tool_result *res);

/*
 * Every audit record of a running session passes through here with the
 * record's result. The log is the evidence that nothing ran without a yes,
 * so once a line cannot be written nothing more runs: the user is told why
 * once, the run ends, and the gate refuses every later proposal (audit.h:
 * a failed approval record counts as a denial). Returns ok.
 */
bool agent_gate_logged(agent_gate *g, bool ok);
/* Whether the run must end (the policy said so, or a record failed). */
bool agent_gate_ended(const agent_gate *g);

#endif
