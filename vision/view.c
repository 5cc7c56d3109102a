/*
 * vision/view — the relation between a model image and the screen: fitting
 * a monitor into the model's maximum size, mapping coordinates both ways,
 * choosing the monitor. Pure arithmetic in 64-bit integers: no rounding
 * drift, and the same spans the scaler averages over.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "vision/vision-internal.h"

BASE_ERROR_TEXT(, vision_err, vision_error, vision_fail)

bool vision_fail_os(const char *what)
{
	return vision_fail("%s: %s", what, os_error());
}

/* round(a / b) for a >= 0, b > 0 */
static int64_t div_round(int64_t a, int64_t b)
{
	return (2 * a + b) / (2 * b);
}

bool vision_fit(int screen_w, int screen_h, int max_w, int max_h,
                int *model_w, int *model_h)
{
	if (screen_w <= 0 || screen_h <= 0)
		return vision_fail("invalid screen size %dx%d", screen_w, screen_h);
	if (max_w <= 0 || max_h <= 0)
		return vision_fail("invalid maximum size %dx%d", max_w, max_h);
	if (screen_w <= max_w && screen_h <= max_h) {
		*model_w = screen_w;
		*model_h = screen_h;
		return true;
	}
	/* The binding axis is the one with the smaller ratio max/screen:
	 * compare max_w/screen_w with max_h/screen_h without division. */
	int64_t w, h;
	if ((int64_t)max_w * screen_h <= (int64_t)max_h * screen_w) {
		w = max_w;
		h = div_round((int64_t)screen_h * max_w, screen_w);
		if (h > max_h)
			h = max_h;
	} else {
		h = max_h;
		w = div_round((int64_t)screen_w * max_h, screen_h);
		if (w > max_w)
			w = max_w;
	}
	*model_w = w < 1 ? 1 : (int)w;
	*model_h = h < 1 ? 1 : (int)h;
	return true;
}

bool vision_fit_side(int screen_w, int screen_h, int max_side,
                     int *model_w, int *model_h)
{
	return vision_fit(screen_w, screen_h, max_side, max_side, model_w, model_h);
}

int vision_coord_w(const vision_view *v)
{
	return v->coord_w > 0 ? v->coord_w : v->model_w;
}

int vision_coord_h(const vision_view *v)
{
	return v->coord_h > 0 ? v->coord_h : v->model_h;
}

/* q = n / f rounded half to even, as Python's round() (smart_resize's own). */
static long round_half_even(long n, long f)
{
	long q = n / f, r = n % f;
	if (2 * r > f || (2 * r == f && (q & 1)))
		q++;
	return q;
}

bool vision_smart_resize(int width, int height, int factor, long min_pixels, long max_pixels,
                         int *out_w, int *out_h)
{
	if (width <= 0 || height <= 0 || factor <= 0 || max_pixels < min_pixels)
		return vision_fail("smart_resize: invalid size %dx%d", width, height);
	long big = width > height ? width : height, small = width > height ? height : width;
	if (big > 200 * small)
		return vision_fail("smart_resize: aspect ratio of %dx%d is over 200", width, height);
	long w = round_half_even(width, factor) * factor;
	long h = round_half_even(height, factor) * factor;
	w = w < factor ? factor : w;
	h = h < factor ? factor : h;
	double area = (double)width * height;
	if (w * h > max_pixels) {
		double beta = sqrt(area / (double)max_pixels);
		w = (long)floor(width / beta / factor) * factor;
		h = (long)floor(height / beta / factor) * factor;
		w = w < factor ? factor : w;
		h = h < factor ? factor : h;
	} else if (w * h < min_pixels) {
		double beta = sqrt((double)min_pixels / area);
		w = (long)ceil(width * beta / factor) * factor;
		h = (long)ceil(height * beta / factor) * factor;
	}
	*out_w = (int)w;
	*out_h = (int)h;
	return true;
}

