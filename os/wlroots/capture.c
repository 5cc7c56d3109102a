/*
 * os/wlroots/capture — pixels through zwlr_screencopy_manager_v1: every
 * output the region touches is copied (all asked for at once, so they copy
 * in parallel) into a wl_shm buffer of its own, kept for the next capture,
 * then converted into one image of the region at the outputs' logical
 * places. The compositor copies its next rendered frame, so a capture
 * always shows the screen after the call started.
 *
 * vision/ reads a region in strips of rows, top to bottom, one capture
 * each; screencopy copies whole outputs and waits for a frame (up to a
 * refresh) every time: a read of 1080 rows took 17 frames, and an agent's
 * step on sway (three settle checks and the shot) 0.9 s against Xvfb's
 * 36 ms. A strip that continues the last capture (just below it, as wide,
 * moments later) is taken from the frames that capture copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "base/base.h"
#include "os/wlroots/wlroots-internal.h"
#include "wlr-screencopy-unstable-v1-client-protocol.h"

/* A compositor that renders nothing (an output switched off) never
 * answers a capture: give up after this long. */
#define CAPTURE_TIMEOUT_MS 3000
/* The strips of one read follow each other within a millisecond or so. */
#define STRIP_CONTINUES_MS 20

/* ---- buffers -------------------------------------------------------------- */

void os_wl_buffer_free(struct os_wl_buffer *b)
{
	if (b->wl != NULL)
		wl_buffer_destroy(b->wl);
	if (b->pool != NULL)
		wl_shm_pool_destroy(b->pool);
	if (b->data != NULL)
		munmap(b->data, b->size);
	if (b->fd >= 0)
		close(b->fd);
	*b = (struct os_wl_buffer){.fd = -1};
}

/* Makes b fit an offer, reusing it when it already does. */
static bool buffer_fit(struct os_wl_display *w, struct os_wl_buffer *b, uint32_t format,
                       int width, int height, int stride)
{
	if (b->wl != NULL && b->format == format && b->width == width &&
	    b->height == height && b->stride == stride)
		return true;
	os_wl_buffer_free(b);
	size_t size = (size_t)stride * (size_t)height;
	b->fd = os_wl_memfd("deskhand-capture", size);
	if (b->fd < 0)
		return false;
	b->data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->data == MAP_FAILED) {
		b->data = NULL;
		os_wl_buffer_free(b);
		return os_fail("cannot map a %zu-byte capture buffer", size);
	}
	b->size = size;
	b->pool = wl_shm_create_pool(w->shm, b->fd, (int32_t)size);
	b->wl = wl_shm_pool_create_buffer(b->pool, 0, width, height, stride, format);
	b->format = format;
	b->width = width;
	b->height = height;
	b->stride = stride;
	return true;
}

/* ---- one frame per output --------------------------------------------------- */

struct frame {
	struct os_wl_display *w;
	struct os_wl_output *out;
	struct zwlr_screencopy_frame_v1 *f;
	uint32_t format;
	int width, height, stride;
	bool offered, copying, y_invert;
	int state;              /* 0 pending, 1 ready, -1 failed */
	char why[160];
};

/* The 32-bit layouts we read; the others (10-bit, 16-bit) are not offered
 * for wl_shm by wlroots' pixman and GLES2 renderers. */
static bool format_known(uint32_t f)
{
	return f == WL_SHM_FORMAT_XRGB8888 || f == WL_SHM_FORMAT_ARGB8888 ||
	       f == WL_SHM_FORMAT_XBGR8888 || f == WL_SHM_FORMAT_ABGR8888;
}

static void start_copy(struct frame *fr)
{
	if (fr->copying)
		return;
	fr->copying = true;
	if (!fr->offered) {
		fr->state = -1;
		snprintf(fr->why, sizeof(fr->why), "the compositor offered no 32-bit wl_shm buffer layout");
		return;
	}
	if (!buffer_fit(fr->w, &fr->out->buf, fr->format, fr->width, fr->height, fr->stride)) {
		fr->state = -1;
		snprintf(fr->why, sizeof(fr->why), "%s", os_error());
		return;
	}
	zwlr_screencopy_frame_v1_copy(fr->f, fr->out->buf.wl);
}

