/*
 * agent/ui/terminal — everything the person at the keyboard sees and answers.
 *
 * Two faces behind one interface: a human face (streaming Markdown with
 * colour on a terminal, plain text otherwise, a spinner while the model
 * thinks, line editing with libedit) and a machine face (`--json`: one JSON
 * object per line on stdout for every event). Questions are answered from
 * standard input in both: on a terminal through the line editor, otherwise
 * as plain lines; end of input is always "no".
 *
 * Only deskhand's own styling steers the terminal: everything else it is
 * given to show — model text, code, output, summaries, the arguments of
 * notices and errors — is written in its shown form (agent_show_*, controls
 * and invisible characters as visible marks). The --json face gives the
 * text itself, escaped as JSON.
 *
 * The terminal never decides anything: the gate asks, the terminal reports
 * the answer. It only reads the user's own input, so magic commands can only
 * come from here (the loop checks lines read by agent_term_read_line).
 *
 * The door of agent/ui (markdown.h is the room's own). Owns: the terminal's
 * modes (held between prompts, restored at exit), the line editor and its
 * history.
 * May call: agent/util, base/, libedit.
 */
#ifndef DESKHAND_AGENT_TERMINAL_H
#define DESKHAND_AGENT_TERMINAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct agent_term agent_term;

typedef enum agent_term_stream {
	AGENT_TERM_STDOUT,
	AGENT_TERM_STDERR,
} agent_term_stream;

typedef enum agent_term_answer {
	AGENT_ANSWER_NO = 0,    /* also anything unrecognised */
	AGENT_ANSWER_NONE,      /* end of input: no answer, which is a no */
	AGENT_ANSWER_YES,
	AGENT_ANSWER_EDIT,
	AGENT_ANSWER_DETAILS,
	AGENT_ANSWER_SCAN,
} agent_term_answer;

/* "no", "none", "yes", "edit", "details", "scan": the word a person types
 * for the answer (none: input ended), which is also how it is shown. */
const char *agent_term_answer_name(agent_term_answer a);

/*
 * Creates the terminal on stdin/stdout/stderr. `json` selects the machine
 * face; colour is used only on a terminal without NO_COLOR and TERM=dumb.
 * Ownership: caller destroys with agent_term_destroy (NULL is a no-op).
 */
agent_term *agent_term_create(bool json);
/*
 * The same over a terminal that is someone else's (an MCP host's: the
 * server's standard input and output carry the protocol and the caller has
 * put the controlling terminal, or nothing, in their place): its modes are
 * never held between questions and no history is kept.
 */
agent_term *agent_term_create_borrowed(void);
void agent_term_destroy(agent_term *t);

/* Whether standard input is a terminal (interactive use). */
bool agent_term_interactive(const agent_term *t);
bool agent_term_json(const agent_term *t);

/* The model's text as it streams in; agent_term_text_end closes the message. */
void agent_term_text(agent_term *t, const char *s, size_t n);
void agent_term_text_end(agent_term *t);
/*
 * The model's summarised thinking as it streams in, dimmed (plain without
 * colour; a "thinking" event in --json); the next text or the end of the
 * message starts on a new line.
 */
void agent_term_thinking(agent_term *t, const char *s, size_t n);

/* A proposal: code to run (with its language) or an OS action (JSON text). */
void agent_term_show_code(agent_term *t, const char *id, const char *language,
                          const char *code, bool display);
void agent_term_show_action(agent_term *t, const char *id, const char *summary,
                            const char *action_json);
/* Live output of running code. */
void agent_term_output(agent_term *t, const char *s, size_t n, agent_term_stream s_);
/* The result of a step, for --json consumers (humans saw it live). */
void agent_term_result(agent_term *t, const char *id, const char *status,
                       const char *text);
/* A decision taken without asking (auto-run, observation, block). */
void agent_term_decision(agent_term *t, const char *id, const char *decision,
                         const char *reason);

