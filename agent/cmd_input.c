/*
 * deskhand move / click / drag / scroll / type / key: mouse and keyboard
 * through os/. Every argument is parsed and checked (numbers, names, key
 * combinations, UTF-8, coordinates against the screen) before the first
 * event is sent, so a usage error (exit 2) never leaves half an action
 * behind.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli.h"
#include "os/os.h"

/* Coordinates are parsed wide, then checked against the real screen. */
#define COORD_MIN (-1000000L)
#define COORD_MAX 1000000L

/* Standard input for `type -`: at most this much, to keep memory bounded. */
#define TYPE_STDIN_MAX (16L * 1024 * 1024)

/*
 * Option scanning shared by the commands: "--" ends options, a lone "-" and
 * negative numbers are positional, anything else starting with '-' is an
 * option. --name=value is accepted as well as --name value.
 */
struct args {
	const char *cmd;
	int argc;
	char **argv;
	int i;
	bool no_more_options;
};

static bool is_option(struct args *a, const char *s)
{
	if (a->no_more_options || s[0] != '-' || s[1] == '\0')
		return false;
	if (s[1] >= '0' && s[1] <= '9')
		return false;
	return true;
}

/* Returns the value of option `name` at a->argv[a->i], or NULL. */
static const char *option_value(struct args *a, const char *name, bool *bad)
{
	const char *s = a->argv[a->i];
	size_t n = strlen(name);
	if (strncmp(s, name, n) != 0)
		return NULL;
	if (s[n] == '=')
		return s + n + 1;
	if (s[n] != '\0')
		return NULL;
	if (a->i + 1 >= a->argc) {
		cli_usage_error(a->cmd, "%s needs a value", name);
		*bad = true;
		return NULL;
	}
	return a->argv[++a->i];
}

static os_display *open_display(void)
{
	os_display *d = os_display_open(NULL);
	if (d == NULL)
		cli_error("%s", os_error());
	return d;
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

static bool parse_button(const char *cmd, const char *s, os_button *b)
{
	if (strcmp(s, "left") == 0 || strcmp(s, "1") == 0)
		*b = OS_BUTTON_LEFT;
	else if (strcmp(s, "middle") == 0 || strcmp(s, "2") == 0)
		*b = OS_BUTTON_MIDDLE;
	else if (strcmp(s, "right") == 0 || strcmp(s, "3") == 0)
		*b = OS_BUTTON_RIGHT;
	else {
		cli_usage_error(cmd, "unknown button '%s' (left, middle or right)", s);
		return false;
	}
	return true;
}

int cmd_move(int argc, char **argv)
{
	struct args a = {.cmd = "move", .argc = argc, .argv = argv};
	const char *pos[2];
	int npos = 0;
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i];
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			return cli_usage_error("move", "unknown option '%s'", s);
		} else if (npos < 2) {
			pos[npos++] = s;
		} else {
			return cli_usage_error("move", "too many arguments");
		}
	}
	if (npos != 2)
		return cli_usage_error("move", "move needs X and Y");
	long x, y;
	if (!cli_parse_int(pos[0], COORD_MIN, COORD_MAX, "X", &x) ||
	    !cli_parse_int(pos[1], COORD_MIN, COORD_MAX, "Y", &y))
		return cli_usage("move");
	os_display *d = open_display();
	if (d == NULL)
		return CLI_FAIL;
	if (!check_point(d, "move", x, y)) {
		os_display_close(d);
		return CLI_USAGE;
	}
	return finish(d, os_mouse_move(d, (int)x, (int)y));
}

