/*
 * executors/exec — pieces shared inside the module and exposed to its unit
 * tests: the block protocol, the language table, interpreter resolution,
 * and the session's insides shared by its files (exec_session.c its life,
 * exec_supervisor.c the processes inside its namespaces, exec_proc.c what
 * /proc shows of them, exec_run.c one block, exec_sessions.c the set).
 * Not a public header.
 */
#ifndef DESKHAND_EXEC_INTERNAL_H
#define DESKHAND_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/base.h"
#include "executors/exec.h"

/* Records a reason for exec_error(); returns false. */
bool exec_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the block protocol ------------------------------------------------ */

/* 32 lowercase hex digits of fresh randomness, NUL-terminated. */
#define EXEC_MARKER_LEN 32
bool exec_marker_new(char out[EXEC_MARKER_LEN + 1]);

/*
 * The frame sent to the driver: "MARKER LENGTH\n" followed by the code.
 * Writes the header into buf (at least 64 bytes); returns its length.
 */
size_t exec_frame_header(char *buf, size_t size, const char *marker, size_t code_len);

/*
 * Reassembles the driver's report lines ("MARKER STATUS\n") from the
 * control pipe. Lines of other markers (a stale block, a forged line) are
 * skipped; an over-long line is dropped whole.
 */
typedef struct exec_ctl_reader {
	char buf[128];
	size_t len;
	bool overflow;      /* inside a line that did not fit: skip to '\n' */
} exec_ctl_reader;

/*
 * Feeds bytes; returns true as soon as a complete line carrying `marker`
 * and a status in 0..255 is seen, with the status in *status. Bytes after
 * that line stay unread in data (the caller starts the next block with a
 * fresh reader anyway).
 */
bool exec_ctl_feed(exec_ctl_reader *r, const char *marker, const char *data,
                   size_t len, int *status);

/* ---- languages ---------------------------------------------------------- */

extern const char exec_driver_python[];
extern const char exec_driver_shell[];
extern const char exec_driver_javascript[];
extern const char exec_driver_ruby[];
extern const char exec_driver_r[];

/*
 * Finds the interpreter of `lang` on `path` (a PATH value; NULL = a
 * default), without running anything. With `display`, only in trusted
 * directories (exec_path_trusted). The first answer per language and grant
 * is kept for the life of the process. Ownership: the caller frees the
 * returned path. NULL with exec_error() "python3 is not installed (not
 * found on PATH)" or, for the display, why no candidate is trusted.
 */
char *exec_interpreter_find(exec_lang lang, const char *path, bool display);

/* Resolves every language both ways now, before any code has run (a
 * missing one is simply not kept). */
void exec_interpreters_resolve(const char *path);

/* True when no code could have changed the file or directory at `path`:
 * its real path is inside the system's directories, owned by root and
 * writable by nobody else, like each directory above it. */
bool exec_path_trusted(const char *path);

/* The directories of `path` (NULL = a default) that exec_path_trusted
 * accepts, ':'-separated: the PATH of code granted the display.
 * Ownership: the caller frees. NULL when out of memory. */
char *exec_trusted_path(const char *path);

/*
 * Fills argv (at least 8 slots, NULL-terminated) to run `interpreter` with
 * the driver of `lang`; isolated from the workspace's and the user's
 * modules when `display`. The strings are static or `interpreter` itself.
 */
void exec_interpreter_argv(exec_lang lang, const char *interpreter, bool display,
                           char **argv);

/* The program name looked up on PATH ("python3", "bash", "node", ...). */
const char *exec_lang_program(exec_lang lang);

/* ---- sessions ----------------------------------------------------------- */


/* deskhand -> supervisor, one datagram each. */
struct sup_cmd {
	char kind;                 /* 'I' interrupt the block, 'K' end the session */
	unsigned long long since;  /* 'I': when the block began, clock ticks since boot */
};

/* Supervisor -> deskhand, one datagram each. */
struct sup_msg {
	char kind;        /* 'R' interpreter started, 'E' set-up failed, 'X' interpreter exited */
	int status;       /* 'X': wait status (a stop, WIFSTOPPED, ends it too) */
	int err;          /* 'E': errno */
	char step[120];   /* 'E': what failed */
};

struct exec_session {
	exec_lang lang;
	bool display;
	sandbox_profile profile;
	unsigned timeout_ms;
	size_t max_output;
	bool (*watch)(void *user);
	void *watch_user;
	char *workspace;
	char *interp;
	char *argv[10];
	char **envp;
	sandbox_plan *plan;
	uid_t uid;
	gid_t gid;

