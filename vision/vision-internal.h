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
 * A region of the screen read in strips of VISION_STRIP_ROWS rows (so the
 * reused capture segment stays small), each strip captured once when its
 * first row is asked for (vision_strip_row, a vision_row_fn) and, when
 * `hashing`, its every byte folded into `hash`: the picture's hash, the
 * same however the strips are read.
 */
#define VISION_STRIP_ROWS 64
typedef struct vision_strips {
	os_display *d;
	os_rect r;
	const os_image *cur;
	int y0, y1;     /* rows of r held by cur */
	bool hashing;
	uint64_t hash;
} vision_strips;
const uint8_t *vision_strip_row(void *ctx, int y);
/* Reads the strips not read yet (a scaler may skip rows), for the hash.
 * False with vision_error() when a capture fails. */
bool vision_strips_finish(vision_strips *st);

/*
 * Captures `r` of the screen in strips and scales it into `img` (any size).
 * `hash` (may be NULL) gets the picture's hash. False with vision_error().
 */
bool vision_capture_scaled_into(os_display *d, const os_rect *r, os_image *img,
                                uint64_t *hash);
/* The same into a new w x h image. Ownership: the caller destroys the
 * result. NULL with vision_error(). */
os_image *vision_capture_scaled(os_display *d, const os_rect *r, int w, int h);

/*
 * vision_settle that also leaves the settled picture, scaled, in `frame`
 * (NULL: none): the confirming check scales the very frame it hashes.
 * *framed says whether frame holds it (false when the screen never
 * settled within the cap: the caller captures anew).
 */
bool vision_settle_framed(os_display *d, const os_rect *region,
                          const vision_settle_opts *opts, vision_settle_result *result,
                          os_image *frame, bool *framed);

#endif
