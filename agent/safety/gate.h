/*
 * agent/safety/gate — the single gate between the model and the machine.
 *
 * Every tool call the model makes passes agent_gate_tool_call: it is
 * parsed, recorded as proposed, scanned when the policy says so, decided by
 * the policy (pure), put to the human when the policy asks, recorded
 * (flushed to disk before anything runs), and only then run through the
 * executors (code) or the computer runner (agent/tools/computer-run.h, which
 * only the gate includes) and recorded as executed. Nothing else in the product
 * reaches those (tests/safety/test_one_gate.py checks the built objects).
 *
 * The gate owns: the code sessions, the scanner's rules, the model's view
 * of the screen, where deskhand left the pointer, and whether the run must
 * end. It may call: policy, scan, audit, the computer runner, executors/,
 * vision/, os/ (display and windows), the terminal UI (to ask), and the
 * conversation (to store screenshots). It never sees the session's
 * provider, prompt or options: struct agent_gate holds all it needs.
 */
#ifndef DESKHAND_AGENT_GATE_H
#define DESKHAND_AGENT_GATE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/llm/llm.h"
#include "agent/safety/audit.h"
#include "agent/safety/policy.h"
#include "agent/safety/scan.h"
#include "agent/ui/terminal.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

/* What happened while a supervisor held the agent (see agent_gate.hold). */
typedef enum agent_gate_hold {
	AGENT_GATE_GO,          /* nothing: go on */
	AGENT_GATE_TOOK_OVER,   /* a human drove the desktop: the batch's screen is stale */
	AGENT_GATE_STOP,        /* stop, as the kill switch does */
} agent_gate_hold;

typedef struct agent_gate {
	/* Given by the session before the first call; not owned by the gate. */
	agent_term *term;
	agent_audit *audit;
	struct conv **conv;                   /* the session's conversation, which %load_message
	                                       * replaces: screenshots are stored beside it */
	os_display *display;                  /* NULL without --os */
	volatile sig_atomic_t *cancel;        /* set by Ctrl-C */
	exec_sessions *volatile *exec_for_signals; /* where the SIGINT handler finds exec */
	/* Fixed at start. */
	sandbox_profile sandbox;
	const char *sandbox_name;
	const char *workspace;
	const char *const *hidden;            /* deskhand's own files, hidden from code */
	size_t max_output;
	int settle_ms, screen_max_w, screen_max_h, monitor;
	bool grid;
	bool marks;       /* --marks: element IDs drawn on every screenshot */
	/* How the model locates things (--grounding): the image size and the
	 * coordinate grid of every screenshot (vision_shot_opts). */
	vision_grounding grounding;
	long min_pixels;
	int relative;
	/* Changed by the user's magic commands (and the kill switch, for settings). */
	agent_policy_settings settings;
	bool verbose;
	/* The gate's own; agent_gate_finish releases them. */
	exec_sessions *exec;                  /* sessions per language, created lazily */
	agent_scan_rules *rules;              /* loaded on first scan */
	vision_view view;                     /* the last screenshot the model was sent */
	bool have_last_pointer;
	int last_px, last_py;                 /* where deskhand left the pointer */
	bool end_run;                         /* the policy or a broken log ends the run */
	bool audit_broken;                    /* a record failed: nothing more runs */
	/* The kill switch stopped a run: the rest of the model's batch does not
	 * run (agent_gate_tool_calls clears this before each batch). */
	bool stop_batch;
	/* A vendor's safety check was declined: the loop ends the turn and
	 * waits for the user (agent_gate_tool_calls clears this). */
	bool end_turn;
	/* The model ended the task (Qwen's terminate/answer, UI-TARS's
	 * finished): the loop stops (agent_gate_tool_calls clears this). */
	bool task_done;
	/* More calls follow in this batch: an input action's screenshot waits
	 * for the end of the batch (agent_gate_tool_calls sets it). */
	bool batch_more;
	/* The kill switch watched during a code run (see run_code). */
	os_display *watch_display;            /* own connection when there is no --os */
	os_display *watching;                 /* the display watched now; NULL: none */
	agent_policy_rect watch_monitors[16];
	size_t watch_n;
	bool watch_armed;                     /* the pointer was out of the corners */
	bool watch_tripped;
	char watch_reason[160];
	/* Between two actions of a batch, a supervisor may hold the agent
	 * (agent/console: pause, take over, stop); NULL: no one can. It
	 * returns once the agent may go on, saying what happened meanwhile. */
	agent_gate_hold (*hold)(void *ctx);
	void *hold_ctx;
} agent_gate;

/* Releases what the gate owns (code sessions, rules, the watch's display
 * connection); NULL is a no-op. */
void agent_gate_finish(agent_gate *g);

/* The outcome of one tool call, ready for conv_msg_add_tool_result. */
typedef struct agent_tool_result {
	char *text;
	bool is_error;
	struct conv_image image;        /* path == NULL: no screenshot */
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
 * Runs (or refuses) one tool call from the model's last message. Always
 * produces a result for the model; sets g->end_run when the policy ends
 * the run. Ownership: free the result with agent_tool_result_finish.
 */
void agent_gate_tool_call(agent_gate *g, const struct conv_block *call,
                          agent_tool_result *res);
void agent_tool_result_finish(agent_tool_result *r);

/*
 * Runs the tool calls of one model turn, calls[i] answered in res[i], in
 * order and each decided (and asked) on its own: a batch is never approved
 * as a whole. A computer action that is refused, denied or fails ends the
 * batch: every later call is answered AGENT_NOT_EXECUTED and nothing of it
 * runs; so does the kill switch or Ctrl-C ("not run: ..."). Input actions
 * take no screenshot of their own while more calls follow: one settled
 * screenshot goes with the last result of the batch (always, when the
 * batch holds OpenAI computer actions: its answer is a screenshot). A call
 * carrying a vendor's safety checks (OpenAI's pending checks, Google's
 * safety decision) has them put to the human first; a
 * declined one ends the batch before the call and sets g->end_turn.
 * Ownership: free each result with agent_tool_result_finish.
 */
void agent_gate_tool_calls(agent_gate *g, const struct conv_block *const *calls, size_t n,
                           agent_tool_result *res);

/*
 * Every audit record of a running session passes through here with the
 * record's result. The log is the evidence that nothing ran without a yes,
 * so once a line cannot be written nothing more runs: the user is told why
 * once, g->audit_broken and g->end_run are set, and the gate refuses every
 * later proposal (audit.h: a failed approval record counts as a denial).
 * Returns ok.
 */
bool agent_gate_logged(agent_gate *g, bool ok);

/* The options every screenshot for the model is taken with. */
void agent_gate_shot_opts(const agent_gate *g, vision_shot_opts *vo);

/*
 * Takes the model's view of the screen (settle first when `settle`), stores
 * the PNG beside the conversation and updates g->view. False with a message
 * in `err` on failure.
 */
bool agent_gate_screenshot(agent_gate *g, bool settle, struct conv_image *img,
                           char *err, size_t errlen);

#endif
