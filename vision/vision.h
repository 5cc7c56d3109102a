/*
 * vision/ — what the model sees, and where its clicks land.
 *
 * The model never sees the screen itself: it sees one monitor, captured,
 * shrunk to fit a maximum size with the aspect ratio kept (area averaging),
 * and encoded as PNG. A vision_view records exactly how that image relates
 * to the screen, and every coordinate the model sends back is mapped with
 * the view of the LAST image it was sent, never with a global. Around that:
 * waiting for the screen to settle after an action, zoomed crops, the
 * confirmation preview (a crop with a marker and a label), an optional grid
 * overlay, and local OCR (Tesseract) to find text on the screen. The
 * accessibility tree (controls by role, name and box) is vision/a11y.h.
 *
 * Images are plain memory (os_image: BGRX, width, height, stride); vision/
 * calls os/ only to list monitors, read the pointer and capture. It never
 * includes Xlib, never sends pixels anywhere and never prints.
 *
 * Error convention: functions that can fail return false or NULL and leave
 * a human-readable reason in vision_error() (per thread, valid until the
 * next vision_ call on that thread). Failures of os/ are copied there.
 *
 * Owns: the images it returns (the caller's to destroy) and the libatspi
 * connection of this process (vision/a11y.h); nothing of the screen
 * outlives a call.
 * May call: base/, os/, libxxhash, Tesseract (loaded at run time),
 * libatspi and libdbus (vision/a11y.h).
 */
#ifndef DESKHAND_VISION_H
#define DESKHAND_VISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/os.h"

/* The reason for the last failure on this thread; never NULL. */
const char *vision_error(void);

/* Anthropic's recommended maximum, and deskhand's default --screen-max. */
#define VISION_DEFAULT_MAX_W 1280
#define VISION_DEFAULT_MAX_H 800

/* ---- the view: one image's relation to the screen -------------------- */

/*
 * The model image covers the screen rectangle (screen_x, screen_y,
 * screen_w, screen_h) in root coordinates (a monitor, with its origin) and
 * is model_w x model_h pixels. Model pixel m on an axis shows the screen
 * span [m*S/M, (m+1)*S/M) of that axis (S screen, M model size); the scale
 * is the same for the whole image. model_w/model_h are also the size to
 * declare to the model (display_width_px/display_height_px).
 *
 * The model's numbers need not be the image's pixels: some models answer in
 * a fixed grid whatever the image (Gemini and Qwen3-VL: 0..999 on both
 * axes). coord_w x coord_h is that grid; 0 means the image's own pixels.
 * Every mapping below reads coordinates in it: m on an axis stands for the
 * span [m*S/C, (m+1)*S/C) of the screen (C the grid size on that axis).
 */
typedef struct vision_view {
	int screen_x, screen_y;
	int screen_w, screen_h;
	int model_w, model_h;
	int coord_w, coord_h; /* the model's coordinate grid; 0: model_w x model_h */
} vision_view;

/* The view's coordinate grid (coord_w/coord_h, or the image size). */
int vision_coord_w(const vision_view *v);
int vision_coord_h(const vision_view *v);

/*
 * Qwen2-VL's smart_resize, which Qwen2.5-VL and UI-TARS answer in: each
 * side rounded (half to even) to a multiple of `factor`, then, when the
 * area is above max_pixels or below min_pixels, both sides scaled by one
 * factor (floor to multiples when shrinking, ceil when growing) so it fits.
 * A model that was sent an image of exactly this size answers in its
 * pixels. Fails (vision_error) when an aspect ratio exceeds 200 or a size
 * is not positive.
 */
bool vision_smart_resize(int width, int height, int factor, long min_pixels, long max_pixels,
                         int *out_w, int *out_h);

/*
 * The largest size within max_w x max_h with the aspect ratio of
 * screen_w x screen_h (one scale for both axes, each side rounded to the
 * nearest pixel, at least 1). Never enlarges: a screen that already fits is
 * returned as is. Fails on non-positive sizes.
 */
bool vision_fit(int screen_w, int screen_h, int max_w, int max_h,
                int *model_w, int *model_h);
