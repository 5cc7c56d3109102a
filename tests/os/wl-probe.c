/*
 * wl-probe — drives the wlroots backend (os/wlroots/) directly, for trying
 * it against a real compositor (a headless sway): built, never run by the
 * test suite. Commands run in order in one process:
 *
 *   info                         backend, server, offers, screen, monitors, features
 *   capture FILE.png [X Y W H]   a capture written as PNG
 *   compare FILE.png X Y W H     captures the region, compares RGB with FILE.png
 *   bench-capture N [X Y W H]    N captures, the time of each
 *   move X Y | click BUTTON N | down BUTTON | up BUTTON | scroll DIR N
 *   drag X1 Y1 X2 Y2
 *   type TEXT | type-file FILE   (prints the time taken)
 *   key COMBO | keydown COMBO | keyup COMBO | hold COMBO MS
 *   windows | activate ID | owners X Y | sleep MS
 *
 * The shared half of os/ (os/display.c's dispatcher) is not in this tree
 * yet: the few functions of it the backend calls are stood in for below,
 * and the backend's table is called straight through d->impl.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "os/backend.h"
#include "os/keys.h"

/* ---- stand-ins for the shared os/display.c ------------------------------- */

BASE_ERROR_TEXT(, probe_err, os_error, os_fail)

bool os_display_init_head(os_display *d, const struct os_backend_impl *impl, const char *name)
{
	d->impl = impl;
	d->name = strdup(name);
	d->server = strdup("");
	d->offers = strdup("");
	d->warning = NULL;
	if (d->name == NULL || d->server == NULL || d->offers == NULL)
		return os_fail("out of memory");
	return true;
}

void os_display_free_head(os_display *d)
{
	free(d->name);
	free(d->server);
	free(d->offers);
	free(d->warning);
	free(d);
}

void os_display_set(char **field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) >= 0) {
		free(*field);
		*field = s;
	}
	va_end(ap);
}

bool os_point_on_screen(os_display *d, int x, int y)
{
	int w, h;
	d->impl->screen_size(d, &w, &h);
	if (x < 0 || y < 0 || x >= w || y >= h)
		return os_fail("point %d,%d is off the screen (%dx%d)", x, y, w, h);
	return true;
}

bool os_type_check(const char *utf8, size_t len)
{
	uint32_t *cps = malloc((len ? len : 1) * sizeof(*cps));
	size_t bad = 0;
	long n = cps != NULL ? os_utf8_decode(utf8, len, cps, &bad) : -1;
	bool ok = n >= 0;
	if (!ok)
		os_fail("text is not valid UTF-8 (at offset %zu)", bad);
	for (long i = 0; ok && i < n; i++)
		if (os_keysym_for_char(cps[i]) == 0)
			ok = os_fail("character %ld (U+%04X) cannot be typed", i + 1, cps[i]);
	free(cps);
	return ok;
}

void os_windows_free(os_window *w, size_t count)
{
	for (size_t i = 0; w != NULL && i < count; i++) {
		free(w[i].klass);
		free(w[i].title);
	}
	free(w);
}

const char *const os_scroll_names[OS_SCROLL_COUNT] = {"up", "down", "left", "right"};

static bool combo_parse(const char *text, os_combo *c)
{
	memset(c, 0, sizeof(*c));
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *save = NULL, *p = strtok_r(buf, "+", &save); p != NULL;
	     p = strtok_r(NULL, "+", &save)) {
		uint32_t ks = os_keysym_from_name(p);
		if (ks == 0 || c->count == OS_COMBO_MAX)
			return os_fail("bad key '%s'", p);
		c->keysyms[c->count++] = ks;
	}
	return c->count > 0 || os_fail("empty combination");
}

/* ---- the probe ----------------------------------------------------------- */

static double now_ms(void)
{
	return (double)base_now_ns() / 1e6;
}

static void info(os_display *d)
{
	static const char *const feat[] = {"capture", "pointer", "keys", "typing",
	                                   "windows", "owners", "pointer-position"};
	int w, h;
	d->impl->screen_size(d, &w, &h);
	printf("backend %s\nname %s\nserver %s\noffers %s\nscreen %dx%d\n", d->impl->name,
	       d->name, d->server, d->offers, w, h);
	os_monitor m[16];
	int n = d->impl->monitors(d, m, 16);
	for (int i = 0; i < n && i < 16; i++)
		printf("monitor %s %dx%d+%d+%d scale %g\n", m[i].name, m[i].rect.width,
		       m[i].rect.height, m[i].rect.x, m[i].rect.y, m[i].scale);
	for (int f = 0; f < OS_FEATURE_COUNT; f++) {
		const char *why = NULL;
		const char *how = d->impl->feature(d, (os_feature)f, &why);
		printf("feature %s: %s\n", feat[f], how != NULL ? how : "NO");
		if (how == NULL)
			printf("  why: %s\n", why);
	}
	int x, y;
	if (!d->impl->pointer(d, &x, &y))
		printf("pointer: %s\n", os_error());
}

