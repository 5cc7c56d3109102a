/*
 * executors/exec — persistent interpreter sessions for the model's code.
 *
 * A session is one interpreter process (python3, bash, node, ruby, R) that
 * lives across blocks, so variables, imports, functions, the working
 * directory and the environment persist like in a notebook. It runs inside
 * the sandbox of executors/sandbox.h, as the first process's child in the
 * session's own namespaces.
 *
 * How a block travels: the parent writes "MARKER LENGTH\n" and the code to
 * a private pipe (fd 3 of the interpreter; the code's own stdin is
 * /dev/null). A small driver program inside the interpreter runs the block
 * in one persistent namespace and, when it is done, writes "MARKER STATUS\n"
 * on another private pipe (fd 4). The marker is 128 random bits, fresh for
 * every block, and never travels on stdout or stderr, so nothing the code
 * prints can end a block early.
 *
 * The report alone is not the end: the code shares the driver's process
 * and can learn the marker (the driver's variables, its memory, the blocks
 * pipe) and write the report while it keeps working. So the parent believes
 * a report only once the kernel shows the interpreter's main thread waiting
 * for the next block (read(2) on the blocks pipe; node: its event loop's
 * epoll wait), read from /proc/PID/syscall of the interpreter's host pid;
 * until then the block runs on, under its timeout. Then it looks at what
 * is still alive: threads of the interpreter beyond those it had idle
 * before the first block, and processes the block started (descendants of
 * the supervisor begun since the block began); the result's message names
 * them ("work is still running after the block reported its end: ...").
 * Output is attributed by time: what arrives while a block runs is that
 * block's (the message warns when an earlier block's work was still
 * running then); what arrives between two blocks opens the next block's
 * output under "[deskhand: output of an earlier block's background work,
 * written after that block ended:]" and ends with "[deskhand: this block's
 * output:]", never as that block's own. stdout and stderr are two pipes polled
 * together: each chunk arrives tagged with its stream, in the order the
 * reads happen (a pty would merge the streams and make the code believe it
 * talks to a terminal; two pipes keep them apart at the cost that writes
 * made within the same instant to both may be seen in either order).
 *
 * Limits per block: a timeout (default 120 s): the code gets SIGINT, a
 * short grace to print where it was, then every process of the session is
 * killed and the next block starts a fresh interpreter (result.restarted).
 * An interpreter that dies (exit, crash) is restarted the same way.
 *
 * What a block starts in the background (`xterm &`, subprocess.Popen) keeps
 * running across the next blocks (its block's message says so), and an
 * interrupt of a later block spares it; it ends with the session (timeout,
 * restart, destroy), never later.
 *
 * Threads: a session (or set) is used from one thread at a time, and that
 * thread must outlive it (the sandbox dies with the thread that created
 * it). exec_session_interrupt/exec_sessions_interrupt are the exceptions:
 * async-signal-safe, callable from a SIGINT handler or any thread.
 *
 * Error convention: functions that can fail return false or NULL and leave
 * the reason in exec_error() (per thread). Nothing here exits or prints.
 *
 * The door of executors/; the sandbox (sandbox.h) is part of it.
 * Owns: the interpreter processes of its sessions, their pipes and
 * sandboxes; every process a block starts ends with its session.
 * May call: base/, libseccomp, the kernel's namespaces, Landlock and
 * seccomp (only executors/ knows them).
 */
#ifndef DESKHAND_EXEC_H
#define DESKHAND_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "executors/sandbox.h"

/* The reason for the last failure on this thread; never NULL. */
const char *exec_error(void);

#define EXEC_DEFAULT_TIMEOUT_MS 120000u
#define EXEC_DEFAULT_MAX_OUTPUT 2800u
/* Status of a block that timed out (as timeout(1)) or was interrupted. */
#define EXEC_STATUS_TIMEOUT 124
#define EXEC_STATUS_INTERRUPTED 130
/* Status of a block its watch stopped (128 + SIGKILL). */
#define EXEC_STATUS_STOPPED 137
/* How often a block's watch (exec_config.watch) is consulted. */
#define EXEC_WATCH_MS 20

typedef enum exec_lang {
	EXEC_PYTHON,
	EXEC_SHELL,
	EXEC_JAVASCRIPT,
	EXEC_RUBY,
	EXEC_R,
	EXEC_LANG_COUNT
} exec_lang;

/* "python", "shell", "javascript", "ruby", "r", by the language: the one
 * table of their names (the model's "language", deskhand exec, the prompt). */
