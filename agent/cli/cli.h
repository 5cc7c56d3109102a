/*
 * agent/cli/cli — the command line's shared pieces: strict number and
 * coordinate parsing, usage output, exit codes, and the sub-commands that
 * expose each module directly (deskhand screenshot, click, exec, ...).
 *
 * Exit codes used everywhere: 0 success, 1 runtime failure, 2 usage error
 * (bad argument, unknown key name, coordinate off screen) or a desktop
 * deskhand does not drive (a Wayland compositor without the protocols it
 * needs), 124 timeout (exec). Only main() and the cmd_* entry points decide them.
 *
 * The door of agent/cli, the outermost room: main.c dispatches to the
 * sub-commands or to agent/session. Driven by a person, its commands reach
 * os/, vision/ and executors/ directly (cmd_input.c, cmd_exec.c), not
 * through the gate, which stands between the model and the machine.
 * Owns: the exit status of every command, and their arguments' parsing.
 * May call: agent/session, agent/mcp (deskhand mcp), agent/batch (deskhand batch), agent/llm (doctor: whether
 * HTTP loads), agent/console (doctor: whether its server loads), agent/safety (the scanner), agent/util, base/, os/, vision/,
 * executors/.
 */
#ifndef DESKHAND_AGENT_CLI_H
#define DESKHAND_AGENT_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "executors/exec.h"

enum {
	CLI_OK = 0,
	CLI_FAIL = 1,
	CLI_USAGE = 2,
};

/*
 * Parses a whole decimal integer in [min, max]: no sign games, no trailing
 * garbage, no overflow. On failure prints "deskhand: <what>: ..." to stderr
 * and returns false.
 */
bool cli_parse_int(const char *s, long min, long max, const char *what, long *out);

/*
 * Opens the display for a command: on failure prints why and sets *status
 * (CLI_USAGE for a desktop deskhand does not drive, else CLI_FAIL); prints
 * the display's warning, if any, once. The caller closes the result.
 */
struct os_display;
struct os_display *cli_display_open(int *status);

/* Prints "deskhand: " + message + newline to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Prints the usage line of `cmd`; returns CLI_USAGE. After cli_parse_int
 * has said what was wrong, this is all that is left to say.
 */
int cli_usage(const char *cmd);
/* Prints an error and the usage line of `cmd`; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The sub-commands' table (commands.c): each one's entry point and usage,
 * written once for --help, `deskhand help`, usage errors and deskhand
 * --help's list.
 */
typedef int (*cli_run_fn)(int argc, char **argv);
/* The entry point of the sub-command `name`; NULL when there is none. */
cli_run_fn cli_command_find(const char *name);
/* The one-line synopsis of a sub-command ("" when unknown). */
const char *cli_synopsis(const char *cmd);
/* Whether a command's argv (argv[0] its name) asks for its usage: --help or
 * -h anywhere before a "--". Nothing else is run then, whatever else it holds. */
bool cli_help_asked(int argc, char **argv);
/* Prints the usage of `cmd` to standard output: exit 0, 1 when it cannot
 * be written, 2 (a usage error of help's) when there is no such command. */
int cli_help(const char *cmd);
/* deskhand --help: the commands and the agent's options; as cli_help. */
int cli_help_top(void);

/* Sub-commands: argv[0] is the sub-command's name. Return an exit code. */
int cmd_screen(int argc, char **argv);
int cmd_cursor(int argc, char **argv);
int cmd_screenshot(int argc, char **argv);
int cmd_windows(int argc, char **argv);
int cmd_find_text(int argc, char **argv);
int cmd_elements(int argc, char **argv);
int cmd_move(int argc, char **argv);
int cmd_click(int argc, char **argv);
int cmd_drag(int argc, char **argv);
int cmd_scroll(int argc, char **argv);
int cmd_type(int argc, char **argv);
int cmd_key(int argc, char **argv);
/* deskhand scan: exits 0 clean, 1 findings, 2 error (see cmd_scan.c). */
int cmd_scan(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
/* deskhand audit verify: exits 0 all verify, 1 a log fails, 2 error (see cmd_audit.c). */
int cmd_audit(int argc, char **argv);
/* deskhand help [COMMAND]: cli_help or cli_help_top. */
int cmd_help(int argc, char **argv);

/* deskhand exec's arguments. */
typedef struct cli_exec_args {
	exec_lang lang;
	sandbox_profile sandbox;
	unsigned timeout_s;
	size_t max_output;
	const char *workspace;     /* NULL: the current directory; points into argv */
	bool display;
} cli_exec_args;

/* Parses exec's argv (argv[0] is "exec"). Returns CLI_OK, or CLI_USAGE after
 * printing the error and the usage line. */
int cli_exec_parse(int argc, char **argv, cli_exec_args *out);

/* The container deskhand runs in, as doctor finds it (cmd_doctor_container.c):
 * advice only, never a reason to allow or refuse anything. */
typedef struct cli_container {
	const char *kind;                /* "podman", "docker", "Kubernetes", ...; NULL: none found */
	char evidence[128];              /* what showed it: "/run/.containerenv", ... */
	int proc_masked;                 /* paths the runtime mounted over inside /proc */
	char proc_masked_list[256];      /* the first of them, ", "-separated */
	int proc_listed;                 /* how many of them the list holds */
	bool seccomp;                    /* a seccomp filter is loaded on deskhand (the runtime's) */
} cli_container;

/* Looks for a container (marker files, environment, /proc/1/cgroup), and
 * reads /proc's masks and whether seccomp filters deskhand (anywhere). */
void cli_container_detect(cli_container *c);

/* The container setting that grants layer l, which the probe found
 * refused here; NULL when l works or when no container setting is known
 * to grant it (outside a container: only a masked /proc's). */
const char *cli_container_fix(const cli_container *c, const sandbox_probe *p, sandbox_layer l);

/* What doctor tries once and reports in both its parts. */
typedef struct cli_doctor_facts {
	struct os_display *display;      /* NULL: none could be had (display_why) */
	bool unsupported;                /* a desktop deskhand does not drive */
	char display_why[512];
	const sandbox_probe *probe;
	bool a11y_ok;                    /* the accessibility bus answered */
	char a11y_apps[2048];            /* ok: the applications with a tree */
	char a11y_why[256];              /* not ok: why */
	char bus[1024];                  /* the session bus found or started, when not the display's */
	bool bus_found;
	cli_container container;
} cli_doctor_facts;

/* doctor's container section (cmd_doctor_container.c): the runtime found,
 * and each of the sandbox's needs granted or refused, with the fix. */
void cli_doctor_container(const cli_doctor_facts *f);

/* doctor's first part (cmd_doctor_ready.c): each feature ready or not, and the fix. */
void cli_doctor_ready(const cli_doctor_facts *f);

#endif
