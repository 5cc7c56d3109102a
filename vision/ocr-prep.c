/*
 * vision/ocr-prep — the image Tesseract reads: every text dark on white,
 * whatever the theme.
 *
 * Tesseract binarises a page with one global threshold and lays it out
 * assuming one polarity for the page. A screen is a patchwork: a white
 * window on a dark desktop, light text in a dark terminal, white on a blue
 * button. Once thresholded, the regions of the other polarity are slabs
 * whose text is a hole, and the layout analysis drops them (a white-on-black
 * xterm on a #3a4756 desktop is not found at all, nor xcalc's display).
 *
 * So each pixel becomes its distance from the local background: the
 * commonest grey around it (flat colour outnumbers the strokes of text,
 * which anti-aliasing also spreads over many greys). A background of any
 * colour turns white and the text on it dark, light or dark text alike.
 * The commonest grey is taken on a half-resolution copy with a sliding
 * histogram, tens of milliseconds for a full HD screen.
 */
#include <stdlib.h>
#include <string.h>

#include "vision/vision-internal.h"

enum {
	PREP_RADIUS = 4,  /* half-resolution pixels: windows of 9x9, 18x18 on screen */
	PREP_BINS = 64,   /* grey quantised by 4: noise and gradients */
	PREP_SAME = 8,    /* greys this close are one colour */
};

static int luma(const uint8_t *p)
{
	return (p[2] * 77 + p[1] * 150 + p[0] * 29) >> 8;
}

/* The grey image at half resolution (2x2 means), hw x hh; malloc'ed. */
static uint8_t *half_grey(const os_image *img, int hw, int hh)
{
	uint8_t *g = malloc((size_t)hw * (size_t)hh);
	if (g == NULL)
		return NULL;
	for (int y = 0; y < hh; y++) {
		const uint8_t *r0 = img->pixels + (size_t)(2 * y) * img->stride;
		int y1 = 2 * y + 1 < img->height ? 2 * y + 1 : 2 * y;
		const uint8_t *r1 = img->pixels + (size_t)y1 * img->stride;
		for (int x = 0; x < hw; x++) {
			int x1 = 2 * x + 1 < img->width ? 2 * x + 1 : 2 * x;
			g[(size_t)y * hw + x] = (uint8_t)((luma(r0 + 8 * x) + luma(r0 + 4 * x1) +
			                                   luma(r1 + 8 * x) + luma(r1 + 4 * x1) + 2) / 4);
		}
	}
	return g;
}

/* The commonest grey (its bin's middle) of each (2r+1)^2 window of src,
 * clipped at the edges, into dst; a histogram slides along each row. */
static void square_mode(const uint8_t *src, uint8_t *dst, int w, int h, int r)
{
	for (int y = 0; y < h; y++) {
		int y0 = y - r < 0 ? 0 : y - r, y1 = y + r >= h ? h - 1 : y + r;
		int count[PREP_BINS] = {0};
		for (int x = 0; x <= r && x < w; x++)
			for (int yy = y0; yy <= y1; yy++)
				count[src[(size_t)yy * w + x] >> 2]++;
		for (int x = 0; x < w; x++) {
			int best = 0;
			for (int b = 1; b < PREP_BINS; b++)
				if (count[b] > count[best])
					best = b;
			dst[(size_t)y * w + x] = (uint8_t)(best * 4 + 2);
			for (int yy = y0; yy <= y1; yy++) {
				if (x - r >= 0)
					count[src[(size_t)yy * w + x - r] >> 2]--;
				if (x + r + 1 < w)
					count[src[(size_t)yy * w + x + r + 1] >> 2]++;
			}
		}
	}
}

/* Whether the 4 neighbours of (x,y) have its grey v: inside an area. */
static bool flat(const os_image *img, int x, int y, int v)
{
	static const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
	for (int i = 0; i < 4; i++) {
		int nx = x + dx[i], ny = y + dy[i];
		if (nx >= 0 && ny >= 0 && nx < img->width && ny < img->height &&
		    abs(luma(img->pixels + (size_t)ny * img->stride + 4 * nx) - v) > PREP_SAME)
			return false;
	}
	return true;
}

/*
 * How far pixel (x,y), of grey v, is from its background, bg being the
 * half-resolution map (w x h). A pixel of a nearby background's colour
 * inside an area is background: the window's commonest grey
 * flips a few pixels away from a region's edge, and without this the strip
 * between turns into a dark band that swallows the first letters of a line.
 */
static int distance(const os_image *img, const uint8_t *bg, int w, int h,
                    int x, int y, int v)
{
	int cx = x / 2, cy = y / 2;
	int d = abs(v - bg[(size_t)cy * w + cx]);
	if (d <= PREP_SAME)
		return 0;
	bool near = false;
	for (int k = 1; !near && k <= PREP_RADIUS; k++) {
		int xs[4] = {cx - k, cx + k, cx, cx}, ys[4] = {cy, cy, cy - k, cy + k};
		for (int i = 0; i < 4; i++)
			if (xs[i] >= 0 && xs[i] < w && ys[i] >= 0 && ys[i] < h &&
			    abs(v - bg[(size_t)ys[i] * w + xs[i]]) <= PREP_SAME)
				near = true;
	}
	return near && flat(img, x, y, v) ? 0 : d;
}

uint8_t *vision_ocr_grey(const os_image *img, int up, int *gw, int *gh)
{
	int w = img->width * up, h = img->height * up;
	uint8_t *g = malloc((size_t)w * (size_t)h);
	if (g == NULL) {
		vision_fail("out of memory for OCR (%dx%d)", w, h);
		return NULL;
	}
	for (int y = 0; y < img->height; y++) {
		const uint8_t *p = img->pixels + (size_t)y * img->stride;
		uint8_t *row = g + (size_t)y * up * (size_t)w;
		for (int x = 0; x < img->width; x++)
			memset(row + (size_t)x * up, luma(p + 4 * x), (size_t)up);
		for (int r = 1; r < up; r++)
			memcpy(row + (size_t)r * w, row, (size_t)w);
	}
	*gw = w;
	*gh = h;
	return g;
}

uint8_t *vision_ocr_prepare(const os_image *img, int up, int *gw, int *gh)
{
	int w = img->width * up, h = img->height * up;
	int hw = (img->width + 1) / 2, hh = (img->height + 1) / 2;
	uint8_t *out = malloc((size_t)w * (size_t)h);
	uint8_t *half = half_grey(img, hw, hh);
	uint8_t *bg = malloc((size_t)hw * (size_t)hh);
	if (out == NULL || half == NULL || bg == NULL) {
		free(out);
		free(half);
		free(bg);
		vision_fail("out of memory for OCR (%dx%d)", w, h);
		return NULL;
	}
	square_mode(half, bg, hw, hh, PREP_RADIUS);
	free(half);
	for (int y = 0; y < img->height; y++) {
		const uint8_t *p = img->pixels + (size_t)y * img->stride;
		uint8_t *row = out + (size_t)y * up * (size_t)w;
		for (int x = 0; x < img->width; x++) {
			int d = distance(img, bg, hw, hh, x, y, luma(p + 4 * x));
			memset(row + (size_t)x * up, (uint8_t)(255 - d), (size_t)up);
		}
		for (int r = 1; r < up; r++)
			memcpy(row + (size_t)r * w, row, (size_t)w);
	}
	free(bg);
	*gw = w;
	*gh = h;
	return out;
}
