/*
 * os/capture_png — a capture written straight as PNG (os_capture_png_file,
 * os_capture_png_fd): the capture steps of capture.c and the PNG codec of
 * png.c, fed strip by strip, so that neither of them knows the other.
 */
#include <X11/Xlib.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "os/x11/capture-internal.h"

/*
 * A first capture goes in horizontal strips through a segment one strip
 * high, each strip copied (or converted) into the conversion buffer and fed
 * to the PNG encoder, which compresses the bands already there on the other
 * cores while the server copies the next strip. Why a small segment: every
 * page of a fresh segment costs the server a page fault on its first write,
 * and in a VM where faults are costly those 2,000 faults were most of a
 * screenshot (a full-screen segment: 25 ms). A strip's segment costs 170
 * faults, paid on the first strip; the buffer it is copied into is mapped
 * in one call (MADV_POPULATE_WRITE), without a fault per page. Each strip
 * costs a round trip (~0.1 ms), hence a few only.
 */
#define STRIPS 12
#define STRIP_MIN_ROWS 32

struct strips {
	os_x11 *d;
	struct os_capture_state *st;
	XImage *img;            /* header over the segment, one strip high */
	os_rect r;
	int rows;               /* per strip */
	int done;               /* rows [0, done) are in st->conv */
	bool trapped;           /* one X error trap over all the strips */
	bool warm;              /* a whole-screen segment is mapped: no strips */
};

/* Closes the trap strips_start opened; false on an X error. */
static bool strips_untrap(struct strips *s)
{
	if (!s->trapped)
		return true;
	s->trapped = false;
	return os_x_trap_end(s->d, "XShmGetImage") == 0;
}

/* Grabs the strip at row y into the segment and copies it into st->conv. */
static bool strips_grab(struct strips *s, int y)
{
	int left = s->r.height - y;
	int n = left < s->rows ? left : s->rows;
	os_rect part = {s->r.x, s->r.y + y, s->r.width, n};
	bool ok = os_capture_shm_rows(s->d, s->st, s->img, &part, 0, n);
	if ((!ok || y + n == s->r.height) && !strips_untrap(s))
		return false;
	if (!ok)
		return false;
	/*
	 * SysV segments have no fault-around: each page would fault on its
	 * first read (170 faults). The first strip wrote every page of it.
	 */
	if (y == 0)
		os_mem_populate(s->st->seg.shmaddr, s->st->seg_size, false);
	/* The strip's rows 0..n are the image's rows y..y + n. */
	int stride = s->st->view.stride;
	os_capture_convert_rows(s->img, s->st->visual,
	                        s->st->conv + (size_t)y * (size_t)stride, stride, 0, n);
	s->done = y + n;
	if (s->done == s->r.height)
		os_trace("captured");
	return true;
}

static bool strips_fill(void *ctx, int *ready)
{
	struct strips *s = ctx;
	if (*ready >= s->done && !strips_grab(s, s->done))
		return false;
	*ready = s->done;
	return true;
}

/*
 * Points st->view at the conversion buffer, grown to fit r and mapped in
 * one call when it grew (older kernels refuse: then the copy faults).
 */
static bool strips_view(struct os_capture_state *st, const os_rect *r)
{
	size_t need = (size_t)r->width * 4 * (size_t)r->height;
	if (need > st->conv_cap) {
		free(st->conv);
		st->conv_cap = 0;
		st->conv = malloc(need);
		if (st->conv == NULL)
			return os_fail("out of memory for a %dx%d capture", r->width,
			               r->height);
		st->conv_cap = need;
		os_mem_populate(st->conv, need, true);
	}
	st->view = (os_image){.width = r->width, .height = r->height,
	                      .stride = r->width * 4, .pixels = st->conv};
	return true;
}

/*
 * Prepares the segment and grabs the first strip, which verifies it; false
 * with s->warm set when a single grab is better, else with os_error() set
 * when SHM cannot be used (the caller falls back).
 */
static bool strips_start(struct strips *s)
{
	struct os_capture_state *st = s->st;
	/*
	 * A whole-screen segment used before is mapped on both sides: one
	 * grab takes ~1.5 ms, less than the round trips and copies of strips.
	 */
	s->warm = st->seg_verified && st->shm_img != NULL &&
	          st->seg_size >= (size_t)st->shm_img->bytes_per_line *
	                          (size_t)s->r.height;
	if (s->warm)
		return false;
	s->rows = (s->r.height + STRIPS - 1) / STRIPS;
	if (s->rows < STRIP_MIN_ROWS)
		s->rows = STRIP_MIN_ROWS;
	if (s->rows > s->r.height)
		s->rows = s->r.height;
	os_rect strip = {s->r.x, s->r.y, s->r.width, s->rows};
	s->img = os_capture_shm_prepare(s->d, st, &strip);
	if (s->img == NULL || !os_capture_supported(s->img) ||
	    !strips_view(st, &s->r))
		return false;
	os_trace("attached");
	os_x_trap_begin(s->d);
	s->trapped = true;
	bool ok = strips_grab(s, 0);
	os_trace("first-strip");
	return ok;
}

/* Both writers: to `path` when not NULL, else to fd. */
static bool capture_png(os_x11 *d, const os_rect *region, const char *path,
                        int fd, const os_png_options *opt)
{
	struct os_capture_state *st = os_capture_state_of(d);
	if (st == NULL)
		return false;
	struct strips s = {.d = d, .st = st};
	if (!os_capture_region(d, region, &s.r))
		return false;
	os_png_feed feed = {strips_fill, &s};
	os_png_feed *fed = NULL;
	const os_image *img = NULL;
	if (st->use_shm) {
		if (strips_start(&s)) {
			img = &st->view;
			fed = &feed;
		} else if (!s.warm && !os_capture_shm_give_up(d, st)) {
			return false;
		}
	}
	if (img == NULL && (img = os_x11_capture_borrow(d, region)) == NULL)
		return false;
	bool ok = path != NULL ? os_png_write_file_fed(img, path, opt, fed)
	                       : os_png_write_fd_fed(img, fd, opt, fed);
	/* Still open when the encoder gave up before the last strip. */
	if (s.trapped) {
		char why[sizeof(base_error_text)];
		snprintf(why, sizeof(why), "%s", os_error());
		strips_untrap(&s);
		os_fail("%s", why);
	}
	return ok;
}

bool os_x11_capture_png(os_x11 *d, const os_rect *region, const char *path,
                        int fd, const os_png_options *opt)
{
	return capture_png(d, region, path, fd, opt);
}
