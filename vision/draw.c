/*
 * vision/draw — what vision/ paints on images: target markers and labels
 * for the confirmation preview, and the labelled grid overlay. Pixels only;
 * text comes from the built-in bitmap font (vision/font.c) because vision/
 * cannot use the X server's fonts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vision/vision-internal.h"

static const vision_rgb black = {0, 0, 0};
static const vision_rgb white = {255, 255, 255};
static const vision_rgb label_bg = {24, 24, 24};

void vision_blend_pixel(os_image *img, int x, int y, vision_rgb c, int alpha)
{
	if (x < 0 || y < 0 || x >= img->width || y >= img->height)
		return;
	uint8_t *p = img->pixels + (size_t)y * img->stride + (size_t)x * 4;
	if (alpha >= 256) {
		p[0] = c.b;
		p[1] = c.g;
		p[2] = c.r;
		return;
	}
	p[0] = (uint8_t)((p[0] * (256 - alpha) + c.b * alpha) >> 8);
	p[1] = (uint8_t)((p[1] * (256 - alpha) + c.g * alpha) >> 8);
	p[2] = (uint8_t)((p[2] * (256 - alpha) + c.r * alpha) >> 8);
}

void vision_fill_rect(os_image *img, int x, int y, int w, int h, vision_rgb c,
                      int alpha)
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > img->width ? img->width : x + w;
	int y1 = y + h > img->height ? img->height : y + h;
	for (int yy = y0; yy < y1; yy++)
		for (int xx = x0; xx < x1; xx++)
			vision_blend_pixel(img, xx, yy, c, alpha);
}

#define LABEL_PAD 3

void vision_label_size(const char *text, int scale, int *w, int *h)
{
	if (scale < 1)
		scale = 1;
	size_t n = strlen(text);
	*w = (int)n * vision_font_width * scale + 2 * LABEL_PAD;
	*h = vision_font_height * scale + 2 * LABEL_PAD;
}

int vision_draw_label_alpha(os_image *img, int x, int y, const char *text,
                            int scale, int bg_alpha)
{
	if (scale < 1)
		scale = 1;
	int w, h;
	vision_label_size(text, scale, &w, &h);
	vision_fill_rect(img, x, y, w, h, label_bg, bg_alpha);
	int cx = x + LABEL_PAD;
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		int ch = (*s >= 32 && *s < 127) ? *s : '?';
		const uint8_t *g = vision_font_glyphs[ch - 32];
		for (int r = 0; r < vision_font_height; r++)
			for (int c = 0; c < vision_font_width; c++)
				if (g[r] & (0x80 >> c))
					vision_fill_rect(img, cx + c * scale,
					                 y + LABEL_PAD + r * scale, scale,
					                 scale, white, 256);
		cx += vision_font_width * scale;
	}
	return w;
}

int vision_draw_label(os_image *img, int x, int y, const char *text, int scale)
{
	return vision_draw_label_alpha(img, x, y, text, scale, 256);
}

/* ---- marker ----------------------------------------------------------- */

#define RING_R 11
#define CROSS_IN 4
#define CROSS_OUT 19

/* Mean luma (0..255) of the pixels within the ring, clipped. */
static int mean_luma(const os_image *img, int x, int y)
{
	int64_t sum = 0, n = 0;
	for (int yy = y - RING_R; yy <= y + RING_R; yy++) {
		if (yy < 0 || yy >= img->height)
			continue;
		for (int xx = x - RING_R; xx <= x + RING_R; xx++) {
			if (xx < 0 || xx >= img->width)
				continue;
			const uint8_t *p = img->pixels + (size_t)yy * img->stride +
			                   (size_t)xx * 4;
			sum += (p[2] * 77 + p[1] * 150 + p[0] * 29) >> 8;
			n++;
		}
	}
	return n ? (int)(sum / n) : 128;
}

