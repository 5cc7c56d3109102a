/*
 * deskhand move / click / drag / scroll / type / key: mouse and keyboard
 * through os/. Every argument is parsed and checked (numbers, names, key
 * combinations, UTF-8, coordinates against the screen) before the first
 * event is sent, so a usage error (exit 2) never leaves half an action
 * behind.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli/cli.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "os/os.h"

/* Coordinates are parsed wide, then checked against the real screen. */
#define COORD_MIN (-1000000L)
#define COORD_MAX 1000000L

/* Standard input for `type -`: at most this much, to keep memory bounded. */
#define TYPE_STDIN_MAX (16L * 1024 * 1024)

/*
 * The command line of one command, split by its table of options: "--"
 * ends options, a lone "-" and negative numbers are positional, anything
 * else starting with '-' must be in the table. --name=value is accepted as
 * well as --name value.
 */
struct opt_spec {
	const char *name;
	int nvalues;            /* values that follow: 0 (a flag), 1 or 2 */
	const char *missing;    /* message when they do not; NULL: "needs a value" */
};

#define CMDLINE_MAX_OPTS 4

struct cmdline {
	const char **pos;       /* the positional arguments, in order */
	int npos;
	const char *value[CMDLINE_MAX_OPTS][2]; /* of the option's last use */
	int seen[CMDLINE_MAX_OPTS];             /* how often it was given */
	bool no_more_options;   /* "--" was given */
};

static bool is_option(const struct cmdline *c, const char *s)
{
	if (c->no_more_options || s[0] != '-' || s[1] == '\0')
		return false;
	if (s[1] >= '0' && s[1] <= '9')
		return false;
	return true;
}

/*
 * Splits argv[1..] by `specs` (at most CMDLINE_MAX_OPTS). Returns CLI_OK;
 * CLI_USAGE after printing the usage error for an unknown option (the
 * message ends with `hint`, may be "") or a missing value; CLI_FAIL when
 * out of memory. Ownership: c->pos may be allocated whatever the result;
 * release it with cmdline_finish (or cmdline_take).
 */
static int cmdline_parse(struct cmdline *c, const char *cmd, int argc, char **argv,
                         const struct opt_spec *specs, int nspecs, const char *hint)
{
	memset(c, 0, sizeof(*c));
	c->pos = calloc((size_t)argc, sizeof(*c->pos));
	if (c->pos == NULL) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!c->no_more_options && strcmp(s, "--") == 0) {
			c->no_more_options = true;
			continue;
		}
		if (!is_option(c, s)) {
			c->pos[c->npos++] = s;
			continue;
		}
		int k = 0;
		const char *inline_value = NULL;
		for (; k < nspecs; k++) {
			size_t n = strlen(specs[k].name);
			if (strncmp(s, specs[k].name, n) != 0)
				continue;
			if (s[n] == '\0')
				break;
			if (s[n] == '=' && specs[k].nvalues == 1) {
				inline_value = s + n + 1;
				break;
			}
		}
		if (k == nspecs)
			return cli_usage_error(cmd, "unknown option '%s'%s", s, hint);
		c->seen[k]++;
		if (inline_value != NULL) {
			c->value[k][0] = inline_value;
			continue;
		}
		if (i + specs[k].nvalues >= argc) {
			if (specs[k].missing != NULL)
				return cli_usage_error(cmd, "%s", specs[k].missing);
			return cli_usage_error(cmd, "%s needs a value", specs[k].name);
		}
		for (int v = 0; v < specs[k].nvalues; v++)
			c->value[k][v] = argv[++i];
	}
	return CLI_OK;
}

static void cmdline_finish(struct cmdline *c)
{
	free(c->pos);
	c->pos = NULL;
}

/*
 * For commands with a few positional arguments: copies the first `max`
 * into pos[] (the rest NULL), releases c->pos, returns how many there were.
 */