/* vision_fit with max_side x max_side (`--max-side N`). */
bool vision_fit_side(int screen_w, int screen_h, int max_side,
                     int *model_w, int *model_h);

/*
 * Model pixel -> root pixel: the screen pixel under the centre of the model
 * pixel's span, screen = origin + floor((2m+1)*S / 2M). For an unscaled view
 * this is the identity plus the origin. A coordinate outside the model
 * image (m < 0 or m >= M) is an error ("coordinate 1300,5 is outside the
 * 1280x720 screenshot"), never clamped: the loop returns it to the model.
 * Round trip: vision_screen_to_model(vision_model_to_screen(m)) == m for
 * every model pixel of a view that does not enlarge.
 */
bool vision_model_to_screen(const vision_view *v, int mx, int my,
                            int *sx, int *sy);
/*
 * Root pixel -> the model pixel that shows it. Fails when the point is not
 * on the view's monitor (for example the pointer on another monitor).
 */
bool vision_screen_to_model(const vision_view *v, int sx, int sy,
                            int *mx, int *my);
/*
 * A model rectangle given by its corners [x0,y0,x1,y1] (0 <= x0 < x1 <= M,
 * same for y; x1/y1 may equal the image size) -> the root rectangle it
 * covers, widened to whole screen pixels. Errors as for model_to_screen.
 */
bool vision_model_rect_to_screen(const vision_view *v, int x0, int y0,
                                 int x1, int y1, os_rect *out);

/* ---- scaling ---------------------------------------------------------- */

/*
 * Resamples src into dst (both allocated, any sizes) with an area-averaging
 * (box) filter: every destination pixel is the coverage-weighted mean of the
 * source pixels under its span, weights exact to 1/256 and summing to 1.
 * Separable and fixed point. Enlarging works too (pixels become blocks with
 * blended edges). The X byte of dst is set to 0xff. Fails only on
 * allocation failure.
 */
bool vision_scale(const os_image *src, os_image *dst);
/*
 * Returns a new image of the given size holding src resampled.
 * Ownership: the caller destroys the result.
 */
os_image *vision_scaled(const os_image *src, int width, int height);
/* A new image holding a copy of `r` of src (r must lie inside src). Caller destroys. */
os_image *vision_crop(const os_image *src, const os_rect *r);

/* ---- the model's view ------------------------------------------------- */

/* How the model locates things on the image it is sent (--grounding). */
typedef enum vision_grounding {
	VISION_GROUND_PIXELS,       /* the image's pixels, the image fitted in max_w x max_h */
	VISION_GROUND_SMART_RESIZE, /* the image's pixels, the image sized by vision_smart_resize
	                             * (factor 28, min_pixels, max_pixels = max_w * max_h) */
	VISION_GROUND_RELATIVE,     /* a relative x relative grid (1000: 0..999), image fitted */
	VISION_GROUND_COUNT
} vision_grounding;

/* "pixels", "smart-resize", "relative-1000", by the grounding: the one table
 * of their names (--grounding and the config file). */
extern const char *const vision_grounding_names[VISION_GROUND_COUNT];
/* The name (exact) <-> the enum; "?" for no grounding. */
bool vision_grounding_parse(const char *name, vision_grounding *out);
const char *vision_grounding_name(vision_grounding g);

typedef struct vision_shot_opts {
	int max_w, max_h;   /* <= 0: VISION_DEFAULT_MAX_W x VISION_DEFAULT_MAX_H */
	int monitor;        /* index in os_monitors order; < 0: the pointer's */
	bool grid;          /* draw the labelled grid (vision_grid) */
	vision_grounding grounding;
	long min_pixels;    /* smart-resize: the model's smallest area (Qwen2.5-VL 3136) */
	int relative;       /* relative: the grid size (1000) */
} vision_shot_opts;

/* Initialises opts to the defaults (1280x800, pointer's monitor, no grid,
 * pixels; for the other groundings min_pixels 3136 and relative 1000). */
void vision_shot_opts_init(vision_shot_opts *opts);

/*
 * The monitor a shot would use: `want` when >= 0 (error if there is no such
 * monitor), otherwise the first monitor containing (px,py), else the nearest
 * one. Pure; `mons`/`n` as returned by os_monitors. Returns the index or -1.
 */
