/*
 * executors/exec — pieces shared inside the module and exposed to its unit
 * tests: the block protocol, the language table, interpreter resolution.
 * Not a public header.
 */
#ifndef DESKHAND_EXEC_INTERNAL_H
#define DESKHAND_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
