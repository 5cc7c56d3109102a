/*
 * PNG encoding tuned for screen content, and decoding through libpng.
 *
 * Encoding. libpng's writer is single-threaded and zlib-bound: on a busy
 * 1920x1080 desktop its fastest settings that keep the file within 1.15x
 * of scrot's (zlib level 1, Paeth) cost ~29 ms of one core, more than the
 * whole budget of a screenshot at a third of scrot's time (~22 ms). So the
 * encoder does what pigz does for gzip: the image is cut into horizontal
 * bands that all cores filter and deflate in parallel, and the bands are
 * joined into one zlib stream (see struct band); the deflate itself is
 * ISA-L's igzip (Debian libisal), 6x faster than zlib's level 1 on these
 * images. Rows are read straight from the BGRX image (no copy of it is
 * made) and filtered with the standard PNG filters and libpng's selection
 * heuristic. The output is a plain 8-bit RGB PNG; the unit tests read it
 * back with libpng itself, and the integration tests with ImageMagick.
 *
 * Decoding uses libpng. Every libpng error longjmps back into
 * os_png_decode, which frees what it allocated and reports the message
 * through os_error(); warnings are dropped (library code never prints).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <png.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "base/base.h"
#include "os/os-internal.h"

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

/*
 * The filter loops are the only hot code of our own: GCC vectorizes them
 * at -O3 (not at the project's -O2), and on x86-64 also builds an AVX2
 * clone picked at load time; together 3x faster than plain -O2.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HOT __attribute__((optimize("O3"), target_clones("avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((optimize("O3")))
#else
#define HOT
#endif

/* Parallel compression: at most this many threads, bands this tall. */
#define MAX_THREADS 8
#define MIN_BAND_ROWS 32

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

/*
 * The image is cut into horizontal bands compressed in parallel, the way
 * pigz does it: each band is a raw deflate stream ending on a byte boundary
 * (Z_SYNC_FLUSH), primed with the last 32 KiB of the previous band's
 * filtered bytes as its dictionary so that matches across the cut are not
 * lost; the bands are then concatenated into one zlib stream whose Adler-32
 * is combined from the bands'. Filtering reads the BGRX rows directly (the
 * row above a band's first row comes from the image itself), so bands are
 * independent; only the filtered bytes of the band at hand are buffered,
 * the image itself is never copied.
 */
struct band {
	const os_image *img;
	int y0, y1;             /* rows [y0, y1) */
	int level, strategy, filter;
	bool last;
	uint8_t *out;           /* raw deflate bytes */
	size_t out_len, out_cap;
	uLong adler;            /* of the filtered bytes, from adler32(0,0,0) */
	size_t in_len;
	const char *error;      /* static text; NULL: fine */
	bool fresh;             /* rows just written by another process */
};

/* Row buffers of one band: RGB of the current and the previous row, and
 * one candidate per filter type (filter byte + 3w bytes). */
struct rows {
	size_t n;               /* 3 * width */
	uint8_t *prev, *cur;
	uint8_t *cand[5];
};

static bool rows_init(struct rows *r, int width)
{
	memset(r, 0, sizeof(*r));
	r->n = (size_t)width * 3;
	r->prev = calloc(1, r->n);
	r->cur = calloc(1, r->n);
	bool ok = r->prev && r->cur;
	for (int i = 0; i < 5; i++) {
		r->cand[i] = malloc(r->n + 1);
		ok = ok && r->cand[i];
	}
	return ok;
}

static void rows_finish(struct rows *r)
{
	free(r->prev);
	free(r->cur);
	for (int i = 0; i < 5; i++)
		free(r->cand[i]);
}

HOT static void bgrx_to_rgb(const uint8_t *restrict src, uint8_t *restrict dst,
                        size_t width)
{
	for (size_t x = 0; x < width; x++) {
		dst[3 * x + 0] = src[4 * x + 2];
		dst[3 * x + 1] = src[4 * x + 1];
		dst[3 * x + 2] = src[4 * x + 0];
	}
}

/*
 * Branch-free and in 16-bit arithmetic (every intermediate fits), so that
 * the compiler vectorizes the Paeth loop eight or sixteen lanes wide.
 */