static int cmdline_take(struct cmdline *c, const char **pos, int max)
{
	for (int i = 0; i < max; i++)
		pos[i] = i < c->npos ? c->pos[i] : NULL;
	int n = c->npos;
	cmdline_finish(c);
	return n;
}

/* Usage error unless (x,y) is on the screen of d. */
static bool check_point(os_display *d, const char *cmd, long x, long y)
{
	int w, h;
	os_screen_size(d, &w, &h);
	if (x < 0 || y < 0 || x >= w || y >= h) {
		cli_usage_error(cmd, "point %ld,%ld is off the screen (%dx%d)", x, y, w, h);
		return false;
	}
	return true;
}

static int finish(os_display *d, bool ok)
{
	if (!ok)
		cli_error("%s", os_error());
	os_display_close(d);
	return ok ? CLI_OK : CLI_FAIL;
}

/* The buttons a person names, by their X number: by word or by number (4-7
 * are the wheel's: deskhand scroll). */
static const char *const button_names[][OS_BUTTON_FORWARD + 1] = {
	{[OS_BUTTON_LEFT] = "left", [OS_BUTTON_MIDDLE] = "middle", [OS_BUTTON_RIGHT] = "right",
	 [OS_BUTTON_BACK] = "back", [OS_BUTTON_FORWARD] = "forward"},
	{[OS_BUTTON_LEFT] = "1", [OS_BUTTON_MIDDLE] = "2", [OS_BUTTON_RIGHT] = "3",
	 [OS_BUTTON_BACK] = "8", [OS_BUTTON_FORWARD] = "9"},
};

static bool parse_button(const char *cmd, const char *s, os_button *b)
{
	for (size_t row = 0; row < BASE_COUNT(button_names); row++) {
		int i = base_name_index(BASE_NAMES(button_names[row]), s);
		if (i >= 0) {
			*b = (os_button)i;
			return true;
		}
	}
	char words[64];
	base_names_join(BASE_NAMES(button_names[0]), ", ", " or ", words, sizeof(words));
	cli_usage_error(cmd, "unknown button '%s' (%s)", s, words);
	return false;
}

int cmd_move(int argc, char **argv)
{
	struct cmdline c;
	int rc = cmdline_parse(&c, "move", argc, argv, NULL, 0, "");
	const char *pos[2];
	int npos = cmdline_take(&c, pos, 2);
	if (rc != CLI_OK)
		return rc;
	if (npos > 2)
		return cli_usage_error("move", "too many arguments");
	if (npos != 2)
		return cli_usage_error("move", "move needs X and Y");
	long x, y;
	if (!cli_parse_int(pos[0], COORD_MIN, COORD_MAX, "X", &x) ||
	    !cli_parse_int(pos[1], COORD_MIN, COORD_MAX, "Y", &y))
		return cli_usage("move");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	if (!check_point(d, "move", x, y)) {
		os_display_close(d);
		return CLI_USAGE;
	}
	return finish(d, os_mouse_move(d, (int)x, (int)y));
}

int cmd_click(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{"--button", 1, NULL}, {"--count", 1, NULL}};
	struct cmdline c;
	int rc = cmdline_parse(&c, "click", argc, argv, specs, 2, "");
	const char *pos[2];
	int npos = cmdline_take(&c, pos, 2);
	if (rc != CLI_OK)
		return rc;
	os_button button = OS_BUTTON_LEFT;
	long count = 1;
	if (c.seen[0] && !parse_button("click", c.value[0][0], &button))
		return CLI_USAGE;
	if (c.seen[1] && !cli_parse_int(c.value[1][0], 1, 10, "--count", &count))
		return cli_usage("click");
	if (npos > 2)
		return cli_usage_error("click", "too many arguments");
	if (npos == 1)
		return cli_usage_error("click", "click needs both X and Y, or neither");
	long x = 0, y = 0;
	if (npos == 2 && (!cli_parse_int(pos[0], COORD_MIN, COORD_MAX, "X", &x) ||
	                  !cli_parse_int(pos[1], COORD_MIN, COORD_MAX, "Y", &y)))
		return cli_usage("click");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	if (npos == 2 && !check_point(d, "click", x, y)) {
		os_display_close(d);
		return CLI_USAGE;
	}
	bool ok = npos == 0 || os_mouse_move(d, (int)x, (int)y);
	ok = ok && os_mouse_click(d, button, (int)count);
	return finish(d, ok);
}