static bool view_valid(const vision_view *v)
{
	if (v == NULL || v->screen_w <= 0 || v->screen_h <= 0 || v->model_w <= 0 ||
	    v->model_h <= 0)
		return vision_fail("no valid view: no screenshot was taken yet");
	return true;
}

/* floor((2m+1) * S / 2M): the screen pixel under the centre of m's span. */
static int axis_to_screen(int m, int S, int M)
{
	return (int)(((2 * (int64_t)m + 1) * S) / (2 * (int64_t)M));
}

static int axis_to_model(int s, int S, int M)
{
	return (int)(((2 * (int64_t)s + 1) * M) / (2 * (int64_t)S));
}

bool vision_model_to_screen(const vision_view *v, int mx, int my,
                            int *sx, int *sy)
{
	if (!view_valid(v))
		return false;
	int cw = vision_coord_w(v), ch = vision_coord_h(v);
	if (mx < 0 || my < 0 || mx >= cw || my >= ch)
		return vision_fail("coordinate %d,%d is outside the %dx%d %s "
		                   "(valid: 0..%d, 0..%d)", mx, my, cw, ch,
		                   v->coord_w > 0 ? "coordinate grid" : "screenshot", cw - 1, ch - 1);
	*sx = v->screen_x + axis_to_screen(mx, v->screen_w, cw);
	*sy = v->screen_y + axis_to_screen(my, v->screen_h, ch);
	return true;
}

bool vision_screen_to_model(const vision_view *v, int sx, int sy,
                            int *mx, int *my)
{
	if (!view_valid(v))
		return false;
	int rx = sx - v->screen_x, ry = sy - v->screen_y;
	if (rx < 0 || ry < 0 || rx >= v->screen_w || ry >= v->screen_h)
		return vision_fail("point %d,%d is not on the monitor the model sees "
		                   "(%dx%d+%d+%d)", sx, sy, v->screen_w, v->screen_h,
		                   v->screen_x, v->screen_y);
	*mx = axis_to_model(rx, v->screen_w, vision_coord_w(v));
	*my = axis_to_model(ry, v->screen_h, vision_coord_h(v));
	return true;
}

bool vision_model_rect_to_screen(const vision_view *v, int x0, int y0,
                                 int x1, int y1, os_rect *out)
{
	if (!view_valid(v))
		return false;
	int cw = vision_coord_w(v), ch = vision_coord_h(v);
	if (x0 < 0 || y0 < 0 || x1 > cw || y1 > ch || x0 >= x1 || y0 >= y1)
		return vision_fail("region [%d,%d,%d,%d] is not a rectangle inside the "
		                   "%dx%d %s (need 0 <= x0 < x1 <= %d, "
		                   "0 <= y0 < y1 <= %d)", x0, y0, x1, y1, cw, ch,
		                   v->coord_w > 0 ? "coordinate grid" : "screenshot", cw, ch);
	int64_t S = v->screen_w, M = cw;
	int sx0 = (int)((x0 * S) / M);
	int sx1 = (int)((x1 * S + M - 1) / M);
	S = v->screen_h;
	M = ch;
	int sy0 = (int)((y0 * S) / M);
	int sy1 = (int)((y1 * S + M - 1) / M);
	out->x = v->screen_x + sx0;
	out->y = v->screen_y + sy0;
	out->width = sx1 - sx0;
	out->height = sy1 - sy0;
	return true;
}

static bool rect_contains(const os_rect *r, int x, int y)
{
	return x >= r->x && y >= r->y && x < r->x + r->width && y < r->y + r->height;
}

static int64_t rect_distance2(const os_rect *r, int x, int y)
{
	int64_t dx = 0, dy = 0;
	if (x < r->x)
		dx = r->x - x;
	else if (x >= r->x + r->width)
		dx = x - (r->x + r->width - 1);
	if (y < r->y)
		dy = r->y - y;
	else if (y >= r->y + r->height)
		dy = y - (r->y + r->height - 1);
	return dx * dx + dy * dy;
}

