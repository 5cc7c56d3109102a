/*
 * deskhand's entry point: dispatches sub-commands and, without one, runs the
 * agent. The only place that turns results into an exit status.
 */
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/session/session.h"
#include "config.h"
#include "os/os.h"

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

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("deskhand %s\n", DESKHAND_VERSION);
		return CLI_OK;
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cli_help_top();
	/*
	 * Programs deskhand starts (unsandboxed code and what it opens) expose
	 * their accessibility tree: Qt only does when asked, and some GTK
	 * builds wait for GNOME's switch. The user's own settings win; the
	 * sandbox drops all three (executors/sandbox.c).
	 */
	setenv("QT_ACCESSIBILITY", "1", 0);
	/*
	 * deskhand holds the model's keys (its environment, its memory) and
	 * runs next to programs the model drives: a terminal it types into
	 * could read /proc/PID/environ or attach a debugger, since they are the
	 * same user's. Not dumpable, this process is out of their reach; what
	 * it executes is dumpable again (execve resets it).
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setenv("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1", 0);
	setenv("GNOME_ACCESSIBILITY", "1", 0);
	int took = display_backend_option(argc, argv);
	if (took < 0)
		return CLI_USAGE;
	cli_run_fn run = NULL;
	if (argc > took + 1 && (run = cli_command_find(argv[took + 1])) != NULL) {
		argv[took] = argv[0];
		argc -= took;
		argv += took;
	}
	/* Asked for its usage, a command prints it and does nothing else. */
	if (run != NULL && cli_help_asked(argc - 1, argv + 1))
		return cli_help(argv[1]);
	/* Anything else is the agent: options and the user's message. */
	int status = run ? run(argc - 1, argv + 1) : agent_main(argc, argv);
	/* The session bus deskhand started, if it had to (agent_session_bus). */
	os_bus_stop();
	return status;
}