int cmd_click(int argc, char **argv)
{
	struct args a = {.cmd = "click", .argc = argc, .argv = argv};
	const char *pos[2];
	int npos = 0;
	os_button button = OS_BUTTON_LEFT;
	long count = 1;
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i], *v;
		bool bad = false;
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			if ((v = option_value(&a, "--button", &bad)) != NULL) {
				if (!parse_button("click", v, &button))
					return CLI_USAGE;
			} else if ((v = option_value(&a, "--count", &bad)) != NULL) {
				if (!cli_parse_int(v, 1, 10, "--count", &count))
					return cli_usage("click");
			} else if (bad) {
				return CLI_USAGE;
			} else {
				return cli_usage_error("click", "unknown option '%s'", s);
			}
			if (bad)
				return CLI_USAGE;
		} else if (npos < 2) {
			pos[npos++] = s;
		} else {
			return cli_usage_error("click", "too many arguments");
		}
	}
	if (npos == 1)
		return cli_usage_error("click", "click needs both X and Y, or neither");
	long x = 0, y = 0;
	if (npos == 2 && (!cli_parse_int(pos[0], COORD_MIN, COORD_MAX, "X", &x) ||
	                  !cli_parse_int(pos[1], COORD_MIN, COORD_MAX, "Y", &y)))
		return cli_usage("click");
	os_display *d = open_display();
	if (d == NULL)
		return CLI_FAIL;
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
	struct args a = {.cmd = "drag", .argc = argc, .argv = argv};
	const char *pos[4];
	int npos = 0;
	os_button button = OS_BUTTON_LEFT;
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i], *v;
		bool bad = false;
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			if ((v = option_value(&a, "--button", &bad)) != NULL) {
				if (!parse_button("drag", v, &button))
					return CLI_USAGE;
			} else if (bad) {
				return CLI_USAGE;
			} else {
				return cli_usage_error("drag", "unknown option '%s'", s);
			}
		} else if (npos < 4) {
			pos[npos++] = s;
		} else {
			return cli_usage_error("drag", "too many arguments");
		}
	}
	if (npos != 4)
		return cli_usage_error("drag", "drag needs X1 Y1 X2 Y2");
	long c[4];
	static const char *const names[4] = {"X1", "Y1", "X2", "Y2"};
	for (int i = 0; i < 4; i++)
		if (!cli_parse_int(pos[i], COORD_MIN, COORD_MAX, names[i], &c[i]))
			return cli_usage("drag");
	os_display *d = open_display();
	if (d == NULL)
		return CLI_FAIL;
	if (!check_point(d, "drag", c[0], c[1]) || !check_point(d, "drag", c[2], c[3])) {
		os_display_close(d);
		return CLI_USAGE;
	}
	return finish(d, os_mouse_drag(d, (int)c[0], (int)c[1], (int)c[2],
	                               (int)c[3], button));
}

int cmd_scroll(int argc, char **argv)
{
	struct args a = {.cmd = "scroll", .argc = argc, .argv = argv};
	const char *pos[2];
	int npos = 0;
	const char *at[2] = {NULL, NULL};
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i];
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			if (strcmp(s, "--at") != 0)
				return cli_usage_error("scroll", "unknown option '%s'", s);
			if (a.i + 2 >= argc)
				return cli_usage_error("scroll", "--at needs X and Y");
			at[0] = argv[++a.i];
			at[1] = argv[++a.i];
		} else if (npos < 2) {
			pos[npos++] = s;
		} else {
			return cli_usage_error("scroll", "too many arguments");
		}
	}
	if (npos == 0)
		return cli_usage_error("scroll", "scroll needs a direction");
	os_scroll dir;
	if (strcmp(pos[0], "up") == 0)
		dir = OS_SCROLL_UP;
	else if (strcmp(pos[0], "down") == 0)
		dir = OS_SCROLL_DOWN;
	else if (strcmp(pos[0], "left") == 0)
		dir = OS_SCROLL_LEFT;
	else if (strcmp(pos[0], "right") == 0)
		dir = OS_SCROLL_RIGHT;
	else
		return cli_usage_error("scroll", "unknown direction '%s' (up, down, "
		                       "left or right)", pos[0]);
	long amount = 3;
	if (npos == 2 && !cli_parse_int(pos[1], 1, 1000, "AMOUNT", &amount))
		return cli_usage("scroll");
	long x = 0, y = 0;
	if (at[0] != NULL && (!cli_parse_int(at[0], COORD_MIN, COORD_MAX, "X", &x) ||
	                      !cli_parse_int(at[1], COORD_MIN, COORD_MAX, "Y", &y)))
		return cli_usage("scroll");
	os_display *d = open_display();
	if (d == NULL)
		return CLI_FAIL;
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
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		cli_error("out of memory");
		return false;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= (size_t)TYPE_STDIN_MAX) {
				cli_error("standard input is larger than %ld bytes",
				          TYPE_STDIN_MAX);
				free(buf);
				return false;
			}
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				cli_error("out of memory");
				free(buf);
				return false;
			}
			buf = nb;
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n, stdin);
		n += got;
		if (got == 0) {
			if (ferror(stdin)) {
				cli_error("cannot read standard input");
				free(buf);
				return false;
			}
			break;
		}
	}
	*out = buf;
	*len = n;
	return true;
}

