/*
 * Unit tests for vision/: fitting, coordinate mapping both ways, the
 * area-averaging scaler against an exact double-precision reference (PSNR),
 * crops, hashing, monitor choice, preview and grid drawing. No X server.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vision/vision-internal.h"

/* ---- helpers ---------------------------------------------------------- */

static uint32_t rng_state = 12345;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static uint8_t *px(const os_image *img, int x, int y)
{
	return img->pixels + (size_t)y * img->stride + (size_t)x * 4;
}

static void fill(os_image *img, uint8_t r, uint8_t g, uint8_t b)
{
	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++) {
			uint8_t *p = px(img, x, y);
			p[0] = b, p[1] = g, p[2] = r, p[3] = 0;
		}
}

/* Something like a desktop: gradients, flat panels, sharp edges, text-like
 * noise in small blocks. */
static os_image *busy_image(int w, int h)
{
	os_image *img = os_image_create(w, h);
	assert_non_null(img);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = px(img, x, y);
			int panel = ((x / 97) + (y / 61)) % 5;
			if (panel == 0) {
				p[0] = (uint8_t)(x * 255 / w);
				p[1] = (uint8_t)(y * 255 / h);
				p[2] = (uint8_t)((x + y) & 255);
			} else if (panel == 1) {
				p[0] = p[1] = p[2] = 240;
			} else if (panel == 2) {
				uint8_t v = (rnd() & 1) ? 20 : 230;  /* glyph-like noise */
				p[0] = p[1] = p[2] = v;
			} else if (panel == 3) {
				p[0] = 200, p[1] = 120, p[2] = 40;
			} else {
				p[0] = (uint8_t)rnd(), p[1] = (uint8_t)rnd(), p[2] = (uint8_t)rnd();
			}
			p[3] = 0;
		}
	return img;
}

/* Exact area average in double precision: the reference resize. */
static double *reference_resize(const os_image *src, int ow, int oh)
{
	double *out = calloc((size_t)ow * oh * 3, sizeof(double));
	assert_non_null(out);
	double sx = (double)src->width / ow, sy = (double)src->height / oh;
	for (int oy = 0; oy < oh; oy++) {
		double y0 = oy * sy, y1 = (oy + 1) * sy;
		for (int ox = 0; ox < ow; ox++) {
			double x0 = ox * sx, x1 = (ox + 1) * sx;
			double acc[3] = {0, 0, 0}, area = 0;
			for (int y = (int)floor(y0); y < (int)ceil(y1) && y < src->height; y++) {
				double wy = fmin(y + 1, y1) - fmax(y, y0);
				if (wy <= 0)
					continue;
				for (int x = (int)floor(x0); x < (int)ceil(x1) && x < src->width; x++) {
					double wx = fmin(x + 1, x1) - fmax(x, x0);
					if (wx <= 0)
						continue;
					const uint8_t *p = px(src, x, y);
					for (int c = 0; c < 3; c++)
						acc[c] += p[c] * wx * wy;
					area += wx * wy;
				}
			}
			for (int c = 0; c < 3; c++)
				out[((size_t)oy * ow + ox) * 3 + c] = acc[c] / area;
		}
	}
	return out;
}

static double psnr(const os_image *img, const double *ref)
{
	double se = 0;
	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++)
			for (int c = 0; c < 3; c++) {
				double d = px(img, x, y)[c] - ref[((size_t)y * img->width + x) * 3 + c];
				se += d * d;
			}
	double mse = se / ((double)img->width * img->height * 3);
	return mse < 1e-9 ? 99.0 : 10 * log10(255.0 * 255.0 / mse);
}

/* ---- fit -------------------------------------------------------------- */

