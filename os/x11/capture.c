/*
 * Screen capture: MIT-SHM with one reused segment, XGetImage as the
 * fallback, and the conversion of the server's pixel layout to BGRX.
 * (Capture straight into PNG is capture_png.c; the images, image.c.)
 *
 * Why one segment: creating and attaching a segment costs two round trips
 * and a kernel call per capture; settle detection captures many times a
 * second. The segment is marked IPC_RMID as soon as the server attached it,
 * so it vanishes with the last of the two processes even after a crash.
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "os/x11/capture-internal.h"

/* ---- pixel conversion ------------------------------------------------ */

struct chan {
	int shift;      /* of the mask's lowest bit */
	int bits;       /* width of the mask */
	uint8_t scale[256]; /* bits < 8: value -> 0..255, rounded */
};

static void chan_init(struct chan *c, uint32_t mask)
{
	c->shift = 0;
	c->bits = 0;
	if (mask == 0)
		return;
	while (!(mask & 1u)) {
		mask >>= 1;
		c->shift++;
	}
	while (mask & 1u) {
		mask >>= 1;
		c->bits++;
	}
	if (c->bits < 8) {
		uint32_t max = (1u << c->bits) - 1;
		for (uint32_t v = 0; v <= max; v++)
			c->scale[v] = (uint8_t)((v * 255 + max / 2) / max);
	}
}

static inline uint8_t chan_get(const struct chan *c, uint32_t px)
{
	if (c->bits >= 8)
		return (uint8_t)(px >> (c->shift + c->bits - 8));
	if (c->bits == 0)
		return 0;
	return c->scale[(px >> c->shift) & ((1u << c->bits) - 1)];
}