extern const char *const exec_lang_names[EXEC_LANG_COUNT];
/* The name (exact) <-> the enum; "?" for no language. */
bool exec_lang_from_name(const char *name, exec_lang *out);
const char *exec_lang_name(exec_lang lang);
/*
 * Whether an interpreter for `lang` is on $PATH (what the model is told it
 * may use). Cheap: looks for the program, runs nothing.
 */
bool exec_lang_installed(exec_lang lang);

typedef enum exec_stream {
	EXEC_STDOUT = 1,
	EXEC_STDERR = 2,
} exec_stream;

/*
 * Receives output live, in arrival order: `chunk` holds `len` raw bytes
 * exactly as the code wrote them (any bytes, invalid UTF-8 and NULs
 * included, not NUL-terminated), valid only during the call. Called from
 * inside exec_session_run on the calling thread.
 */
typedef void (*exec_output_fn)(const char *chunk, size_t len, exec_stream stream,
                               void *user);

/* ---- output kept for the model ------------------------------------------ */

/*
 * A bounded record of a block's output: the first max/2 and the last
 * max - max/2 characters, counted in Unicode code points after cleaning
 * (each invalid UTF-8 sequence becomes one U+FFFD, each NUL U+2400 "␀"; a
 * character cut between two chunks of one stream is joined). Memory stays
 * O(max) whatever the flood.
 */
typedef struct exec_output exec_output;

/* NULL on allocation failure. max 0 means EXEC_DEFAULT_MAX_OUTPUT. */
exec_output *exec_output_create(size_t max_chars);
/* NULL is a no-op. */
void exec_output_destroy(exec_output *out);

/*
 * Adds a chunk. Returns how many leading bytes of `buf` belong to the
 * head, i.e. what a live display shows before it falls silent until the
 * end (then exec_output_text gives the note and the tail). The streams are
 * decoded separately and interleaved by call order.
 */
size_t exec_output_feed(exec_output *out, exec_stream stream, const char *buf, size_t len);

/*
 * The text kept so far, valid UTF-8, NUL-terminated: everything when it
 * fits in max characters, otherwise head + "\n… N characters omitted …\n"
 * + tail. An incomplete sequence still pending is flushed as U+FFFD (so
 * call it once the output is complete). *len gets
 * the byte length, *head_len the length of the head part (== *len when
 * nothing was cut), *total and *omitted the character counts; any of
 * them may be NULL.
 * Ownership: the caller frees the result with free(). NULL on allocation
 * failure.
 */
char *exec_output_text(exec_output *out, size_t *len, size_t *head_len,
                       size_t *total, size_t *omitted);

/* ---- results ----------------------------------------------------------- */

typedef struct exec_result {
	/* The block's exit status: 0 success; Python/Ruby/JavaScript/R 1 for an
	 * uncaught error (the traceback is in the output) or the code's own
	 * exit code (sys.exit(3) -> 3); shell the last command's status; 128+N
	 * when the interpreter was killed by signal N; 124 timed out; 130
	 * interrupted. */
	int status;
	bool timed_out;
	bool interrupted;
	/* The watch (exec_config.watch) stopped the block: every process of the
	 * session was killed at once, with no grace. */
	bool stopped;
	/* This block ran in a fresh interpreter because the previous one had
	 * ended (crash, exit, timeout): earlier variables are gone. */
	bool restarted;
	/* The interpreter ended during this block; the next block restarts. */
	bool session_ended;
	/* Output kept for the model (see exec_output_text). Owned by the result. */
	char *output;
	size_t output_len;
	size_t output_head_len;
	size_t chars_total;
	size_t chars_omitted;
	/* What deskhand has to say about the run, or "" ("timed out after
	 * 120 s: interrupted, then every process was killed; ..."). */
	char message[600];
} exec_result;

/* Frees what the result owns and zeroes it. NULL is a no-op. */
void exec_result_finish(exec_result *res);

/* ---- configuration ----------------------------------------------------- */