static inline uint8_t paeth(int16_t a, int16_t b, int16_t c)
{
	int16_t pa = (int16_t)(b - c), pb = (int16_t)(a - c);
	int16_t pc = (int16_t)(a + b - 2 * c);
	pa = (int16_t)(pa < 0 ? -pa : pa);
	pb = (int16_t)(pb < 0 ? -pb : pb);
	pc = (int16_t)(pc < 0 ? -pc : pc);
	int16_t bc = pb <= pc ? b : c;
	return (uint8_t)(pa <= pb && pa <= pc ? a : bc);
}

/* Writes filter type t (0..4) of cur against prev into out[0..n]. */
HOT static void filter_row(int t, const uint8_t *restrict cur,
                           const uint8_t *restrict prev, uint8_t *restrict out,
                           size_t n)
{
	out[0] = (uint8_t)t;
	uint8_t *restrict o = out + 1;
	size_t i;
	switch (t) {
	case 0:
		memcpy(o, cur, n);
		break;
	case 1:
		for (i = 0; i < 3 && i < n; i++)
			o[i] = cur[i];
		for (; i < n; i++)
			o[i] = (uint8_t)(cur[i] - cur[i - 3]);
		break;
	case 2:
		for (i = 0; i < n; i++)
			o[i] = (uint8_t)(cur[i] - prev[i]);
		break;
	case 3:
		for (i = 0; i < 3 && i < n; i++)
			o[i] = (uint8_t)(cur[i] - (prev[i] >> 1));
		for (; i < n; i++)
			o[i] = (uint8_t)(cur[i] - ((cur[i - 3] + prev[i]) >> 1));
		break;
	default:
		for (i = 0; i < 3 && i < n; i++)
			o[i] = (uint8_t)(cur[i] - prev[i]);
		for (; i < n; i++)
			o[i] = (uint8_t)(cur[i] - paeth(cur[i - 3], prev[i], prev[i - 3]));
		break;
	}
}

/*
 * libpng's selection heuristic: the sum of the filtered bytes read as
 * signed magnitudes. |(int8_t)v| is written as |(v ^ 0x80) - 128| so that
 * the compiler recognises a sum of absolute differences (psadbw).
 */
HOT static uint32_t filter_cost(const uint8_t *restrict f, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 1; i <= n; i++)
		sum += (uint32_t)abs((int)(uint8_t)(f[i] ^ 0x80) - 128);
	return sum;
}

/*
 * Filters the row in r->cur (the row above in r->prev) with each allowed
 * type and returns the candidate with the smallest heuristic (n + 1 bytes).
 */
static const uint8_t *filter_pick(struct rows *r, int allowed)
{
	static const int bit[5] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP,
	                           PNG_FILTER_AVG, PNG_FILTER_PAETH};
	int best = -1, count = 0;
	uint32_t best_cost = 0;
	for (int t = 0; t < 5; t++)
		count += (allowed & bit[t]) != 0;
	for (int t = 0; t < 5; t++) {
		if (!(allowed & bit[t]))
			continue;
		filter_row(t, r->cur, r->prev, r->cand[t], r->n);
		if (count == 1)
			return r->cand[t];
		uint32_t c = filter_cost(r->cand[t], r->n);
		if (best < 0 || c < best_cost) {
			best = t;
			best_cost = c;
		}
	}
	return r->cand[best];
}

/* Loads row y's RGB into r->cur after moving the previous one to r->prev. */
static void rows_advance(struct rows *r, const os_image *img, int y)
{
	uint8_t *t = r->prev;
	r->prev = r->cur;
	r->cur = t;
	bgrx_to_rgb(img->pixels + (size_t)y * (size_t)img->stride, r->cur,
	            (size_t)img->width);
}

/* Sets up r->cur as the row above y0 (zeros above the first row). */
static void rows_start(struct rows *r, const os_image *img, int y0)
{
	if (y0 == 0)
		memset(r->cur, 0, r->n);
	else
		bgrx_to_rgb(img->pixels + (size_t)(y0 - 1) * (size_t)img->stride,
		            r->cur, (size_t)img->width);
}

/*
 * The deflate back end of one thread: ISA-L's igzip for levels 1..3 (6x
 * faster than zlib's level 1 on screen content, files 4-10 % larger), zlib
 * for 0 and 4..9. Both produce raw deflate streams that are cut with a
 * sync flush and primed with a dictionary in the same way.
 */
struct deflater {
	bool isal;
	bool ready, used;
	z_stream z;
	struct isal_zstream s;
	uint8_t *level_buf;
};

