/*
 * agent/safety/policy — who decides whether a proposed action runs.
 *
 * A pure module: no I/O, no globals, no clock, no X. Everything here is a
 * function of its arguments, so the whole truth table of the decision is
 * enumerated by tests/safety/test_policy.c. The conversation loop asks
 * agent_policy_decide() about every action before anything reaches an
 * executor or os/, records the answer in the audit log, and only then acts.
 *
 * The rules it implements (issue 5):
 *  1. OS input actions and code run with the display need a human yes for
 *     each one, whatever auto_run says, unless os_auto_approve was set at
 *     start (--os-auto-approve or the config file). Nothing in a session can
 *     switch os_auto_approve on.
 *  2. Observations (screenshot, cursor_position, zoom, wait, find_text) run
 *     without a question; the caller logs them.
 *  3. auto_run skips the question for ordinary code only.
 *  4. auto_run together with safe mode ask/auto at start: auto_run is
 *     switched off, with a notice. %auto_run true may switch it on later.
 *  5. Safe mode off: no scan; ask: the human is offered a scan before the
 *     run question; auto: every block is scanned. A block with findings
 *     always goes to a human with the findings shown, even under auto_run.
 *  8. Kill switch: before an action would run without a question, a pointer
 *     within 2 px of a real screen corner, or moved by someone since
 *     deskhand's last action, stops automatic control. While code runs,
 *     the gate watches for a push into a corner and ends the block at once
 *     (exec_config.watch), then stops automatic control the same way.
 *  9. Magic commands come only from the user's own input lines.
 * 10. Input that may reach deskhand's own terminal (its window under the target,
 *     the window keys go to, or a display that cannot tell who owns them)
 *     needs a human yes even under
 *     os_auto_approve: typed there, it would be read as the user's own line
 *     (a magic command, a yes).
 * 11. With no sandbox (--sandbox off) every code block can reach the
 *     display: each one is treated as code with the display (rule 1).
 * 12. A safety check the model's vendor attached to a proposal (OpenAI's
 *     pending_safety_checks) goes to a human, even under os_auto_approve
 *     and auto_run; with nobody to ask (non-interactive) it is refused.
 *     Only a human's yes acknowledges a check.
 *
 * The caller's protocol for one proposed action (the single gate):
 *
 *   kind: code -> CODE or CODE_DISPLAY; an OS action ->
 *         agent_policy_action_lookup() (unknown name: report, run nothing)
 *   audit "proposed"
 *   kill_tripped = agent_policy_killswitch(...) != NONE   (when on a display)
 *   d = agent_policy_decide(&in)
 *   if d.scan_first: agent_scan(), audit "scanned", set scanned/findings/
 *                    worst, d = agent_policy_decide(&in)
 *   if d.kill_tripped: agent_policy_settings_stop(&settings), print it,
 *                      re-base `last` on the current pointer
 *   RUN:   audit "approved" (by policy), run, audit "executed"
 *   ASK:   if offer_scan and the human wants a scan: scan, audit "scanned",
 *          decide again; show findings if show_findings; audit "asked";
 *          a yes: audit "approved" (by user), run, audit "executed";
 *          anything else or no answer: audit "denied", tell the model
 *          "the user declined" with the reason
 *   BLOCK: audit "blocked"; with end_run, print the reason and end the run
 *          with a non-zero status
 *   after an OS action: `last` = where the pointer is now
 */
#ifndef DESKHAND_AGENT_POLICY_H
#define DESKHAND_AGENT_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/safety/scan.h"
#include "agent/tools/tools.h"

/* ---- what is being proposed ------------------------------------------- */

typedef enum agent_policy_kind {
	AGENT_POLICY_CODE = 0,     /* a code block run without the display */
	AGENT_POLICY_CODE_DISPLAY, /* a code block run with access to the display */
	AGENT_POLICY_OS_INPUT,     /* mouse or keyboard input on the real desktop */
	AGENT_POLICY_OS_OBSERVE,   /* screenshot, pointer position, zoom, wait, OCR */
	AGENT_POLICY_KIND_COUNT
} agent_policy_kind;

/* "code", "code_display", "os_input", "os_observe"; "unknown" otherwise. */
const char *agent_policy_kind_name(agent_policy_kind kind);

