/*
 * os/png-bands — the PNG encoder's band compressor (see png-internal.h
 * and, for the measurements behind it, png.c): each band's rows filtered
 * straight from the BGRX image with the standard PNG filters and libpng's
 * selection heuristic, then deflated (ISA-L's igzip, or zlib), the bands
 * spread over all cores and, with a feed, compressed while the capture
 * still delivers the rows below.
 */
#include <pthread.h>
#include <sched.h>
#include <png.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "os/png-internal.h"

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

/* Bands at least this tall. */
#define MIN_BAND_ROWS 32

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

static bool band_grow(struct os_png_band *b)
{
	size_t cap = b->out_cap + b->out_cap / 2 + 65536;
	uint8_t *p = realloc(b->out, cap);
	if (p == NULL)
		return false;
	b->out = p;
	b->out_cap = cap;
	return true;
}

static size_t avail(const struct os_png_band *b)
{
	size_t room = b->out_cap - b->out_len;
	return room > UINT32_MAX ? UINT32_MAX : room;
}

/*
 * Compresses all of in[0..n) into b->out, ending with a sync flush (byte
 * aligned, stream left open) or, for the last band, the final block.
 */
static const char *deflater_run(struct deflater *d, struct os_png_band *b,
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

static bool worker_init(struct worker *w, const struct os_png_band *b)
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
 * Filters the band's rows into one buffer (the row above its first row is
 * read from the image, so bands never wait for each other), then
 * compresses the buffer in one call: both back ends are fastest that way.
 */
static void band_run(struct os_png_band *b, struct worker *w)
{
	const os_image *img = b->img;
	struct rows *r = &w->r;
	size_t row_bytes = r->n + 1;
	size_t dict_len = 0;
	uint8_t *dict = w->dict;
	/* Rows the X server has just written into a fresh shared segment are
	 * not mapped in this process yet: map them on this thread, while the
	 * server copies the next strip. */
	if (b->fresh)
		os_mem_populate(img->pixels + (size_t)b->y0 * (size_t)img->stride,
		                (size_t)(b->y1 - b->y0) * (size_t)img->stride, false);
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
		os_mem_populate(p, b->in_len, true); /* ~190 faults otherwise */
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
	struct os_png_band *bands;
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
 * A few bands per thread, so that a thread slowed down (a
 * busy core, a band of noisy wallpaper next to one of flat text) does not
 * hold the others up; each cut costs a re-filtered dictionary and 5 bytes.
 */
int os_png_band_count(const os_image *img, int *threads)
{
	int nt = cpu_count();
	if (nt > OS_PNG_MAX_THREADS)
		nt = OS_PNG_MAX_THREADS;
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
 * Without a feed the calling thread works too; with one it first draws
 * the rows, the threads compressing the bands that are complete
 * meanwhile, then joins them. A failed spawn just means fewer threads.
 */
bool os_png_bands_compress(struct os_png_band *bands, int nb, int nt,
                           os_png_feed *feed)
{
	pthread_t tid[OS_PNG_MAX_THREADS + 1];
	bool started[OS_PNG_MAX_THREADS + 1] = {false};
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