int vision_pick_monitor(const os_rect *mons, int n, int want, int px, int py);
/* The same, asking os/ for the monitors and vision_focus_point; fills *mon. */
bool vision_monitor(os_display *d, int want, os_rect *mon);
/*
 * Where the user is looking, for choosing a monitor: the pointer, where the
 * display tells it, else the centre of the active window (a Wayland
 * compositor tells no client where the pointer is). False when neither is
 * known (*x, *y then 0).
 */
bool vision_focus_point(os_display *d, int *x, int *y);

/*
 * The view a shot of monitor `mon` would have under opts (sizes and the
 * coordinate grid, as vision_shot fills them), without capturing. False
 * with vision_error() for sizes the grounding cannot serve.
 */
bool vision_view_for(const vision_shot_opts *opts, const os_rect *mon, vision_view *view);

/*
 * The model's view: picks the monitor, captures it, scales it to fit
 * max_w x max_h (or copies it when it already fits), draws the grid when
 * asked, and fills *view. Encode the result with os_png_encode; declare
 * view->model_w x view->model_h to the model.
 * Ownership: the caller destroys the returned image. NULL on failure.
 */
os_image *vision_shot(os_display *d, const vision_shot_opts *opts,
                      vision_view *view);


/*
 * `zoom {region}`: the model rectangle [x0,y0,x1,y1] of `view` captured at
 * full resolution and scaled to fit max_w x max_h (the same maximum as
 * shots). Small regions are enlarged, at most 8x, so the model sees them in
 * detail. *zoom_view (optional) describes the returned image: it covers the
 * region's screen rectangle. Coordinates the model sends afterwards still
 * refer to the last full screenshot (Anthropic's zoom semantics).
 * Ownership: the caller destroys the result. NULL on failure.
 */
os_image *vision_zoom(os_display *d, const vision_view *view,
                      int x0, int y0, int x1, int y1, int max_w, int max_h,
                      vision_view *zoom_view);

/* ---- settle ----------------------------------------------------------- */

typedef struct vision_settle_opts {
	int interval_ms;    /* time between checks; default 10 (still screen: 20 ms) */
	int stable_checks;  /* consecutive unchanged checks needed; default 2 */
	int cap_ms;         /* give up after this long; default 2000 */
} vision_settle_opts;

typedef struct vision_settle_result {
	bool settled;       /* false: the cap was reached while still changing */
	bool changed;       /* the screen changed at least once while waiting */
	int waited_ms;      /* from the call to the return */
	int checks;         /* captures taken */
} vision_settle_result;

void vision_settle_opts_init(vision_settle_opts *opts);

/*
 * Waits until `region` of the screen (NULL: the whole screen) stops
 * changing: captures it every interval_ms (os_capture_borrow) and hashes
 * every byte of every pixel of every row (XXH3, 64 bit), so a blinking
 * cursor or one changed character counts as a change; nothing is ignored.
 * A screen that never stops changing (a video, a clock with seconds)
 * therefore always costs the cap; an animation that returns to the very
 * same picture exactly every interval_ms would look still.
 * Returns once stable_checks successive checks saw the same picture as the
 * one before, or when cap_ms has passed (result->settled false; not an
 * error). Fails only when a capture fails.
 */
bool vision_settle(os_display *d, const os_rect *region,
                   const vision_settle_opts *opts, vision_settle_result *result);
/* The hash used by settle: every visible byte of every row. Pure. */
uint64_t vision_image_hash(const os_image *img);
/*
 * vision_shot after the monitor stopped changing (vision_settle with
 * `settle`; NULL: no wait), of the very frame the wait saw still: the
 * screen is captured once, by the check that confirmed it settled. A
 * screen that never settles within the cap is captured once more at the
 * end. Same ownership.
 */
os_image *vision_settled_shot(os_display *d, const vision_shot_opts *opts,
                              const vision_settle_opts *settle, vision_view *view);

/* ---- drawing: preview, grid ------------------------------------------- */

/* A point in root (or an image's) pixels: os/'s own. */
typedef os_point vision_point;