static bool region_arg(char **argv, int i, int argc, os_rect *r)
{
	if (i + 4 > argc)
		return false;
	*r = (os_rect){atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3])};
	return true;
}

static bool compare(os_display *d, const char *path, const os_rect *r)
{
	os_image *ref = os_png_read_file(path);
	if (ref == NULL)
		return false;
	const os_image *img = d->impl->capture_borrow(d, r);
	bool ok = img != NULL;
	if (ok && (img->width != ref->width || img->height != ref->height))
		ok = os_fail("size %dx%d against %dx%d", img->width, img->height, ref->width,
		             ref->height);
	long diff = 0, first = -1;
	for (int y = 0; ok && y < img->height; y++)
		for (int x = 0; x < img->width; x++) {
			const uint8_t *a = img->pixels + (size_t)y * img->stride + x * 4;
			const uint8_t *b = ref->pixels + (size_t)y * ref->stride + x * 4;
			if (memcmp(a, b, 3) != 0) {
				if (first < 0)
					first = (long)y * img->width + x;
				diff++;
			}
		}
	if (ok)
		printf("compare %s: %ld of %d pixels differ%s\n", path, diff,
		       img->width * img->height, diff == 0 ? " (equal)" : "");
	os_image_destroy(ref);
	return ok && diff == 0;
}

static bool type_text(os_display *d, const char *text, size_t len)
{
	double t0 = now_ms();
	bool ok = d->impl->type(d, text, len, -1);
	printf("typed %zu bytes in %.1f ms\n", len, now_ms() - t0);
	return ok;
}

static bool list_windows(os_display *d)
{
	size_t n;
	os_window *w = d->impl->windows_list(d, &n);
	if (w == NULL && n == 0 && os_error()[0] != '\0')
		return false;
	for (size_t i = 0; i < n; i++)
		printf("window %u pid %d %dx%d+%d+%d%s class '%s' title '%s'\n", w[i].id, w[i].pid,
		       w[i].geometry.width, w[i].geometry.height, w[i].geometry.x, w[i].geometry.y,
		       w[i].active ? " active" : "", w[i].klass, w[i].title);
	os_windows_free(w, n);
	return true;
}

static bool owners(os_display *d, int x, int y)
{
	int pids[16];
	size_t n = d->impl->point_owners(d, x, y, pids, 16);
	printf("point owners:");
	for (size_t i = 0; i < n; i++)
		printf(" %d", pids[i]);
	n = d->impl->keys_owners(d, pids, 16);
	printf("\nkeys owners:");
	for (size_t i = 0; i < n; i++)
		printf(" %d", pids[i]);
	n = d->impl->client_pids(d, pids, 16);
	printf("\nclients:");
	for (size_t i = 0; i < n; i++)
		printf(" %d", pids[i]);
	printf("\n");
	return true;
}

static bool bench(os_display *d, int n, const os_rect *r)
{
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (d->impl->capture_borrow(d, r) == NULL)
			return false;
		printf("capture %d: %.1f ms\n", i, now_ms() - t0);
	}
	return true;
}

static int button_arg(const char *s)
{
	static const char *const names[] = {"left", "middle", "right", "back", "forward"};
	static const int values[] = {OS_BUTTON_LEFT, OS_BUTTON_MIDDLE, OS_BUTTON_RIGHT,
	                             OS_BUTTON_BACK, OS_BUTTON_FORWARD};
	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0)
			return values[i];
	return atoi(s);
}

static bool need(int i, int k, int argc)
{
	return i + k < argc || os_fail("missing arguments");
}