/* The ring (radius r, half thickness t) and the crosshair arms, grown by g. */
static void marker_shape(os_image *img, int x, int y, int g, vision_rgb c)
{
	int t = 1;
	int rin = RING_R - t - g, rout = RING_R + t + g;
	for (int dy = -rout; dy <= rout; dy++)
		for (int dx = -rout; dx <= rout; dx++) {
			int d2 = dx * dx + dy * dy;
			if (d2 >= rin * rin && d2 <= rout * rout)
				vision_blend_pixel(img, x + dx, y + dy, c, 256);
		}
	/* four arms with a gap in the middle, so the target pixel stays visible */
	int in = CROSS_IN - g, out = CROSS_OUT + g, hw = g;
	vision_fill_rect(img, x - out, y - hw, out - in + 1, 2 * hw + 1, c, 256);
	vision_fill_rect(img, x + in, y - hw, out - in + 1, 2 * hw + 1, c, 256);
	vision_fill_rect(img, x - hw, y - out, 2 * hw + 1, out - in + 1, c, 256);
	vision_fill_rect(img, x - hw, y + in, 2 * hw + 1, out - in + 1, c, 256);
}

void vision_draw_marker(os_image *img, int x, int y)
{
	/* Yellow on dark backgrounds, magenta on light ones, always outlined
	 * in the opposite extreme so that it shows on any mixture. */
	bool dark = mean_luma(img, x, y) < 128;
	vision_rgb fill = dark ? (vision_rgb){255, 230, 0} : (vision_rgb){230, 0, 140};
	vision_rgb edge = dark ? black : white;
	marker_shape(img, x, y, 1, edge);
	marker_shape(img, x, y, 0, fill);
}

/* ---- preview ---------------------------------------------------------- */

#define PREVIEW_MAX_TARGETS 8
#define PREVIEW_MARGIN 48

/* The crop of a bounds_w x bounds_h image around the targets. */
static os_rect preview_region(const vision_point *t, int n, int width, int height,
                              int bounds_w, int bounds_h)
{
	int x0 = t[0].x, y0 = t[0].y, x1 = t[0].x, y1 = t[0].y;
	for (int i = 1; i < n; i++) {
		if (t[i].x < x0) x0 = t[i].x;
		if (t[i].y < y0) y0 = t[i].y;
		if (t[i].x > x1) x1 = t[i].x;
		if (t[i].y > y1) y1 = t[i].y;
	}
	x0 -= PREVIEW_MARGIN;
	y0 -= PREVIEW_MARGIN;
	x1 += PREVIEW_MARGIN + 1;
	y1 += PREVIEW_MARGIN + 1;
	/* grow to the requested context around the centre */
	if (x1 - x0 < width) {
		int c = (x0 + x1) / 2;
		x0 = c - width / 2;
		x1 = x0 + width;
	}
	if (y1 - y0 < height) {
		int c = (y0 + y1) / 2;
		y0 = c - height / 2;
		y1 = y0 + height;
	}
	/* shift inside the image rather than shrink, then clip */
	if (x0 < 0) { x1 -= x0; x0 = 0; }
	if (y0 < 0) { y1 -= y0; y0 = 0; }
	if (x1 > bounds_w) { x0 -= x1 - bounds_w; x1 = bounds_w; }
	if (y1 > bounds_h) { y0 -= y1 - bounds_h; y1 = bounds_h; }
	if (x0 < 0) x0 = 0;
	if (y0 < 0) y0 = 0;
	return (os_rect){x0, y0, x1 - x0, y1 - y0};
}

static bool preview_check(const vision_point *targets, int n, int width,
                          int height, int bounds_w, int bounds_h)
{
	if (n < 1 || n > PREVIEW_MAX_TARGETS)
		return vision_fail("preview: %d targets (1..%d)", n, PREVIEW_MAX_TARGETS);
	if (width < 16 || height < 16)
		return vision_fail("preview: size %dx%d is too small", width, height);
	for (int i = 0; i < n; i++)
		if (targets[i].x < 0 || targets[i].y < 0 || targets[i].x >= bounds_w ||
		    targets[i].y >= bounds_h)
			return vision_fail("preview: target %d,%d is off the %dx%d image",
			                   targets[i].x, targets[i].y, bounds_w, bounds_h);
	return true;
}