typedef enum agent_policy_safe_mode {
	AGENT_POLICY_SAFE_OFF = 0,
	AGENT_POLICY_SAFE_ASK,
	AGENT_POLICY_SAFE_AUTO,
	AGENT_POLICY_SAFE_COUNT
} agent_policy_safe_mode;

/* "off", "ask", "auto", by the mode: the one table of their names
 * (--safe-mode, the config file, %safe_mode; lists in messages). */
extern const char *const agent_policy_safe_mode_names[AGENT_POLICY_SAFE_COUNT];
/* "off", "ask", "auto"; "unknown" otherwise. */
const char *agent_policy_safe_mode_name(agent_policy_safe_mode mode);
/* Parses "off", "ask" or "auto" (exactly, lower case). False otherwise. */
bool agent_policy_safe_mode_parse(const char *s, agent_policy_safe_mode *out);

/* ---- the computer actions ---------------------------------------------- */

/*
 * The actions of the computer tool, from the one table in actions.h. Every
 * one is either input (needs a human yes) or an observation; there is no
 * third class and an unknown name is never an observation.
 */
/*
 * Looks up an action by its exact name ("left_click"). On success stores the
 * action and its kind (AGENT_POLICY_OS_INPUT or AGENT_POLICY_OS_OBSERVE;
 * either pointer may be NULL) and returns true. An unknown name (or NULL)
 * returns false and stores nothing: the caller reports an error to the
 * model and runs nothing.
 */
bool agent_policy_action_lookup(const char *name, agent_action *action,
                                agent_policy_kind *kind);
/* AGENT_POLICY_OS_INPUT or AGENT_POLICY_OS_OBSERVE; out of range: INPUT. */
agent_policy_kind agent_policy_action_kind(agent_action action);

/* ---- the decision ------------------------------------------------------ */

typedef enum agent_policy_verdict {
	AGENT_POLICY_RUN = 0, /* run it now, no question */
	AGENT_POLICY_ASK,     /* ask the human; only a yes runs it */
	AGENT_POLICY_BLOCK,   /* run nothing and ask nobody (see end_run) */
	AGENT_POLICY_VERDICT_COUNT
} agent_policy_verdict;

/* "run", "ask", "block"; "unknown" otherwise. */
const char *agent_policy_verdict_name(agent_policy_verdict v);

typedef struct agent_policy_input {
	agent_policy_kind kind;
	bool auto_run;
	agent_policy_safe_mode safe_mode;
	/* Whether this block has been scanned, and what the scan found. Findings
	 * are taken into account only when scanned is true. */
	bool scanned;
	unsigned findings;
	agent_scan_severity worst; /* highest severity among the findings */
	bool os_auto_approve;
	/* agent_policy_killswitch() tripped just before this action. */
	bool kill_tripped;
	/* A person can be handed control at a terminal. False for one-shot and
	 * piped runs, where a tripped kill switch ends the run instead. */
	bool interactive;
	/* Rule 10: this OS input would reach deskhand's own terminal. Counts
	 * for AGENT_POLICY_OS_INPUT only. */
	bool own_terminal;
	/* Rule 11: code runs without a sandbox, so AGENT_POLICY_CODE is
	 * decided as AGENT_POLICY_CODE_DISPLAY. */
	bool unsandboxed;
	/* Rule 12: the proposal is a safety check raised by the vendor. */
	bool vendor_check;
} agent_policy_input;

typedef struct agent_policy_decision {
	agent_policy_verdict verdict;
	/*
	 * Scan the block now, without asking, then call agent_policy_decide()
	 * again with scanned = true. Set for code under safe mode auto, and
	 * under ask when no question would be asked anyway (auto_run): nobody is
	 * there to offer a scan to, so it happens by itself. While set, verdict
	 * is ASK so that a caller that forgot to scan still asks rather than
	 * runs.
	 */
	bool scan_first;
	/*
	 * Verdict ASK under safe mode ask with no scan yet: before the run
	 * question, ask "scan this block first?"; on yes, scan and decide
	 * again (the new decision carries the findings).
	 */
	bool offer_scan;
	/* Verdict ASK because the scan found something: show the findings with
	 * the question; on a no, tell the model why (the reason). */
	bool show_findings;
	/*
	 * The kill switch stopped this action from running without a question.
	 * The caller applies agent_policy_settings_stop() to its settings and
	 * prints the reason. Interactive: verdict ASK (control returns to the
	 * user, who decides this action). Non-interactive: verdict BLOCK.
	 */
	bool kill_tripped;
	/* Verdict BLOCK: the run must end now, with a clear message (the
	 * reason) and a non-zero status. */
	bool end_run;
	/* One line, for the audit log, the terminal and, on a denial or a
	 * block, the model. Never empty. */
	char reason[160];
} agent_policy_decision;