static bool deflater_init(struct deflater *d, int level, int strategy)
{
	memset(d, 0, sizeof(*d));
	d->isal = level >= 1 && level <= 3;
	if (!d->isal) {
		d->ready = deflateInit2(&d->z, level, Z_DEFLATED, -15, 9,
		                        strategy) == Z_OK;
		return d->ready;
	}
	static const uint32_t sizes[4] = {0, ISAL_DEF_LVL1_DEFAULT,
	                                  ISAL_DEF_LVL2_DEFAULT,
	                                  ISAL_DEF_LVL3_DEFAULT};
	d->level_buf = malloc(sizes[level]);
	if (d->level_buf == NULL)
		return false;
	isal_deflate_init(&d->s);
	d->s.level = (uint32_t)level;
	d->s.level_buf = d->level_buf;
	d->s.level_buf_size = sizes[level];
	d->s.gzip_flag = IGZIP_DEFLATE;
	d->ready = true;
	return true;
}

static void deflater_finish(struct deflater *d)
{
	if (d->ready && !d->isal)
		deflateEnd(&d->z);
	free(d->level_buf);
	d->ready = false;
}

/* A fresh stream for the next band, primed with `dict` (may be empty). */
static bool deflater_start(struct deflater *d, uint8_t *dict, size_t len)
{
	if (d->isal) {
		if (d->used)
			isal_deflate_reset(&d->s);
		d->used = true;
		return len == 0 ||
		       isal_deflate_set_dict(&d->s, dict, (uint32_t)len) == COMP_OK;
	}
	if (d->used && deflateReset(&d->z) != Z_OK)
		return false;
	d->used = true;
	return len == 0 || deflateSetDictionary(&d->z, dict, (uInt)len) == Z_OK;
}

static bool band_grow(struct band *b)
{
	size_t cap = b->out_cap + b->out_cap / 2 + 65536;
	uint8_t *p = realloc(b->out, cap);
	if (p == NULL)
		return false;
	b->out = p;
	b->out_cap = cap;
	return true;
}

static size_t avail(const struct band *b)
{
	size_t room = b->out_cap - b->out_len;
	return room > UINT32_MAX ? UINT32_MAX : room;
}

/*
 * Compresses all of in[0..n) into b->out, ending with a sync flush (byte
 * aligned, stream left open) or, for the last band, the final block.
 */
static const char *deflater_run(struct deflater *d, struct band *b,
                                uint8_t *in, size_t n)
{
	struct isal_zstream *s = &d->s;
	z_stream *z = &d->z;
	if (d->isal) {
		s->next_in = in;
		s->avail_in = (uint32_t)n;
		s->flush = b->last ? NO_FLUSH : SYNC_FLUSH;
		s->end_of_stream = b->last;
	} else {
		z->next_in = in;
		z->avail_in = (uInt)n;
	}
	bool stalled = false;
	for (int rounds = 0; rounds < 100000; rounds++) {
		/* Grow when (nearly) full, or when a call could not move. */
		if ((b->out_cap - b->out_len < 64 || stalled) && !band_grow(b))
			return "out of memory";
		uint32_t room = (uint32_t)avail(b);
		if (d->isal) {
			s->next_out = b->out + b->out_len;
			s->avail_out = room;
			uint32_t had = s->avail_in;
			if (isal_deflate(s) != COMP_OK)
				return "igzip failed";
			b->out_len += room - s->avail_out;
			stalled = had == s->avail_in && room == s->avail_out;
			/* igzip: output left over means everything was flushed. */
			if (b->last ? s->internal_state.state == ZSTATE_END
			            : s->avail_in == 0 && s->avail_out > 0)
				return NULL;
		} else {
			z->next_out = b->out + b->out_len;
			z->avail_out = room;
			uInt had = z->avail_in;
			int zr = deflate(z, b->last ? Z_FINISH : Z_SYNC_FLUSH);
			b->out_len += room - z->avail_out;
			if (zr == Z_STREAM_END)
				return NULL;
			if (zr != Z_OK && zr != Z_BUF_ERROR)
				return "zlib failed";
			stalled = had == z->avail_in && room == z->avail_out;
			if (!b->last && z->avail_in == 0 && z->avail_out > 0)
				return NULL;
		}
	}
	return "the compressor made no progress";
}

/* What one thread keeps between the bands it compresses. */
struct worker {
	struct rows r;
	struct deflater def;
	uint8_t *dict;
	uint8_t *filtered;      /* one band's filtered rows */
	size_t filtered_cap;
};

#define DICT_MAX 32768