int vision_pick_monitor(const os_rect *mons, int n, int want, int px, int py)
{
	if (n <= 0)
		return -1;
	if (want >= 0)
		return want < n ? want : -1;
	for (int i = 0; i < n; i++)
		if (rect_contains(&mons[i], px, py))
			return i;
	int best = 0;
	for (int i = 1; i < n; i++)
		if (rect_distance2(&mons[i], px, py) < rect_distance2(&mons[best], px, py))
			best = i;
	return best;
}

#define VISION_MAX_MONITORS 32

bool vision_focus_point(os_display *d, int *x, int *y)
{
	*x = *y = 0;
	if (os_pointer(d, x, y))
		return true;
	size_t n = 0;
	os_window *ws = os_windows_list(d, &n);
	bool found = false;
	for (size_t i = 0; ws != NULL && i < n; i++) {
		if (ws[i].active && ws[i].geometry.width > 0) {
			*x = ws[i].geometry.x + ws[i].geometry.width / 2;
			*y = ws[i].geometry.y + ws[i].geometry.height / 2;
			found = true;
		}
	}
	os_windows_free(ws, n);
	return found;
}

bool vision_monitor(os_display *d, int want, os_rect *mon)
{
	os_rect mons[VISION_MAX_MONITORS];
	int n = os_monitors(d, mons, VISION_MAX_MONITORS);
	if (n > VISION_MAX_MONITORS)
		n = VISION_MAX_MONITORS;
	int px = 0, py = 0;
	if (want < 0)
		vision_focus_point(d, &px, &py);
	int i = vision_pick_monitor(mons, n, want, px, py);
	if (i < 0)
		return vision_fail("no monitor %d: the screen has %d (0..%d)", want, n,
		                   n - 1);
	/* A monitor may reach past the root window (xrandr --setmonitor takes
	 * any geometry): the view covers what is on the screen. */
	os_rect m = mons[i];
	int sw, sh;
	os_screen_size(d, &sw, &sh);
	int x0 = m.x > 0 ? m.x : 0, y0 = m.y > 0 ? m.y : 0;
	int x1 = m.x + m.width < sw ? m.x + m.width : sw;
	int y1 = m.y + m.height < sh ? m.y + m.height : sh;
	if (x1 <= x0 || y1 <= y0)
		return vision_fail("monitor %d (%dx%d%+d%+d) lies outside the screen",
		                   i, m.width, m.height, m.x, m.y);
	*mon = (os_rect){x0, y0, x1 - x0, y1 - y0};
	return true;
}

const char *const vision_grounding_names[VISION_GROUND_COUNT] = {
	[VISION_GROUND_PIXELS] = "pixels",
	[VISION_GROUND_SMART_RESIZE] = "smart-resize",
	[VISION_GROUND_RELATIVE] = "relative-1000",
};
BASE_NAME_FUNCTIONS(vision_grounding, vision_grounding_names, vision_grounding_parse,
                    vision_grounding_name, "?")

bool vision_view_for(const vision_shot_opts *o, const os_rect *mon, vision_view *v)
{
	int max_w = o->max_w > 0 ? o->max_w : VISION_DEFAULT_MAX_W;
	int max_h = o->max_h > 0 ? o->max_h : VISION_DEFAULT_MAX_H;
	*v = (vision_view){mon->x, mon->y, mon->width, mon->height, 0, 0, 0, 0};
	if (o->grounding == VISION_GROUND_SMART_RESIZE)
		return vision_smart_resize(v->screen_w, v->screen_h, 28, o->min_pixels,
		                           (long)max_w * max_h, &v->model_w, &v->model_h);
	if (!vision_fit(v->screen_w, v->screen_h, max_w, max_h, &v->model_w, &v->model_h))
		return false;
	if (o->grounding == VISION_GROUND_RELATIVE)
		v->coord_w = v->coord_h = o->relative > 0 ? o->relative : 1000;
	return true;
}
