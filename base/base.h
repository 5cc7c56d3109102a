/*
 * base/ — the ground floor every room stands on: the few things os/,
 * vision/, executors/ and agent/ all need and once each wrote for
 * themselves. One copy of each:
 *   - a room's "reason for the last failure", kept per thread
 *     (BASE_ERROR_TEXT), and base's own (base_error);
 *   - the monotonic clock, deadlines on it, and sleeps a flag can cut short;
 *   - the strict UTF-8 decoder and the encoder;
 *   - reading a whole file, writing a whole buffer, replacing a file
 *     atomically (and durably);
 *   - /proc/PID/stat, read after the process name (which may hold ')');
 *   - the HTTP servers' secrets (random hex, a constant-time comparison),
 *     their "[ADDR:]PORT", and the bound on connections of strangers;
 *   - programs found on PATH;
 *   - libraries loaded by soname on first use, their functions looked up
 *     into the table of the room that knows them.
 *
 * Owns: nothing that outlives a call, but base's own error text (one per
 * thread) and the base_conns tables its callers create and destroy.
 * May call: libc (dlopen too: base names no library; a room passes its
 * own). Includes nothing of deskhand's; never exits, never
 * prints.
 *
 * Error convention: a function that can fail returns false, NULL or -1
 * with errno set to the cause. base_atomic_* also leave in base_error() a
 * sentence naming the step that failed ("cannot create a file in /tmp/:
 * Permission denied"), written to follow the caller's own words about the
 * file: os_fail("cannot write PNG to %s: %s", path, base_error()).
 */
#ifndef DESKHAND_BASE_H
#define DESKHAND_BASE_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- error text ------------------------------------------------------ */

/*
 * A room's reason for its last failure, one per thread. At file scope,
 *     BASE_ERROR_TEXT(static, conv_err, conv_error, conv_fail)
 * defines the buffer `conv_err`, the room's public
 * `const char *conv_error(void)` (never NULL, "" before any failure) and
 * `bool conv_fail(const char *fmt, ...)`, which formats the reason, keeps
 * errno as it was and returns false, so that `return conv_fail("...")`
 * reads as the failure it is. The first argument is the linkage of the
 * fail function: `static`, or empty for one the room's other files call
 * (declared in its internal header). A reason longer than the buffer is
 * cut.
 */
typedef struct base_error_text {
	char text[1024];
} base_error_text;

