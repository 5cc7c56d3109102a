/*
 * Unit tests for os/ capture helpers that need no X server: PNG encoding
 * (read back both through os_png_decode and independently through libpng's
 * simplified API), PNG decoding of every colour type and of broken input,
 * atomic file writes, and the conversion of server pixel layouts to BGRX.
 */
#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/os.h"
#include "tests/lib/testfs.h"

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/* An image with random pixels (some runs, like text) and a padded stride. */
static os_image *random_image(int w, int h, int pad)
{
	os_image *img = calloc(1, sizeof(*img));
	assert_non_null(img);
	img->width = w;
	img->height = h;
	img->stride = w * 4 + pad;
	img->pixels = malloc((size_t)img->stride * (size_t)h);
	assert_non_null(img->pixels);
	memset(img->pixels, 0xaa, (size_t)img->stride * (size_t)h);
	for (int y = 0; y < h; y++) {
		uint8_t *row = img->pixels + (size_t)y * (size_t)img->stride;
		for (int x = 0; x < w; x++) {
			uint32_t r = rng();
			if (x > 0 && (r & 3) == 0) {
				memcpy(row + x * 4, row + (x - 1) * 4, 4);
				continue;
			}
			row[x * 4 + 0] = (uint8_t)r;
			row[x * 4 + 1] = (uint8_t)(r >> 8);
			row[x * 4 + 2] = (uint8_t)(r >> 16);
			row[x * 4 + 3] = (uint8_t)(rng() >> 3);
		}
	}
	return img;
}

static void free_image(os_image *img)
{
	free(img->pixels);
	free(img);
}

static void assert_same_rgb(const os_image *a, const os_image *b)
{
	assert_int_equal(a->width, b->width);
	assert_int_equal(a->height, b->height);
	for (int y = 0; y < a->height; y++)
		for (int x = 0; x < a->width; x++) {
			const uint8_t *pa = a->pixels + (size_t)y * (size_t)a->stride + x * 4;
			const uint8_t *pb = b->pixels + (size_t)y * (size_t)b->stride + x * 4;
			if (memcmp(pa, pb, 3) != 0)
				fail_msg("pixel %d,%d differs: %02x%02x%02x vs %02x%02x%02x",
				         x, y, pa[2], pa[1], pa[0], pb[2], pb[1], pb[0]);
		}
}

/* Decodes with libpng's simplified API as an independent check: RGB out. */
static void assert_libpng_reads(const uint8_t *png, size_t len,
                                const os_image *src)
{
	png_image pi;
	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_memory(&pi, png, len));
	assert_int_equal(pi.width, (png_uint_32)src->width);
	assert_int_equal(pi.height, (png_uint_32)src->height);
	assert_int_equal(pi.format, PNG_FORMAT_RGB);
	pi.format = PNG_FORMAT_RGB;
	uint8_t *buf = malloc(PNG_IMAGE_SIZE(pi));
	assert_non_null(buf);
	assert_true(png_image_finish_read(&pi, NULL, buf, 0, NULL));
	for (int y = 0; y < src->height; y++)
		for (int x = 0; x < src->width; x++) {
			const uint8_t *s = src->pixels + (size_t)y * (size_t)src->stride + x * 4;
			const uint8_t *d = buf + ((size_t)y * (size_t)src->width + (size_t)x) * 3;
			if (d[0] != s[2] || d[1] != s[1] || d[2] != s[0])
				fail_msg("libpng reads pixel %d,%d differently", x, y);
		}
	free(buf);
}

static void roundtrip(int w, int h, int pad, const os_png_options *opt)
{
	os_image *img = random_image(w, h, pad);
	uint8_t *png = NULL;
	size_t len = 0;
	assert_true(os_png_encode(img, &png, &len, opt));
	assert_true(len > 8);
	assert_libpng_reads(png, len, img);
	os_image *back = os_png_decode(png, len);
	assert_non_null(back);
	assert_int_equal(back->stride, back->width * 4);
	assert_same_rgb(img, back);
	os_image_destroy(back);
	free(png);
	free_image(img);
}

