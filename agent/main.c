/*
 * deskhand's entry point: dispatches sub-commands and, without one, runs the
 * agent. The only place that turns results into an exit status.
 */
#include <stdio.h>
#include <string.h>

#include "agent/cli.h"
#include "config.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"screen", cmd_screen, "print the screen size, then one line per monitor"},
	{"cursor", cmd_cursor, "print the pointer position as \"X Y\""},
	{"exec", cmd_exec, "run code from standard input in a sandboxed interpreter"},
	{"doctor", cmd_doctor, "report which sandbox layers and profiles work here"},
};

static void print_help(FILE *f)
{
	fprintf(f, "deskhand %s — a desktop agent for Linux/X11\n\n", DESKHAND_VERSION);
	fprintf(f, "usage: deskhand COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *syn = cli_synopsis(commands[i].name);
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
		if (syn[0] != '\0')
			fprintf(f, "             %s\n", syn);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("deskhand %s\n", DESKHAND_VERSION);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_help(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	cli_error("unknown command '%s' (deskhand --help lists them)", argv[1]);
	return CLI_USAGE;
}
