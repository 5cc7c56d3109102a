/* agent/cli/cli — strict argument parsing and error output for the commands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "os/os.h"
#include "agent/util/textutil.h"

/* A message whose arguments may carry file names and other foreign text. */
static void put_message(const char *fmt, va_list ap)
{
	char *text = agent_vformat(fmt, ap);
	char *shown = text != NULL ? agent_show_dup(text, AGENT_SHOW_LINES) : NULL;
	fprintf(stderr, "deskhand: %s\n", shown != NULL ? shown : "out of memory");
	free(shown);
	free(text);
}

os_display *cli_display_open(int *status)
{
	bool unsupported = false;
	os_display *d = os_display_connect(NULL, &unsupported);
	if (d == NULL) {
		cli_error("%s", os_error());
		*status = unsupported ? CLI_USAGE : CLI_FAIL;
		return NULL;
	}
	if (os_display_warning(d) != NULL)
		cli_error("warning: %s", os_display_warning(d));
	*status = CLI_OK;
	return d;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
}

int cli_usage(const char *cmd)
{
	const char *syn = cli_synopsis(cmd);
	if (syn[0] != '\0')
		fprintf(stderr, "usage: %s\n", syn);
	return CLI_USAGE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	return cli_usage(cmd);
}

bool cli_parse_int(const char *s, long min, long max, const char *what, long *out)
{
	if (s == NULL || s[0] == '\0') {
		cli_error("%s: expected a number, got nothing", what);
		return false;
	}
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (*p < '0' || *p > '9') {
		cli_error("%s: '%s' is not a whole number", what, s);
		return false;
	}
	errno = 0;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (*end != '\0') {
		cli_error("%s: '%s' is not a whole number", what, s);
		return false;
	}
	if (errno == ERANGE || v < min || v > max) {
		cli_error("%s: %s is out of range (%ld..%ld)", what, s, min, max);
		return false;
	}
	*out = v;
	return true;
}