/* Runs the command at argv[*i]; advances *i past its arguments. */
static bool run(os_display *d, int argc, char **argv, int *i)
{
	const char *cmd = argv[(*i)++];
	int a = *i;
	os_rect r;
	os_combo c;
	if (strcmp(cmd, "info") == 0) {
		info(d);
		return true;
	}
	if (strcmp(cmd, "capture") == 0 && need(a, 0, argc)) {
		bool have = region_arg(argv, a + 1, argc, &r);
		*i += have ? 5 : 1;
		double t0 = now_ms();
		const os_image *img = d->impl->capture_borrow(d, have ? &r : NULL);
		double t1 = now_ms();
		if (img == NULL)
			return false;
		printf("captured %dx%d in %.1f ms\n", img->width, img->height, t1 - t0);
		return os_png_write_file(img, argv[a], NULL);
	}
	if (strcmp(cmd, "compare") == 0 && need(a, 4, argc) && region_arg(argv, a + 1, argc, &r)) {
		*i += 5;
		return compare(d, argv[a], &r);
	}
	if (strcmp(cmd, "bench-capture") == 0 && need(a, 0, argc)) {
		bool have = region_arg(argv, a + 1, argc, &r);
		*i += have ? 5 : 1;
		return bench(d, atoi(argv[a]), have ? &r : NULL);
	}
	if (strcmp(cmd, "move") == 0 && need(a, 1, argc)) {
		*i += 2;
		return d->impl->mouse_move(d, atoi(argv[a]), atoi(argv[a + 1]));
	}
	if (strcmp(cmd, "click") == 0 && need(a, 1, argc)) {
		*i += 2;
		return d->impl->mouse_click(d, (os_button)button_arg(argv[a]), atoi(argv[a + 1]));
	}
	if ((strcmp(cmd, "down") == 0 || strcmp(cmd, "up") == 0) && need(a, 0, argc)) {
		*i += 1;
		return d->impl->mouse_button(d, (os_button)button_arg(argv[a]), cmd[0] == 'd');
	}
	if (strcmp(cmd, "scroll") == 0 && need(a, 1, argc)) {
		*i += 2;
		int dir = 0;
		while (dir < OS_SCROLL_COUNT && strcmp(os_scroll_names[dir], argv[a]) != 0)
			dir++;
		return d->impl->mouse_scroll(d, (os_scroll)dir, atoi(argv[a + 1]));
	}
	if (strcmp(cmd, "drag") == 0 && need(a, 3, argc)) {
		*i += 4;
		int xy[4] = {atoi(argv[a]), atoi(argv[a + 1]), atoi(argv[a + 2]), atoi(argv[a + 3])};
		return d->impl->mouse_drag_path(d, xy, 2, OS_BUTTON_LEFT);
	}
	if (strcmp(cmd, "type") == 0 && need(a, 0, argc)) {
		*i += 1;
		return type_text(d, argv[a], strlen(argv[a]));
	}
	if (strcmp(cmd, "type-file") == 0 && need(a, 0, argc)) {
		*i += 1;
		size_t len;
		char *text = base_read_file(argv[a], 1 << 24, &len);
		if (text == NULL)
			return os_fail("cannot read %s", argv[a]);
		bool ok = type_text(d, text, len);
		free(text);
		return ok;
	}
	if (strcmp(cmd, "key") == 0 && need(a, 0, argc) && combo_parse(argv[a], &c)) {
		*i += 1;
		return d->impl->key_combo(d, &c);
	}
	if (strcmp(cmd, "keydown") == 0 && need(a, 0, argc) && combo_parse(argv[a], &c)) {
		*i += 1;
		return d->impl->key_down(d, &c);
	}
	if (strcmp(cmd, "keyup") == 0 && need(a, 0, argc) && combo_parse(argv[a], &c)) {
		*i += 1;
		return d->impl->key_up(d, &c);
	}
	if (strcmp(cmd, "hold") == 0 && need(a, 1, argc) && combo_parse(argv[a], &c)) {
		*i += 2;
		return d->impl->key_hold(d, &c, atoi(argv[a + 1]));
	}
	if (strcmp(cmd, "windows") == 0)
		return list_windows(d);
	if (strcmp(cmd, "activate") == 0 && need(a, 0, argc)) {
		*i += 1;
		return d->impl->window_activate(d, (uint32_t)strtoul(argv[a], NULL, 10));
	}
	if (strcmp(cmd, "owners") == 0 && need(a, 1, argc)) {
		*i += 2;
		return owners(d, atoi(argv[a]), atoi(argv[a + 1]));
	}
	if (strcmp(cmd, "sleep") == 0 && need(a, 0, argc)) {
		*i += 1;
		base_sleep_ms(atol(argv[a]), NULL);
		return true;
	}
	if (os_error()[0] == '\0')
		os_fail("unknown command or missing arguments: %s", cmd);
	return false;
}

int main(int argc, char **argv)
{
	double t0 = now_ms();
	bool not_mine = false;
	os_display *d = os_wlroots_open(NULL, &not_mine);
	if (d == NULL) {
		fprintf(stderr, "wl-probe: %s%s\n", os_error(), not_mine ? " (not mine)" : "");
		return 2;
	}
	printf("opened in %.1f ms\n", now_ms() - t0);
	int status = 0;
	for (int i = 1; i < argc;) {
		const char *cmd = argv[i];
		probe_err.text[0] = '\0';
		if (!run(d, argc, argv, &i)) {
			fprintf(stderr, "wl-probe: %s: %s\n", cmd, os_error());
			status = 1;
		}
	}
	d->impl->destroy(d);
	return status;
}
