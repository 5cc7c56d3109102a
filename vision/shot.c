/*
 * vision/shot — the model's view of the screen and zoomed crops: pick the
 * monitor, capture it (borrowed, no copy), scale it to the model's size.
 */
#include <stdlib.h>

#include "vision/vision-internal.h"

void vision_shot_opts_init(vision_shot_opts *opts)
{
	opts->max_w = VISION_DEFAULT_MAX_W;
	opts->max_h = VISION_DEFAULT_MAX_H;
	opts->monitor = -1;
	opts->grid = false;
	opts->grounding = VISION_GROUND_PIXELS;
	opts->min_pixels = 56 * 56;
	opts->relative = 1000;
}

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

os_image *vision_shot(os_display *d, const vision_shot_opts *opts,
                      vision_view *view)
{
	vision_shot_opts def;
	if (opts == NULL) {
		vision_shot_opts_init(&def);
		opts = &def;
	}
	os_rect mon;
	if (!vision_monitor(d, opts->monitor, &mon))
		return NULL;
	vision_view v;
	if (!vision_view_for(opts, &mon, &v))
		return NULL;
	os_image *img = vision_capture_scaled(d, &mon, v.model_w, v.model_h);
	if (img == NULL)
		return NULL;
	if (opts->grid)
		vision_grid(img, 0);
	*view = v;
	return img;
}

/*
 * Strips instead of one capture of the whole monitor: the capture segment
 * (reused for the life of the display) then holds 64 rows, not a whole
 * 8 MB screen, and the scaler reads each row once while it is still in the
 * cache. The screen was let settle first; a strip a few hundred
 * microseconds younger than the one above it shows the same picture.
 */
struct strips {
	os_display *d;
	os_rect r;
	const os_image *cur;
	int y0, y1;     /* rows of r held by cur */
};

static const uint8_t *strip_row(void *ctx, int y)
{
	struct strips *st = ctx;
	if (st->cur == NULL || y < st->y0 || y >= st->y1) {
		int n = st->r.height - y < VISION_STRIP_ROWS ? st->r.height - y : VISION_STRIP_ROWS;
		os_rect s = {st->r.x, st->r.y + y, st->r.width, n};
		st->cur = os_capture_borrow(st->d, &s);
		if (st->cur == NULL) {
			vision_fail_os("capture failed");
			return NULL;
		}
		st->y0 = y;
		st->y1 = y + n;
	}
	return st->cur->pixels + (size_t)(y - st->y0) * st->cur->stride;
}

os_image *vision_capture_scaled(os_display *d, const os_rect *r, int w, int h)
{
	os_image *img = os_image_create(w, h);
	if (img == NULL) {
		vision_fail("out of memory for a %dx%d image", w, h);
		return NULL;
	}
	struct strips st = {d, *r, NULL, 0, 0};
	if (!vision_scale_rows(r->width, r->height, strip_row, &st, img)) {
		os_image_destroy(img);
		return NULL;
	}
	return img;
}

#define ZOOM_MAX_ENLARGE 8

os_image *vision_zoom(os_display *d, const vision_view *view,
                      int x0, int y0, int x1, int y1, int max_w, int max_h,
                      vision_view *zoom_view)
{
	os_rect r;
	if (!vision_model_rect_to_screen(view, x0, y0, x1, y1, &r))
		return NULL;
	if (max_w <= 0)
		max_w = view->model_w;
	if (max_h <= 0)
		max_h = view->model_h;
	/* Fit, allowing enlargement up to ZOOM_MAX_ENLARGE: fit an enlarged
	 * copy's size into the maximum. */
	int ow, oh;
	if (!vision_fit(r.width * ZOOM_MAX_ENLARGE, r.height * ZOOM_MAX_ENLARGE,
	                max_w, max_h, &ow, &oh))
		return NULL;
	os_image *img = vision_capture_scaled(d, &r, ow, oh);
	if (img == NULL)
		return NULL;
	if (zoom_view != NULL)
		*zoom_view = (vision_view){r.x, r.y, r.width, r.height, ow, oh};
	return img;
}