static void test_png_roundtrip_sizes(void **state)
{
	(void)state;
	static const int sizes[][2] = {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {17, 5},
	                               {641, 13}, {1023, 7}, {5, 300},
	                               {1000, 700}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		roundtrip(sizes[i][0], sizes[i][1], 0, NULL);
}

static void test_png_roundtrip_padded_stride(void **state)
{
	(void)state;
	roundtrip(1, 1, 4, NULL);
	roundtrip(33, 9, 12, NULL);
	roundtrip(640, 20, 256, NULL);
}

static void test_png_every_level_and_filter(void **state)
{
	(void)state;
	static const int filters[] = {OS_PNG_FILTER_NONE, OS_PNG_FILTER_SUB,
	                              OS_PNG_FILTER_UP, OS_PNG_FILTER_AVG,
	                              OS_PNG_FILTER_PAETH, OS_PNG_FILTER_ALL,
	                              OS_PNG_FILTER_UP | OS_PNG_FILTER_SUB};
	for (int level = 0; level <= 9; level++)
		for (size_t f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
			os_png_options opt = {level, filters[f]};
			roundtrip(37, 11, 8, &opt);
		}
	os_png_options defaults = {-1, -1};
	roundtrip(37, 11, 0, &defaults);
	/* Many bands (each primed with the previous one's tail), through
	 * both back ends, on mostly incompressible pixels: the output
	 * buffers have to grow. */
	for (int level = 0; level <= 9; level += 3) {
		os_png_options opt = {level, -1};
		roundtrip(700, 400, 4, &opt);
	}
}

static void test_png_bad_options(void **state)
{
	(void)state;
	os_image *img = random_image(4, 4, 0);
	uint8_t *png = (uint8_t *)"untouched";
	size_t len = 0;
	os_png_options opt = {10, -1};
	assert_false(os_png_encode(img, &png, &len, &opt));
	assert_non_null(strstr(os_error(), "level 10"));
	assert_string_equal((const char *)png, "untouched");
	opt = (os_png_options){-1, 0x3};
	assert_false(os_png_encode(img, &png, &len, &opt));
	assert_non_null(strstr(os_error(), "filter"));
	opt = (os_png_options){-2, -1};
	assert_false(os_png_encode(img, &png, &len, &opt));
	free_image(img);
}

static void test_png_bad_image(void **state)
{
	(void)state;
	uint8_t px[64] = {0};
	uint8_t *png = NULL;
	size_t len = 0;
	os_image img = {px, 0, 1, 4};
	assert_false(os_png_encode(&img, &png, &len, NULL));
	assert_non_null(strstr(os_error(), "not a valid image"));
	img = (os_image){px, 4, 1, 8};  /* stride shorter than a row */
	assert_false(os_png_encode(&img, &png, &len, NULL));
	img = (os_image){NULL, 1, 1, 4};
	assert_false(os_png_encode(&img, &png, &len, NULL));
	img = (os_image){px, 16385, 1, 16385 * 4};  /* refused before reading */
	assert_false(os_png_encode(&img, &png, &len, NULL));
	assert_non_null(strstr(os_error(), "too large"));
	assert_false(os_png_encode(NULL, &png, &len, NULL));
	assert_false(os_png_write_fd(&img, -1, NULL));
}

/* Writes a PNG with libpng's low-level API (any type, depth, interlace). */
struct membuf {
	uint8_t *data;
	size_t len;
};

static void membuf_write(png_structp png, png_bytep p, size_t n)
{
	struct membuf *m = png_get_io_ptr(png);
	m->data = realloc(m->data, m->len + n);
	memcpy(m->data + m->len, p, n);
	m->len += n;
}

static void membuf_flush(png_structp png)
{
	(void)png;
}

static struct membuf write_png(int w, int h, int depth, int type, int interlace,
                               const uint8_t *rows, size_t rowbytes,
                               const png_color *palette, int npal,
                               const uint8_t *trns, int ntrns)
{
	struct membuf m = {NULL, 0};
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL,
	                                          NULL, NULL);
	png_infop info = png_create_info_struct(png);
	assert_false(setjmp(png_jmpbuf(png)));
	png_set_write_fn(png, &m, membuf_write, membuf_flush);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, type,
	             interlace, PNG_COMPRESSION_TYPE_DEFAULT,
	             PNG_FILTER_TYPE_DEFAULT);
	if (palette != NULL)
		png_set_PLTE(png, info, palette, npal);
	if (trns != NULL)
		png_set_tRNS(png, info, trns, ntrns, NULL);
	png_write_info(png, info);
	png_bytep *rp = malloc(sizeof(*rp) * (size_t)h);
	for (int y = 0; y < h; y++)
		rp[y] = (png_bytep)rows + (size_t)y * rowbytes;
	png_write_image(png, rp);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(rp);
	return m;
}