static void fr_buffer(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t format,
                      uint32_t width, uint32_t height, uint32_t stride)
{
	struct frame *fr = data;
	if (fr->offered || !format_known(format) || stride < width * 4)
		return;
	fr->offered = true;
	fr->format = format;
	fr->width = (int)width;
	fr->height = (int)height;
	fr->stride = (int)stride;
	/* Before version 3 no buffer_done follows: the one offer is all. */
	if (zwlr_screencopy_frame_v1_get_version(f) < 3)
		start_copy(fr);
}

static void fr_flags(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t flags)
{
	struct frame *fr = data;
	fr->y_invert = (flags & ZWLR_SCREENCOPY_FRAME_V1_FLAGS_Y_INVERT) != 0;
}

static void fr_ready(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t sec_hi,
                     uint32_t sec_lo, uint32_t nsec)
{
	struct frame *fr = data;
	fr->state = 1;
}

static void fr_failed(void *data, struct zwlr_screencopy_frame_v1 *f)
{
	struct frame *fr = data;
	fr->state = -1;
	snprintf(fr->why, sizeof(fr->why), "the compositor could not copy the output");
}

static void fr_damage(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t x,
                      uint32_t y, uint32_t width, uint32_t height)
{
}

static void fr_dmabuf(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t format,
                      uint32_t width, uint32_t height)
{
}

static void fr_buffer_done(void *data, struct zwlr_screencopy_frame_v1 *f)
{
	start_copy(data);
}

static const struct zwlr_screencopy_frame_v1_listener frame_listener = {
	.buffer = fr_buffer, .flags = fr_flags, .ready = fr_ready, .failed = fr_failed,
	.damage = fr_damage, .linux_dmabuf = fr_dmabuf, .buffer_done = fr_buffer_done,
};

/* Captures the outputs of frames[0..n) together; false with os_error. */
static bool copy_outputs(struct os_wl_display *w, struct frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		frames[i].f = zwlr_screencopy_manager_v1_capture_output(w->screencopy, 0,
		                                                        frames[i].out->wl);
		zwlr_screencopy_frame_v1_add_listener(frames[i].f, &frame_listener, &frames[i]);
	}
	bool ok = true;
	int64_t deadline = base_now_ns() + CAPTURE_TIMEOUT_MS * BASE_NS_PER_MS;
	for (int i = 0; i < n && ok; i++) {
		while (frames[i].state == 0 && ok) {
			long left = base_ms_until(deadline);
			if (left <= 0) {
				ok = os_fail("capture of output %s: the compositor sent no frame "
				             "in %d ms (is the output off?)", frames[i].out->name,
				             CAPTURE_TIMEOUT_MS);
				break;
			}
			if (os_wl_dispatch(w, (int)left) < 0)
				ok = false;
		}
		if (ok && frames[i].state < 0)
			ok = os_fail("capture of output %s: %s", frames[i].out->name, frames[i].why);
	}
	for (int i = 0; i < n; i++)
		zwlr_screencopy_frame_v1_destroy(frames[i].f);
	return ok;
}

/* ---- into the image --------------------------------------------------------- */

static bool swapped(uint32_t format)
{
	return format == WL_SHM_FORMAT_XBGR8888 || format == WL_SHM_FORMAT_ABGR8888;
}

static const uint8_t *src_row(const struct frame *fr, int y)
{
	const struct os_wl_buffer *b = &fr->out->buf;
	int row = fr->y_invert ? b->height - 1 - y : y;
	return b->data + (size_t)row * (size_t)b->stride;
}

/* Rows [y0,y1), columns [x0,x1) of the buffer, pixel for pixel (scale 1). */
static void copy_plain(const struct frame *fr, const os_image *img, int dx, int dy,
                       int x0, int y0, int x1, int y1)
{
	bool swap = swapped(fr->format);
	for (int y = y0; y < y1; y++) {
		const uint8_t *s = src_row(fr, y) + (size_t)x0 * 4;
		uint8_t *d = img->pixels + (size_t)(dy + y - y0) * (size_t)img->stride + (size_t)dx * 4;
		if (!swap) {
			memcpy(d, s, (size_t)(x1 - x0) * 4);
			continue;
		}
		for (int x = 0; x < x1 - x0; x++) {
			d[4 * x] = s[4 * x + 2];
			d[4 * x + 1] = s[4 * x + 1];
			d[4 * x + 2] = s[4 * x];
			d[4 * x + 3] = s[4 * x + 3];
		}
	}
}

