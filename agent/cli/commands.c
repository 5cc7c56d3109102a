/*
 * agent/cli/commands — the table of sub-commands: each one's entry point
 * and its usage, written once. `deskhand CMD --help`, `deskhand help CMD`,
 * the "usage:" line of every usage error and the command list of
 * `deskhand --help` all print from it. The bash completion is generated
 * from what it prints (completions/complete.py) and the man page held to it
 * (tests/cli/test_manual.py), so its layout is a contract: option lines
 * start "  -", the flags and their values end at two spaces, a value's
 * choices are written "a | b | c".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/batch/batch.h"
#include "agent/mcp/mcp.h"
#include "agent/session/session.h"
#include "config.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

/* The defaults the texts below state, held to the code that sets them. */
_Static_assert(EXEC_DEFAULT_TIMEOUT_MS == 120000u, "exec's usage says --timeout 120");
_Static_assert(EXEC_DEFAULT_MAX_OUTPUT == 2800u, "exec's usage says --max-output 2800");
_Static_assert(VISION_A11Y_TIMEOUT_MS == 1000, "elements' usage says --timeout-ms 1000");
_Static_assert(VISION_DEFAULT_MAX_W == 1280 && VISION_DEFAULT_MAX_H == 800,
               "screenshot's usage says --screen-max 1280x800");
_Static_assert(OS_COMBO_MAX == 8, "key's usage says 8 keys");

/* An option or an argument: its spelling (with its values) and what it does;
 * '\n' in `what` starts a continuation line. */
struct cli_item {
	const char *name;
	const char *what;
};

#define CLI_ITEMS_MAX 8

struct cli_command {
	const char *name;
	cli_run_fn run;
	const char *summary;    /* one line in deskhand --help's list */
	const char *synopsis;   /* the line after "usage: " */
	const char *about;      /* what it does; lines of at most 78 columns */
	struct cli_item args[CLI_ITEMS_MAX];
	struct cli_item opts[CLI_ITEMS_MAX];
};