static void assert_pixel(const os_image *img, int x, int y, uint8_t r,
                         uint8_t g, uint8_t b)
{
	const uint8_t *p = img->pixels + (size_t)y * (size_t)img->stride + x * 4;
	if (p[0] != b || p[1] != g || p[2] != r)
		fail_msg("pixel %d,%d is %02x%02x%02x, expected %02x%02x%02x", x, y,
		         p[2], p[1], p[0], r, g, b);
}

static void test_png_decode_color_types(void **state)
{
	(void)state;
	/* 8-bit gray */
	uint8_t gray[6] = {0, 128, 255, 1, 2, 3};
	struct membuf m = write_png(3, 2, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
	                            gray, 3, NULL, 0, NULL, 0);
	os_image *img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	assert_pixel(img, 1, 0, 128, 128, 128);
	assert_pixel(img, 2, 1, 3, 3, 3);
	os_image_destroy(img);
	free(m.data);

	/* 1-bit gray */
	uint8_t bits[2] = {0xa0, 0x40};
	m = write_png(3, 2, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, bits, 1,
	              NULL, 0, NULL, 0);
	img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	assert_pixel(img, 0, 0, 255, 255, 255);
	assert_pixel(img, 1, 0, 0, 0, 0);
	assert_pixel(img, 1, 1, 255, 255, 255);
	os_image_destroy(img);
	free(m.data);

	/* palette with transparency */
	png_color pal[3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}};
	uint8_t trns[3] = {255, 0, 128};
	uint8_t idx[4] = {0, 1, 2, 1};
	m = write_png(2, 2, 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, idx, 2,
	              pal, 3, trns, 3);
	img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	assert_pixel(img, 0, 0, 255, 0, 0);
	assert_pixel(img, 1, 0, 0, 255, 0);
	assert_pixel(img, 0, 1, 0, 0, 255);
	assert_int_equal(img->pixels[img->stride + 3], 128); /* alpha kept */
	os_image_destroy(img);
	free(m.data);

	/* RGBA and 16-bit RGB */
	uint8_t rgba[8] = {10, 20, 30, 40, 50, 60, 70, 80};
	m = write_png(2, 1, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, rgba, 8,
	              NULL, 0, NULL, 0);
	img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	assert_pixel(img, 1, 0, 50, 60, 70);
	os_image_destroy(img);
	free(m.data);
	uint8_t rgb16[6] = {0x12, 0x34, 0xab, 0xcd, 0xff, 0xff};
	m = write_png(1, 1, 16, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, rgb16, 6,
	              NULL, 0, NULL, 0);
	img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	assert_pixel(img, 0, 0, 0x12, 0xab, 0xff);
	os_image_destroy(img);
	free(m.data);

	/* gray + alpha, interlaced, odd size */
	uint8_t ga[7 * 5 * 2];
	for (size_t i = 0; i < sizeof(ga); i++)
		ga[i] = (uint8_t)(i * 7);
	m = write_png(7, 5, 8, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_INTERLACE_ADAM7, ga,
	              14, NULL, 0, NULL, 0);
	img = os_png_decode(m.data, m.len);
	assert_non_null(img);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 7; x++) {
			uint8_t v = ga[y * 14 + x * 2];
			assert_pixel(img, x, y, v, v, v);
		}
	os_image_destroy(img);
	free(m.data);
}