/* The source span [*a, *b) of logical coordinate v of `len` (box filter). */
static void span(int v, int len, int src_len, int *a, int *b)
{
	*a = (int)((long long)v * src_len / len);
	*b = (int)((long long)(v + 1) * src_len / len);
	if (*b <= *a)
		*b = *a + 1;
	if (*b > src_len)
		*b = src_len;
}

/* Logical rows [y0,y1), columns [x0,x1) of a scaled output: each image
 * pixel is the mean of the buffer pixels it covers. */
static void copy_scaled(const struct frame *fr, const os_image *img, int dx, int dy,
                        int x0, int y0, int x1, int y1, int lw, int lh)
{
	const struct os_wl_buffer *b = &fr->out->buf;
	int ri = swapped(fr->format) ? 2 : 0, bi = 2 - ri;
	for (int y = y0; y < y1; y++) {
		int sy0, sy1;
		span(y, lh, b->height, &sy0, &sy1);
		uint8_t *d = img->pixels + (size_t)(dy + y - y0) * (size_t)img->stride + (size_t)dx * 4;
		for (int x = x0; x < x1; x++, d += 4) {
			int sx0, sx1;
			span(x, lw, b->width, &sx0, &sx1);
			unsigned sum[3] = {0, 0, 0}, cnt = 0;
			for (int sy = sy0; sy < sy1; sy++) {
				const uint8_t *s = src_row(fr, sy) + (size_t)sx0 * 4;
				for (int sx = sx0; sx < sx1; sx++, s += 4, cnt++) {
					sum[0] += s[ri];
					sum[1] += s[1];
					sum[2] += s[bi];
				}
			}
			d[0] = (uint8_t)((sum[0] + cnt / 2) / cnt);
			d[1] = (uint8_t)((sum[1] + cnt / 2) / cnt);
			d[2] = (uint8_t)((sum[2] + cnt / 2) / cnt);
			d[3] = 0xff;
		}
	}
}

static bool image_alloc(struct os_wl_display *w, int width, int height)
{
	size_t need = (size_t)width * (size_t)height * 4;
	if (need > w->img_cap) {
		free(w->img_mem);
		w->img_cap = 0;
		w->img_mem = malloc(need);
		if (w->img_mem == NULL)
			return os_fail("out of memory for a %dx%d capture", width, height);
		w->img_cap = need;
	}
	/* Parts of the layout no output covers read as black. */
	memset(w->img_mem, 0, need);
	w->img = (os_image){w->img_mem, width, height, width * 4};
	return true;
}

/* The output's logical rectangle in screen coordinates. */
static os_rect screen_rect(struct os_wl_display *w, const struct os_wl_output *o)
{
	os_monitor m[OS_WL_MAX_OUTPUTS];
	int n = w->base.impl->monitors(&w->base, m, OS_WL_MAX_OUTPUTS);
	for (int i = 0; i < n && i < w->noutputs; i++)
		if (w->outputs[i] == o)
			return m[i].rect;
	return (os_rect){0, 0, 0, 0};
}

/* Places each frame's part of region r into the image (or points the image
 * straight into the one buffer when nothing needs converting). */