/*
 * Decides one proposed action. Pure: the result depends on *in alone.
 *
 * In order:
 *  - an out-of-range kind or safe mode: BLOCK, end_run ("invalid input");
 *    never treated as something harmless;
 *  - a vendor's safety check: ASK when interactive, else BLOCK (no end_run:
 *    the call is refused and the model told);
 *  - scanned with findings > 0, any kind: ASK, show_findings;
 *  - code kinds not yet scanned, safe mode auto: scan_first;
 *  - code kinds not yet scanned, safe mode ask: offer_scan when a question
 *    is due anyway, otherwise scan_first;
 *  - a question is due: OS input and code with the display unless
 *    os_auto_approve; code unless auto_run; code with the display needs
 *    both auto_run and os_auto_approve to run unasked (each flag waives only
 *    its own half); observations never ask; OS input aimed at deskhand's
 *    own terminal always asks; unsandboxed code counts as code with the
 *    display;
 *  - otherwise the action would run unasked: if the kill switch tripped,
 *    ASK (interactive) or BLOCK with end_run (non-interactive), both with
 *    kill_tripped; else RUN.
 * The kill switch therefore only matters for actions that would run
 * without a question; an action that is asked anyway is asked once.
 */
agent_policy_decision agent_policy_decide(const agent_policy_input *in);

/* ---- settings ---------------------------------------------------------- */

typedef struct agent_policy_settings {
	bool auto_run;
	agent_policy_safe_mode safe_mode;
	bool os_auto_approve; /* fixed at start; never switched on later */
} agent_policy_settings;

#define AGENT_POLICY_MAX_NOTICES 4

typedef struct agent_policy_startup {
	agent_policy_settings settings; /* what is in force */
	const char *notices[AGENT_POLICY_MAX_NOTICES];
	size_t n_notices;
	/* Non-NULL when os_auto_approve is set: a warning banner (several
	 * lines, ending in a newline) to print before anything else. */
	const char *banner;
} agent_policy_startup;

/*
 * Reconciles the settings requested at start (command line over config
 * file, merged by the caller). auto_run with safe mode ask or auto becomes
 * auto_run off, with a notice saying so (rule 4). An out-of-range safe mode
 * becomes ask, with a notice. Static strings only; nothing to free.
 */
agent_policy_startup agent_policy_settings_startup(const agent_policy_settings *requested);

/*
 * What a tripped kill switch leaves in force: os_auto_approve and auto_run
 * switched off. The user may switch auto_run on again (%auto_run true);
 * os_auto_approve stays off until deskhand is started again with it.
 * Returns a one-line notice (static).
 */
const char *agent_policy_settings_stop(agent_policy_settings *s);

/* ---- magic commands ---------------------------------------------------- */

typedef enum agent_policy_magic_cmd {
	AGENT_MAGIC_NONE = 0,     /* not a magic command: send to the model */
	AGENT_MAGIC_AUTO_RUN,     /* %auto_run [true|false] */
	AGENT_MAGIC_SAFE_MODE,    /* %safe_mode [off|ask|auto] */
	AGENT_MAGIC_RESET,        /* %reset */
	AGENT_MAGIC_UNDO,         /* %undo */
	AGENT_MAGIC_VERBOSE,      /* %verbose [true|false] */
	AGENT_MAGIC_TOKENS,       /* %tokens */
	AGENT_MAGIC_SAVE_MESSAGE, /* %save_message [path] */
	AGENT_MAGIC_LOAD_MESSAGE, /* %load_message [path] */
	AGENT_MAGIC_MARKDOWN,     /* %markdown [path] */
	AGENT_MAGIC_INFO,         /* %info */
	AGENT_MAGIC_HELP,         /* %help */
	AGENT_MAGIC_OS_AUTO_APPROVE, /* %os_auto_approve ...: always refused */
	AGENT_MAGIC_UNKNOWN,      /* starts with % but names no command */
} agent_policy_magic_cmd;

