/*
 * vision/marks — set-of-marks: the elements' boxes outlined on the
 * model's image and each one's ID in a label beside it (see
 * vision_draw_marks in a11y.h). Needs no libatspi: it draws what a read
 * returned.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vision/a11y.h"
#include "vision/vision-internal.h"

#define MARKS_MAX 2000

typedef struct mark_box {
	int x, y, w, h;
} mark_box;

static bool boxes_meet(mark_box a, mark_box b)
{
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/* A screen box in the image's pixels (view: screen -> model image). */
static mark_box to_image(const vision_view *v, os_rect r)
{
	long x0 = (long)(r.x - v->screen_x) * v->model_w / v->screen_w;
	long y0 = (long)(r.y - v->screen_y) * v->model_h / v->screen_h;
	long x1 = (long)(r.x + r.width - v->screen_x) * v->model_w / v->screen_w;
	long y1 = (long)(r.y + r.height - v->screen_y) * v->model_h / v->screen_h;
	return (mark_box){(int)x0, (int)y0, (int)(x1 - x0 > 1 ? x1 - x0 : 1),
	                  (int)(y1 - y0 > 1 ? y1 - y0 : 1)};
}

static void outline(os_image *img, mark_box b)
{
	const vision_rgb c = {230, 0, 180};
	vision_fill_rect(img, b.x, b.y, b.w, 1, c, 256);
	vision_fill_rect(img, b.x, b.y + b.h - 1, b.w, 1, c, 256);
	vision_fill_rect(img, b.x, b.y, 1, b.h, c, 256);
	vision_fill_rect(img, b.x + b.w - 1, b.y, 1, b.h, c, 256);
}

/* The first free place for a w x h label at box b; false when none. */
static bool place(const os_image *img, mark_box b, int w, int h, const mark_box *used,
                  size_t n, mark_box *out)
{
	const mark_box tries[] = {
		{b.x, b.y - h, w, h}, {b.x, b.y, w, h}, {b.x, b.y + b.h, w, h},
		{b.x - w, b.y, w, h}, {b.x + b.w - w, b.y + b.h - h, w, h},
	};
	for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
		mark_box c = tries[t];
		if (c.x < 0 || c.y < 0 || c.x + w > img->width || c.y + h > img->height)
			continue;
		bool free_place = true;
		for (size_t i = 0; i < n && free_place; i++)
			free_place = !boxes_meet(c, used[i]);
		if (free_place) {
			*out = c;
			return true;
		}
	}
	return false;
}

size_t vision_draw_marks(os_image *img, const vision_view *view, const vision_elements *e,
                         size_t *unlabelled)
{
	*unlabelled = 0;
	size_t n = e->count < MARKS_MAX ? e->count : MARKS_MAX;
	mark_box *used = calloc(n ? n : 1, sizeof(*used));
	if (used == NULL) {
		*unlabelled = e->count;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		outline(img, to_image(view, e->items[i].box));
	size_t placed = 0;
	for (size_t i = 0; i < n; i++) {
		char id[16];
		snprintf(id, sizeof(id), "%d", e->items[i].id);
		int w, h;
		vision_label_size(id, 1, &w, &h);
		mark_box at;
		if (place(img, to_image(view, e->items[i].box), w, h, used, placed, &at)) {
			vision_draw_label(img, at.x, at.y, id, 1);
			used[placed++] = at;
		} else {
			(*unlabelled)++;
		}
	}
	*unlabelled += e->count - n;
	free(used);
	return placed;
}