int cmd_drag(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{"--button", 1, NULL}};
	struct cmdline c;
	int rc = cmdline_parse(&c, "drag", argc, argv, specs, 1, "");
	const char *pos[4];
	int npos = cmdline_take(&c, pos, 4);
	if (rc != CLI_OK)
		return rc;
	os_button button = OS_BUTTON_LEFT;
	if (c.seen[0] && !parse_button("drag", c.value[0][0], &button))
		return CLI_USAGE;
	if (npos > 4)
		return cli_usage_error("drag", "too many arguments");
	if (npos != 4)
		return cli_usage_error("drag", "drag needs X1 Y1 X2 Y2");
	long xy[4];
	static const char *const names[4] = {"X1", "Y1", "X2", "Y2"};
	for (int i = 0; i < 4; i++)
		if (!cli_parse_int(pos[i], COORD_MIN, COORD_MAX, names[i], &xy[i]))
			return cli_usage("drag");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	if (!check_point(d, "drag", xy[0], xy[1]) || !check_point(d, "drag", xy[2], xy[3])) {
		os_display_close(d);
		return CLI_USAGE;
	}
	return finish(d, os_mouse_drag(d, (int)xy[0], (int)xy[1], (int)xy[2],
	                               (int)xy[3], button));
}

int cmd_scroll(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{"--at", 2, "--at needs X and Y"}};
	struct cmdline c;
	int rc = cmdline_parse(&c, "scroll", argc, argv, specs, 1, "");
	const char *pos[2];
	int npos = cmdline_take(&c, pos, 2);
	if (rc != CLI_OK)
		return rc;
	const char *at[2] = {c.value[0][0], c.value[0][1]};
	if (npos > 2)
		return cli_usage_error("scroll", "too many arguments");
	if (npos == 0)
		return cli_usage_error("scroll", "scroll needs a direction");
	os_scroll dir;
	if (!os_scroll_parse(pos[0], &dir)) {
		char dirs[40];
		base_names_join(BASE_NAMES(os_scroll_names), ", ", " or ", dirs, sizeof(dirs));
		return cli_usage_error("scroll", "unknown direction '%s' (%s)", pos[0], dirs);
	}
	long amount = 3;
	if (npos == 2 && !cli_parse_int(pos[1], 1, 1000, "AMOUNT", &amount))
		return cli_usage("scroll");
	long x = 0, y = 0;
	if (at[0] != NULL && (!cli_parse_int(at[0], COORD_MIN, COORD_MAX, "X", &x) ||
	                      !cli_parse_int(at[1], COORD_MIN, COORD_MAX, "Y", &y)))
		return cli_usage("scroll");
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	if (at[0] != NULL && !check_point(d, "scroll", x, y)) {
		os_display_close(d);
		return CLI_USAGE;
	}
	bool ok = at[0] == NULL || os_mouse_move(d, (int)x, (int)y);
	ok = ok && os_mouse_scroll(d, dir, (int)amount);
	return finish(d, ok);
}

/* Reads all of standard input. Ownership: *out is malloc'ed, caller frees. */
static bool read_stdin(char **out, size_t *len)
{
	*out = base_read_fd(STDIN_FILENO, (size_t)TYPE_STDIN_MAX, len);
	if (*out == NULL && errno == EFBIG)
		cli_error("standard input is larger than %ld bytes", TYPE_STDIN_MAX);
	else if (*out == NULL)
		cli_error("cannot read standard input: %s", strerror(errno));
	return *out != NULL;
}