static bool worker_init(struct worker *w, const struct band *b)
{
	memset(w, 0, sizeof(*w));
	if (!rows_init(&w->r, b->img->width))
		return false;
	size_t row_bytes = w->r.n + 1;
	w->dict = malloc(((DICT_MAX + row_bytes - 1) / row_bytes) * row_bytes);
	return w->dict != NULL && deflater_init(&w->def, b->level, b->strategy);
}

static void worker_finish(struct worker *w)
{
	deflater_finish(&w->def);
	rows_finish(&w->r);
	free(w->dict);
	free(w->filtered);
}

/*
 * Rows the X server has just written into a fresh shared segment are not
 * mapped in this process yet: one call maps them instead of a page fault
 * per 4 KiB, on this thread, while the server copies the next strip.
 * Older kernels refuse: harmless.
 */
static void rows_map(const os_image *img, int y0, int y1)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)(img->pixels + (size_t)y0 * (size_t)img->stride);
	uintptr_t e = (uintptr_t)(img->pixels + (size_t)y1 * (size_t)img->stride);
	a &= ~(page - 1);
	madvise((void *)a, e - a, MADV_POPULATE_READ);
}

/*
 * Maps a fresh buffer's pages in one call instead of one fault per 4 KiB
 * (a VM makes each fault costly: ~190 per band buffer). Older kernels
 * refuse: harmless.
 */
