/*
 * agent/mcp/mcp — `deskhand mcp`: its own options beside the agent's, the
 * standard streams given to the protocol and the controlling terminal (or
 * nothing) put in their place for the questions, deskhand's hands opened
 * as for the agent, the banner that says who can approve, and the
 * transport served until the client goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "agent/mcp/mcp-internal.h"

/* Their usage is in the table of deskhand's commands (agent/cli/commands.c),
 * which prints it for --help before this runs. */
struct mcp_flags {
	const char *http;
	bool http_remote;
	bool trust_host;
};

/* Takes deskhand mcp's own flags out of argv (argv[0] stays); -1 after a usage error. */
static int own_flags(int argc, char **argv, struct mcp_flags *f)
{
	int out = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--http") == 0 && i + 1 < argc) {
			f->http = argv[++i];
		} else if (strncmp(a, "--http=", 7) == 0) {
			f->http = a + 7;
		} else if (strcmp(a, "--http") == 0) {
			fprintf(stderr, "deskhand mcp: --http needs [ADDR:]PORT\n");
			return -1;
		} else if (strcmp(a, "--http-allow-remote") == 0) {
			f->http_remote = true;
		} else if (strcmp(a, "--trust-host-approvals") == 0) {
			f->trust_host = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	return out;
}

static int parse(agent_options *opt, int argc, char **argv, struct mcp_flags *f)
{
	int n = own_flags(argc, argv, f);
	if (n < 0)
		return 2;
	/* The config file first (--config, else the default), then the flags. */
	if (!agent_options_load_config(opt, agent_options_config_arg(n, argv)) ||
	    !agent_options_parse(opt, n, argv) || !agent_options_validate(opt)) {
		fprintf(stderr, "deskhand mcp: %s\n(deskhand mcp --help)\n", agent_options_error());
		return 2;
	}
	if (opt->message != NULL) {
		fprintf(stderr, "deskhand mcp: takes no message: the host sends the calls\n");
		return 2;
	}
	opt->os = true; /* the desktop is what the server serves */
	os_display_prefer(opt->display_backend);
	return -1;
}

/*
 * The protocol keeps the standard streams' files (in_fd, out_fd); in
 * their place the controlling terminal, where the questions are asked,
 * or nothing to read and standard error to write. Nothing read from the
 * protocol can reach the terminal's reader. Returns whether a terminal is
 * there.
 */
static bool swap_streams(int *in_fd, int *out_fd)
{
	*in_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	*out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	/* Only a terminal this process may read: a background one would stop
	 * it (SIGTTIN) at the first question. */
	if (tty >= 0 && isatty(tty) && tcgetpgrp(tty) == getpgrp()) {
		dup2(tty, STDIN_FILENO);
		dup2(tty, STDOUT_FILENO);
		close(tty);
		return true;
	}
	if (tty >= 0)
		close(tty);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	} else {
		close(STDIN_FILENO);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO);
	return false;
}

/* A terminal in raw mode is being read by another program (the host's own interface). */
static bool tty_raw(void)
{
	struct termios t;
	return tcgetattr(STDIN_FILENO, &t) == 0 && !(t.c_lflag & ICANON);
}

static void banner(const mcp_server *s, const agent_options *opt)
{
	if (s->tty && tty_raw())
		agent_term_warning(s->term, "deskhand mcp: this terminal is in raw mode: another "
		                   "program (the host's own interface?) reads it and may take the "
		                   "keys meant for deskhand's questions; --console 0 is the "
		                   "surer place to answer");
	char who[256] = "";
	if (s->tty)
		strcat(who, "this terminal");
	if (s->console)
		strcat(who, who[0] ? " and the console" : "the console");
	if (s->trust_host)
		strcat(who, who[0] ? " and the MCP host (--trust-host-approvals)"
		            : "the MCP host (--trust-host-approvals)");
	if (s->trust_host)
		agent_term_warning(s->term, "--trust-host-approvals: the host's answers to "
		                   "elicitations approve actions. Only for a host that relays a "
		                   "human: a host whose model can answer approves its own actions");
	if (opt->os_auto_approve)
		agent_term_notice(s->term, "deskhand mcp: desktop actions run unasked "
		                  "(--os-auto-approve)");
	else if (who[0] != '\0')
		agent_term_notice(s->term, "deskhand mcp: every desktop action waits for a yes "
		                  "from %s", who);
	else
		agent_term_warning(s->term, "deskhand mcp: nobody can approve here (no terminal, no "
		                   "console): observations work, every desktop action and display "
		                   "code is refused; start it with --console 0 to approve in a "
		                   "browser");
}

static int serve(mcp_server *s, const struct mcp_flags *f, int in_fd, int out_fd)
{
	if (f->http == NULL)
		return mcp_stdio_serve(s, in_fd, out_fd);
	const char *log = agent_audit_path(agent_hands_audit(s->hands));
	char *file = malloc(strlen(log) + sizeof(".mcp"));
	if (file == NULL)
		return 1;
	sprintf(file, "%s.mcp", log);
	int status = mcp_http_serve(s, f->http, f->http_remote, file);
	free(file);
	return status;
}

int agent_mcp_main(int argc, char **argv)
{
	agent_options opt;
	agent_options_init(&opt);
	struct mcp_flags f = {0};
	int status = parse(&opt, argc, argv, &f);
	if (status >= 0)
		goto out_opt;
	int in_fd, out_fd;
	mcp_server s = {.wake_pipe = {-1, -1}};
	s.tty = swap_streams(&in_fd, &out_fd);
	s.trust_host = f.trust_host;
	s.term = agent_term_create_borrowed();
	status = 1;
	if (in_fd < 0 || out_fd < 0 || s.term == NULL || !mcp_server_init(&s)) {
		fprintf(stderr, "deskhand mcp: %s\n", strerror(errno));
		goto out_term;
	}
	s.hands = agent_hands_open(&opt, s.term, argc, argv, &status);
	if (s.hands != NULL) {
		s.console = agent_hands_console(s.hands);
		banner(&s, &opt);
		status = serve(&s, &f, in_fd, out_fd);
		if (mcp_server_ended(&s))
			agent_term_error(s.term, "deskhand mcp: the run was ended (the kill switch, or "
			                 "the audit log could not be written): nothing more runs");
	}
	agent_hands_close(s.hands);
	mcp_server_destroy(&s);
out_term:
	agent_term_destroy(s.term);
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
out_opt:
	agent_options_finish(&opt);
	return status;
}