static const struct cli_command commands[] = {
{"screen", cmd_screen, "print the screen size, then one line per monitor",
 "deskhand screen",
 "Prints the screen's size as WxH, then one line per monitor,\n"
 "\"monitor N: WxH+X+Y\", numbered as --monitor takes them.\n",
 {{NULL, NULL}}, {{NULL, NULL}}},

{"cursor", cmd_cursor, "print the pointer position as \"X Y\"",
 "deskhand cursor",
 "Prints where the pointer is as \"X Y\", in screen pixels. A wlroots compositor\n"
 "tells no program where the pointer is: there it fails (exit 1).\n",
 {{NULL, NULL}}, {{NULL, NULL}}},

{"screenshot", cmd_screenshot, "capture the screen, a region or a monitor as PNG",
 "deskhand screenshot [-o FILE] [--region X,Y,W,H] [--monitor N] [--max-side N | "
 "--screen-max WxH] [--grid]",
 "Captures the whole screen, a region or one monitor at full resolution and\n"
 "writes it as an RGB PNG; the file appears complete or not at all.\n"
 "--max-side, --screen-max and --grid write the model's view instead: one\n"
 "monitor (the pointer's, or --monitor N) scaled down to fit, as the agent\n"
 "sends it.\n",
 {{NULL, NULL}},
 {{"-o, --output FILE", "where the PNG goes (default screenshot.png); - is\n"
                        "standard output, refused on a terminal"},
  {"--region X,Y,W,H", "the W x H pixels at X,Y, inside the screen"},
  {"--monitor N", "monitor N as deskhand screen lists them"},
  {"--max-side N", "the model's view, its longer side at most N pixels\n"
                   "(16..16384)"},
  {"--screen-max WxH", "the model's view, fitted into WxH (the agent's 1280x800)"},
  {"--grid", "the model's view with a labelled line every 100 of\n"
             "its pixels"},
  {NULL, NULL}}},

{"windows", cmd_windows, "list top-level windows, or activate one",
 "deskhand windows [--activate ID]",
 "Lists the top-level windows, bottom of the stack first, one line each:\n"
 "0xID PID ACTIVE WxH+X+Y CLASS TITLE. PID is - when unknown, ACTIVE * for the\n"
 "active window and - for the others, CLASS has spaces shown as _, TITLE its\n"
 "control characters as ?.\n",
 {{NULL, NULL}},
 {{"--activate ID", "raise and focus window ID (0x1a00003 or decimal)\n"
                    "through the window manager (EWMH; exit 1 without one)"},
  {NULL, NULL}}},

{"elements", cmd_elements, "list the active window's controls from the accessibility tree",
 "deskhand elements [--all-windows] [--json] [--timeout-ms N]",
 "Lists the active window's controls from its accessibility tree (AT-SPI), one\n"
 "line each: ID ROLE \"NAME\" STATES X Y W H, the box in screen pixels. A window\n"
 "without a tree (xterm) lists nothing and says why on standard error, exit 0.\n"
 "Starts a private session bus when the display has none.\n",
 {{NULL, NULL}},
 {{"--all-windows", "every application's windows, not only the active one"},
  {"--json", "one JSON object: {\"elements\": [...], \"partial\", \"note\"}"},
  {"--timeout-ms N", "the longest a read takes, 1..60000 ms (default 1000)"},
  {NULL, NULL}}},

{"find-text", cmd_find_text, "find text on the screen with local OCR",
 "deskhand find-text [--all] [--monitor N] TEXT...",
 "Reads the screen with local OCR (Tesseract: nothing leaves the machine) and\n"
 "prints the best match as CX CY W H CONFIDENCE TEXT: its centre and size in\n"
 "screen pixels and the confidence, 0..100. Case is ignored; several words\n"
 "match across word gaps on one line. Exit 1 when nothing is found.\n",
 {{"TEXT...", "the words to find; -- before a text that starts with -"},
  {NULL, NULL}},
 {{"--all", "every match, the best first"},
  {"--monitor N", "read only monitor N"},
  {NULL, NULL}}},

{"move", cmd_move, "move the pointer",
 "deskhand move X Y",
 "Moves the pointer to X Y.\n",
 {{"X Y", "a point on the screen, in pixels from its top left"},
  {NULL, NULL}},
 {{NULL, NULL}}},

{"click", cmd_click, "click (double/triple with --count) here or at X Y",
 "deskhand click [X Y] [--button left|middle|right|back|forward] [--count N]",
 "Clicks a mouse button where the pointer is, or at X Y (the pointer moves\n"
 "there first).\n",
 {{"X Y", "the point, on the screen (default: where the pointer is)"},
  {NULL, NULL}},
 {{"--button B", "left | middle | right | back | forward, or 1 2 3 8 9\n"
                 "(default left)"},
  {"--count N", "clicks in a row, 1..10: 2 is a double click (default 1)"},
  {NULL, NULL}}},

{"drag", cmd_drag, "press at X1 Y1, move, release at X2 Y2",
 "deskhand drag X1 Y1 X2 Y2 [--button left|middle|right|back|forward]",
 "Presses a mouse button at X1 Y1, moves to X2 Y2 and releases it there.\n",
 {{"X1 Y1 X2 Y2", "where the drag starts and ends, both on the screen"},
  {NULL, NULL}},
 {{"--button B", "left | middle | right | back | forward (default left)"},
  {NULL, NULL}}},

{"scroll", cmd_scroll, "wheel clicks (default 3), here or --at X Y",
 "deskhand scroll up|down|left|right [AMOUNT] [--at X Y]",
 "Turns the mouse wheel where the pointer is, or at X Y.\n",
 {{"up|down|left|right", "the direction"},
  {"AMOUNT", "wheel clicks, 1..1000 (default 3)"},
  {NULL, NULL}},
 {{"--at X Y", "move the pointer to X Y first"},
  {NULL, NULL}}},

{"type", cmd_type, "type Unicode text exactly",
 "deskhand type [--delay-ms N] TEXT",
 "Types TEXT exactly, any Unicode: a character the keymap lacks is typed\n"
 "through a spare key bound for the moment, and the keymap is put back after.\n"
 "A newline is Return and a tab Tab; other control characters are refused.\n",
 {{"TEXT", "one argument (quote it); - reads standard input (16\n"
           "MiB at most); -- before a text that starts with -"},
  {NULL, NULL}},
 {{"--delay-ms N", "a pause between characters, 0..10000 ms (default: as\n"
                   "fast as stays exact)"},
  {NULL, NULL}}},

{"key", cmd_key, "press key combinations (xdotool names: ctrl+shift+t)",
 "deskhand key [--down|--up|--hold MS] COMBO...",
 "Presses each combination in turn: its keys in order, then released in\n"
 "reverse. Keys have xdotool's (X keysym) names: ctrl+shift+t, alt+F4, Return,\n"
 "ctrl++, super.\n",
 {{"COMBO...", "key names joined by +, at most 8 keys each"},
  {NULL, NULL}},
 {{"--down", "press the keys and leave them down for a later --up\n"
             "(on Wayland they are released as deskhand exits)"},
  {"--up", "release keys a --down left down"},
  {"--hold MS", "keep each combination down MS milliseconds, 0..600000"},
  {NULL, NULL}}},

{"scan", cmd_scan, "check code for dangerous operations (0 clean, 1 findings, 2 error)",
 "deskhand scan [--lang shell|python|javascript] [--json] [--rules FILE] "
 "[--no-user-rules] [--check-rules] [--normalized] FILE|-",
 "Checks code with the agent's scanner and prints each finding as\n"
 "LINE:SEVERITY:RULE-ID: message. The language comes from --lang, the file's\n"
 "extension or its #! line. Exit 0 no findings, 1 findings, 2 an error.\n",
 {{"FILE|-", "the code; - reads standard input"},
  {NULL, NULL}},
 {{"--lang L", "shell | python | javascript"},
  {"--json", "one JSON object: file, language, findings, worst"},
  {"--rules FILE", "these rules instead of the installed set"},
  {"--no-user-rules", "without $XDG_CONFIG_HOME/deskhand/scan-rules.json"},
  {"--check-rules", "check every rule's own examples, print how many pass\n"
                    "(then FILE is optional)"},
  {"--normalized", "print the code as the scanner reads it, not the findings"},
  {NULL, NULL}}},

{"exec", cmd_exec, "run code from standard input in a sandboxed interpreter",
 "deskhand exec [--sandbox off|standard|strict] [--timeout SEC] [--max-output N] "
 "[--workspace DIR] [--display] LANG",
 "Runs the code on standard input in one sandboxed interpreter, streams its\n"
 "output and exits with the code's own status, 124 after the timeout. Past\n"
 "--max-output characters it keeps the head and the tail, as the model would.\n",
 {{"LANG", "python | shell | javascript | ruby | r"},
  {NULL, NULL}},
 {{"--sandbox P", "off | standard | strict (default standard; deskhand\n"
                  "doctor says which can run here)"},
  {"--timeout SEC", "1..86400 seconds (default 120)"},
  {"--max-output N", "characters kept, 16..100000000 (default 2800)"},
  {"--workspace DIR", "the directory the code works in (default: the\n"
                      "current one)"},
  {"--display", "let the code reach the display, in a session of its\n"
                "own with a trusted interpreter"},
  {NULL, NULL}}},

{"doctor", cmd_doctor, "what is ready here, what fixes the rest; the sandbox's layers",
 "deskhand doctor",
 "Reports what works on this machine, each part tried for real. First each\n"
 "feature (the agent, OS control, OCR, accessibility, the console, code in each\n"
 "language, each sandbox profile) ready or not, with the Debian package or\n"
 "setting that fixes what is not; then the sandbox's layers and the profiles\n"
 "they allow, the doors the standard profile closes, the desktop and how\n"
 "deskhand drives it, the accessibility bus, and who can answer deskhand mcp's\n"
 "questions. Exit 1 when the standard profile cannot run.\n",
 {{NULL, NULL}}, {{NULL, NULL}}},

{"audit", cmd_audit, "verify audit logs: hash chain, end and approvals (exit 1: tampered)",
 "deskhand audit verify [FILE...]",
 "Checks audit logs: each line's hash chain, the log's head file, and that\n"
 "nothing ran without a yes. Prints FILE: ok: ... or FILE: line N: problem.\n"
 "Exit 0 every log verifies, 1 a log fails, 2 a usage error or a log that\n"
 "could not be read, 3 a log whose only fault is the end a crash leaves\n"
 "(one line past its head, whole or cut short: everything before it verifies).\n",
 {{"verify", "the action"},
  {"FILE...", "the logs (default: every log in\n"
              "$XDG_DATA_HOME/deskhand/audit); -- before a name\n"
              "that starts with -"},
  {NULL, NULL}},
 {{NULL, NULL}}},

{"mcp", agent_mcp_main, "serve the desktop to an agent host over MCP (every action gated)",
 "deskhand mcp [--http [ADDR:]PORT] [--http-allow-remote] [--trust-host-approvals] "
 "[AGENT OPTIONS]",
 "An MCP server (2025-11-25 and 2026-07-28) on standard input and output: the\n"
 "host's tools are deskhand's commands, and every call passes deskhand's gate.\n"
 "Desktop actions and display code wait for a human's yes in the controlling\n"
 "terminal or the console (--console 0); never in the host, whose model drives\n"
 "the calls. The agent's options apply (deskhand --help): --console, --audit,\n"
 "--sandbox, --screen-max, --monitor, --os-auto-approve, --workspace, -y, ...\n",
 {{NULL, NULL}},
 {{"--http [ADDR:]PORT", "MCP's Streamable HTTP instead of stdio (loopback by\n"
                         "default; port 0 picks one); the URL and a bearer token\n"
                         "go to standard error and to AUDIT.mcp (0600)"},
  {"--http-allow-remote", "let --http listen on a non-loopback address"},
  {"--trust-host-approvals", "let the host's elicitation answers approve actions: only\n"
                             "when the host relays a human and its model cannot answer"},
  {NULL, NULL}}},

{"batch", agent_batch_main, "run a file of tasks unattended, each on a desktop of its own",
 "deskhand batch TASKS.jsonl --out DIR [--parallel N] [--index I --count C] [--console] "
 "[AGENT OPTIONS] | --report DIR",
 "Runs each task of TASKS.jsonl (one JSON object a line: id, instruction,\n"
 "screen, wm, setup, apps, check, timeout_s, max_steps) on a private X server\n"
 "with its own session bus, home and files, none visible to another task;\n"
 "its checker's exit status 0 is success. Each finished task is a line of\n"
 "DIR/results.jsonl; run again, the batch resumes where it stopped.\n"
 "DIR/report.html shows every step. Desktop actions need --os-auto-approve\n"
 "(or --console, a console per task); without either they are refused.\n"
 "The agent's options apply to every task; {id} in them is the task's id.\n",
 {{"TASKS.jsonl", "the tasks (docs/batch.md: the fields)"},
  {NULL, NULL}},
 {{"--out DIR", "where results.jsonl, report.html and a folder per\n"
                "task go"},
  {"--parallel N", "tasks at once (default 1)"},
  {"--index I", "with --count C: only tasks I, I+C, I+2C, ... (a\n"
                "Kubernetes Indexed Job: I is JOB_COMPLETION_INDEX)"},
  {"--count C", "the number of shares (the Job's completions)"},
  {"--console", "a console per task (port picked), its link in the\n"
                "progress and in DIR/ID/console.url"},
  {"--report DIR", "only (re)write DIR/report.html"},
  {NULL, NULL}}},

{"help", cmd_help, "print a command's usage, or this",
 "deskhand help [COMMAND]",
 "Prints COMMAND's usage, as deskhand COMMAND --help does; without one,\n"
 "deskhand --help.\n",
 {{"COMMAND", "one of the commands deskhand --help lists"},
  {NULL, NULL}},
 {{NULL, NULL}}},
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < COMMAND_COUNT; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

cli_run_fn cli_command_find(const char *name)
{
	const struct cli_command *c = find(name);
	return c != NULL ? c->run : NULL;
}

const char *cli_synopsis(const char *cmd)
{
	const struct cli_command *c = find(cmd);
	return c != NULL ? c->synopsis : "";
}

bool cli_help_asked(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

/* "  NAME   what": the name padded to column 24, or alone on its line when
 * longer; each '\n' of `what` starts a line at column 24. */
static void print_item(FILE *f, const struct cli_item *it)
{
	if (strlen(it->name) <= 21)
		fprintf(f, "  %-21s ", it->name);
	else
		fprintf(f, "  %s\n%24s", it->name, "");
	for (const char *p = it->what; *p != '\0'; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%24s", "");
	}
	fputc('\n', f);
}

static void print_items(FILE *f, const char *heading, const struct cli_item *items)
{
	if (items[0].name == NULL)
		return;
	fprintf(f, "\n%s:\n", heading);
	for (size_t i = 0; i < CLI_ITEMS_MAX && items[i].name != NULL; i++)
		print_item(f, &items[i]);
}

/* Help goes to standard output; a write that failed there is a failure (exit 1). */
static int help_written(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write the help: %s", strerror(errno));
		return CLI_FAIL;
	}
	return CLI_OK;
}

int cli_help(const char *cmd)
{
	const struct cli_command *c = find(cmd);
	if (c == NULL)
		return cli_usage_error("help", "no command '%s' (deskhand --help lists them)", cmd);
	printf("usage: %s\n\n%s", c->synopsis, c->about);
	print_items(stdout, "arguments", c->args);
	print_items(stdout, "options", c->opts);
	printf("\n-h or --help anywhere before -- prints this; deskhand --help lists every\n"
	       "command and the agent's options.\n");
	return help_written();
}

int cli_help_top(void)
{
	printf("deskhand %s — a desktop agent for Linux (X11, and Wayland on wlroots "
	       "compositors)\n\n", DESKHAND_VERSION);
	printf("usage: deskhand [OPTIONS] [MESSAGE]      the agent (options below)\n"
	       "       deskhand COMMAND [ARGS...]       one tool directly (COMMAND --help)\n"
	       "\ncommands:\n");
	for (size_t i = 0; i < COMMAND_COUNT; i++) {
		printf("  %-10s %s\n", commands[i].name, commands[i].summary);
		printf("             %s\n", commands[i].synopsis);
	}
	putchar('\n');
	fputs(agent_options_usage(), stdout);
	fputs("\nMore: man deskhand; the pages in docs/ (installed in " DESKHAND_DOCDIR "):\n"
	      "configuration, agent, files, models, desktops, console, mcp, batch, tools, "
	      "security, benchmarks.\n", stdout);
	return help_written();
}

int cmd_help(int argc, char **argv)
{
	if (argc > 2)
		return cli_usage_error("help", "help takes one COMMAND");
	if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0')
		return cli_usage_error("help", "unknown option '%s'", argv[1]);
	return argc == 2 ? cli_help(argv[1]) : cli_help_top();
}
