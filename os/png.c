/*
 * PNG encoding and decoding through libpng, tuned for screen content.
 *
 * Encoding feeds the BGRX rows of an os_image straight to libpng
 * (png_set_bgr + png_set_filler strips the X byte while filtering), so no
 * copy of the image is ever made. Every libpng error longjmps back into the
 * function that started the work, which frees what it allocated and
 * reports the message through os_error(); warnings are dropped (library
 * code never prints).
 *
 * DEFAULT_LEVEL / DEFAULT_FILTER: see the measurements above their
 * definition.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "os/os-internal.h"

_Static_assert(OS_PNG_FILTER_NONE == PNG_FILTER_NONE, "filter bits");
_Static_assert(OS_PNG_FILTER_SUB == PNG_FILTER_SUB, "filter bits");
_Static_assert(OS_PNG_FILTER_UP == PNG_FILTER_UP, "filter bits");
_Static_assert(OS_PNG_FILTER_AVG == PNG_FILTER_AVG, "filter bits");
_Static_assert(OS_PNG_FILTER_PAETH == PNG_FILTER_PAETH, "filter bits");

/*
 * Measured with bench/screenshot-cost on a busy 1920x1080 desktop (plasma
 * wallpaper, six xterms full of text); see the table in bench/README.
 */
#define DEFAULT_LEVEL 1
#define DEFAULT_FILTER PNG_FILTER_UP
#define DEFAULT_STRATEGY Z_DEFAULT_STRATEGY

/* Decoding refuses images above this many pixels (a 16k x 16k screen). */
#define DECODE_MAX_PIXELS (16384ul * 16384ul)
#define DECODE_MAX_FILE (1ul << 30)

/* Where libpng's bytes go: a file descriptor or a growing buffer. */
struct sink {
	int fd;                 /* -1: memory */
	uint8_t *buf;
	size_t len, cap;
	int write_errno;        /* set before png_error on a failed write */
};

/* Per-call context for libpng's error callback. */
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

static void sink_write(png_structp png, png_bytep data, size_t n)
{
	struct sink *s = png_get_io_ptr(png);
	if (s->fd >= 0) {
		while (n > 0) {
			ssize_t w = write(s->fd, data, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				s->write_errno = w < 0 ? errno : EIO;
				png_error(png, "write failed");
			}
			data += w;
			n -= (size_t)w;
		}
		return;
	}
	if (n > s->cap - s->len) {
		size_t cap = s->cap ? s->cap : 65536;
		while (cap - s->len < n) {
			if (cap > SIZE_MAX / 2)
				png_error(png, "out of memory");
			cap *= 2;
		}
		uint8_t *p = realloc(s->buf, cap);
		if (p == NULL)
			png_error(png, "out of memory");
		s->buf = p;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
}

static void sink_flush(png_structp png)
{
	(void)png;
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
	    img->height <= 0 || img->width > INT_MAX / 4 ||
	    img->stride < img->width * 4)
		return os_fail("not a valid image (%dx%d, stride %d)",
		               img ? img->width : 0, img ? img->height : 0,
		               img ? img->stride : 0);
	if ((unsigned long)img->width > PNG_UINT_31_MAX ||
	    (unsigned long)img->height > PNG_UINT_31_MAX)
		return os_fail("image too large for PNG");
	return true;
}

static bool encode(const os_image *img, struct sink *sink,
                   const os_png_options *opt)
{
	int level, filter;
	if (!image_valid(img) || !options_resolve(opt, &level, &filter))
		return false;
	struct png_ctx ctx = {{0}};
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx,
	                                          png_error_fn, png_warning_fn);
	if (png == NULL)
		return os_fail("PNG: cannot create the encoder (out of memory)");
	png_infop info = png_create_info_struct(png);
	if (info == NULL) {
		png_destroy_write_struct(&png, NULL);
		return os_fail("PNG: cannot create the encoder (out of memory)");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		if (sink->write_errno != 0)
			return os_fail("cannot write PNG: %s",
			               strerror(sink->write_errno));
		return os_fail("PNG encoding failed: %s", ctx.message);
	}
	png_set_write_fn(png, sink, sink_write, sink_flush);
	png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height,
	             8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_compression_level(png, level);
	png_set_compression_strategy(png, DEFAULT_STRATEGY);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, filter);
	/* Bigger IDAT chunks: fewer write calls and chunk headers. */
	png_set_compression_buffer_size(png, 256 * 1024);
	png_write_info(png, info);
	png_set_bgr(png);
	png_set_filler(png, 0, PNG_FILLER_AFTER);
	for (int y = 0; y < img->height; y++)
		png_write_row(png, img->pixels + (size_t)y * (size_t)img->stride);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	return true;
}