/*
 * Draws a target marker (a ring and crosshair in a colour contrasting with
 * the pixels under it, outlined) centred on (x,y) of img. Parts outside the
 * image are clipped. Pure.
 */
void vision_draw_marker(os_image *img, int x, int y);
/*
 * Draws `text` (printable ASCII; other bytes drawn as '?') with the built-in
 * 6x13 font, `scale` times enlarged, on a filled box whose top-left corner
 * is (x,y), clipped to the image. Returns the box width drawn. Pure.
 */
int vision_draw_label(os_image *img, int x, int y, const char *text, int scale);
/* Size in pixels of a label drawn by vision_draw_label. */
void vision_label_size(const char *text, int scale, int *w, int *h);

/*
 * The confirmation preview for the safety layer: a crop of a full
 * resolution image around `targets` (1..8 points in img's coordinates, e.g.
 * a drag's start and end), at least about width x height of context,
 * scaled down to fit width x height if the targets are far apart, with a
 * marker on each target and `label` (e.g. "click 640,360") at the top.
 * Pure: pass a capture (os_capture) and root coordinates minus its origin.
 * Ownership: the caller destroys the result. NULL on failure.
 */
os_image *vision_preview(const os_image *img, const vision_point *targets,
                         int n, const char *label, int width, int height);
/* vision_preview of a fresh capture of the whole screen; targets in root coordinates. */
os_image *vision_preview_capture(os_display *d, const vision_point *targets,
                                 int n, const char *label, int width, int height);

/*
 * The labelled grid overlay, drawn on a model image: lines every `step`
 * model pixels (<= 0: 100), blended so the content stays visible, labelled
 * with their model coordinate along the top and left edges, and each
 * crossing marked with "x,y" when `step` leaves room. Pure.
 */
void vision_grid(os_image *img, int step);

/* ---- OCR -------------------------------------------------------------- */

/* Whether this build has OCR (DESKHAND_HAVE_OCR). */
bool vision_ocr_available(void);

typedef struct vision_match {
	int x, y, width, height;  /* box in the coordinates of the OCR'd image */
	float confidence;         /* 0..100, Tesseract's mean over the words */
	bool whole_words;         /* the match starts and ends at word edges */
	char *text;               /* the recognised text matched, UTF-8 */
} vision_match;

/*
 * Finds `text` on img with Tesseract (English): case-insensitive (Unicode
 * simple case folding), runs of white space in `text` match a word gap, and
 * a match lies within one line of text. Matches are sorted best first
 * (whole words, then confidence, then top-to-bottom). The image is
 * enlarged `upscale` times (1..4; <= 0: 2, or 1 for images taller than
 * 1600 pixels) before recognition, which small screen fonts need; boxes are
 * in img's coordinates. Runs Tesseract on one thread unless OMP_THREAD_LIMIT
 * or OMP_NUM_THREADS is set (see ocr.c). Nothing leaves the machine.
 * No match is not an error (*count 0). Fails when OCR is not built in, the
 * English data is missing or `text` is empty or invalid UTF-8.
 * Ownership: *out is an array the caller frees with vision_matches_free.
 */
bool vision_ocr_find(const os_image *img, const char *text, int upscale,
                     vision_match **out, size_t *count);
void vision_matches_free(vision_match *m, size_t count);

/*
 * vision_ocr_find on a fresh capture of `region` (NULL: the whole screen);
 * boxes in root coordinates (`deskhand find-text`). Same ownership. When
 * OCR is not built in it fails before touching `d` (which may be NULL).
 */
bool vision_ocr_find_screen(os_display *d, const os_rect *region,
                            const char *text, vision_match **out,
                            size_t *count);
/*
 * The model's `find_text {text}`: OCR at full resolution over the monitor
 * of `view` (the view of the last screenshot sent), boxes mapped into that
 * screenshot's coordinates, so the centre (x + width/2, y + height/2) is a
 * coordinate the model can click. Same ownership.
 */
bool vision_ocr_find_view(os_display *d, const vision_view *view,
                          const char *text, vision_match **out, size_t *count);

/* The accessibility tree: part of this door, in a header of its own. */
#include "vision/a11y.h"

#endif