int cmd_type(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{"--delay-ms", 1, NULL}};
	os_trace("main");
	struct cmdline c;
	int rc = cmdline_parse(&c, "type", argc, argv, specs, 1,
	                       " (use -- before a text that starts with '-')");
	const char *text;
	int ntext = cmdline_take(&c, &text, 1);
	if (rc != CLI_OK)
		return rc;
	long delay = -1;
	if (c.seen[0] && !cli_parse_int(c.value[0][0], 0, 10000, "--delay-ms", &delay))
		return cli_usage("type");
	if (ntext != 1)
		return cli_usage_error("type", ntext == 0 ? "type needs a TEXT"
		                       : "type takes one TEXT (quote it)");
	char *buf = NULL;
	size_t len;
	if (strcmp(text, "-") == 0 && !c.no_more_options) {
		if (!read_stdin(&buf, &len))
			return CLI_FAIL;
		text = buf;
	} else {
		len = strlen(text);
	}
	if (!os_type_check(text, len)) {
		free(buf);
		return cli_usage_error("type", "%s", os_error());
	}
	os_display *d = cli_display_open(&rc);
	os_trace("connected");
	if (d != NULL)
		rc = finish(d, os_type(d, text, len, (int)delay));
	os_trace("closed");
	free(buf);
	return rc;
}

enum key_mode { KEY_TAP, KEY_DOWN, KEY_UP, KEY_HOLD };

int cmd_key(int argc, char **argv)
{
	static const struct opt_spec specs[] = {
		{"--down", 0, NULL}, {"--up", 0, NULL}, {"--hold", 1, NULL},
	};
	struct cmdline c;
	os_combo *combos = NULL;
	int rc = cmdline_parse(&c, "key", argc, argv, specs, 3, "");
	if (rc != CLI_OK)
		goto out;
	rc = CLI_USAGE;
	enum key_mode mode = c.seen[0] ? KEY_DOWN : c.seen[1] ? KEY_UP : KEY_TAP;
	long hold = 0;
	if (c.seen[2]) {
		if (!cli_parse_int(c.value[2][0], 0, 600000, "--hold", &hold)) {
			cli_usage("key");
			goto out;
		}
		mode = KEY_HOLD;
	}
	if (c.seen[0] + c.seen[1] + c.seen[2] > 1) {
		cli_usage_error("key", "--down, --up and --hold exclude each other");
		goto out;
	}
	int n = c.npos;
	if (n == 0) {
		cli_usage_error("key", "key needs at least one COMBO");
		goto out;
	}
	combos = calloc((size_t)n, sizeof(*combos));
	if (combos == NULL) {
		cli_error("out of memory");
		rc = CLI_FAIL;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (!os_key_parse(c.pos[i], &combos[i])) {
			cli_usage_error("key", "%s", os_error());
			goto out;
		}
	}
	os_display *d = cli_display_open(&rc);
	if (d == NULL)
		goto out;
	bool ok = true;
	if (mode == KEY_UP) {
		for (int i = n - 1; i >= 0 && ok; i--)
			ok = os_key_up(d, &combos[i]);
	} else {
		for (int i = 0; i < n && ok; i++) {
			if (mode == KEY_TAP)
				ok = os_key_combo(d, &combos[i]);
			else if (mode == KEY_DOWN)
				ok = os_key_down(d, &combos[i]);
			else
				ok = os_key_hold(d, &combos[i], (int)hold);
		}
	}
	/* Where the keys end with this process (a Wayland virtual keyboard's),
	 * --down cannot hold them for a later --up. Said, not hidden. */
	const char *why = NULL;
	if (ok && mode == KEY_DOWN && os_feature_how(d, OS_FEATURE_HELD_KEYS, &why) == NULL)
		cli_error("warning: %s", why);
	rc = finish(d, ok);
out:
	free(combos);
	cmdline_finish(&c);
	return rc;
}