	bool alive;
	bool started;              /* an interpreter ran at least once */
	char ended_why[160];       /* how the previous interpreter ended */
	long long oom_kills;       /* the kernel's count when it started, -1 unknown */
	pid_t sup_pid;
	int sup_pidfd, sup_fd, code_fd, ctl_fd, out_fd, err_fd;
	/* Seen from here: the interpreter's pid, the link naming the blocks
	 * pipe in /proc ("pipe:[INODE]"), its thread count when idle before
	 * any block ran, and whether work of a block was left running; the
	 * /proc files read after each block, held open (its syscall, its
	 * task directory, the supervisor's list of children). */
	pid_t interp_pid;
	char blocks_link[48];
	int base_threads;
	bool lingering;
	int syscall_fd, task_fd, sup_children_fd;

	int intr_r, intr_w;
	bool own_intr;
};

/* CLOCK_BOOTTIME in clock ticks, rounded down as /proc's start times are. */
unsigned long long exec_boot_ticks(void);

/* Asks the run loop polling `fd`'s pipe to interrupt the running block:
 * one write, async-signal-safe, errno preserved. */
void exec_poke_interrupt(int fd);

/* Closes *fd when open and marks it closed (-1). */
void exec_close_fd(int *fd);

/*
 * The session's life (exec_session.c). exec_session_new is
 * exec_session_create with the interrupt pipe of a set (intr_r < 0: the
 * session makes its own). exec_session_start starts a supervisor and its
 * interpreter, false with exec_error(); exec_session_terminate stops every
 * process of the session and reaps the supervisor, keeping the descriptors
 * so that what was written can still be read; exec_session_kill also
 * closes them.
 */
exec_session *exec_session_new(exec_lang lang, bool display, const exec_config *cfg,
                               int intr_r, int intr_w);
bool exec_session_start(exec_session *s);
void exec_session_terminate(exec_session *s);
void exec_session_kill(exec_session *s);

/*
 * The supervisor's process (exec_supervisor.c), entered in the child of
 * clone with deskhand's ends of nothing: `sup` its control socket, the
 * others the interpreter's ends of the pipes. Async-signal-safe only.
 */
_Noreturn void exec_supervisor_main(const exec_session *s, int sup, int code_r,
                                    int ctl_w, int out_w, int err_w);

/* Calls fn for every process listed in this pid namespace's /proc;
 * async-signal-safe. */
void exec_each_process(void (*fn)(pid_t pid, void *arg), void *arg);

/*
 * Seen from deskhand's side (exec_proc.c): exec_note_interpreter finds the
 * interpreter once it started and counts its threads once its driver waits
 * (until `deadline`, base_now_ms); exec_interp_idle is 1 when its main
 * thread waits for the next block, 0 when not, -1 when this kernel does not
 * tell; exec_interp_threads its thread count, -1 unknown;
 * exec_block_processes the session's processes besides the interpreter
 * started since `since` (boot ticks); exec_lingering_note what a block left
 * running after its end, for its message ("" when nothing).
 */
void exec_note_interpreter(exec_session *s, long long deadline);
void exec_forget_interpreter(exec_session *s);
/*
 * Writes one token ("\n", which every driver skips where a frame's header
 * may begin) to the blocks pipe. The pipe holds one page, so it polls
 * writable again only once the driver has read the token: the event that
 * it went back to reading, after which one look at /proc tells whether it
 * waits there. Call only between frames. False when the pipe is closed.
 */
bool exec_poke_driver(exec_session *s);
/*
 * How long to hold back the token after `pokes` that the driver read
 * without going back to wait (code reading the blocks pipe itself): none
 * for the first two, then 1, 2, 4 and at most EXEC_POKE_PAUSE_MAX_MS, so
 * such a driver is not fed in a loop.
 */
#define EXEC_POKE_PAUSE_MAX_MS 5
int exec_poke_pause_ms(int pokes);
int exec_interp_idle(const exec_session *s);
int exec_interp_threads(const exec_session *s);
int exec_block_processes(const exec_session *s, unsigned long long since);
/* Processes the kernel's out-of-memory killer has ended since boot (all of
 * the machine's, cgroups' limits included: /proc/vmstat), -1 unknown. */
long long exec_oom_kills(void);
void exec_lingering_note(exec_session *s, unsigned long long since, char *note, size_t size);

#endif
