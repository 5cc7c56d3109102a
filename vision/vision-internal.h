/*
 * Private to vision/: the error setter, the built-in font and the pixel
 * helpers shared by the drawing code. Never included outside vision/
 * (tests/ excepted).
 */
#ifndef DESKHAND_VISION_INTERNAL_H
#define DESKHAND_VISION_INTERNAL_H

#include <stdint.h>

#include "vision/vision.h"

/* Sets vision_error() from a printf format. Always returns false. */
bool vision_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Copies os_error() into vision_error(), prefixed by `what`. Returns false. */
bool vision_fail_os(const char *what);

/*
 * vision/ocr-prep.c: img as one grey byte per pixel, enlarged up times
 * ((w*up) x (h*up), *gw and *gh), each pixel's distance from its local
 * background so that all text is dark on white. malloc'ed, the caller's;
 * NULL with vision_error() when out of memory.
 */
uint8_t *vision_ocr_prepare(const os_image *img, int up, int *gw, int *gh);
/* The same without the background step: plain grey, enlarged (NULL with
 * vision_error() when out of memory). */
uint8_t *vision_ocr_grey(const os_image *img, int up, int *gw, int *gh);

/* vision/font.c: printable ASCII 32..126, one byte per row, MSB leftmost. */
extern const int vision_font_width;
extern const int vision_font_height;
extern const uint8_t vision_font_glyphs[95][13];

typedef struct vision_rgb {
	uint8_t r, g, b;
} vision_rgb;

/* Blends colour c over pixel (x,y) with opacity alpha/256; clipped. */
void vision_blend_pixel(os_image *img, int x, int y, vision_rgb c, int alpha);
/* Fills a rectangle (clipped) with c at opacity alpha/256 (256: opaque). */
void vision_fill_rect(os_image *img, int x, int y, int w, int h, vision_rgb c,
                      int alpha);
/*
 * Draws a label like vision_draw_label with a background of opacity
 * bg_alpha/256. Returns the box width.
 */
int vision_draw_label_alpha(os_image *img, int x, int y, const char *text,
                            int scale, int bg_alpha);

/*
 * Returns source row y (BGRX), or NULL with vision_error() set. Rows are
 * asked for in non-decreasing order, so a source may capture in strips.
 */
typedef const uint8_t *(*vision_row_fn)(void *ctx, int y);

/* vision_scale over rows from `row_at`: src_w x src_h into dst. */
bool vision_scale_rows(int src_w, int src_h, vision_row_fn row_at, void *ctx,
                       os_image *dst);

/*
 * Captures `r` of the screen in strips of VISION_STRIP_ROWS rows (so the
 * reused capture segment stays small) and scales it into a new w x h image.
 * Ownership: the caller destroys the result. NULL with vision_error().
 */
#define VISION_STRIP_ROWS 64
os_image *vision_capture_scaled(os_display *d, const os_rect *r, int w, int h);

#endif