static void mem_map(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(page - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

/*
 * Filters the band's rows into one buffer (the row above its first row is
 * read from the image, so bands never wait for each other), then
 * compresses the buffer in one call: both back ends are fastest that way.
 */
static void band_run(struct band *b, struct worker *w)
{
	const os_image *img = b->img;
	struct rows *r = &w->r;
	size_t row_bytes = r->n + 1;
	size_t dict_len = 0;
	uint8_t *dict = w->dict;
	if (b->fresh)
		rows_map(img, b->y0, b->y1);
	if (b->y0 > 0) {
		/* The previous band's last 32 KiB of filtered bytes. */
		int back = (int)((DICT_MAX + row_bytes - 1) / row_bytes);
		int ya = b->y0 - back > 0 ? b->y0 - back : 0;
		size_t dlen = (size_t)(b->y0 - ya) * row_bytes;
		rows_start(r, img, ya);
		for (int y = ya; y < b->y0; y++) {
			rows_advance(r, img, y);
			memcpy(w->dict + (size_t)(y - ya) * row_bytes,
			       filter_pick(r, b->filter), row_bytes);
		}
		dict_len = dlen < DICT_MAX ? dlen : DICT_MAX;
		dict = w->dict + dlen - dict_len;
	}
	if (!deflater_start(&w->def, dict, dict_len)) {
		b->error = "cannot start the compressor";
		return;
	}
	b->in_len = (size_t)(b->y1 - b->y0) * row_bytes;
	if (b->in_len > w->filtered_cap) {
		uint8_t *p = realloc(w->filtered, b->in_len);
		if (p == NULL) {
			b->error = "out of memory";
			return;
		}
		w->filtered = p;
		w->filtered_cap = b->in_len;
		mem_map(p, b->in_len);
	}
	rows_start(r, img, b->y0);
	for (int y = b->y0; y < b->y1; y++) {
		rows_advance(r, img, y);
		memcpy(w->filtered + (size_t)(y - b->y0) * row_bytes,
		       filter_pick(r, b->filter), row_bytes);
	}
	/* ISA-L's is 4x faster than zlib's (SIMD): ~3 ms of CPU on 1920x1080. */
	b->adler = isal_adler32(1, w->filtered, b->in_len);
	/* Screen content compresses well: start at a third, grow if needed. */
	b->out_cap = b->in_len / 3 + 65536;
	b->out = malloc(b->out_cap);
	if (b->out == NULL) {
		b->error = "out of memory";
		return;
	}
	b->error = deflater_run(&w->def, b, w->filtered, b->in_len);
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

static int cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/*
 * Bands handed out to the threads one at a time, in order. With a feed the
 * image's rows arrive over time: a band waits for its rows (and the ones
 * above it that prime its dictionary, which come earlier).
 */
struct queue {
	struct band *bands;
	int count;
	atomic_int next;
	pthread_mutex_t lock;   /* guards ready and abandoned */
	pthread_cond_t more;
	int ready;              /* rows of the image present */
	bool abandoned;         /* the feed failed: no more rows will come */
};

/* Waits until rows [0, y1) are present; false when they never will be. */
static bool queue_wait_rows(struct queue *q, int y1)
{
	pthread_mutex_lock(&q->lock);
	while (q->ready < y1 && !q->abandoned)
		pthread_cond_wait(&q->more, &q->lock);
	bool ok = q->ready >= y1;
	pthread_mutex_unlock(&q->lock);
	return ok;
}

static void queue_publish(struct queue *q, int ready, bool abandoned)
{
	pthread_mutex_lock(&q->lock);
	q->ready = ready;
	q->abandoned = abandoned;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->lock);
}

static void *queue_run(void *arg)
{
	struct queue *q = arg;
	struct worker w;
	bool ready = false;
	for (;;) {
		int i = atomic_fetch_add(&q->next, 1);
		if (i >= q->count)
			break;
		if (!queue_wait_rows(q, q->bands[i].y1)) {
			q->bands[i].error = "the capture failed";
			continue;
		}
		if (!ready && !worker_init(&w, &q->bands[i])) {
			q->bands[i].error = "out of memory";
			worker_finish(&w);
			/* Leave the rest to the other threads (or the caller). */
			return NULL;
		}
		ready = true;
		band_run(&q->bands[i], &w);
	}
	if (ready)
		worker_finish(&w);
	return NULL;
}

/*
 * How many bands to cut the image into, and in *threads how many threads
 * compress them. A few bands per thread, so that a thread slowed down (a
 * busy core, a band of noisy wallpaper next to one of flat text) does not
 * hold the others up; each cut costs a re-filtered dictionary and 5 bytes.
 */
static int band_count(const os_image *img, int *threads)
{
	int nt = cpu_count();
	if (nt > MAX_THREADS)
		nt = MAX_THREADS;
	int nb = nt == 1 ? 1 : nt * 4;
	if (nb > img->height / MIN_BAND_ROWS)
		nb = img->height / MIN_BAND_ROWS;
	if (nb < 1)
		nb = 1;
	if (nt > nb)
		nt = nb;
	*threads = nt;
	return nb;
}

/*
 * Draws rows from the feed until the image is complete; false (os_error()
 * set by the feed) when it fails.
 */
static bool queue_feed(struct queue *q, os_png_feed *feed, int height)
{
	int ready = 0;
	while (ready < height) {
		if (!feed->fill(feed->ctx, &ready)) {
			queue_publish(q, ready, true);
			return false;
		}
		queue_publish(q, ready, false);
	}
	return true;
}

/*
 * Compresses the bands on nt threads. Without a feed the calling thread
 * works too; with one it first draws the rows, the threads compressing
 * the bands that are complete meanwhile, then joins them. A failed spawn
 * just means fewer threads. False only when the feed failed.
 */
static bool compress_bands(struct band *bands, int nb, int nt,
                           os_png_feed *feed)
{
	pthread_t tid[MAX_THREADS + 1];
	bool started[MAX_THREADS + 1] = {false};
	struct queue q = {.bands = bands, .count = nb,
	                  .ready = feed ? 0 : bands[nb - 1].y1};
	pthread_mutex_init(&q.lock, NULL);
	pthread_cond_init(&q.more, NULL);
	atomic_init(&q.next, 0);
	int first = feed ? 0 : 1;
	for (int i = first; i < nt; i++)
		started[i] = pthread_create(&tid[i], NULL, queue_run, &q) == 0;
	bool ok = feed == NULL || queue_feed(&q, feed, bands[nb - 1].y1);
	queue_run(&q);
	for (int i = first; i < nt; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	pthread_cond_destroy(&q.more);
	pthread_mutex_destroy(&q.lock);
	return ok;
}

static const uint8_t png_signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};

#define IHDR_LEN 13

/* A memory sink gets exactly the file's size: a doubling buffer would
 * hold up to twice the PNG at the peak of every screenshot. */
static void sink_reserve(struct sink *sink, const struct band *bands, int nb)
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
static bool put_idats(struct sink *sink, struct band *bands, int nb, uLong adler)
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
static bool put_png(const os_image *img, struct sink *sink, struct band *bands, int nb)
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
	int nb = band_count(img, &nt);
	struct band bands[MAX_THREADS * 4];
	memset(bands, 0, sizeof(bands));
	for (int i = 0; i < nb; i++) {
		bands[i] = (struct band){
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
	bool ok = compress_bands(bands, nb, nt, feed);
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