/* Crops `region` of img, fits it into width x height, marks, labels. */
static os_image *preview_render(const os_image *img, const os_rect *region,
                                const vision_point *targets, int n,
                                const char *label, int width, int height)
{
	int ow, oh;
	if (!vision_fit(region->width, region->height, width, height, &ow, &oh))
		return NULL;
	os_image *out;
	if (ow == region->width && oh == region->height) {
		out = vision_crop(img, region);
	} else {
		os_image *crop = vision_crop(img, region);
		if (crop == NULL)
			return NULL;
		out = vision_scaled(crop, ow, oh);
		os_image_destroy(crop);
	}
	if (out == NULL)
		return NULL;
	for (int i = 0; i < n; i++) {
		int64_t x = (int64_t)(targets[i].x - region->x) * ow;
		int64_t y = (int64_t)(targets[i].y - region->y) * oh;
		vision_draw_marker(out, (int)((2 * x + ow) / (2 * region->width)),
		                   (int)((2 * y + oh) / (2 * region->height)));
	}
	if (label != NULL && label[0] != '\0') {
		int lw, lh;
		vision_label_size(label, 1, &lw, &lh);
		/* top-left, unless a target sits under it */
		int ly = 0;
		for (int i = 0; i < n; i++) {
			int ty = (int)((int64_t)(targets[i].y - region->y) * oh /
			               region->height);
			int tx = (int)((int64_t)(targets[i].x - region->x) * ow /
			               region->width);
			if (ty < lh + CROSS_OUT + 2 && tx < lw + CROSS_OUT + 2)
				ly = oh - lh;
		}
		vision_draw_label(out, 0, ly, label, 1);
	}
	return out;
}

os_image *vision_preview(const os_image *img, const vision_point *targets,
                         int n, const char *label, int width, int height)
{
	if (!preview_check(targets, n, width, height, img->width, img->height))
		return NULL;
	os_rect r = preview_region(targets, n, width, height, img->width, img->height);
	return preview_render(img, &r, targets, n, label, width, height);
}

os_image *vision_preview_capture(os_display *d, const vision_point *targets,
                                 int n, const char *label, int width, int height)
{
	int sw, sh;
	os_screen_size(d, &sw, &sh);
	if (!preview_check(targets, n, width, height, sw, sh))
		return NULL;
	os_rect r = preview_region(targets, n, width, height, sw, sh);
	const os_image *cap = os_capture_borrow(d, &r);
	if (cap == NULL) {
		vision_fail_os("preview: capture failed");
		return NULL;
	}
	vision_point local[PREVIEW_MAX_TARGETS];
	for (int i = 0; i < n; i++)
		local[i] = (vision_point){targets[i].x - r.x, targets[i].y - r.y};
	os_rect all = {0, 0, r.width, r.height};
	return preview_render(cap, &all, local, n, label, width, height);
}

/* ---- grid ------------------------------------------------------------- */

void vision_grid(os_image *img, int step)
{
	if (step <= 0)
		step = 100;
	const vision_rgb line = {255, 0, 255};
	for (int x = step; x < img->width; x += step)
		for (int y = 0; y < img->height; y++)
			vision_blend_pixel(img, x, y, line, 128);
	for (int y = step; y < img->height; y += step)
		for (int x = 0; x < img->width; x++)
			if (x % step != 0)
				vision_blend_pixel(img, x, y, line, 128);
	char buf[32];
	int lw, lh;
	/* crossings: "x,y" just below-right of each, when it fits in a cell */
	snprintf(buf, sizeof(buf), "%d,%d", img->width, img->height);
	vision_label_size(buf, 1, &lw, &lh);
	bool crossings = lw + 4 < step && lh + 4 < step;
	for (int y = 0; y < img->height; y += step)
		for (int x = 0; x < img->width; x += step) {
			if (x == 0 && y == 0)
				continue;
			if (x == 0 || y == 0) {
				snprintf(buf, sizeof(buf), "%d", x == 0 ? y : x);
			} else {
				if (!crossings)
					continue;
				snprintf(buf, sizeof(buf), "%d,%d", x, y);
			}
			vision_draw_label_alpha(img, x + 1, y + 1, buf, 1, 170);
		}
}
