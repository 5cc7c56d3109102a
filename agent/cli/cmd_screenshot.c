/*
 * deskhand screenshot: captures the screen, a region or one monitor and
 * writes it as PNG to a file (atomically) or to standard output.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "os/os.h"
#include "vision/vision.h"

#define COORD_MAX (1l << 20)

/* "X,Y,W,H" with four whole numbers; prints the problem on failure. */
static bool parse_region(const char *s, os_rect *r)
{
	char buf[128];
	if (strlen(s) >= sizeof(buf)) {
		cli_error("--region: '%.40s...' is too long", s);
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	static const char *const what[4] = {"region X", "region Y", "region W",
	                                    "region H"};
	long v[4];
	char *p = buf;
	for (int i = 0; i < 4; i++) {
		char *comma = strchr(p, ',');
		if ((i < 3) != (comma != NULL)) {
			cli_error("--region: '%s' is not X,Y,W,H (four numbers)", s);
			return false;
		}
		if (comma != NULL)
			*comma = '\0';
		if (!cli_parse_int(p, i < 2 ? -COORD_MAX : 0, COORD_MAX, what[i], &v[i]))
			return false;
		p = comma ? comma + 1 : p;
	}
	*r = (os_rect){(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
	return true;
}

/* "WxH", each side 16..16384; prints the problem on failure. */
static bool parse_size(const char *s, int *w, int *h)
{
	char buf[64];
	const char *x = strchr(s, 'x');
	if (x == NULL || (size_t)(x - s) >= sizeof(buf)) {
		cli_error("--screen-max: '%s' is not WxH (like 1280x800)", s);
		return false;
	}
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = '\0';
	long lw, lh;
	if (!cli_parse_int(buf, 16, 16384, "--screen-max width", &lw) ||
	    !cli_parse_int(x + 1, 16, 16384, "--screen-max height", &lh))
		return false;
	*w = (int)lw;
	*h = (int)lh;
	return true;
}

int cmd_screenshot(int argc, char **argv)
{
	const char *out = "screenshot.png";
	const char *region_arg = NULL;
	const char *monitor_arg = NULL;
	const char *max_side_arg = NULL, *screen_max_arg = NULL;
	bool grid = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (strcmp(a, "--grid") == 0) {
			grid = true;
			continue;
		}
		if (strcmp(a, "--max-side") == 0)
			slot = &max_side_arg;
		else if (strcmp(a, "--screen-max") == 0)
			slot = &screen_max_arg;
		else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
			slot = &out;
		else if (strcmp(a, "--region") == 0)
			slot = &region_arg;
		else if (strcmp(a, "--monitor") == 0)
			slot = &monitor_arg;
		else
			return cli_usage_error("screenshot", "unknown option '%s'", a);
		if (i + 1 >= argc)
			return cli_usage_error("screenshot", "%s needs a value", a);
		*slot = argv[++i];
	}
	if (out[0] == '\0')
		return cli_usage_error("screenshot", "-o: empty file name");
	if (region_arg != NULL && monitor_arg != NULL)
		return cli_usage_error("screenshot",
		                       "--region and --monitor exclude each other");
	os_rect region;
	if (region_arg != NULL && !parse_region(region_arg, &region))
		return cli_usage("screenshot");
	long monitor = -1;
	if (monitor_arg != NULL &&
	    !cli_parse_int(monitor_arg, 0, 1023, "--monitor", &monitor))
		return cli_usage("screenshot");
	/* The model's view: one monitor, scaled to fit, as the agent sends it. */
	bool model_view = max_side_arg != NULL || screen_max_arg != NULL || grid;
	if (max_side_arg != NULL && screen_max_arg != NULL)
		return cli_usage_error("screenshot",
		                       "--max-side and --screen-max exclude each other");
	if (model_view && region_arg != NULL)
		return cli_usage_error("screenshot", "--region gives the full "
		                       "resolution; --max-side, --screen-max and --grid "
		                       "give the model's view of a monitor");
	vision_shot_opts view_opts;
	vision_shot_opts_init(&view_opts);
	view_opts.grid = grid;
	view_opts.monitor = (int)monitor;
	if (max_side_arg != NULL) {
		long side;
		if (!cli_parse_int(max_side_arg, 16, 16384, "--max-side", &side))
			return cli_usage("screenshot");
		view_opts.max_w = view_opts.max_h = (int)side;
	}
	if (screen_max_arg != NULL &&
	    !parse_size(screen_max_arg, &view_opts.max_w, &view_opts.max_h))
		return cli_usage("screenshot");
	bool to_stdout = strcmp(out, "-") == 0;
	if (to_stdout && isatty(STDOUT_FILENO))
		return cli_usage_error("screenshot", "refusing to write a PNG to a "
		                       "terminal: redirect standard output or use -o FILE");

	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		cli_error("%s", os_error());
		return CLI_FAIL;
	}
	int status = CLI_FAIL;
	os_image *view_img = NULL;  /* owned: the model's view */
	const os_image *img = NULL;
	if (model_view) {
		vision_view view;
		img = view_img = vision_shot(d, &view_opts, &view);
		if (img == NULL) {
			if (strncmp(vision_error(), "no monitor", 10) == 0)
				status = cli_usage_error("screenshot", "%s", vision_error());
			else
				cli_error("%s", vision_error());
			goto out;
		}
		goto write;
	}
	int sw, sh;
	os_screen_size(d, &sw, &sh);
	const os_rect *want = NULL;
	if (region_arg != NULL) {
		if (region.width == 0 || region.height == 0) {
			status = cli_usage_error("screenshot", "region %s is empty",
			                         region_arg);
			goto out;
		}
		if (region.x < 0 || region.y < 0 || region.x > sw - region.width ||
		    region.y > sh - region.height) {
			status = cli_usage_error("screenshot", "region %s (%dx%d%+d%+d) is "
			                         "not inside the screen (%dx%d)", region_arg,
			                         region.width, region.height, region.x,
			                         region.y, sw, sh);
			goto out;
		}
		want = &region;
	}
	if (monitor >= 0) {
		os_rect mons[64];
		int n = os_monitors(d, mons, 64);
		if (monitor >= n || monitor >= 64) {
			status = cli_usage_error("screenshot", "no monitor %ld: this "
			                         "screen has %d (0..%d, deskhand screen "
			                         "lists them)", monitor, n, n - 1);
			goto out;
		}
		/* A monitor may reach past the screen; capture what is on it. */
		os_rect m = mons[monitor];
		int x0 = m.x > 0 ? m.x : 0, y0 = m.y > 0 ? m.y : 0;
		int x1 = m.x + m.width < sw ? m.x + m.width : sw;
		int y1 = m.y + m.height < sh ? m.y + m.height : sh;
		if (x1 <= x0 || y1 <= y0) {
			cli_error("monitor %ld (%dx%d%+d%+d) lies outside the screen",
			          monitor, m.width, m.height, m.x, m.y);
			goto out;
		}
		region = (os_rect){x0, y0, x1 - x0, y1 - y0};
		want = &region;
	}

	/* Borrowed: encoded straight from the shared segment, no copy. */
	img = os_capture_borrow(d, want);
	if (img == NULL) {
		cli_error("%s", os_error());
		goto out;
	}
write:;
	bool ok;
	if (to_stdout) {
		/* A closed pipe is a write error to report, not a silent death. */
		signal(SIGPIPE, SIG_IGN);
		ok = os_png_write_fd(img, STDOUT_FILENO, NULL);
	} else {
		ok = os_png_write_file(img, out, NULL);
	}
	if (!ok) {
		cli_error("%s", os_error());
		goto out;
	}
	status = CLI_OK;
out:
	os_image_destroy(view_img);
	os_display_close(d);
	return status;
}