int cmd_type(int argc, char **argv)
{
	struct args a = {.cmd = "type", .argc = argc, .argv = argv};
	const char *text = NULL;
	int ntext = 0;
	long delay = -1;
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i], *v;
		bool bad = false;
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			if ((v = option_value(&a, "--delay-ms", &bad)) != NULL) {
				if (!cli_parse_int(v, 0, 10000, "--delay-ms", &delay))
					return cli_usage("type");
			} else if (bad) {
				return CLI_USAGE;
			} else {
				return cli_usage_error("type", "unknown option '%s' (use -- "
				                       "before a text that starts with '-')", s);
			}
		} else {
			text = s;
			ntext++;
		}
	}
	if (ntext != 1)
		return cli_usage_error("type", ntext == 0 ? "type needs a TEXT"
		                       : "type takes one TEXT (quote it)");
	char *buf = NULL;
	size_t len;
	if (strcmp(text, "-") == 0 && !a.no_more_options) {
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
	int rc = CLI_FAIL;
	os_display *d = open_display();
	if (d != NULL)
		rc = finish(d, os_type(d, text, len, (int)delay));
	free(buf);
	return rc;
}

enum key_mode { KEY_TAP, KEY_DOWN, KEY_UP, KEY_HOLD };

int cmd_key(int argc, char **argv)
{
	struct args a = {.cmd = "key", .argc = argc, .argv = argv};
	enum key_mode mode = KEY_TAP;
	long hold = 0;
	int nmodes = 0;
	os_combo *combos = calloc((size_t)argc, sizeof(*combos));
	if (combos == NULL) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	int n = 0, rc = CLI_USAGE;
	for (a.i = 1; a.i < argc; a.i++) {
		const char *s = argv[a.i], *v;
		bool bad = false;
		if (!a.no_more_options && strcmp(s, "--") == 0) {
			a.no_more_options = true;
		} else if (is_option(&a, s)) {
			if (strcmp(s, "--down") == 0) {
				mode = KEY_DOWN;
				nmodes++;
			} else if (strcmp(s, "--up") == 0) {
				mode = KEY_UP;
				nmodes++;
			} else if ((v = option_value(&a, "--hold", &bad)) != NULL) {
				if (!cli_parse_int(v, 0, 600000, "--hold", &hold)) {
					cli_usage("key");
					goto out;
				}
				mode = KEY_HOLD;
				nmodes++;
			} else {
				if (!bad)
					cli_usage_error("key", "unknown option '%s'", s);
				goto out;
			}
		} else if (!os_key_parse(s, &combos[n++])) {
			cli_usage_error("key", "%s", os_error());
			goto out;
		}
	}
	if (nmodes > 1) {
		cli_usage_error("key", "--down, --up and --hold exclude each other");
		goto out;
	}
	if (n == 0) {
		cli_usage_error("key", "key needs at least one COMBO");
		goto out;
	}
	os_display *d = open_display();
	if (d == NULL) {
		rc = CLI_FAIL;
		goto out;
	}
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
	rc = finish(d, ok);
out:
	free(combos);
	return rc;
}