static inline uint32_t pixel_read(const uint8_t *s, int bytes, bool msb)
{
	switch (bytes) {
	case 4:
		return msb ? (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 |
		             (uint32_t)s[2] << 8 | s[3]
		           : (uint32_t)s[3] << 24 | (uint32_t)s[2] << 16 |
		             (uint32_t)s[1] << 8 | s[0];
	case 3:
		return msb ? (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2]
		           : (uint32_t)s[2] << 16 | (uint32_t)s[1] << 8 | s[0];
	default:
		return msb ? (uint32_t)s[0] << 8 | s[1] : (uint32_t)s[1] << 8 | s[0];
	}
}

void os_pixels_convert_row(const uint8_t *src, uint8_t *dst, int width, int bpp,
                           bool msb_first, uint32_t red_mask,
                           uint32_t green_mask, uint32_t blue_mask)
{
	if (width <= 0)
		return;
	if (bpp != 16 && bpp != 24 && bpp != 32) {
		memset(dst, 0, (size_t)width * 4);
		return;
	}
	/* The server's layout already is BGRX: nothing to convert. */
	if (bpp == 32 && !msb_first && red_mask == 0xff0000u &&
	    green_mask == 0xff00u && blue_mask == 0xffu) {
		memcpy(dst, src, (size_t)width * 4);
		return;
	}
	int bytes = bpp / 8;
	/* Byte-aligned 8-bit channels (the common 24/32-bit cases): shifts only. */
	uint32_t all = red_mask | green_mask | blue_mask;
	int rs = __builtin_ctz(red_mask | 0x80000000u);
	int gs = __builtin_ctz(green_mask | 0x80000000u);
	int bs = __builtin_ctz(blue_mask | 0x80000000u);
	if (red_mask == 0xffu << rs && green_mask == 0xffu << gs &&
	    blue_mask == 0xffu << bs && rs + 8 <= bpp && gs + 8 <= bpp &&
	    bs + 8 <= bpp && all != 0) {
		for (int x = 0; x < width; x++, src += bytes, dst += 4) {
			uint32_t px = pixel_read(src, bytes, msb_first);
			dst[0] = (uint8_t)(px >> bs);
			dst[1] = (uint8_t)(px >> gs);
			dst[2] = (uint8_t)(px >> rs);
			dst[3] = 0xff;
		}
		return;
	}
	/* Any other contiguous masks (5-6-5, 10-bit, odd offsets). */
	struct chan r, g, b;
	chan_init(&r, red_mask);
	chan_init(&g, green_mask);
	chan_init(&b, blue_mask);
	for (int x = 0; x < width; x++, src += bytes, dst += 4) {
		uint32_t px = pixel_read(src, bytes, msb_first);
		dst[0] = chan_get(&b, px);
		dst[1] = chan_get(&g, px);
		dst[2] = chan_get(&r, px);
		dst[3] = 0xff;
	}
}

/* ---- state ----------------------------------------------------------- */

static bool mask_contiguous(unsigned long m)
{
	if (m == 0 || m > 0xffffffffu)
		return false;
	unsigned long low = m & -m;
	return ((m + low) & m) == 0;
}

static void shm_img_drop(struct os_capture_state *st)
{
	if (st->shm_img != NULL) {
		/* The header points at our segment and segment info: free only it. */
		st->shm_img->data = NULL;
		st->shm_img->obdata = NULL;
		XDestroyImage(st->shm_img);
		st->shm_img = NULL;
	}
}

/* Detaches (server first, then us) and forgets the segment. */
static void shm_release(os_x11 *d, struct os_capture_state *st, bool server)
{
	if (!st->seg_attached)
		return;
	/*
	 * No need to wait for the server: its own attachment keeps the
	 * (IPC_RMID-marked) segment alive until it processes the detach.
	 */
	if (server)
		XShmDetach(d->dpy, &st->seg);
	shm_img_drop(st);
	shmdt(st->seg.shmaddr);
	st->seg_attached = false;
	st->seg_size = 0;
}

static void capture_cleanup(os_x11 *d)
{
	struct os_capture_state *st = d->capture;
	if (st == NULL)
		return;
	/*
	 * XCloseDisplay follows: the server detaches a client's segments when
	 * it disconnects, without making us wait for it (an explicit detach
	 * here costs a round trip in which the server frees 8 MB, ~2 ms).
	 * The segment, marked IPC_RMID, disappears with that last detach.
	 */
	shm_release(d, st, false);
	shm_img_drop(st);
	if (st->get_img != NULL)
		XDestroyImage(st->get_img);
	free(st->conv);
	free(st);
	d->capture = NULL;
	d->capture_cleanup = NULL;
}

static const char *visual_class_name(int c)
{
	switch (c) {
	case StaticGray: return "StaticGray";
	case GrayScale: return "GrayScale";
	case StaticColor: return "StaticColor";
	case PseudoColor: return "PseudoColor";
	case TrueColor: return "TrueColor";
	case DirectColor: return "DirectColor";
	default: return "unknown";
	}
}

static bool env_no_shm(void)
{
	const char *v = getenv("DESKHAND_NO_SHM");
	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Creates the state on first use and checks that the screen is capturable. */
struct os_capture_state *os_capture_state_of(os_x11 *d)
{
	if (d->capture != NULL)
		return d->capture;
	if (os_display_dead(d))
		return NULL;
	Visual *vis = DefaultVisual(d->dpy, d->screen);
	int depth = DefaultDepth(d->dpy, d->screen);
	/*
	 * Colormapped visuals would need the colormap to give colours; nothing
	 * runs such screens today, so refuse clearly rather than guess.
	 */
	if (vis->class != TrueColor) {
		os_fail("cannot capture a %s screen of depth %d: deskhand captures "
		        "TrueColor screens only (depth 15, 16, 24 or 32)",
		        visual_class_name(vis->class), depth);
		return NULL;
	}
	if (!mask_contiguous(vis->red_mask) || !mask_contiguous(vis->green_mask) ||
	    !mask_contiguous(vis->blue_mask)) {
		os_fail("cannot capture: the screen's colour masks (0x%lx 0x%lx 0x%lx) "
		        "are not contiguous", vis->red_mask, vis->green_mask,
		        vis->blue_mask);
		return NULL;
	}
	struct os_capture_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	st->visual = vis;
	st->depth = depth;
	int major, minor;
	Bool pixmaps;
	st->use_shm = !env_no_shm() && XShmQueryExtension(d->dpy) &&
	              XShmQueryVersion(d->dpy, &major, &minor, &pixmaps);
	d->capture = st;
	d->capture_cleanup = capture_cleanup;
	return st;
}

void os_x11_capture_trim(os_x11 *d, size_t max_bytes)
{
	struct os_capture_state *st = d->capture;
	if (st == NULL)
		return;
	if (st->seg_attached && st->seg_size > max_bytes)
		shm_release(d, st, true);
	if (st->conv_cap > max_bytes) {
		free(st->conv);
		st->conv = NULL;
		st->conv_cap = 0;
	}
}

bool os_x11_capture_uses_shm(os_x11 *d)
{
	struct os_capture_state *st = os_capture_state_of(d);
	return st != NULL && st->use_shm;
}

/* ---- grabbing -------------------------------------------------------- */

bool os_capture_region(os_x11 *d, const os_rect *region, os_rect *out)
{
	int sw, sh;
	os_x11_screen_size(d, &sw, &sh);
	if (region == NULL) {
		*out = (os_rect){0, 0, sw, sh};
		return true;
	}
	const os_rect *r = region;
	if (r->width <= 0 || r->height <= 0)
		return os_fail("region %dx%d%+d%+d is empty", r->width, r->height,
		               r->x, r->y);
	if (r->x < 0 || r->y < 0 || r->x > sw - r->width || r->y > sh - r->height)
		return os_fail("region %dx%d%+d%+d is not inside the screen (%dx%d)",
		               r->width, r->height, r->x, r->y, sw, sh);
	*out = *r;
	return true;
}

/*
 * Makes sure an attached segment of at least `need` bytes exists. Failure
 * (no shmget, the server cannot attach: a remote display) sets os_error().
 */
static bool shm_ensure(os_x11 *d, struct os_capture_state *st, size_t need)
{
	if (st->seg_attached && st->seg_size >= need)
		return true;
	shm_release(d, st, true);
	int id = shmget(IPC_PRIVATE, need, IPC_CREAT | 0600);
	if (id < 0)
		return os_fail("shmget of %zu bytes: %s", need, strerror(errno));
	void *addr = shmat(id, NULL, 0);
	if (addr == (void *)-1) {
		int e = errno;
		shmctl(id, IPC_RMID, NULL);
		return os_fail("shmat: %s", strerror(e));
	}
	st->seg.shmid = id;
	st->seg.shmaddr = addr;
	st->seg.readOnly = False;
	os_x_trap_begin(d);
	Status ok = XShmAttach(d->dpy, &st->seg);
	int err = os_x_trap_end(d, "MIT-SHM attach");
	/* Both sides are attached (or never will be): let the kernel reap it. */
	shmctl(id, IPC_RMID, NULL);
	if (!ok || err != 0) {
		if (!ok && err == 0)
			os_fail("MIT-SHM attach refused");
		shmdt(addr);
		return false;
	}
	st->seg_attached = true;
	st->seg_verified = false;
	st->seg_size = need;
	return true;
}

XImage *os_capture_shm_prepare(os_x11 *d, struct os_capture_state *st,
                               const os_rect *r)
{
	if (st->shm_img == NULL || st->shm_img->width != r->width ||
	    st->shm_img->height != r->height) {
		shm_img_drop(st);
		st->shm_img = XShmCreateImage(d->dpy, st->visual, (unsigned)st->depth,
		                              ZPixmap, NULL, &st->seg,
		                              (unsigned)r->width, (unsigned)r->height);
		if (st->shm_img == NULL) {
			os_fail("XShmCreateImage failed");
			return NULL;
		}
	}
	size_t need = (size_t)st->shm_img->bytes_per_line * (size_t)r->height;
	XImage *img = st->shm_img;
	st->shm_img = NULL; /* shm_ensure may drop the header on regrowth */
	bool ok = shm_ensure(d, st, need);
	st->shm_img = img;
	if (!ok)
		return NULL;
	img->data = st->seg.shmaddr;
	return img;
}

/*
 * Grabs rows [y, y + n) of r into the same rows of img (from shm_prepare),
 * inside an X error trap the caller opened (one for all the strips: a trap
 * costs two round trips). On a protocol error it fails with "XShmGetImage
 * failed", which the caller's os_x_trap_end replaces with the error.
 * A client in another IPC namespace than the server (a container without
 * --ipc=host) hands over a segment id that means nothing to the server,
 * or, worse, another segment of the server's namespace: then the attach
 * succeeds and the pixels land elsewhere. So the first grab into a new
 * segment checks that the server wrote the first row, which is pre-filled
 * with a pattern no screen row has all along (if one ever does, we merely
 * fall back to XGetImage).
 */
bool os_capture_shm_rows(os_x11 *d, struct os_capture_state *st,
                         XImage *img, const os_rect *r, int y, int n)
{
	char *base = img->data;
	char *rows = base + (size_t)y * (size_t)img->bytes_per_line;
	size_t probe = (size_t)img->bytes_per_line;
	if (!st->seg_verified)
		memset(rows, 0xa5, probe);
	/* XShmGetImage takes the offset in the segment from data. */
	img->data = rows;
	img->height = n;
	Status s = XShmGetImage(d->dpy, d->root, img, r->x, r->y + y, AllPlanes);
	img->data = base;
	img->height = r->height;
	if (!s)
		return os_fail("XShmGetImage failed");
	if (!st->seg_verified) {
		const uint8_t *p = (const uint8_t *)rows;
		size_t i = 0;
		while (i < probe && p[i] == 0xa5)
			i++;
		if (i == probe)
			return os_fail("MIT-SHM: the server did not write into the "
			               "shared segment (different IPC namespaces?)");
		st->seg_verified = true;
	}
	return true;
}

/* One SHM grab of r; NULL with os_error() set when SHM cannot be used. */
static XImage *grab_shm(os_x11 *d, struct os_capture_state *st,
                        const os_rect *r)
{
	XImage *img = os_capture_shm_prepare(d, st, r);
	if (img == NULL)
		return NULL;
	bool fresh = !st->seg_verified;
	os_x_trap_begin(d);
	bool ok = os_capture_shm_rows(d, st, img, r, 0, r->height);
	if (os_x_trap_end(d, "XShmGetImage") != 0 || !ok)
		return NULL;
	/*
	 * Map the freshly written pages in one call rather than through 2000
	 * page faults while encoding (saves ~1.5 ms of CPU on 1920x1080).
	 * Older kernels refuse: harmless.
	 */
	if (fresh)
		os_mem_populate(st->seg.shmaddr, st->seg_size, false);
	return img;
}

static XImage *grab_get(os_x11 *d, struct os_capture_state *st,
                        const os_rect *r)
{
	if (st->get_img != NULL) {
		XDestroyImage(st->get_img);
		st->get_img = NULL;
	}
	os_x_trap_begin(d);
	XImage *img = XGetImage(d->dpy, d->root, r->x, r->y, (unsigned)r->width,
	                        (unsigned)r->height, AllPlanes, ZPixmap);
	int err = os_x_trap_end(d, "XGetImage");
	if (img == NULL || err != 0) {
		if (img != NULL)
			XDestroyImage(img);
		else if (err == 0)
			os_fail("XGetImage failed");
		return NULL;
	}
	st->get_img = img;
	return img;
}

bool os_capture_shm_give_up(os_x11 *d, struct os_capture_state *st)
{
	if (os_display_dead(d))
		return false;
	st->use_shm = false;
	shm_release(d, st, true);
	shm_img_drop(st);
	return true;
}

/*
 * Grabs r into a server-layout XImage owned by st. SHM failures other than
 * a protocol error on the grab itself switch this display to XGetImage for
 * good, which is how remote displays (no shared memory) end up working.
 */
static XImage *grab(os_x11 *d, struct os_capture_state *st, const os_rect *r)
{
	if (st->use_shm) {
		XImage *img = grab_shm(d, st, r);
		if (img != NULL)
			return img;
		if (!os_capture_shm_give_up(d, st))
			return NULL;
	}
	XImage *img = grab_get(d, st, r);
	if (img == NULL)
		return NULL;
	return img;
}

bool os_capture_supported(const XImage *img)
{
	int bpp = img->bits_per_pixel;
	if (bpp != 16 && bpp != 24 && bpp != 32)
		return os_fail("cannot capture: the server stores pixels at %d bits "
		               "per pixel (deskhand converts 16, 24 and 32)", bpp);
	return true;
}

static bool image_is_bgrx(const XImage *img, const Visual *v)
{
	return img->bits_per_pixel == 32 && img->byte_order == LSBFirst &&
	       v->red_mask == 0xff0000ul && v->green_mask == 0xff00ul &&
	       v->blue_mask == 0xfful;
}

void os_capture_convert_rows(const XImage *img, const Visual *v, uint8_t *dst,
                             int dst_stride, int y0, int y1)
{
	for (int y = y0; y < y1; y++)
		os_pixels_convert_row((const uint8_t *)img->data +
		                      (size_t)y * (size_t)img->bytes_per_line,
		                      dst + (size_t)y * (size_t)dst_stride, img->width,
		                      img->bits_per_pixel, img->byte_order == MSBFirst,
		                      (uint32_t)v->red_mask, (uint32_t)v->green_mask,
		                      (uint32_t)v->blue_mask);
}

static XImage *capture_raw(os_x11 *d, const os_rect *region,
                           struct os_capture_state **stp)
{
	struct os_capture_state *st = os_capture_state_of(d);
	if (st == NULL)
		return NULL;
	os_rect r = {0, 0, 0, 0};
	if (!os_capture_region(d, region, &r))
		return NULL;
	XImage *img = grab(d, st, &r);
	if (img == NULL || !os_capture_supported(img))
		return NULL;
	*stp = st;
	return img;
}

/*
 * Points st->view at img's pixels when they are BGRX already, else at the
 * conversion buffer, grown to fit, and sets *convert: the caller converts.
 */
static bool view_point(struct os_capture_state *st, const XImage *img,
                       bool *convert)
{
	st->view.width = img->width;
	st->view.height = img->height;
	*convert = !image_is_bgrx(img, st->visual);
	if (!*convert) {
		st->view.pixels = (uint8_t *)img->data;
		st->view.stride = img->bytes_per_line;
		return true;
	}
	size_t need = (size_t)img->width * 4 * (size_t)img->height;
	if (need > st->conv_cap) {
		uint8_t *p = realloc(st->conv, need);
		if (p == NULL)
			return os_fail("out of memory for a %dx%d capture", img->width,
			               img->height);
		st->conv = p;
		st->conv_cap = need;
	}
	st->view.pixels = st->conv;
	st->view.stride = img->width * 4;
	return true;
}

const os_image *os_x11_capture_borrow(os_x11 *d, const os_rect *region)
{
	struct os_capture_state *st;
	XImage *img = capture_raw(d, region, &st);
	bool convert;
	if (img == NULL || !view_point(st, img, &convert))
		return NULL;
	if (convert)
		os_capture_convert_rows(img, st->visual, st->conv, st->view.stride, 0,
		             img->height);
	return &st->view;
}
