/*
 * deskhand windows: one line per top-level window, bottom to top:
 *
 *   0xID PID ACTIVE WxH+X+Y CLASS TITLE
 *
 * PID is "-" when unknown, ACTIVE "*" for the active window and "-" for the
 * others, CLASS has whitespace replaced by "_" ("-" when unset), TITLE is
 * the rest of the line (possibly empty) with control characters shown as
 * "?", so a hostile title cannot forge extra lines. --activate ID raises
 * and focuses a window through the window manager.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/util/textutil.h"
#include "os/os.h"

/* "0x1a00003" or "27262979": a whole window id, nothing else. */
static bool parse_id(const char *s, uint32_t *out)
{
	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v == 0 || v > 0xffffffffull)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Any program names its windows: shown (agent_show_dup), on one line. */
static void put_sanitized(const char *raw, bool is_class)
{
	if (is_class && raw[0] == '\0') {
		putchar('-');
		return;
	}
	char *s = agent_show_dup(raw, 0);
	for (const unsigned char *p = (const unsigned char *)(s ? s : "?"); *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			putchar(is_class ? '_' : '?');
		else if (is_class && *p == ' ')
			putchar('_');
		else
			putchar(*p);
	}
	free(s);
}

static int list(os_display *d)
{
	size_t n = 0;
	os_window *w = os_windows_list(d, &n);
	if (w == NULL) {
		cli_error("%s", os_error());
		return CLI_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		printf("0x%08x ", w[i].id);
		if (w[i].pid > 0)
			printf("%d ", w[i].pid);
		else
			fputs("- ", stdout);
		printf("%c %dx%d%+d%+d ", w[i].active ? '*' : '-',
		       w[i].geometry.width, w[i].geometry.height, w[i].geometry.x,
		       w[i].geometry.y);
		put_sanitized(w[i].klass, true);
		putchar(' ');
		put_sanitized(w[i].title, false);
		putchar('\n');
	}
	os_windows_free(w, n);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write the window list: %s", strerror(errno));
		return CLI_FAIL;
	}
	return CLI_OK;
}

static int activate(os_display *d, uint32_t id)
{
	size_t n = 0;
	os_window *w = os_windows_list(d, &n);
	if (w == NULL) {
		cli_error("%s", os_error());
		return CLI_FAIL;
	}
	bool known = false;
	for (size_t i = 0; i < n; i++)
		known = known || w[i].id == id;
	os_windows_free(w, n);
	if (!known)
		return cli_usage_error("windows", "no window 0x%x (deskhand windows "
		                       "lists them)", id);
	if (!os_window_activate(d, id)) {
		cli_error("%s", os_error());
		return CLI_FAIL;
	}
	return CLI_OK;
}

int cmd_windows(int argc, char **argv)
{
	bool want_activate = false;
	uint32_t id = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--activate") == 0) {
			if (i + 1 >= argc)
				return cli_usage_error("windows", "--activate needs a window id");
			if (!parse_id(argv[i + 1], &id))
				return cli_usage_error("windows", "--activate: '%s' is not a "
				                       "window id (0x1a00003 or decimal)",
				                       argv[i + 1]);
			want_activate = true;
			i++;
		} else {
			return cli_usage_error("windows", "unknown argument '%s'", argv[i]);
		}
	}
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	int status = want_activate ? activate(d, id) : list(d);
	os_display_close(d);
	return status;
}