static void test_fit_known_sizes(void **state)
{
	(void)state;
	static const int cases[][6] = {
		{1920, 1080, 1280, 800, 1280, 720},
		{1920, 1200, 1280, 800, 1280, 800},
		{3840, 2160, 1280, 800, 1280, 720},
		{1366, 768, 1280, 800, 1280, 720},
		{800, 600, 1280, 800, 800, 600},
		{1280, 800, 1280, 800, 1280, 800},
		{2560, 1440, 1280, 800, 1280, 720},
		{5120, 1440, 1280, 800, 1280, 360},
		{1080, 1920, 1280, 800, 450, 800},
		{1920, 1080, 1024, 768, 1024, 576},
		{1920, 1080, 1280, 1280, 1280, 720},
		{100000, 1, 1280, 800, 1280, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int w, h;
		assert_true(vision_fit(cases[i][0], cases[i][1], cases[i][2], cases[i][3], &w, &h));
		assert_int_equal(w, cases[i][4]);
		assert_int_equal(h, cases[i][5]);
	}
	int w, h;
	assert_true(vision_fit_side(1920, 1080, 1000, &w, &h));
	assert_int_equal(w, 1000);
	assert_int_equal(h, 563);
	assert_false(vision_fit(0, 1080, 1280, 800, &w, &h));
	assert_non_null(strstr(vision_error(), "invalid screen size"));
	assert_false(vision_fit(1920, 1080, 1280, -1, &w, &h));
	assert_non_null(strstr(vision_error(), "invalid maximum size"));
}

static void test_fit_many_sizes(void **state)
{
	(void)state;
	for (int sw = 200; sw <= 8000; sw += 37)
		for (int sh = 150; sh <= 5000; sh += 53) {
			int mw, mh;
			assert_true(vision_fit(sw, sh, 1280, 800, &mw, &mh));
			assert_true(mw >= 1 && mh >= 1 && mw <= 1280 && mh <= 800);
			assert_true(mw <= sw && mh <= sh);  /* never enlarges */
			/* one side binds, the other is the exact ratio rounded */
			if (sw <= 1280 && sh <= 800) {
				assert_int_equal(mw, sw);
				assert_int_equal(mh, sh);
			} else if (mw == 1280) {
				assert_true(fabs(mh - (double)sh * 1280 / sw) <= 0.5 + 1e-9);
			} else {
				assert_int_equal(mh, 800);
				assert_true(fabs(mw - (double)sw * 800 / sh) <= 0.5 + 1e-9);
			}
		}
}

/* ---- mapping ---------------------------------------------------------- */

static void check_round_trips(int sw, int sh, int ox, int oy)
{
	vision_view v = {ox, oy, sw, sh, 0, 0, 0, 0};
	assert_true(vision_fit(sw, sh, 1280, 800, &v.model_w, &v.model_h));
	/* every model pixel on each axis (the axes are independent), and the
	 * diagonal pairs */
	int n = v.model_w > v.model_h ? v.model_w : v.model_h;
	for (int i = 0; i < n; i++) {
		int mx = i < v.model_w ? i : v.model_w - 1;
		int my = i < v.model_h ? i : v.model_h - 1;
		int sx, sy, bx, by;
		assert_true(vision_model_to_screen(&v, mx, my, &sx, &sy));
		assert_true(sx >= ox && sx < ox + sw && sy >= oy && sy < oy + sh);
		assert_true(vision_screen_to_model(&v, sx, sy, &bx, &by));
		assert_int_equal(bx, mx);
		assert_int_equal(by, my);
		/* within half a model pixel of the formula round(m*S/M) */
		double rx = round((double)mx * sw / v.model_w);
		assert_true(fabs((sx - ox) - rx) <= (double)sw / v.model_w / 2 + 1);
	}
	/* every screen pixel maps to a model pixel whose screen pixel is
	 * within one model pixel's span */
	for (int s = 0; s < sw; s++) {
		int mx, my, sx, sy;
		assert_true(vision_screen_to_model(&v, ox + s, oy, &mx, &my));
		assert_true(vision_model_to_screen(&v, mx, my, &sx, &sy));
		assert_true(abs(sx - (ox + s)) <= (sw + v.model_w - 1) / v.model_w);
	}
	/* outside the model image: an error, never clamped */
	int sx, sy;
	assert_false(vision_model_to_screen(&v, v.model_w, 0, &sx, &sy));
	assert_non_null(strstr(vision_error(), "outside the"));
	assert_false(vision_model_to_screen(&v, 0, -1, &sx, &sy));
	assert_false(vision_model_to_screen(&v, 0, v.model_h, &sx, &sy));
	/* a point off the monitor has no model coordinate */
	int mx, my;
	assert_false(vision_screen_to_model(&v, ox + sw, oy, &mx, &my));
	assert_non_null(strstr(vision_error(), "not on the monitor"));
	/* the whole image as a region is the whole monitor */
	os_rect r;
	assert_true(vision_model_rect_to_screen(&v, 0, 0, v.model_w, v.model_h, &r));
	assert_int_equal(r.x, ox);
	assert_int_equal(r.y, oy);
	assert_int_equal(r.width, sw);
	assert_int_equal(r.height, sh);
}

static void test_round_trips(void **state)
{
	(void)state;
	static const int sizes[][2] = {
		{800, 600}, {1366, 768}, {1920, 1080}, {1920, 1200}, {3840, 2160},
	};
	static const int origins[][2] = {{0, 0}, {1920, 0}, {1366, 312}, {0, 2160}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t j = 0; j < sizeof(origins) / sizeof(origins[0]); j++)
			check_round_trips(sizes[i][0], sizes[i][1], origins[j][0], origins[j][1]);
}

static void test_mapping_examples(void **state)
{
	(void)state;
	vision_view v = {1920, 0, 1920, 1080, 1280, 720};
	int sx, sy;
	assert_true(vision_model_to_screen(&v, 0, 0, &sx, &sy));
	assert_int_equal(sx, 1920);
	assert_int_equal(sy, 0);
	assert_true(vision_model_to_screen(&v, 640, 360, &sx, &sy));
	assert_int_equal(sx, 1920 + 960);
	assert_int_equal(sy, 540);
	assert_true(vision_model_to_screen(&v, 1279, 719, &sx, &sy));
	assert_int_equal(sx, 1920 + 1919);
	assert_int_equal(sy, 1079);
	/* 4K: the centre of the 3x3 block, not its corner */
	vision_view k = {0, 0, 3840, 2160, 1280, 720};
	assert_true(vision_model_to_screen(&k, 1, 1, &sx, &sy));
	assert_int_equal(sx, 4);
	assert_int_equal(sy, 4);
	/* an unscaled view is the identity plus the origin */
	vision_view u = {100, 50, 800, 600, 800, 600};
	for (int m = 0; m < 800; m++) {
		assert_true(vision_model_to_screen(&u, m, m % 600, &sx, &sy));
		assert_int_equal(sx, 100 + m);
		assert_int_equal(sy, 50 + m % 600);
	}
	/* no view yet */
	vision_view none = {0};
	assert_false(vision_model_to_screen(&none, 0, 0, &sx, &sy));
	assert_non_null(strstr(vision_error(), "no screenshot"));
	/* regions */
	os_rect r;
	assert_true(vision_model_rect_to_screen(&v, 100, 100, 101, 101, &r));
	assert_int_equal(r.x, 1920 + 150);
	assert_int_equal(r.y, 150);
	assert_int_equal(r.width, 2);
	assert_int_equal(r.height, 2);
	assert_false(vision_model_rect_to_screen(&v, 10, 10, 10, 20, &r));
	assert_false(vision_model_rect_to_screen(&v, 0, 0, 1281, 20, &r));
	assert_false(vision_model_rect_to_screen(&v, -1, 0, 20, 20, &r));
	assert_non_null(strstr(vision_error(), "region [-1,0,20,20]"));
}

/* Values from Qwen2-VL's own smart_resize (Python, round half to even). */
static void test_smart_resize(void **state)
{
	static const struct { int w, h; long min, max; int ow, oh; } cases[] = {
		{1920, 1080, 3136, 12845056, 1932, 1092},
		{1920, 1080, 3136, 1280 * 800, 1344, 756},
		{1366, 768, 3136, 1280 * 800, 1344, 756},
		{1050, 1050, 3136, 12845056, 1064, 1064}, /* 37.5 rounds to 38 */
		{1001, 733, 3136, 1280 * 800, 1008, 728},
		{20, 20, 3136, 1280 * 800, 56, 56},
		{1280, 800, 78400, 1280 * 800, 1260, 784},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int w = 0, h = 0;
		assert_true(vision_smart_resize(cases[i].w, cases[i].h, 28, cases[i].min,
		                                cases[i].max, &w, &h));
		assert_int_equal(w, cases[i].ow);
		assert_int_equal(h, cases[i].oh);
	}
	int w, h;
	assert_false(vision_smart_resize(10000, 40, 28, 3136, 12845056, &w, &h));
	assert_non_null(strstr(vision_error(), "aspect ratio"));
	assert_false(vision_smart_resize(0, 40, 28, 3136, 12845056, &w, &h));
}

/*
 * A relative grid (Gemini, Qwen3-VL: 0..999): the corners and the centre
 * land where x/1000 of the screen says, on odd sizes too, and every screen
 * pixel maps back to the grid cell that covers it.
 */
static void test_relative_grid(void **state)
{
	static const int sizes[][2] = {{1920, 1080}, {1366, 767}, {999, 1001}, {641, 479}, {3, 5}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int sw = sizes[i][0], sh = sizes[i][1];
		vision_view v = {7, 11, sw, sh, 0, 0, 1000, 1000};
		assert_true(vision_fit(sw, sh, 1280, 800, &v.model_w, &v.model_h));
		int sx, sy;
		assert_true(vision_model_to_screen(&v, 0, 0, &sx, &sy));
		assert_int_equal(sx, 7 + sw / 2000);
		assert_int_equal(sy, 11 + sh / 2000);
		assert_true(vision_model_to_screen(&v, 999, 999, &sx, &sy));
		assert_int_equal(sx, 7 + (int)((1999L * sw) / 2000));
		assert_int_equal(sy, 11 + (int)((1999L * sh) / 2000));
		assert_true(vision_model_to_screen(&v, 500, 500, &sx, &sy));
		assert_true(abs(sx - 7 - sw / 2) <= 1 + sw / 1000);
		assert_true(abs(sy - 11 - sh / 2) <= 1 + sh / 1000);
		assert_false(vision_model_to_screen(&v, 1000, 0, &sx, &sy));
		assert_non_null(strstr(vision_error(), "coordinate grid"));
		for (int s = 0; s < sw; s++) {
			int mx, my;
			assert_true(vision_screen_to_model(&v, 7 + s, 11, &mx, &my));
			assert_true(mx >= 0 && mx < 1000);
			/* the cell's span [mx*S/1000, (mx+1)*S/1000) holds the pixel */
			assert_true((long)mx * sw <= (long)s * 1000 + 500 &&
			            (long)s * 1000 + 500 <= (long)(mx + 1) * sw + 500);
		}
		os_rect r;
		assert_true(vision_model_rect_to_screen(&v, 0, 0, 1000, 1000, &r));
		assert_int_equal(r.width, sw);
		assert_int_equal(r.height, sh);
	}
}

/* --grounding's names: the three, exactly, and back. */
static void test_grounding_names(void **state)
{
	(void)state;
	vision_grounding g = VISION_GROUND_PIXELS;
	assert_true(vision_grounding_parse("smart-resize", &g));
	assert_int_equal(g, VISION_GROUND_SMART_RESIZE);
	assert_true(vision_grounding_parse("relative-1000", &g));
	assert_int_equal(g, VISION_GROUND_RELATIVE);
	assert_true(vision_grounding_parse("pixels", &g));
	assert_int_equal(g, VISION_GROUND_PIXELS);
	assert_false(vision_grounding_parse("relative", &g));
	assert_false(vision_grounding_parse("Pixels", &g));
	assert_false(vision_grounding_parse(NULL, &g));
	for (int i = 0; i < VISION_GROUND_COUNT; i++) {
		assert_true(vision_grounding_parse(vision_grounding_name((vision_grounding)i), &g));
		assert_int_equal(g, i);
	}
	assert_string_equal(vision_grounding_name(VISION_GROUND_COUNT), "?");
}

static void test_pick_monitor(void **state)
{
	(void)state;
	os_rect mons[3] = {{0, 0, 1920, 1080}, {1920, 0, 1280, 1024}, {0, 1080, 800, 600}};
	assert_int_equal(vision_pick_monitor(mons, 3, -1, 10, 10), 0);
	assert_int_equal(vision_pick_monitor(mons, 3, -1, 1920, 0), 1);
	assert_int_equal(vision_pick_monitor(mons, 3, -1, 100, 1200), 2);
	/* in the gap below monitor 1: the nearest */
	assert_int_equal(vision_pick_monitor(mons, 3, -1, 2500, 1070), 1);
	assert_int_equal(vision_pick_monitor(mons, 3, -1, 1000, 1500), 2);
	assert_int_equal(vision_pick_monitor(mons, 3, 2, 10, 10), 2);
	assert_int_equal(vision_pick_monitor(mons, 3, 3, 10, 10), -1);
	assert_int_equal(vision_pick_monitor(mons, 0, -1, 10, 10), -1);
}

/* ---- scaling ---------------------------------------------------------- */

static void check_psnr(int sw, int sh, int ow, int oh)
{
	os_image *src = busy_image(sw, sh);
	os_image *dst = vision_scaled(src, ow, oh);
	assert_non_null(dst);
	assert_int_equal(dst->width, ow);
	assert_int_equal(dst->height, oh);
	double *ref = reference_resize(src, ow, oh);
	double p = psnr(dst, ref);
	print_message("# scale %dx%d -> %dx%d: PSNR %.1f dB against exact area average\n",
	              sw, sh, ow, oh, p);
	assert_true(p >= 45.0);
	/* the naive alternative (nearest neighbour) is far worse on the same
	 * picture when shrinking: the test can tell them apart */
	if (ow < sw) {
		os_image *nn = os_image_create(ow, oh);
		assert_non_null(nn);
		for (int y = 0; y < oh; y++)
			for (int x = 0; x < ow; x++)
				memcpy(px(nn, x, y), px(src, x * sw / ow, y * sh / oh), 4);
		assert_true(psnr(nn, ref) < p - 10);
		os_image_destroy(nn);
	}
	for (int y = 0; y < oh; y += 7)
		for (int x = 0; x < ow; x += 7)
			assert_int_equal(px(dst, x, y)[3], 0xff);
	free(ref);
	os_image_destroy(dst);
	os_image_destroy(src);
}

static void test_scale_psnr(void **state)
{
	(void)state;
	check_psnr(1920, 1080, 1280, 720);
	check_psnr(1366, 768, 1280, 720);
	check_psnr(3840, 2160, 1280, 720);
	check_psnr(997, 613, 411, 253);
	check_psnr(800, 600, 1000, 750);   /* enlarging */
	check_psnr(64, 48, 640, 480);
}

static void test_scale_flat_and_checker(void **state)
{
	(void)state;
	/* a flat colour stays exactly that colour: weights sum to one */
	os_image *src = os_image_create(1366, 768);
	assert_non_null(src);
	fill(src, 201, 7, 133);
	os_image *dst = vision_scaled(src, 1280, 720);
	assert_non_null(dst);
	for (int y = 0; y < 720; y++)
		for (int x = 0; x < 1280; x++) {
			const uint8_t *p = px(dst, x, y);
			assert_int_equal(p[2], 201);
			assert_int_equal(p[1], 7);
			assert_int_equal(p[0], 133);
		}
	os_image_destroy(dst);
	/* a one-pixel checkerboard halved is uniform mid grey */
	for (int y = 0; y < 768; y++)
		for (int x = 0; x < 1366; x++) {
			uint8_t v = ((x + y) & 1) ? 255 : 0;
			uint8_t *p = px(src, x, y);
			p[0] = p[1] = p[2] = v;
		}
	dst = vision_scaled(src, 683, 384);
	assert_non_null(dst);
	for (int y = 0; y < 384; y++)
		for (int x = 0; x < 683; x++) {
			int v = px(dst, x, y)[1];
			assert_true(v == 127 || v == 128);
		}
	os_image_destroy(dst);
	/* the same size copies */
	dst = vision_scaled(src, 1366, 768);
	assert_non_null(dst);
	for (int y = 0; y < 768; y++)
		assert_memory_equal(px(dst, 0, y), px(src, 0, y), 3);
	os_image_destroy(dst);
	assert_null(vision_scaled(src, 0, 10));
	os_image_destroy(src);
}

static void test_scale_position(void **state)
{
	(void)state;
	/* a red 30x30 square on white at (600,300) of 1920x1080 lands at
	 * (400,200) of 1280x720, 20x20 — what the end-to-end test relies on */
	os_image *src = os_image_create(1920, 1080);
	assert_non_null(src);
	fill(src, 255, 255, 255);
	for (int y = 300; y < 330; y++)
		for (int x = 600; x < 630; x++) {
			uint8_t *p = px(src, x, y);
			p[0] = 0, p[1] = 0, p[2] = 255;
		}
	os_image *dst = vision_scaled(src, 1280, 720);
	assert_non_null(dst);
	for (int y = 195; y < 225; y++)
		for (int x = 395; x < 425; x++) {
			bool inside = x >= 400 && x < 420 && y >= 200 && y < 220;
			const uint8_t *p = px(dst, x, y);
			assert_int_equal(p[2], 255);
			if (inside)
				assert_int_equal(p[1], 0);
			else
				assert_int_equal(p[1], 255);
		}
	os_image_destroy(dst);
	os_image_destroy(src);
}

static void test_crop(void **state)
{
	(void)state;
	os_image *src = busy_image(300, 200);
	os_rect r = {17, 33, 100, 50};
	os_image *c = vision_crop(src, &r);
	assert_non_null(c);
	for (int y = 0; y < 50; y++)
		assert_memory_equal(px(c, 0, y), px(src, 17, 33 + y), 400);
	os_image_destroy(c);
	os_rect bad = {250, 0, 100, 10};
	assert_null(vision_crop(src, &bad));
	assert_non_null(strstr(vision_error(), "not inside"));
	os_image_destroy(src);
}

/* ---- hash ------------------------------------------------------------- */

static void test_hash(void **state)
{
	(void)state;
	os_image *a = busy_image(640, 480);
	uint64_t h = vision_image_hash(a);
	assert_int_equal(vision_image_hash(a), h);
	/* one changed byte anywhere is seen: a cursor, a character */
	px(a, 639, 479)[1] ^= 1;
	assert_int_not_equal(vision_image_hash(a), h);
	px(a, 639, 479)[1] ^= 1;
	px(a, 0, 0)[0] ^= 0x80;
	assert_int_not_equal(vision_image_hash(a), h);
	px(a, 0, 0)[0] ^= 0x80;
	/* a padded view of the same rows: padding bytes are not hashed */
	os_image *wide = busy_image(700, 480);
	os_image view = {wide->pixels, 640, 480, wide->stride};
	uint64_t hv = vision_image_hash(&view);
	for (int y = 0; y < 480; y++)
		px(wide, 650, y)[0] ^= 0xff;
	assert_int_equal(vision_image_hash(&view), hv);
	px(wide, 320, 240)[2] ^= 4;
	assert_int_not_equal(vision_image_hash(&view), hv);
	os_image_destroy(wide);
	os_image_destroy(a);
}

/* ---- drawing ---------------------------------------------------------- */

static int count_colour(const os_image *img, int x0, int y0, int x1, int y1,
                        uint8_t r, uint8_t g, uint8_t b)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			const uint8_t *p = px(img, x, y);
			if (p[2] == r && p[1] == g && p[0] == b)
				n++;
		}
	return n;
}

