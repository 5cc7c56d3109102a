/* deskhand screen / cursor: geometry read-outs through os/. */
#include <stdio.h>

#include "agent/cli/cli.h"
#include "os/os.h"

int cmd_screen(int argc, char **argv)
{
	if (argc != 1)
		return cli_usage_error("screen", "screen takes no arguments");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	int w, h;
	os_screen_size(d, &w, &h);
	printf("%dx%d\n", w, h);
	os_rect mons[16];
	int n = os_monitors(d, mons, 16);
	for (int i = 0; i < n && i < 16; i++)
		printf("monitor %d: %dx%d+%d+%d\n", i, mons[i].width,
		       mons[i].height, mons[i].x, mons[i].y);
	os_display_close(d);
	return CLI_OK;
}

int cmd_cursor(int argc, char **argv)
{
	if (argc != 1)
		return cli_usage_error("cursor", "cursor takes no arguments");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	int x, y;
	bool ok = os_pointer(d, &x, &y);
	if (ok)
		printf("%d %d\n", x, y);
	else
		cli_error("%s", os_error());
	os_display_close(d);
	return ok ? CLI_OK : CLI_FAIL;
}