static void test_png_decode_broken(void **state)
{
	(void)state;
	os_image *img = random_image(50, 20, 0);
	uint8_t *png = NULL;
	size_t len = 0;
	assert_true(os_png_encode(img, &png, &len, NULL));
	free_image(img);

	assert_null(os_png_decode(NULL, 0));
	assert_null(os_png_decode((const uint8_t *)"GIF89a....", 10));
	assert_non_null(strstr(os_error(), "not a PNG"));
	/* Every truncation fails cleanly (the end chunk is optional to libpng). */
	for (size_t cut = 8; cut + 12 < len; cut += 7) {
		uint8_t *part = malloc(cut);
		memcpy(part, png, cut);
		os_image *out = os_png_decode(part, cut);
		assert_null(out);
		assert_non_null(strstr(os_error(), "cannot decode PNG"));
		free(part);
	}
	/* A flipped bit in the image data breaks the chunk's CRC. */
	uint8_t *bad = malloc(len);
	memcpy(bad, png, len);
	bad[len / 2] ^= 0x10;
	assert_null(os_png_decode(bad, len));
	/* An absurd size in the header is refused before any allocation. */
	memcpy(bad, png, len);
	bad[16] = 0x7f; /* width's top byte */
	assert_null(os_png_decode(bad, len));
	free(bad);
	free(png);
}

