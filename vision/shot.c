/*
 * vision/shot — the model's view of the screen and zoomed crops: pick the
 * monitor, capture it (borrowed, no copy, in strips: settle.c), scale it
 * to the model's size.
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

os_image *vision_shot(os_display *d, const vision_shot_opts *opts,
                      vision_view *view)
{
	/* The same shot, without the wait (settle.c). */
	return vision_settled_shot(d, opts, NULL, view);
}

os_image *vision_capture_scaled(os_display *d, const os_rect *r, int w, int h)
{
	os_image *img = os_image_create(w, h);
	if (img == NULL) {
		vision_fail("out of memory for a %dx%d image", w, h);
		return NULL;
	}
	if (!vision_capture_scaled_into(d, r, img, NULL)) {
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
