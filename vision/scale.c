/*
 * vision/scale — area-averaging resampling, crops.
 *
 * Each destination pixel i on an axis covers the source span
 * [i*S/M, (i+1)*S/M); source pixel j contributes its overlap with that span.
 * Weights are fixed point in 1/256, built from rounded cumulative coverage
 * so that each pixel's weights sum to exactly 256 (no brightness drift).
 * Vertical pass first (contiguous rows, vectorised with GCC/Clang vector
 * extensions: 8-bit source x 8-bit weight into 16-bit sums, which cannot
 * overflow because weights sum to 256), then the horizontal pass per pixel.
 */
#include <stdlib.h>
#include <string.h>

#include "vision/vision-internal.h"

typedef struct axis_taps {
	int *first;       /* first source index of each output */
	int *count;       /* number of taps */
	int *offset;      /* index of its first weight in w */
	uint16_t *w;
} axis_taps;

static void axis_free(axis_taps *a)
{
	free(a->first);
	free(a->count);
	free(a->offset);
	free(a->w);
}

static int64_t div_round(int64_t a, int64_t b)
{
	return (2 * a + b) / (2 * b);
}

static bool axis_build(axis_taps *a, int S, int M)
{
	memset(a, 0, sizeof(*a));
	/* A span of S/M source pixels touches at most ceil(S/M) + 1 of them. */
	size_t per = (size_t)((S + M - 1) / M) + 1;
	a->first = malloc(sizeof(int) * (size_t)M);
	a->count = malloc(sizeof(int) * (size_t)M);
	a->offset = malloc(sizeof(int) * (size_t)M);
	a->w = malloc(sizeof(uint16_t) * per * (size_t)M);
	if (a->first == NULL || a->count == NULL || a->offset == NULL || a->w == NULL) {
		axis_free(a);
		return vision_fail("out of memory");
	}
	int n = 0;
	for (int i = 0; i < M; i++) {
		int64_t lo = (int64_t)i * S, hi = (int64_t)(i + 1) * S;
		int j0 = (int)(lo / M), j1 = (int)((hi - 1) / M);
		int64_t prev = 0;
		int first = -1, count = 0;
		for (int j = j0; j <= j1; j++) {
			int64_t end = (int64_t)(j + 1) * M;
			if (end > hi)
				end = hi;
			int64_t cum = div_round(256 * (end - lo), S);
			uint16_t w = (uint16_t)(cum - prev);
			prev = cum;
			if (w == 0 && first < 0)
				continue;  /* a sliver that rounds to nothing */
			if (first < 0) {
				first = j;
				a->offset[i] = n;
			}
			a->w[n + count++] = w;
		}
		while (count > 1 && a->w[n + count - 1] == 0)
			count--;
		a->first[i] = first;
		a->count[i] = count;
		n += count;
	}
	return true;
}

/* On x86-64 the hot loops are also built for AVX2, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define VISION_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VISION_CLONES
#endif

typedef uint8_t v16u8 __attribute__((vector_size(16)));
typedef uint16_t v16u16 __attribute__((vector_size(32)));
typedef uint16_t v4u16 __attribute__((vector_size(8)));
typedef uint8_t v4u8 __attribute__((vector_size(4)));
typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i32 __attribute__((vector_size(16)));

/* acc[k] = (first ? 0 : acc[k]) + src[k] * w over n bytes */
VISION_CLONES
static void row_accumulate(uint16_t *restrict acc, const uint8_t *restrict src,
                           size_t n, uint16_t w, bool first)
{
	size_t k = 0;
	v16u16 wv = (v16u16){0} + w;
	for (; k + 16 <= n; k += 16) {
		v16u8 s;
		memcpy(&s, src + k, sizeof(s));
		v16u16 p = __builtin_convertvector(s, v16u16) * wv;
		if (!first) {
			v16u16 a;
			memcpy(&a, acc + k, sizeof(a));
			p += a;
		}
		memcpy(acc + k, &p, sizeof(p));
	}
	for (; k < n; k++)
		acc[k] = (uint16_t)((first ? 0 : acc[k]) + src[k] * w);
}

/*
 * Horizontal taps in single precision: x86-64's baseline (SSE2) has no
 * 32-bit integer multiply, floats multiply at full speed, and a 24-bit
 * mantissa holds the sums exactly enough (the largest is 255 * 65536).
 */
static inline v4f tap(const uint16_t *p, float w)
{
	v4u16 px;
	memcpy(&px, p, sizeof(px));
	return __builtin_convertvector(__builtin_convertvector(px, v4i32), v4f) * w;
}