typedef struct agent_policy_magic {
	agent_policy_magic_cmd cmd;
	/* The argument: the rest of the line with surrounding blanks removed;
	 * points into the parsed line (not NUL-terminated), arg_len 0 when
	 * there is none. For AGENT_MAGIC_UNKNOWN, the unknown name instead. */
	const char *arg;
	size_t arg_len;
} agent_policy_magic;

/*
 * Recognises a magic command in one of the user's own input lines. The
 * caller guarantees where the line came from: never pass model text, tool
 * output or file contents. A line is magic when its first non-blank
 * character is '%'; the name runs to the first blank and is matched
 * exactly ("%auto_run", also accepted with '-' for '_'). Trailing newline
 * characters are ignored. Returns the command (AGENT_MAGIC_NONE for an
 * ordinary line, including NULL) and fills *out when out is not NULL.
 * Commands that take no argument but got one are still recognised; the
 * caller may reject the argument.
 */
agent_policy_magic_cmd agent_policy_magic_parse(const char *line, agent_policy_magic *out);

/* The command's name without '%' ("auto_run"); "" for NONE/UNKNOWN. */
const char *agent_policy_magic_name(agent_policy_magic_cmd cmd);

typedef enum agent_policy_change {
	AGENT_POLICY_CHANGED = 0, /* the setting now has the new value */
	AGENT_POLICY_UNCHANGED,   /* no argument (report only) or already so */
	AGENT_POLICY_INVALID,     /* bad argument; settings untouched */
	AGENT_POLICY_REFUSED,     /* os_auto_approve, or not a setting */
} agent_policy_change;

/*
 * Applies a %auto_run or %safe_mode command to *s. With no argument the
 * setting is only reported. %os_auto_approve, with any argument, is
 * REFUSED and never changes anything: it can only be set at start. Any
 * other command is REFUSED ("not a setting"). Writes a one-line message for
 * the user into msg (always NUL-terminated when msg_size > 0). Pure.
 */
agent_policy_change agent_policy_magic_apply(agent_policy_settings *s,
                                             const agent_policy_magic *m,
                                             char *msg, size_t msg_size);

/* ---- the kill switch --------------------------------------------------- */

typedef struct agent_policy_rect {
	int x, y, width, height;
} agent_policy_rect;

typedef struct agent_policy_point {
	int x, y;
} agent_policy_point;

typedef enum agent_policy_kill {
	AGENT_POLICY_KILL_NONE = 0,
	AGENT_POLICY_KILL_CORNER, /* pointer within 2 px of a real corner */
	AGENT_POLICY_KILL_MOVED,  /* pointer not where deskhand left it */
} agent_policy_kill;

/* Chebyshev distance, in pixels, from a corner pixel that trips. */
#define AGENT_POLICY_CORNER_PX 2

/*
 * Whether the kill switch trips with the pointer at `pointer`.
 *
 * Corners are those of each monitor (in root coordinates), and only the
 * real ones count: a monitor corner trips only when the three pixels
 * beyond it (beside, above/below, diagonal) lie on no monitor, so the
 * pointer is pinned there when pushed into the corner. A corner where two
 * monitors meet is a passage, not a corner. The pointer trips when it lies
 * on that monitor with |dx| <= 2 and |dy| <= 2 from the corner pixel.
 *
 * `last` is where deskhand left the pointer after its own last action
 * (NULL: no action yet, so a move cannot be judged). Any difference from
 * it means someone else moved the pointer. A corner wins over a move.
 *
 * With no monitors (n == 0) only the move check applies. When reason is
 * not NULL a one-line explanation is written there (NUL-terminated).
 * Pure. After a trip has been handled, and after each of its own actions,
 * the caller sets `last` to the pointer's current position.
 */
agent_policy_kill agent_policy_killswitch(agent_policy_point pointer,
                                          const agent_policy_rect *monitors,
                                          size_t n_monitors,
                                          const agent_policy_point *last,
                                          char *reason, size_t reason_size);

#endif