static void test_preview(void **state)
{
	(void)state;
	os_image *screen = os_image_create(1920, 1080);
	assert_non_null(screen);
	fill(screen, 250, 250, 250);
	vision_point t = {960, 540};
	os_image *p = vision_preview(screen, &t, 1, "click 640,360", 400, 300);
	assert_non_null(p);
	assert_int_equal(p->width, 400);
	assert_int_equal(p->height, 300);
	/* light background: a magenta marker around the centre, the target
	 * pixel itself untouched */
	assert_true(count_colour(p, 180, 130, 220, 170, 230, 0, 140) > 60);
	const uint8_t *c = px(p, 200, 150);
	assert_int_equal(c[2], 250);
	/* the label: white glyph pixels on a dark box at the top left */
	assert_true(count_colour(p, 0, 0, 100, 20, 255, 255, 255) > 40);
	assert_true(count_colour(p, 0, 0, 100, 20, 24, 24, 24) > 200);
	os_image_destroy(p);

	/* dark background: yellow marker; a target in the corner shifts the
	 * crop instead of shrinking it, and the marker sits on the target */
	fill(screen, 10, 10, 30);
	vision_point corner = {5, 1070};
	p = vision_preview(screen, &corner, 1, "click 3,713", 400, 300);
	assert_non_null(p);
	assert_int_equal(p->width, 400);
	assert_int_equal(p->height, 300);
	assert_true(count_colour(p, 0, 270, 30, 300, 255, 230, 0) > 20);
	os_image_destroy(p);

	/* a drag across the screen: both ends marked, scaled down to fit */
	vision_point drag[2] = {{100, 100}, {1800, 1000}};
	p = vision_preview(screen, drag, 2, "drag", 400, 300);
	assert_non_null(p);
	assert_true(p->width <= 400 && p->height <= 300);
	assert_true(count_colour(p, 0, 0, 60, 60, 255, 230, 0) > 20);
	assert_true(count_colour(p, p->width - 60, p->height - 60, p->width,
	                         p->height, 255, 230, 0) > 20);
	os_image_destroy(p);

	/* bad targets and sizes */
	vision_point off = {1920, 0};
	assert_null(vision_preview(screen, &off, 1, "x", 400, 300));
	assert_non_null(strstr(vision_error(), "off the 1920x1080 image"));
	assert_null(vision_preview(screen, &t, 0, "x", 400, 300));
	assert_null(vision_preview(screen, &t, 1, "x", 4, 300));
	os_image_destroy(screen);
}