static void test_png_write_file(void **state)
{
	(void)state;
	char *dir = testfs_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/shot.png", dir);
	os_image *img = random_image(31, 17, 4);
	assert_true(os_png_write_file(img, path, NULL));
	os_image *back = os_png_read_file(path);
	assert_non_null(back);
	assert_same_rgb(img, back);
	os_image_destroy(back);
	assert_int_equal(testfs_count(dir), 1);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	mode_t um = umask(022);
	umask(um);
	assert_int_equal(st.st_mode & 0777, 0666 & ~um);

	/* A failure (here: an invalid image) leaves the old file untouched. */
	os_image broken = {img->pixels, 31, 17, 3};
	assert_false(os_png_write_file(&broken, path, NULL));
	assert_non_null(strstr(os_error(), path));
	assert_int_equal(testfs_count(dir), 1);
	back = os_png_read_file(path);
	assert_non_null(back);
	assert_same_rgb(img, back);
	os_image_destroy(back);

	/* A directory that does not exist: clear message, nothing created. */
	char missing[4300];
	snprintf(missing, sizeof(missing), "%s/no/such/dir/x.png", dir);
	assert_false(os_png_write_file(img, missing, NULL));
	assert_non_null(strstr(os_error(), "No such file or directory"));
	assert_false(os_png_write_file(img, "", NULL));
	snprintf(missing, sizeof(missing), "%s/", dir);
	assert_false(os_png_write_file(img, missing, NULL));
	assert_non_null(strstr(os_error(), "not a file name"));
	/* Renaming over a directory fails and removes the temporary file. */
	char sub[4300];
	snprintf(sub, sizeof(sub), "%s/adir", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_false(os_png_write_file(img, sub, NULL));
	assert_int_equal(testfs_count(dir), 2);

	/* Reading: missing file, a directory, not a PNG. */
	assert_null(os_png_read_file(missing));
	assert_null(os_png_read_file(sub));
	assert_non_null(strstr(os_error(), "not a regular file"));
	snprintf(missing, sizeof(missing), "%s/text.png", dir);
	FILE *f = fopen(missing, "w");
	fputs("hello", f);
	fclose(f);
	assert_null(os_png_read_file(missing));
	assert_non_null(strstr(os_error(), "not a PNG"));

	unlink(missing);
	rmdir(sub);
	unlink(path);
	rmdir(dir);
	free(dir);
	free_image(img);
}

/* ---- pixel conversion ---------------------------------------------- */

static void convert_one(const uint8_t *src, int bpp, bool msb, uint32_t rm,
                        uint32_t gm, uint32_t bm, uint8_t r, uint8_t g,
                        uint8_t b)
{
	/* Unaligned source and destination on purpose. */
	uint8_t sbuf[16] = {0}, dbuf[16];
	memcpy(sbuf + 1, src, (size_t)bpp / 8);
	memset(dbuf, 0x55, sizeof(dbuf));
	os_pixels_convert_row(sbuf + 1, dbuf + 1, 1, bpp, msb, rm, gm, bm);
	if (dbuf[1] != b || dbuf[2] != g || dbuf[3] != r)
		fail_msg("bpp %d msb %d masks %x/%x/%x: got %02x%02x%02x, expected "
		         "%02x%02x%02x", bpp, msb, rm, gm, bm, dbuf[3], dbuf[2],
		         dbuf[1], r, g, b);
	assert_int_equal(dbuf[5], 0x55); /* nothing written past the pixel */
}

static void test_convert_32(void **state)
{
	(void)state;
	/* BGRX: the identity */
	convert_one((const uint8_t[]){0x30, 0x20, 0x10, 0x00}, 32, false,
	            0xff0000, 0xff00, 0xff, 0x10, 0x20, 0x30);
	/* the same masks with MSB-first byte order: X R G B in memory */
	convert_one((const uint8_t[]){0x00, 0x10, 0x20, 0x30}, 32, true,
	            0xff0000, 0xff00, 0xff, 0x10, 0x20, 0x30);
	/* RGBX in memory (red in the low byte), LSB */
	convert_one((const uint8_t[]){0x10, 0x20, 0x30, 0x99}, 32, false,
	            0xff, 0xff00, 0xff0000, 0x10, 0x20, 0x30);
	/* channels in the top three bytes, MSB: R G B X in memory */
	convert_one((const uint8_t[]){0x10, 0x20, 0x30, 0x99}, 32, true,
	            0xff000000, 0xff0000, 0xff00, 0x10, 0x20, 0x30);
	/* the same masks LSB: X B G R in memory */
	convert_one((const uint8_t[]){0x99, 0x30, 0x20, 0x10}, 32, false,
	            0xff000000, 0xff0000, 0xff00, 0x10, 0x20, 0x30);
	/* 10-bit channels (depth 30): top 8 bits */
	uint32_t v = 0x3ffu << 20 | 0x200u << 10 | 0x004u;
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
	                 (uint8_t)(v >> 24)};
	convert_one(le, 32, false, 0x3ff00000, 0xffc00, 0x3ff, 0xff, 0x80, 0x01);
}

static void test_convert_24(void **state)
{
	(void)state;
	convert_one((const uint8_t[]){0x30, 0x20, 0x10}, 24, false, 0xff0000,
	            0xff00, 0xff, 0x10, 0x20, 0x30);
	convert_one((const uint8_t[]){0x10, 0x20, 0x30}, 24, true, 0xff0000,
	            0xff00, 0xff, 0x10, 0x20, 0x30);
	convert_one((const uint8_t[]){0x10, 0x20, 0x30}, 24, false, 0xff,
	            0xff00, 0xff0000, 0x10, 0x20, 0x30);
	convert_one((const uint8_t[]){0x30, 0x20, 0x10}, 24, true, 0xff,
	            0xff00, 0xff0000, 0x10, 0x20, 0x30);
}