void agent_term_notice(agent_term *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void agent_term_warning(agent_term *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void agent_term_error(agent_term *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A spinner on stderr while waiting for the model (terminal only). */
void agent_term_spinner_start(agent_term *t, const char *label);
void agent_term_spinner_stop(agent_term *t);

/*
 * Asks a question about proposal `id`. `choices` is a subset of "yneds" in
 * the order to offer them. Returns the answer; end of input or an answer not
 * offered is AGENT_ANSWER_NO. Off a terminal, only "y"/"yes" approve. At a
 * terminal, keys typed before the question appeared are discarded (with a
 * notice), so that typed-ahead text cannot answer it.
 */
agent_term_answer agent_term_ask(agent_term *t, const char *id,
                                 const char *question, const char *choices);

/*
 * What a second place to answer (the console) may show beside a question:
 * the text an edit starts from (the action's JSON or the code) and the
 * spot the action aims at, in screen pixels. Borrowed for the call.
 */
typedef struct agent_term_ask_info {
	const char *edit_text;     /* NULL: nothing to edit */
	const char *language;      /* of code; NULL for an action */
	int n_targets;             /* 0..2 points: (x[i], y[i]) */
	int x[2], y[2];
} agent_term_ask_info;

/*
 * Another place told of questions, seen by the terminal only through these
 * calls, all made from the asking thread: open() when a question appears;
 * `fd` turns readable when it has an answer; settle() ends the question:
 * when that place answered first it returns true with its answer in *a,
 * the edited text in *edit (the caller frees; NULL: none) and who
 * answered in `who`; otherwise it records *a (the answer that counted)
 * and `who` on entry (whose it was: "terminal", or another place's name)
 * as the winner, tells the place, and returns false. First answer wins.
 *
 * The console answers. An MCP host is only told (told_only): its settle
 * never returns an answer, except a withdrawal (*a AGENT_ANSWER_NONE, who
 * says why) or, when the user trusted the host at start, its human's.
 */
typedef struct agent_term_remote {
	void *ctx;
	int fd;
	volatile sig_atomic_t *cancel;  /* set while waiting: the question ends with no answer */
	bool told_only;                 /* never counts as someone who can answer */
	void (*open)(void *ctx, const char *id, const char *question, const char *choices,
	             const agent_term_ask_info *info);
	bool (*settle)(void *ctx, agent_term_answer *a, char **edit, char *who, size_t wholen);
	/* The details of a proposal (the answer d), shown there too; may be NULL. */
	void (*details)(void *ctx, const char *id, const char *text);
} agent_term_remote;

/* The places beside the terminal, one of each. */
typedef enum agent_term_remote_slot {
	AGENT_TERM_CONSOLE,
	AGENT_TERM_HOST,
	AGENT_TERM_REMOTES,
} agent_term_remote_slot;

/*
 * Attaches a place to slot `slot` (NULL detaches). With one attached, a
 * question waits on standard input and on it together, and the end of
 * standard input only means the terminal cannot answer any more: the
 * question goes on waiting for a place that answers, if one is attached.
 */
void agent_term_set_remote(agent_term *t, agent_term_remote_slot slot, const agent_term_remote *r);
/* Whether some human can answer a question: a terminal or a place that answers. */
bool agent_term_answerable(const agent_term *t);

/* agent_term_ask with what the remote shows beside the question (info may be NULL). */
agent_term_answer agent_term_ask_ex(agent_term *t, const char *id, const char *question,
                                    const char *choices, const agent_term_ask_info *info);
/*
 * Where the last answer came from: "terminal", or the remote's `who`
 * (e.g. "console:approver"). Owned by t, valid until the next question.
 */
const char *agent_term_answered_from(const agent_term *t);
/* The edited text the remote answered EDIT with (caller frees), or NULL: use the editor. */
char *agent_term_take_edit(agent_term *t);

/*
 * The terminal between prompts: while deskhand works, keys wait as plain
 * bytes for the line editor (no canonical input, no echo; Ctrl-C still
 * signals), so a Ctrl-D or text typed ahead reaches the next prompt intact.
 * agent_term_tty_release hands the terminal back as found (before running
 * the user's editor), agent_term_tty_reclaim holds it again. Both are
 * no-ops off a terminal, in --json mode, for NULL, and in a background job
 * (which would be stopped by SIGTTOU for setting the terminal's modes).
 * agent_term_tty_restore puts the terminal back as found; it only calls
 * tcsetattr, so signal handlers may call it before the process ends.
 */
void agent_term_tty_release(agent_term *t);
void agent_term_tty_reclaim(agent_term *t);
void agent_term_tty_restore(void);

/*
 * Reads one line of user input (without the newline). Returns NULL at end
 * of input. Ownership: the caller frees the line.
 */
char *agent_term_read_line(agent_term *t, const char *prompt);

/*
 * Call after each of deskhand's own actions that could reach its terminal
 * (desktop input, code with the display): what arrived on the terminal
 * meanwhile was typed or pasted by that action, not by the user, and must
 * never read as the user's line (a magic command, a task, an answer). It is
 * discarded now and once more before the next prompt or question reads
 * (the terminal emulator may still be delivering it), with a notice.
 * Off a terminal: nothing.
 */
void agent_term_discard_action_input(agent_term *t);

/*
 * Shows a PNG file inline where the terminal can (kitty's graphics protocol,
 * iTerm2/WezTerm's inline images); elsewhere nothing (the caller has printed
 * the path). In --json mode an "image" event carries the path.
 */
void agent_term_show_image(agent_term *t, const char *png_path);

/* Prints a block of text as is (help, info, findings). */
void agent_term_print(agent_term *t, const char *text);
/* Prints the details of proposal `id` (the answer d), and shows them in the remote too. */
void agent_term_details(agent_term *t, const char *id, const char *text);

#endif
