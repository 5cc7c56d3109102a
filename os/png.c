/*
 * PNG encoding tuned for screen content, and decoding through libpng.
 *
 * Encoding. libpng's writer is single-threaded and zlib-bound: on a busy
 * 1920x1080 desktop its fastest settings that keep the file within 1.15x
 * of scrot's (zlib level 1, Paeth) cost ~29 ms of one core, more than the
 * whole budget of a screenshot at a third of scrot's time (~22 ms). So the
 * encoder does what pigz does for gzip: the image is cut into horizontal
 * bands that all cores filter and deflate in parallel, and the bands are
 * joined into one zlib stream (see struct os_png_band); the deflate itself
 * is ISA-L's igzip (Debian libisal), 6x faster than zlib's level 1 on
 * these images. Rows are read straight from the BGRX image (no copy of it
 * is made) and filtered with the standard PNG filters and libpng's
 * selection heuristic: all that is png-bands.c. This file frames the
 * bands' output as a plain 8-bit RGB PNG and writes it to memory, a
 * descriptor or a file; the unit tests read it back with libpng itself,
 * and the integration tests with ImageMagick.
 *
 * Decoding uses libpng. Every libpng error longjmps back into
 * os_png_decode, which frees what it allocated and reports the message
 * through os_error(); warnings are dropped (library code never prints).
 */
#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/base.h"
#include "os/png-internal.h"

_Static_assert(OS_PNG_FILTER_NONE == PNG_FILTER_NONE, "filter bits");
_Static_assert(OS_PNG_FILTER_SUB == PNG_FILTER_SUB, "filter bits");
_Static_assert(OS_PNG_FILTER_UP == PNG_FILTER_UP, "filter bits");
_Static_assert(OS_PNG_FILTER_AVG == PNG_FILTER_AVG, "filter bits");
_Static_assert(OS_PNG_FILTER_PAETH == PNG_FILTER_PAETH, "filter bits");

/*
 * The defaults, measured with bench/screenshot (--desktop busy|flat|aa,
 * --grid) on three 1920x1080 desktops, each with six xterms full of text
 * (three with the bitmap font "fixed", three anti-aliased DejaVu Sans
 * Mono): "busy" on a noisy plasma wallpaper, "flat" on a plain background,
 * "aa" on a plain background with all six anti-aliased. File sizes are
 * relative to scrot's (zlib level 7, libpng's adaptive filters: 553, 300
 * and 329 KB); times are the encoder's on the busy desktop, 2 cores,
 * medians of bench/screenshot-cost (+-20 %: the machine is shared).
 *
 *   back end        filter            busy   flat   aa     busy ms
 *   igzip 1         none              1.50   1.06   1.06    4.3
 *   igzip 1         up                1.20   1.19   1.22    3.9
 *   igzip 1         sub               1.16   1.21   1.23    4.5
 *   igzip 1         paeth             1.09   1.17   1.21    5.0
 *   igzip 1         sub+up+paeth      1.06   1.10   1.11    3.3-6  <- default
 *   igzip 1         all five          1.06   1.10   1.11    6.7
 *   igzip 3         all five          1.07   1.12   1.13   12
 *   zlib 1 [1]      sub+up+paeth      1.02   1.02   1.01   12.5
 *   zlib 6          all five          0.93   0.90   0.94   38
 *   zlib 9          all five          0.92   0.88   0.92  178
 *   zlib Z_RLE [1]  all five          1.20   1.54   1.72   (anti-aliased
 *                                                     text needs LZ77)
 * [1] the same band encoder with zlib instead of igzip (an earlier build;
 *     zlib levels 1..3 are no longer selectable).
 *
 * igzip level 1 with libpng's heuristic over Sub, Up and Paeth stays within
 * 1.11x of scrot on all three (the target is 1.15x) at a fifth of zlib's
 * cost; Average never wins a row and None rarely does under the heuristic,
 * so leaving them out saves 40 % of the filtering for nothing. (None alone
 * compresses flat desktops better with igzip, but is a disaster on a
 * wallpaper.) Levels 4..9 go to zlib for callers that prefer size.
 */
#define DEFAULT_LEVEL 1
#define DEFAULT_FILTER (PNG_FILTER_SUB | PNG_FILTER_UP | PNG_FILTER_PAETH)
#define DEFAULT_STRATEGY Z_DEFAULT_STRATEGY