static void test_convert_16(void **state)
{
	(void)state;
	/* 5-6-5, both byte orders; 5 bits scale 31 -> 255, 16 -> 132 */
	convert_one((const uint8_t[]){0x00, 0xf8}, 16, false, 0xf800, 0x7e0, 0x1f,
	            0xff, 0, 0);
	convert_one((const uint8_t[]){0xf8, 0x00}, 16, true, 0xf800, 0x7e0, 0x1f,
	            0xff, 0, 0);
	convert_one((const uint8_t[]){0x10, 0x84}, 16, false, 0xf800, 0x7e0, 0x1f,
	            132, 130, 132);
	convert_one((const uint8_t[]){0x84, 0x10}, 16, true, 0xf800, 0x7e0, 0x1f,
	            132, 130, 132);
	/* 5-5-5 (depth 15) */
	convert_one((const uint8_t[]){0xff, 0x7f}, 16, false, 0x7c00, 0x3e0, 0x1f,
	            0xff, 0xff, 0xff);
	convert_one((const uint8_t[]){0x01, 0x00}, 16, false, 0x7c00, 0x3e0, 0x1f,
	            0, 0, 8);
}

static void test_convert_rows(void **state)
{
	(void)state;
	/* A long odd row through the fast path and the shifting path agree. */
	enum { W = 333 };
	uint8_t src[W * 4], fast[W * 4], swapped[W * 4], out[W * 4];
	for (int i = 0; i < W * 4; i++)
		src[i] = (uint8_t)rng();
	os_pixels_convert_row(src, fast, W, 32, false, 0xff0000, 0xff00, 0xff);
	for (int i = 0; i < W; i++) {
		assert_memory_equal(fast + i * 4, src + i * 4, 3);
		for (int k = 0; k < 4; k++)
			swapped[i * 4 + k] = src[i * 4 + 3 - k];
	}
	os_pixels_convert_row(swapped, out, W, 32, true, 0xff0000, 0xff00, 0xff);
	for (int i = 0; i < W; i++)
		assert_memory_equal(out + i * 4, src + i * 4, 3);
	/* Unsupported depth: zeros, never garbage. */
	memset(out, 0x77, sizeof(out));
	os_pixels_convert_row(src, out, 3, 8, false, 0, 0, 0);
	for (int i = 0; i < 12; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(out[12], 0x77);
	os_pixels_convert_row(src, out, 0, 32, false, 0xff0000, 0xff00, 0xff);
}

static void test_image_create(void **state)
{
	(void)state;
	os_image *img = os_image_create(3, 2);
	assert_non_null(img);
	assert_int_equal(img->stride, 12);
	for (int i = 0; i < 24; i++)
		assert_int_equal(img->pixels[i], 0);
	os_image_destroy(img);
	os_image_destroy(NULL);
	assert_null(os_image_create(0, 5));
	assert_null(os_image_create(5, -1));
	assert_null(os_image_create(1 << 30, 1 << 30));
	assert_non_null(strstr(os_error(), "bad image size"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_roundtrip_sizes),
		cmocka_unit_test(test_png_roundtrip_padded_stride),
		cmocka_unit_test(test_png_every_level_and_filter),
		cmocka_unit_test(test_png_bad_options),
		cmocka_unit_test(test_png_bad_image),
		cmocka_unit_test(test_png_decode_color_types),
		cmocka_unit_test(test_png_decode_broken),
		cmocka_unit_test(test_png_write_file),
		cmocka_unit_test(test_convert_32),
		cmocka_unit_test(test_convert_24),
		cmocka_unit_test(test_convert_16),
		cmocka_unit_test(test_convert_rows),
		cmocka_unit_test(test_image_create),
	};
	return cmocka_run_group_tests_name("capture", tests, NULL, NULL);
}