bool os_png_encode(const os_image *img, uint8_t **out, size_t *out_len,
                   const os_png_options *opt)
{
	struct sink sink = {.fd = -1};
	if (!encode(img, &sink, opt)) {
		free(sink.buf);
		return false;
	}
	*out = sink.buf;
	*out_len = sink.len;
	return true;
}

bool os_png_write_fd(const os_image *img, int fd, const os_png_options *opt)
{
	if (fd < 0)
		return os_fail("cannot write PNG: bad file descriptor %d", fd);
	struct sink sink = {.fd = fd};
	return encode(img, &sink, opt);
}

/*
 * Opens a new file next to `path` (same directory, so rename is atomic)
 * named ".BASE.XXXXXXXX", mode 0666 less the umask like any new file.
 * *tmp is malloc'ed.
 */
static int temp_open(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	if (base[0] == '\0') {
		os_fail("cannot write PNG to %s: not a file name", path);
		return -1;
	}
	size_t n = dirlen + strlen(base) + 16;
	char *name = malloc(n);
	if (name == NULL) {
		os_fail("out of memory");
		return -1;
	}
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz234567";
	for (int attempt = 0; attempt < 64; attempt++) {
		uint8_t rnd[8];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			for (size_t i = 0; i < sizeof(rnd); i++)
				rnd[i] = (uint8_t)(rand() ^ getpid() ^ attempt);
		}
		char suffix[9];
		for (size_t i = 0; i < 8; i++)
			suffix[i] = digits[rnd[i] & 31];
		suffix[8] = '\0';
		snprintf(name, n, "%.*s.%s.%s", (int)dirlen, path, base, suffix);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*tmp = name;
			return fd;
		}
		if (errno != EEXIST) {
			int e = errno;
			if (dirlen == 0)
				os_fail("cannot write PNG to %s: cannot create a file in the "
				        "current directory: %s", path, strerror(e));
			else
				os_fail("cannot write PNG to %s: cannot create a file in "
				        "%.*s: %s", path, (int)dirlen, path, strerror(e));
			free(name);
			return -1;
		}
	}
	os_fail("cannot write PNG to %s: no free temporary name", path);
	free(name);
	return -1;
}

/*
 * Readers see either the old file or the whole new one, never a partial
 * PNG. No fsync: a screenshot is not worth a disk flush per capture, and
 * a crash may lose the new file but never leaves a torn one in its place.
 */
bool os_png_write_file(const os_image *img, const char *path,
                       const os_png_options *opt)
{
	if (path == NULL || path[0] == '\0')
		return os_fail("cannot write PNG: empty file name");
	char *tmp = NULL;
	int fd = temp_open(path, &tmp);
	if (fd < 0)
		return false;
	struct sink sink = {.fd = fd};
	if (!encode(img, &sink, opt)) {
		char why[512];
		snprintf(why, sizeof(why), "%s", os_error());
		os_fail("%s: %s", path, why);
		goto err_close;
	}
	if (close(fd) != 0) {
		fd = -1;
		os_fail("cannot write PNG to %s: %s", path, strerror(errno));
		goto err_unlink;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		os_fail("cannot write PNG to %s: %s", path, strerror(errno));
		goto err_unlink;
	}
	free(tmp);
	return true;

err_close:
	close(fd);
err_unlink:
	unlink(tmp);
	free(tmp);
	return false;
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
	size_t len = (size_t)st.st_size, got = 0;
	buf = malloc(len ? len : 1);
	if (buf == NULL) {
		os_fail("out of memory");
		goto out;
	}
	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			os_fail("cannot read %s: %s", path,
			        r < 0 ? strerror(errno) : "file shrank while reading");
			goto out;
		}
		got += (size_t)r;
	}
	img = os_png_decode(buf, len);
	if (img == NULL) {
		char why[512];
		snprintf(why, sizeof(why), "%s", os_error());
		os_fail("%s: %s", path, why);
	}
out:
	free(buf);
	close(fd);
	return img;
}