typedef struct exec_config {
	sandbox_profile sandbox;     /* default SANDBOX_STANDARD */
	const char *workspace;       /* working directory; NULL = the current one */
	unsigned timeout_ms;         /* per block; default EXEC_DEFAULT_TIMEOUT_MS */
	size_t max_output;           /* characters kept; default EXEC_DEFAULT_MAX_OUTPUT */
	/* Environment the code starts from (scrubbed by the sandbox); NULL =
	 * the process's environ. PATH in it also finds the interpreters. */
	char *const *environ;
	/* Sandbox limits; NULL = sandbox_limits_default(). */
	const sandbox_limits *limits;
	/* Paths the code must neither read nor change nor replace (deskhand's
	 * configuration, data, audit log): NULL-terminated, NULL = none; see
	 * sandbox_plan_hide. The strings must outlive the sessions (a set
	 * copies them). */
	const char *const *hidden;
	/*
	 * Consulted every EXEC_WATCH_MS while a block runs, on the thread that
	 * runs it (output floods included); true stops the block at once: every
	 * process of the session is killed, no grace, result.stopped. It must
	 * return quickly. NULL: no watch. What it watches (the agent's kill
	 * switch) is none of the executors' business.
	 */
	bool (*watch)(void *user);
	void *watch_user;
} exec_config;

/* Fills the defaults above. */
void exec_config_init(exec_config *cfg);

/* ---- one session -------------------------------------------------------- */

typedef struct exec_session exec_session;

/*
 * Finds the interpreter on PATH (a version manager's shim is started as it
 * is, inside the sandbox; nothing found on PATH ever runs outside it),
 * checks the workspace and the sandbox profile, and starts the
 * interpreter, so that a failure shows here and the first block runs warm.
 * `display` grants the X display (DISPLAY, XAUTHORITY and the X sockets
 * stay reachable): such a session is separate from the ordinary one
 * because a sandbox cannot be loosened once applied, and only the code the
 * human saw may run in it: its interpreter comes from the system's
 * directories (a file no code could have changed), its PATH holds only
 * such directories, and it imports nothing from the workspace or the
 * user's folders (python3 -I, ruby --disable-gems, Rscript --vanilla).
 * Fails with "python3 is not installed (not found on PATH)", "the strict
 * profile needs ...", etc. The configuration is copied.
 * Ownership: the caller owns the session (exec_session_destroy).
 */
exec_session *exec_session_create(exec_lang lang, bool display, const exec_config *cfg);

/*
 * Runs one block of `len` bytes, streaming output to fn (may be NULL) and
 * filling *res (which the caller finishes with exec_result_finish).
 * Returns true whenever the block was attempted — code errors, timeouts,
 * crashes and interruptions are results, not failures. Returns false
 * (exec_error()) only when no interpreter could be started (res is then
 * zeroed) or the code contains a NUL byte.
 */
bool exec_session_run(exec_session *s, const char *code, size_t len,
                      exec_output_fn fn, void *user, exec_result *res);

/*
 * Asks the running block to stop: SIGINT to the interpreter and to the
 * processes of its group that the block started (not to those an earlier
 * block left in the background, unless they began within the clock tick,
 * 10 ms, in which this block began), and if the block has not ended after
 * a 2 s grace, every process of the session is killed. Async-signal-safe (one write to a pipe the run loop
 * polls); a request made while no block runs is dropped when the next
 * block starts.
 */
void exec_session_interrupt(exec_session *s);

/* Kills every process of the session, frees it. NULL is a no-op. */
void exec_session_destroy(exec_session *s);

/* The interpreter binary the session runs (resolved path); owned by s. */
const char *exec_session_interpreter(const exec_session *s);

/* ---- the sessions of one conversation ------------------------------------ */

/*
 * One session per language and per display grant, created on first use
 * with the same configuration. The agent keeps one set per conversation.
 */
typedef struct exec_sessions exec_sessions;

/* NULL on failure (exec_error). Resolves every language's interpreter now,
 * before any code of the set runs, and keeps that answer for the process.
 * Ownership: exec_sessions_destroy. */
exec_sessions *exec_sessions_create(const exec_config *cfg);
/* Kills every session, frees. NULL is a no-op. */
void exec_sessions_destroy(exec_sessions *set);

/* Like exec_session_run on the (lang, display) session, creating it first
 * if needed; false when it cannot be created (exec_error). */
bool exec_sessions_run(exec_sessions *set, exec_lang lang, bool display,
                       const char *code, size_t len, exec_output_fn fn, void *user,
                       exec_result *res);

/* Interrupts whichever block of the set is running. Async-signal-safe. */
void exec_sessions_interrupt(exec_sessions *set);

/* Ends one session (the next block of that language starts fresh). */
void exec_sessions_reset(exec_sessions *set, exec_lang lang, bool display);

#endif