static bool compose(struct os_wl_display *w, const os_rect *r, struct frame *frames, int n)
{
	if (n == 1) {
		struct frame *fr = &frames[0];
		os_rect o = screen_rect(w, fr->out), in;
		if (os_rect_meet(o, *r, &in) && in.width == r->width && in.height == r->height &&
		    fr->width == o.width && fr->height == o.height && !fr->y_invert &&
		    !swapped(fr->format)) {
			const struct os_wl_buffer *b = &fr->out->buf;
			w->img = (os_image){b->data + (size_t)(r->y - o.y) * (size_t)b->stride +
			                    (size_t)(r->x - o.x) * 4, r->width, r->height, b->stride};
			return true;
		}
	}
	if (!image_alloc(w, r->width, r->height))
		return false;
	for (int i = 0; i < n; i++) {
		struct frame *fr = &frames[i];
		os_rect o = screen_rect(w, fr->out), in;
		if (!os_rect_meet(o, *r, &in))
			continue;
		int x0 = in.x - o.x, y0 = in.y - o.y;
		if (fr->width == o.width && fr->height == o.height)
			copy_plain(fr, &w->img, in.x - r->x, in.y - r->y, x0, y0,
			           x0 + in.width, y0 + in.height);
		else
			copy_scaled(fr, &w->img, in.x - r->x, in.y - r->y, x0, y0, x0 + in.width,
			            y0 + in.height, o.width, o.height);
	}
	return true;
}

/* Whether r is the next strip of the last capture, every output it
 * touches copied by that capture. */
static bool strip_continues(const struct os_wl_display *w, const os_rect *r,
                            const struct frame *frames, int n)
{
	const os_rect *l = &w->last_region;
	if (w->last_ns == 0 || r->x != l->x || r->width != l->width ||
	    r->y != l->y + l->height ||
	    base_now_ns() - w->last_ns > STRIP_CONTINUES_MS * BASE_NS_PER_MS)
		return false;
	for (int i = 0; i < n; i++)
		if (frames[i].out->buf.wl == NULL || frames[i].out->buf.pass != w->pass)
			return false;
	return true;
}

/* The frames as that capture left them in the outputs' buffers. */
static void reuse_frames(struct frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		const struct os_wl_buffer *b = &frames[i].out->buf;
		frames[i].format = b->format;
		frames[i].width = b->width;
		frames[i].height = b->height;
		frames[i].stride = b->stride;
		frames[i].y_invert = b->y_invert;
		frames[i].state = 1;
	}
}

const os_image *os_wl_capture_borrow(os_display *d, const os_rect *region)
{
	struct os_wl_display *w = os_wl(d);
	if (!os_wl_alive(w))
		return NULL;
	int sw, sh;
	d->impl->screen_size(d, &sw, &sh);
	os_rect r = region != NULL ? *region : (os_rect){0, 0, sw, sh};
	if (r.width <= 0 || r.height <= 0 || r.x < 0 || r.y < 0 || r.x + r.width > sw ||
	    r.y + r.height > sh) {
		os_fail("region %dx%d+%d+%d is not inside the screen (%dx%d)", r.width, r.height,
		        r.x, r.y, sw, sh);
		return NULL;
	}
	struct frame frames[OS_WL_MAX_OUTPUTS];
	int n = 0;
	for (int i = 0; i < w->noutputs; i++) {
		os_rect in;
		if (!os_rect_meet(screen_rect(w, w->outputs[i]), r, &in))
			continue;
		frames[n++] = (struct frame){.w = w, .out = w->outputs[i]};
	}
	if (strip_continues(w, &r, frames, n)) {
		reuse_frames(frames, n);
	} else {
		w->pass++;
		if (!copy_outputs(w, frames, n)) {
			w->last_ns = 0;
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			frames[i].out->buf.y_invert = frames[i].y_invert;
			frames[i].out->buf.pass = w->pass;
		}
	}
	if (!compose(w, &r, frames, n))
		return NULL;
	w->last_region = r;
	w->last_ns = base_now_ns();
	return &w->img;
}

void os_wl_capture_trim(os_display *d, size_t max_bytes)
{
	struct os_wl_display *w = os_wl(d);
	size_t total = w->img_cap;
	for (int i = 0; i < w->noutputs; i++)
		total += w->outputs[i]->buf.size;
	if (total <= max_bytes)
		return;
	os_wl_capture_cleanup(w);
}

void os_wl_capture_cleanup(struct os_wl_display *w)
{
	for (int i = 0; i < w->noutputs; i++)
		os_wl_buffer_free(&w->outputs[i]->buf);
	free(w->img_mem);
	w->img_mem = NULL;
	w->img_cap = 0;
	w->img = (os_image){0};
	w->last_ns = 0;
}
