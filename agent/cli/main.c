/*
 * deskhand's entry point: dispatches sub-commands and, without one, runs the
 * agent. The only place that turns results into an exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/mcp/mcp.h"
#include "agent/session/session.h"
#include "config.h"
#include "os/os.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"screen", cmd_screen, "print the screen size, then one line per monitor"},
	{"cursor", cmd_cursor, "print the pointer position as \"X Y\""},
	{"screenshot", cmd_screenshot, "capture the screen, a region or a monitor as PNG"},
	{"windows", cmd_windows, "list top-level windows, or activate one"},
	{"elements", cmd_elements, "list the active window's controls from the accessibility tree"},
	{"find-text", cmd_find_text, "find text on the screen with local OCR"},
	{"move", cmd_move, "move the pointer"},
	{"click", cmd_click, "click (double/triple with --count) here or at X Y"},
	{"drag", cmd_drag, "press at X1 Y1, move, release at X2 Y2"},
	{"scroll", cmd_scroll, "wheel clicks (default 3), here or --at X Y"},
	{"type", cmd_type, "type Unicode text exactly"},
	{"key", cmd_key, "press key combinations (xdotool names: ctrl+shift+t)"},
	{"scan", cmd_scan, "check code for dangerous operations (exit 0 clean, 1 findings, 2 error)"},
	{"exec", cmd_exec, "run code from standard input in a sandboxed interpreter"},
	{"doctor", cmd_doctor, "report which sandbox layers and profiles work here"},
	{"audit", cmd_audit, "verify audit logs: hash chain, end and approvals (exit 1: tampered)"},
	{"mcp", agent_mcp_main, "serve the desktop to an agent host over MCP (every action gated)"},
};

static void print_help(FILE *f)
{
	fprintf(f, "deskhand %s — a desktop agent for Linux (X11, and Wayland on wlroots compositors)\n\n", DESKHAND_VERSION);
	fprintf(f, "usage: deskhand [OPTIONS] [MESSAGE]      the agent (options below)\n"
	           "       deskhand COMMAND [ARGS...]       one tool directly\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *syn = cli_synopsis(commands[i].name);
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
		if (syn[0] != '\0')
			fprintf(f, "             %s\n", syn);
	}
	fputc('\n', f);
	fputs(agent_options_usage(), f);
	fputs("\nMore: man deskhand; the pages in docs/ (installed in " DESKHAND_DOCDIR "):\n"
	      "configuration, agent, files, models, desktops, console, mcp, tools, security, "
	      "benchmarks.\n", f);
}

/*
 * A leading --display-backend B before a command (the agent reads its own
 * among its options): the choice every display opened after it makes.
 * Returns how many arguments it took (0, 1 or 2), -1 after a bad name.
 */
static int display_backend_option(int argc, char **argv)
{
	const char *v = NULL;
	int took = 0;
	if (argc >= 3 && strcmp(argv[1], "--display-backend") == 0) {
		v = argv[2];
		took = 2;
	} else if (argc >= 2 && strncmp(argv[1], "--display-backend=", 18) == 0) {
		v = argv[1] + 18;
		took = 1;
	}
	os_backend_choice c;
	if (v == NULL)
		return 0;
	if (!os_backend_parse(v, &c)) {
		cli_error("%s", os_error());
		return -1;
	}
	os_display_prefer(c);
	return took;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("deskhand %s\n", DESKHAND_VERSION);
		return CLI_OK;
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		print_help(stdout);
		return CLI_OK;
	}
	/*
	 * Programs deskhand starts (unsandboxed code and what it opens) expose
	 * their accessibility tree: Qt only does when asked, and some GTK
	 * builds wait for GNOME's switch. The user's own settings win; the
	 * sandbox drops all three (executors/sandbox.c).
	 */
	setenv("QT_ACCESSIBILITY", "1", 0);
	setenv("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1", 0);
	setenv("GNOME_ACCESSIBILITY", "1", 0);
	int took = display_backend_option(argc, argv);
	if (took < 0)
		return CLI_USAGE;
	const struct command *cmd = NULL;
	if (argc > took + 1 && (cmd = find_command(argv[took + 1])) != NULL) {
		argv[took] = argv[0];
		argc -= took;
		argv += took;
	}
	/* Anything else is the agent: options and the user's message. */
	int status = cmd ? cmd->run(argc - 1, argv + 1) : agent_main(argc, argv);
	/* The session bus deskhand started, if it had to (agent_session_bus). */
	os_bus_stop();
	return status;
}