/* Formats into e (vsnprintf); errno is left as it was. */
void base_error_vset(base_error_text *e, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define BASE_ERROR_TEXT(linkage, store, getter, failer)                      \
	static _Thread_local base_error_text store;                          \
	const char *getter(void);                                            \
	const char *getter(void)                                             \
	{                                                                    \
		return store.text;                                           \
	}                                                                    \
	__attribute__((format(printf, 1, 2))) linkage bool failer(const char *fmt, ...); \
	linkage bool failer(const char *fmt, ...)                            \
	{                                                                    \
		va_list ap_;                                                 \
		va_start(ap_, fmt);                                          \
		base_error_vset(&store, fmt, ap_);                           \
		va_end(ap_);                                                 \
		return false;                                                \
	}

/* What base_atomic_* last said on this thread; never NULL. */
const char *base_error(void);

/* ---- the clock ------------------------------------------------------- */

#define BASE_NS_PER_MS 1000000LL

/* CLOCK_MONOTONIC in nanoseconds: for deadlines and durations, never dates. */
int64_t base_now_ns(void);
/* The same in milliseconds. */
long long base_now_ms(void);
/* Milliseconds left until `deadline_ns` (base_now_ns's clock); <= 0 once past. */
long base_ms_until(int64_t deadline_ns);
/*
 * Sleeps until `deadline_ns` on the monotonic clock; signals do not cut it
 * short, unless `cancel` (may be NULL) is set: it is looked at before the
 * sleep, after every signal and at least every 50 ms (a flag set on
 * another thread than the one the signal interrupted), and ends the sleep
 * with false. True when the deadline was reached.
 */
bool base_sleep_until(int64_t deadline_ns, volatile sig_atomic_t *cancel);
/* base_sleep_until `ms` (< 0: 0) from now. */
bool base_sleep_ms(long ms, volatile sig_atomic_t *cancel);

/* ---- UTF-8 ----------------------------------------------------------- */

/*
 * One strict UTF-8 sequence at s, of the n bytes there: its length (1..4)
 * with the code point in *cp, or 0 when it is not valid UTF-8 (overlong, a
 * surrogate, above U+10FFFF, truncated, or n == 0). NUL is a character
 * here (length 1); callers that refuse it say so. The project's one
 * decoder: os/ types and reads window titles with it, vision/ reads OCR
 * text, agent/ checks the text of models and tools.
 */
size_t base_utf8_next(const char *s, size_t n, uint32_t *cp);
/* Encodes one code point (<= U+10FFFF) into buf[4]; returns its length. */
int base_utf8_encode(uint32_t cp, char buf[4]);

/* ---- files ----------------------------------------------------------- */

/*
 * The one whole-file reader. Reads fd to its end into fresh memory,
 * NUL-terminated (the NUL not counted in *len; len may be NULL). NULL when
 * more than `max` bytes come (errno EFBIG), on a read error (its errno) or
 * out of memory (ENOMEM). EINTR is retried. Ownership: the caller frees.
 */
char *base_read_fd(int fd, size_t max, size_t *len);
/* base_read_fd on `path` opened read-only (close-on-exec); open's errno too. */
char *base_read_file(const char *path, size_t max, size_t *len);
/*
 * A small file (/proc's) into the caller's buf: at most size - 1 bytes,
 * NUL-terminated. `path` is relative to dirfd (AT_FDCWD, or a directory
 * such as /proc/PID/task). Returns the bytes read, or -1 with errno.
 * Async-signal-safe (no allocation, no stdio): the sandbox's supervisor
 * uses it.
 */
ssize_t base_read_small(int dirfd, const char *path, char *buf, size_t size);

/*
 * The one write loop: all of data[0..len) to fd, through short writes and
 * EINTR. False with errno on an error (EIO when write made no progress);
 * what was written before stays written.
 */
bool base_write_all(int fd, const void *data, size_t len);

/*
 * Replacing a file so that readers see the old one or the whole new one,
 * never a part, and a crash does not lose both: the new content goes to
 * a temporary file in the same directory (created with `mode`, less the
 * umask, as any new file), which is flushed, named ".NAME.XXXXXXXX",
 * renamed over `path` and whose directory is flushed. The file is
 * unnamed (O_TMPFILE) until that moment where the filesystem allows it,
 * so a crash while writing leaves nothing behind; elsewhere it is named
 * from the start. On failure nothing is left behind and an existing
 * `path` is untouched.
 *
 *     base_atomic a;
 *     if (!base_atomic_begin(&a, path, 0666)) ...
 *     write to a.fd ...; on a failure: base_atomic_abort(&a)
 *     if (!base_atomic_commit(&a)) ...
 *
 * Failures leave errno and base_error() (see above). A directory that
 * cannot be opened or flushed (no read permission, a filesystem without
 * it) is not a failure: the rename is as durable as it can be made there.
 */
typedef struct base_atomic {
	int fd;         /* the temporary file: write the new content here */
	char *tmp;      /* its path (NULL while unnamed); malloc'ed, freed by
	                   commit or abort */
	char *path;     /* a copy of the path it replaces; likewise */
} base_atomic;

/* Creates the temporary file. After false, a is empty (abort is a no-op). */
bool base_atomic_begin(base_atomic *a, const char *path, mode_t mode);
/* Flushes, closes and renames it into place. Ends `a` either way. */
bool base_atomic_commit(base_atomic *a);
/* Closes and removes the temporary file. A no-op on an ended `a`. */
void base_atomic_abort(base_atomic *a);
/* All of it for data[0..len) in one call. */
bool base_atomic_replace(const char *path, const void *data, size_t len, mode_t mode);

/* ---- names of enum values ------------------------------------------- */

/*
 * A setting or a word from outside becomes one of a room's enum values
 * once, at the edge, through the table that owns its names:
 *
 *     const char *const sandbox_profile_names[SANDBOX_PROFILE_COUNT] = {
 *             [SANDBOX_OFF] = "off", [SANDBOX_STANDARD] = "standard", ...};
 *     BASE_NAME_FUNCTIONS(sandbox_profile, sandbox_profile_names,
 *                         sandbox_profile_from_name, sandbox_profile_name, "?")
 *
 * A table is indexed by the value; NULL stands for a value without a name
 * (a hole, or "not given": an AUTO value), which no text parses to and no
 * list shows. These are the only string comparisons of such names.
 */

/* Zero, or a compile-time error when `a` is a pointer rather than an array. */
#define BASE_MUST_BE_ARRAY_(a)                                                  \
	(0 * sizeof(struct { int not_an_array_ : 1 - 2 * __builtin_types_compatible_p( \
	                         __typeof__(a), __typeof__(&(a)[0])); }))
/* An array's number of elements. */
#define BASE_COUNT(a) (sizeof(a) / sizeof((a)[0]) + BASE_MUST_BE_ARRAY_(a))
/* A table of names as the two arguments (names, n) the functions below take. */
#define BASE_NAMES(table) (table), BASE_COUNT(table)

/* The value whose name is exactly s (case and all); -1 when none is, or s is NULL. */
int base_name_index(const char *const *names, size_t n, const char *s);
/* The same for the len bytes at s, which need not end in a NUL. */
int base_name_index_len(const char *const *names, size_t n, const char *s, size_t len);
/* names[v]; `unknown` when v is outside the table or has no name. */
const char *base_name_of(const char *const *names, size_t n, int v, const char *unknown);
/*
 * The names, in the table's order and without its holes, joined by `sep`
 * and before the last one by `last` (NULL: sep too) — "off|standard|strict",
 * "up, down, left or right" — into buf[size]: cut to fit and NUL-terminated
 * when size > 0. Returns the length the whole list has (as snprintf), so
 * that a result >= size says it was cut.
 */
size_t base_names_join(const char *const *names, size_t n, const char *sep, const char *last,
                       char *buf, size_t size);

/*
 * Defines an owner's two functions over its table, as declared in its
 * header: `bool parse(const char *s, type *out)` (false, *out untouched,
 * for anything but a name in the table) and `const char *name(type v)`
 * (`unknown` for a value without a name).
 */
#define BASE_NAME_FUNCTIONS(type, table, parse, name, unknown)                   \
	bool parse(const char *s_, type *out_)                                   \
	{                                                                        \
		int v_ = base_name_index(BASE_NAMES(table), s_);                 \
		if (v_ < 0)                                                      \
			return false;                                            \
		*out_ = (type)v_;                                                \
		return true;                                                     \
	}                                                                        \
	const char *name(type v_)                                                \
	{                                                                        \
		return base_name_of(BASE_NAMES(table), (int)v_, unknown);        \
	}

/* ---- processes ------------------------------------------------------- */

/* What callers read of /proc/PID/stat (fields as proc(5) counts them). */
typedef struct base_proc_info {
	char state;                     /* 3: R, S, D, Z, T, ... */
	int ppid;                       /* 4 */
	int pgrp;                       /* 5 */
	int session;                    /* 6 */
	unsigned long long start;       /* 22: clock ticks after boot */
	/* 48-51: where the kernel finds /proc/PID/cmdline's and environ's
	 * strings; all 0 when the kernel does not tell (before Linux 3.5, or
	 * another process's without ptrace access). */
	unsigned long arg_start, arg_end, env_start, env_end;
} base_proc_info;

/*
 * Reads /proc/PID/stat (pid <= 0: this process's, /proc/self/stat) into
 * *out. False (errno) when the process is gone or the line is not one:
 * fewer than 22 fields, or a non-numeric one among those above.
 * Async-signal-safe (no allocation, no stdio): the supervisor uses it.
 */
bool base_proc_stat(int pid, base_proc_info *out);
/* The command name of pid (/proc/PID/comm, without its newline) into buf;
 * "" when the process is gone or cannot be read. */
void base_proc_comm(int pid, char *buf, size_t size);
/* The parser alone, for one line of /proc/PID/stat's text. */
bool base_proc_stat_parse(const char *text, base_proc_info *out);

/* ---- secrets and listening addresses ---------------------------------- */

/* nbytes (at most 64) random bytes from the kernel as 2*nbytes hex digits
 * and a NUL in out. False, errno set, when none can be had. */
bool base_random_hex(char *out, size_t nbytes);
/* n random bytes from the kernel (getrandom); false with errno. */
bool base_random_bytes(unsigned char *out, size_t n);
/* Whether a and b are both exactly len bytes long and equal, in time that
 * does not depend on where they differ. */
bool base_same_secret(const char *a, const char *b, size_t len);

/* "[ADDR:]PORT", "[::1]:PORT" read once: the address (default 127.0.0.1). */
typedef struct base_listen {
	char addr[64];
	int port;
	bool v6;
	bool loopback;
	bool wildcard;   /* 0.0.0.0 or :: : no address a browser or a client uses */
} base_listen;
/* False (errno EINVAL) unless PORT is 0..65535 and ADDR numeric IPv4 or IPv6. */
bool base_listen_parse(const char *s, base_listen *out);

/*
 * The connections of a server with a connection limit, and which of them
 * are strangers': not (yet) carrying a request of a client it knows (a
 * valid token or session). A stranger may hold its connection only while
 * it is one of the newest `max_strangers`, and for at most `deadline_ms`
 * from its opening or its last request's end, however often it sends a
 * byte: otherwise trickling clients (slowloris) could hold every slot and
 * lock out the people the server is for. An older one is shut down
 * (shutdown(2), when the next connection opens): the server's own thread
 * then sees the end and closes it as any closed connection. The calls are
 * thread-safe; `fd` must stay open until base_conns_closed.
 */
typedef struct base_conns base_conns;
typedef struct base_conn base_conn;
/* Malloc'ed, for base_conns_destroy; NULL (ENOMEM) when out of memory. */
base_conns *base_conns_new(int max_strangers, long deadline_ms);
/* Frees the table (the connections must be closed by then); NULL: no-op. */
void base_conns_destroy(base_conns *cs);
/* A new connection, a stranger, after shutting down strangers too old or
 * too many; its entry, freed by base_conns_closed. NULL when out of
 * memory: the caller shuts it down itself. */
base_conn *base_conns_opened(base_conns *cs, int fd);
/* Its request is a known client's: no longer a stranger. NULL: no-op. */
void base_conns_known(base_conns *cs, base_conn *c);
/* Its request ended: a stranger again until its next. NULL: no-op. */
void base_conns_ended(base_conns *cs, base_conn *c);
/* It is closed: the entry is freed. NULL: no-op. */
void base_conns_closed(base_conns *cs, base_conn *c);

/* ---- programs on PATH --------------------------------------------------- */

/* path, or /usr/local/bin:/usr/bin:/bin when it is NULL or empty. */
const char *base_path_or_default(const char *path);
/*
 * The next directory of a PATH value at *cursor into dir (size bytes);
 * false at the end. Only absolute ones: an empty or relative entry means
 * the current directory, and nothing is ever taken from there. Too long
 * ones are skipped.
 */
bool base_path_next(const char **cursor, char *dir, size_t size);
/* Whether path is a regular file this process may execute. */
bool base_executable_file(const char *path);
/* The first executable `prog` in the directories of `path`, into out
 * (size bytes); false when there is none. */
bool base_path_find(const char *path, const char *prog, char *out, size_t size);

/* ---- libraries loaded on first use ------------------------------------ */

/*
 * Each shared library a process links costs it at every start (mapping,
 * and binding its symbols: ~0.1-2 ms each with what they pull in), so
 * what only some commands use is not linked: the room that knows the
 * library lists its functions once, as an X-macro of (prefix, name),
 *     #define OCR_FUNCS(X, p) X(p, TessBaseAPICreate) X(p, TessDeleteText)
 *     OCR_FUNCS(BASE_DLIB_STATIC, ocr_dl_)    pointers typed by the header
 *     static const base_dlib_sym ocr_syms[] = { OCR_FUNCS(BASE_DLIB_SYM, ocr_dl_) };
 *     static void *ocr_handle;
 *     static const base_dlib ocr_lib = BASE_DLIB(SONAME, "libtesseract5",
 *                                                &ocr_handle, ocr_syms);
 * (BASE_DLIB_EXTERN / BASE_DLIB_DEFINE when the room's files share the
 * table), loads it where a command first needs it,
 *     if (!base_dlib_load(&ocr_lib)) return vision_fail("OCR: %s", base_error());
 * and from there on calls through `#define TessDeleteText (*ocr_dl_TessDeleteText)`,
 * one a name, so that its code reads as the library's own. The prefix is
 * the room's: two rooms may load the same library, each its own table.
 */
typedef struct base_dlib_sym {
	const char *name;
	void **slot;
} base_dlib_sym;

typedef struct base_dlib {
	const char *soname;     /* the exact one the package provides */
	const char *package;    /* what a user installs to have it */
	void **handle;          /* NULL until loaded; kept for the process */
	const base_dlib_sym *syms;
	size_t n_syms;
} base_dlib;

#define BASE_DLIB(soname, package, handle, syms) \
	{ (soname), (package), (handle), (syms), sizeof(syms) / sizeof((syms)[0]) }
#define BASE_DLIB_STATIC(p, f) static __typeof__(f) *p##f;
#define BASE_DLIB_EXTERN(p, f) extern __typeof__(f) *p##f;
#define BASE_DLIB_DEFINE(p, f) __typeof__(f) *p##f;
#define BASE_DLIB_SYM(p, f) { #f, (void **)&p##f },

/*
 * Loads lib->soname once (RTLD_LOCAL: its names reach only the table) and
 * fills every slot; true at once when it is loaded already. Thread-safe.
 * False, nothing kept, with base_error() "cannot load SONAME (install
 * PACKAGE): ..." or "SONAME lacks NAME".
 */
bool base_dlib_load(const base_dlib *lib);
/* Whether base_dlib_load(lib) has succeeded in this process. */
bool base_dlib_loaded(const base_dlib *lib);
/* Another name from a loaded library or what it pulled in (dlsym), for a
 * function it may or may not have; NULL when absent or not loaded. */
void *base_dlib_symbol(const base_dlib *lib, const char *name);

#endif