/* Decoding refuses images above this many pixels (a 16k x 16k screen). */
#define DECODE_MAX_PIXELS (16384ul * 16384ul)
#define DECODE_MAX_FILE (1ul << 30)

/* Per-call context for libpng's error callback (decoding). */
struct png_ctx {
	char message[256];
};

static void png_error_fn(png_structp png, png_const_charp msg)
{
	struct png_ctx *ctx = png_get_error_ptr(png);
	if (ctx != NULL && ctx->message[0] == '\0')
		snprintf(ctx->message, sizeof(ctx->message), "%s", msg);
	png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* ---- encoding ---------------------------------------------------------- */

/* Where the PNG's bytes go: a file descriptor or a growing buffer. */
struct sink {
	int fd;                 /* -1: memory */
	uint8_t *buf;
	size_t len, cap;
};

static bool sink_put(struct sink *s, const void *data, size_t n)
{
	if (s->fd >= 0)
		return base_write_all(s->fd, data, n) ||
		       os_fail("cannot write PNG: %s", strerror(errno));
	if (n > s->cap - s->len) {
		size_t cap = s->cap ? s->cap : 65536;
		while (cap - s->len < n) {
			if (cap > SIZE_MAX / 2)
				return os_fail("out of memory for the PNG");
			cap *= 2;
		}
		uint8_t *b = realloc(s->buf, cap);
		if (b == NULL)
			return os_fail("out of memory for the PNG");
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	return true;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One chunk whose data is the concatenation of `n` parts. */
static bool chunk_put(struct sink *s, const char *type, const uint8_t *const *part,
                      const size_t *len, int n)
{
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += len[i];
	if (total > PNG_UINT_31_MAX)
		return os_fail("PNG chunk too large");
	uint8_t head[8];
	be32(head, (uint32_t)total);
	memcpy(head + 4, type, 4);
	uLong crc = crc32(0L, head + 4, 4);
	for (int i = 0; i < n; i++)
		crc = crc32_z(crc, part[i], len[i]);
	uint8_t tail[4];
	be32(tail, (uint32_t)crc);
	if (!sink_put(s, head, 8))
		return false;
	for (int i = 0; i < n; i++)
		if (len[i] > 0 && !sink_put(s, part[i], len[i]))
			return false;
	return sink_put(s, tail, 4);
}

static bool options_resolve(const os_png_options *opt, int *level, int *filter)
{
	*level = DEFAULT_LEVEL;
	*filter = DEFAULT_FILTER;
	if (opt == NULL)
		return true;
	if (opt->level != -1) {
		if (opt->level < 0 || opt->level > 9)
			return os_fail("PNG compression level %d is not in 0..9",
			               opt->level);
		*level = opt->level;
	}
	if (opt->filter != -1) {
		if (opt->filter == 0 || (opt->filter & ~PNG_ALL_FILTERS) != 0)
			return os_fail("PNG filter set 0x%x is not a set of "
			               "OS_PNG_FILTER_* bits", (unsigned)opt->filter);
		*filter = opt->filter;
	}
	return true;
}

static bool image_valid(const os_image *img)
{
	if (img == NULL || img->pixels == NULL || img->width <= 0 ||
	    img->height <= 0 || img->stride < img->width * 4)
		return os_fail("not a valid image (%dx%d, stride %d)",
		               img ? img->width : 0, img ? img->height : 0,
		               img ? img->stride : 0);
	/* The decoder's limit too; keeps every band below 4 GiB of input. */
	if (img->width > 16384 || img->height > 16384)
		return os_fail("image %dx%d too large for PNG encoding (16384 "
		               "pixels a side at most)", img->width, img->height);
	return true;
}

static const uint8_t png_signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};

#define IHDR_LEN 13

/* A memory sink gets exactly the file's size: a doubling buffer would
 * hold up to twice the PNG at the peak of every screenshot. */
static void sink_reserve(struct sink *sink, const struct os_png_band *bands, int nb)
{
	if (sink->fd >= 0 || sink->cap != 0)
		return;
	size_t total = sizeof(png_signature) + 12 + IHDR_LEN + 12 + 2 + 4;
	for (int i = 0; i < nb; i++)
		total += 12 + bands[i].out_len;
	sink->buf = malloc(total);
	if (sink->buf != NULL)
		sink->cap = total;
}

/* One IDAT chunk per band, the zlib header in the first and the stream's
 * Adler-32 in the last. Each band's output is freed once written. */
static bool put_idats(struct sink *sink, struct os_png_band *bands, int nb, uLong adler)
{
	/* zlib header: deflate, 32 KiB window, no dictionary, check bits. */
	static const uint8_t zhead[2] = {0x78, 0x01};
	uint8_t ztail[4];
	be32(ztail, (uint32_t)adler);
	bool ok = true;
	for (int i = 0; i < nb && ok; i++) {
		const uint8_t *parts[3];
		size_t lens[3];
		int n = 0;
		if (i == 0) {
			parts[n] = zhead;
			lens[n++] = 2;
		}
		parts[n] = bands[i].out;
		lens[n++] = bands[i].out_len;
		if (i == nb - 1) {
			parts[n] = ztail;
			lens[n++] = 4;
		}
		ok = chunk_put(sink, "IDAT", parts, lens, n);
		free(bands[i].out);
		bands[i].out = NULL;
	}
	return ok;
}

/* The PNG file around the compressed bands. */
static bool put_png(const os_image *img, struct sink *sink, struct os_png_band *bands, int nb)
{
	uLong adler = bands[0].adler;
	for (int i = 1; i < nb; i++)
		adler = adler32_combine(adler, bands[i].adler, (z_off_t)bands[i].in_len);
	uint8_t ihdr[IHDR_LEN];
	be32(ihdr, (uint32_t)img->width);
	be32(ihdr + 4, (uint32_t)img->height);
	ihdr[8] = 8;    /* bits per channel */
	ihdr[9] = 2;    /* RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	const uint8_t *p[1] = {ihdr};
	size_t l[1] = {sizeof(ihdr)};
	sink_reserve(sink, bands, nb);
	return sink_put(sink, png_signature, sizeof(png_signature)) &&
	       chunk_put(sink, "IHDR", p, l, 1) && put_idats(sink, bands, nb, adler) &&
	       chunk_put(sink, "IEND", NULL, NULL, 0);
}

static bool encode(const os_image *img, struct sink *sink,
                   const os_png_options *opt, os_png_feed *feed)
{
	int level, filter;
	if (!image_valid(img) || !options_resolve(opt, &level, &filter))
		return false;
	int nt;
	int nb = os_png_band_count(img, &nt);
	struct os_png_band bands[OS_PNG_MAX_BANDS];
	memset(bands, 0, sizeof(bands));
	for (int i = 0; i < nb; i++) {
		bands[i] = (struct os_png_band){
			.img = img,
			.y0 = (int)((long)img->height * i / nb),
			.y1 = (int)((long)img->height * (i + 1) / nb),
			.level = level,
			.strategy = DEFAULT_STRATEGY,
			.filter = filter,
			.last = i == nb - 1,
			.fresh = feed != NULL,
		};
	}
	bool ok = os_png_bands_compress(bands, nb, nt, feed);
	for (int i = 0; i < nb && ok; i++)
		if (bands[i].error != NULL)
			ok = os_fail("PNG encoding failed: %s", bands[i].error);
	ok = ok && put_png(img, sink, bands, nb);
	for (int i = 0; i < nb; i++)
		free(bands[i].out);
	return ok;
}

bool os_png_encode(const os_image *img, uint8_t **out, size_t *out_len,
                   const os_png_options *opt)
{
	struct sink sink = {.fd = -1};
	if (!encode(img, &sink, opt, NULL)) {
		free(sink.buf);
		return false;
	}
	*out = sink.buf;
	*out_len = sink.len;
	return true;
}

bool os_png_write_fd_fed(const os_image *img, int fd,
                         const os_png_options *opt, os_png_feed *feed)
{
	if (fd < 0)
		return os_fail("cannot write PNG: bad file descriptor %d", fd);
	struct sink sink = {.fd = fd};
	return encode(img, &sink, opt, feed);
}

bool os_png_write_fd(const os_image *img, int fd, const os_png_options *opt)
{
	return os_png_write_fd_fed(img, fd, opt, NULL);
}

/*
 * Readers see either the old file or the whole new one, never a partial
 * PNG, and a crash right after cannot leave an empty file under the name
 * (ext4 without auto_da_alloc, XFS): base_atomic flushes before the rename.
 */
bool os_png_write_file(const os_image *img, const char *path,
                       const os_png_options *opt)
{
	return os_png_write_file_fed(img, path, opt, NULL);
}

bool os_png_write_file_fed(const os_image *img, const char *path,
                           const os_png_options *opt, os_png_feed *feed)
{
	if (path == NULL || path[0] == '\0')
		return os_fail("cannot write PNG: empty file name");
	base_atomic a;
	if (!base_atomic_begin(&a, path, 0666))
		return os_fail("cannot write PNG to %s: %s", path, base_error());
	struct sink sink = {.fd = a.fd};
	if (!encode(img, &sink, opt, feed)) {
		char why[sizeof(base_error_text)];
		snprintf(why, sizeof(why), "%s", os_error());
		base_atomic_abort(&a);
		return os_fail("%s: %s", path, why);
	}
	if (!base_atomic_commit(&a))
		return os_fail("cannot write PNG to %s: %s", path, base_error());
	return true;
}

/* ---- decoding ------------------------------------------------------- */

struct source {
	const uint8_t *data;
	size_t len, pos;
};

static void source_read(png_structp png, png_bytep out, size_t n)
{
	struct source *s = png_get_io_ptr(png);
	if (n > s->len - s->pos)
		png_error(png, "truncated data");
	memcpy(out, s->data + s->pos, n);
	s->pos += n;
}

os_image *os_png_decode(const uint8_t *data, size_t len)
{
	if (data == NULL || len < 8 || png_sig_cmp(data, 0, 8) != 0) {
		os_fail("not a PNG image");
		return NULL;
	}
	struct png_ctx ctx = {{0}};
	struct source src = {data, len, 0};
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx,
	                                         png_error_fn, png_warning_fn);
	if (png == NULL) {
		os_fail("PNG: cannot create the decoder (out of memory)");
		return NULL;
	}
	png_infop info = png_create_info_struct(png);
	if (info == NULL) {
		png_destroy_read_struct(&png, NULL, NULL);
		os_fail("PNG: cannot create the decoder (out of memory)");
		return NULL;
	}
	/* Assigned after setjmp, so volatile: the longjmp path frees them. */
	os_image *volatile img = NULL;
	png_bytep *volatile rows = NULL;
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		free(rows);
		os_image_destroy(img);
		os_fail("cannot decode PNG: %s", ctx.message);
		return NULL;
	}
	png_set_read_fn(png, &src, source_read);
	png_set_user_limits(png, 16384, 16384);
	png_read_info(png, info);

	png_uint_32 w = png_get_image_width(png, info);
	png_uint_32 h = png_get_image_height(png, info);
	int depth = png_get_bit_depth(png, info);
	int type = png_get_color_type(png, info);
	if ((unsigned long)w * h > DECODE_MAX_PIXELS)
		png_error(png, "image too large");
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (png_get_valid(png, info, PNG_INFO_tRNS))
		png_set_tRNS_to_alpha(png);
	if (depth == 16)
		png_set_strip_16(png);
	if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA)
		png_set_gray_to_rgb(png);
	png_set_bgr(png);
	png_set_filler(png, 0xff, PNG_FILLER_AFTER);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)w * 4)
		png_error(png, "unexpected row layout after conversion");

	img = os_image_create((int)w, (int)h);
	if (img == NULL)
		png_error(png, "out of memory");
	rows = malloc(sizeof(*rows) * h);
	if (rows == NULL)
		png_error(png, "out of memory");
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = img->pixels + (size_t)y * (size_t)img->stride;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	return img;
}

os_image *os_png_read_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		os_fail("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	os_image *img = NULL;
	uint8_t *buf = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		os_fail("cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		os_fail("cannot read %s: not a regular file", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > DECODE_MAX_FILE) {
		os_fail("cannot read %s: larger than %lu bytes", path, DECODE_MAX_FILE);
		goto out;
	}
	size_t len = 0;
	buf = (uint8_t *)base_read_fd(fd, DECODE_MAX_FILE, &len);
	if (buf == NULL) {
		if (errno == EFBIG)
			os_fail("cannot read %s: larger than %lu bytes", path, DECODE_MAX_FILE);
		else
			os_fail("cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	img = os_png_decode(buf, len);
	if (img == NULL) {
		char why[sizeof(base_error_text)];
		snprintf(why, sizeof(why), "%s", os_error());
		os_fail("%s: %s", path, why);
	}
out:
	free(buf);
	close(fd);
	return img;
}
