/*
 * Private to os/capture.c and os/capture_png.c: the capture state kept on
 * the display, and the steps of a grab that capture straight into PNG
 * takes one strip at a time. Never included elsewhere.
 */
#ifndef DESKHAND_OS_CAPTURE_INTERNAL_H
#define DESKHAND_OS_CAPTURE_INTERNAL_H

#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>

#include "os/x11/x11.h"

struct os_capture_state {
	bool probed;            /* visual checked, SHM decided */
	bool use_shm;
	Visual *visual;
	int depth;

	XShmSegmentInfo seg;    /* valid while seg_attached */
	size_t seg_size;
	bool seg_attached;
	bool seg_verified;      /* the server was seen writing into it */
	XImage *shm_img;        /* header over seg, for the last region size */

	XImage *get_img;        /* last XGetImage result, kept for borrowing */

	os_image view;          /* what os_capture_borrow hands out */
	uint8_t *conv;          /* conversion buffer behind view */
	size_t conv_cap;
};

/* d's state, created on first use after checking that the screen can be
 * captured; NULL with os_error() when it cannot. */
struct os_capture_state *os_capture_state_of(os_x11 *d);
/* The region to grab: `region`, checked to lie inside the screen, or the
 * whole screen for NULL; false with os_error(). */
bool os_capture_region(os_x11 *d, const os_rect *region, os_rect *out);
/* The header over the segment for a grab of r, the segment grown to fit;
 * NULL with os_error() set when SHM cannot be used. */
XImage *os_capture_shm_prepare(os_x11 *d, struct os_capture_state *st,
                               const os_rect *r);
/* Grabs rows [y, y + n) of r into the same rows of img (from
 * os_capture_shm_prepare), inside an X error trap the caller opened;
 * verifies a fresh segment (see capture.c). False with os_error(). */
bool os_capture_shm_rows(os_x11 *d, struct os_capture_state *st,
                         XImage *img, const os_rect *r, int y, int n);
/* After a failed SHM grab: false when the display died, else switches it to
 * XGetImage for good. */
bool os_capture_shm_give_up(os_x11 *d, struct os_capture_state *st);
/* Whether img's pixel size is one os_pixels_convert_row converts; false
 * with os_error() when not. */
bool os_capture_supported(const XImage *img);
/* Converts rows [y0, y1) of img into the same rows of dst (BGRX). */
void os_capture_convert_rows(const XImage *img, const Visual *v, uint8_t *dst,
                             int dst_stride, int y0, int y1);

#endif
