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

struct shot_args {
	const char *out, *region_arg;
	os_rect region;
	long monitor;               /* -1: none */
	bool model_view;            /* --max-side, --screen-max or --grid */
	vision_shot_opts view;
};

/* Reads the flags into `a`. Returns -1 when they are good, else the exit status. */
static int shot_options(int argc, char **argv, struct shot_args *a)
{
	const char *monitor_arg = NULL, *max_side_arg = NULL, *screen_max_arg = NULL;
	bool grid = false;
	a->out = "screenshot.png";
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		const char **slot = NULL;
		if (strcmp(f, "--grid") == 0) {
			grid = true;
			continue;
		}
		if (strcmp(f, "--max-side") == 0)
			slot = &max_side_arg;
		else if (strcmp(f, "--screen-max") == 0)
			slot = &screen_max_arg;
		else if (strcmp(f, "-o") == 0 || strcmp(f, "--output") == 0)
			slot = &a->out;
		else if (strcmp(f, "--region") == 0)
			slot = &a->region_arg;
		else if (strcmp(f, "--monitor") == 0)
			slot = &monitor_arg;
		else
			return cli_usage_error("screenshot", "unknown option '%s'", f);
		if (i + 1 >= argc)
			return cli_usage_error("screenshot", "%s needs a value", f);
		*slot = argv[++i];
	}
	if (a->out[0] == '\0')
		return cli_usage_error("screenshot", "-o: empty file name");
	if (a->region_arg != NULL && monitor_arg != NULL)
		return cli_usage_error("screenshot",
		                       "--region and --monitor exclude each other");
	if (a->region_arg != NULL && !parse_region(a->region_arg, &a->region))
		return cli_usage("screenshot");
	a->monitor = -1;
	if (monitor_arg != NULL &&
	    !cli_parse_int(monitor_arg, 0, 1023, "--monitor", &a->monitor))
		return cli_usage("screenshot");
	/* The model's view: one monitor, scaled to fit, as the agent sends it. */
	a->model_view = max_side_arg != NULL || screen_max_arg != NULL || grid;
	if (max_side_arg != NULL && screen_max_arg != NULL)
		return cli_usage_error("screenshot",
		                       "--max-side and --screen-max exclude each other");
	if (a->model_view && a->region_arg != NULL)
		return cli_usage_error("screenshot", "--region gives the full "
		                       "resolution; --max-side, --screen-max and --grid "
		                       "give the model's view of a monitor");
	vision_shot_opts_init(&a->view);
	a->view.grid = grid;
	a->view.monitor = (int)a->monitor;
	if (max_side_arg != NULL) {
		long side;
		if (!cli_parse_int(max_side_arg, 16, 16384, "--max-side", &side))
			return cli_usage("screenshot");
		a->view.max_w = a->view.max_h = (int)side;
	}
	if (screen_max_arg != NULL &&
	    !parse_size(screen_max_arg, &a->view.max_w, &a->view.max_h))
		return cli_usage("screenshot");
	if (strcmp(a->out, "-") == 0 && isatty(STDOUT_FILENO))
		return cli_usage_error("screenshot", "refusing to write a PNG to a "
		                       "terminal: redirect standard output or use -o FILE");
	return -1;
}

/*
 * Which part of the screen to capture at full resolution: *want is NULL
 * for all of it, else a->region (checked against the screen, or set to the
 * part of the monitor that is on it). Returns -1 when good, else the exit
 * status (the message is out).
 */
static int shot_rect(os_display *d, struct shot_args *a, const os_rect **want)
{
	int sw, sh;
	os_screen_size(d, &sw, &sh);
	*want = NULL;
	if (a->region_arg != NULL) {
		os_rect r = a->region;
		if (r.width == 0 || r.height == 0)
			return cli_usage_error("screenshot", "region %s is empty", a->region_arg);
		if (r.x < 0 || r.y < 0 || r.x > sw - r.width || r.y > sh - r.height)
			return cli_usage_error("screenshot", "region %s (%dx%d%+d%+d) is not inside "
			                       "the screen (%dx%d)", a->region_arg, r.width,
			                       r.height, r.x, r.y, sw, sh);
		*want = &a->region;
	}
	if (a->monitor >= 0) {
		os_rect mons[64];
		int n = os_monitors(d, mons, 64);
		if (a->monitor >= n || a->monitor >= 64)
			return cli_usage_error("screenshot", "no monitor %ld: this screen has %d "
			                       "(0..%d, deskhand screen lists them)", a->monitor,
			                       n, n - 1);
		/* A monitor may reach past the screen; capture what is on it. */
		os_rect m = mons[a->monitor];
		int x0 = m.x > 0 ? m.x : 0, y0 = m.y > 0 ? m.y : 0;
		int x1 = m.x + m.width < sw ? m.x + m.width : sw;
		int y1 = m.y + m.height < sh ? m.y + m.height : sh;
		if (x1 <= x0 || y1 <= y0) {
			cli_error("monitor %ld (%dx%d%+d%+d) lies outside the screen",
			          a->monitor, m.width, m.height, m.x, m.y);
			return CLI_FAIL;
		}
		a->region = (os_rect){x0, y0, x1 - x0, y1 - y0};
		*want = &a->region;
	}
	return -1;
}

static bool write_png(const os_image *img, const char *out)
{
	if (strcmp(out, "-") == 0) {
		/* A closed pipe is a write error to report, not a silent death. */
		signal(SIGPIPE, SIG_IGN);
		return os_png_write_fd(img, STDOUT_FILENO, NULL);
	}
	return os_png_write_file(img, out, NULL);
}

static bool capture_to_png(os_display *d, const os_rect *want, const char *out)
{
	if (strcmp(out, "-") == 0) {
		signal(SIGPIPE, SIG_IGN);
		return os_capture_png_fd(d, want, STDOUT_FILENO, NULL);
	}
	return os_capture_png_file(d, want, out, NULL);
}

int cmd_screenshot(int argc, char **argv)
{
	struct shot_args a;
	os_trace("main");
	memset(&a, 0, sizeof(a));
	int status = shot_options(argc, argv, &a);
	if (status >= 0)
		return status;
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	os_trace("connected");
	status = CLI_FAIL;
	os_image *view_img = NULL;  /* owned: the model's view */
	const os_image *img = NULL;
	if (a.model_view) {
		vision_view view;
		img = view_img = vision_shot(d, &a.view, &view);
		if (img == NULL && strncmp(vision_error(), "no monitor", 10) == 0)
			status = cli_usage_error("screenshot", "%s", vision_error());
		else if (img == NULL)
			cli_error("%s", vision_error());
	} else {
		const os_rect *want;
		int bad = shot_rect(d, &a, &want);
		if (bad >= 0)
			status = bad;
		/* Captured in strips, each encoded as soon as it is there. */
		else if (capture_to_png(d, want, a.out))
			status = CLI_OK;
		else
			cli_error("%s", os_error());
	}
	if (img != NULL) {
		if (write_png(img, a.out))
			status = CLI_OK;
		else
			cli_error("%s", os_error());
	}
	os_trace("written");
	os_image_destroy(view_img);
	os_display_close(d);
	os_trace("closed");
	return status;
}