static void test_label_non_ascii(void **state)
{
	(void)state;
	os_image *img = os_image_create(200, 40);
	assert_non_null(img);
	fill(img, 0, 0, 0);
	int w = vision_draw_label(img, 190, 30, "type \xc3\xa9\x01", 2);
	int ew, eh;
	vision_label_size("type \xc3\xa9\x01", 2, &ew, &eh);
	assert_int_equal(w, ew);  /* clipped at the edge without harm */
	os_image_destroy(img);
}

static void test_grid(void **state)
{
	(void)state;
	os_image *img = os_image_create(1280, 720);
	assert_non_null(img);
	fill(img, 0, 0, 0);
	vision_grid(img, 100);
	/* lines at multiples of 100, blended magenta; between them untouched */
	const uint8_t *l = px(img, 300, 650);
	assert_int_equal(l[2], 127);
	assert_int_equal(l[1], 0);
	assert_int_equal(l[0], 127);
	l = px(img, 1250, 400);
	assert_int_equal(l[2], 127);
	const uint8_t *o = px(img, 350, 690);
	assert_int_equal(o[2], 0);
	assert_int_equal(o[0], 0);
	/* labels: white text near the top edge at x=300, at the crossing
	 * (300,400), not at the origin */
	assert_true(count_colour(img, 301, 1, 330, 20, 255, 255, 255) > 10);
	assert_true(count_colour(img, 301, 401, 360, 420, 255, 255, 255) > 20);
	assert_int_equal(count_colour(img, 0, 0, 99, 99, 255, 255, 255), 0);
	os_image_destroy(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_known_sizes),
		cmocka_unit_test(test_fit_many_sizes),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_mapping_examples),
		cmocka_unit_test(test_smart_resize),
		cmocka_unit_test(test_relative_grid),
		cmocka_unit_test(test_grounding_names),
		cmocka_unit_test(test_pick_monitor),
		cmocka_unit_test(test_scale_psnr),
		cmocka_unit_test(test_scale_flat_and_checker),
		cmocka_unit_test(test_scale_position),
		cmocka_unit_test(test_crop),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_preview),
		cmocka_unit_test(test_label_non_ascii),
		cmocka_unit_test(test_grid),
	};
	return cmocka_run_group_tests_name("vision", tests, NULL, NULL);
}