VISION_CLONES
static void row_horizontal(uint8_t *restrict dst, const uint16_t *restrict acc,
                           const axis_taps *ax, const float *restrict wf, int M)
{
	for (int i = 0; i < M; i++) {
		const uint16_t *p = acc + (size_t)ax->first[i] * 4;
		const float *w = wf + ax->offset[i];
		v4f s = (v4f){0} + 32768.0f;
		for (int t = 0; t < ax->count[i]; t++)
			s += tap(p + (size_t)t * 4, w[t]);
		v4i32 u = __builtin_convertvector(s, v4i32) >> 16;
		u[3] = 0xff;
		v4u8 b = __builtin_convertvector(u, v4u8);
		memcpy(dst + 4 * i, &b, sizeof(b));
	}
}

bool vision_scale_rows(int src_w, int src_h, vision_row_fn row_at, void *ctx,
                       os_image *dst)
{
	if (src_w <= 0 || src_h <= 0 || dst->width <= 0 || dst->height <= 0)
		return vision_fail("cannot scale an empty image");
	if (src_w == dst->width && src_h == dst->height) {
		for (int y = 0; y < src_h; y++) {
			const uint8_t *s = row_at(ctx, y);
			if (s == NULL)
				return false;
			uint8_t *d = dst->pixels + (size_t)y * dst->stride;
			memcpy(d, s, (size_t)src_w * 4);
			for (int x = 0; x < dst->width; x++)
				d[4 * x + 3] = 0xff;
		}
		return true;
	}
	axis_taps h, v;
	if (!axis_build(&h, src_w, dst->width))
		return false;
	if (!axis_build(&v, src_h, dst->height)) {
		axis_free(&h);
		return false;
	}
	bool ok = true;
	size_t row = (size_t)src_w * 4;
	uint16_t *acc = malloc(row * sizeof(uint16_t));
	size_t nw = (size_t)h.offset[dst->width - 1] + (size_t)h.count[dst->width - 1];
	float *wf = malloc(nw * sizeof(float));
	if (acc == NULL || wf == NULL) {
		ok = vision_fail("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nw; i++)
		wf[i] = h.w[i];
	/* Rows are asked for in non-decreasing order: a source may stream them. */
	for (int y = 0; y < dst->height && ok; y++) {
		const uint16_t *w = v.w + v.offset[y];
		for (int t = 0; t < v.count[y]; t++) {
			const uint8_t *s = row_at(ctx, v.first[y] + t);
			if (s == NULL) {
				ok = false;
				break;
			}
			row_accumulate(acc, s, row, w[t], t == 0);
		}
		if (ok)
			row_horizontal(dst->pixels + (size_t)y * dst->stride, acc, &h, wf,
			               dst->width);
	}
out:
	free(wf);
	free(acc);
	axis_free(&v);
	axis_free(&h);
	return ok;
}

static const uint8_t *image_row(void *ctx, int y)
{
	const os_image *img = ctx;
	return img->pixels + (size_t)y * img->stride;
}

bool vision_scale(const os_image *src, os_image *dst)
{
	return vision_scale_rows(src->width, src->height, image_row, (void *)src, dst);
}

os_image *vision_scaled(const os_image *src, int width, int height)
{
	if (width <= 0 || height <= 0) {
		vision_fail("invalid target size %dx%d", width, height);
		return NULL;
	}
	os_image *dst = os_image_create(width, height);
	if (dst == NULL) {
		vision_fail("out of memory for a %dx%d image", width, height);
		return NULL;
	}
	if (!vision_scale(src, dst)) {
		os_image_destroy(dst);
		return NULL;
	}
	return dst;
}

os_image *vision_crop(const os_image *src, const os_rect *r)
{
	if (r->width <= 0 || r->height <= 0 || r->x < 0 || r->y < 0 ||
	    r->x + r->width > src->width || r->y + r->height > src->height) {
		vision_fail("crop %dx%d+%d+%d is not inside the %dx%d image", r->width,
		            r->height, r->x, r->y, src->width, src->height);
		return NULL;
	}
	os_image *dst = os_image_create(r->width, r->height);
	if (dst == NULL) {
		vision_fail("out of memory for a %dx%d image", r->width, r->height);
		return NULL;
	}
	for (int y = 0; y < r->height; y++)
		memcpy(dst->pixels + (size_t)y * dst->stride,
		       src->pixels + (size_t)(r->y + y) * src->stride + (size_t)r->x * 4,
		       (size_t)r->width * 4);
	return dst;
}
