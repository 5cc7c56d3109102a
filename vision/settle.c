/*
 * vision/settle — the screen read in strips (hashed, and scaled on the way
 * when asked: every capture of vision/ goes through them), the wait until
 * it stops changing instead of sleeping a fixed time after each action,
 * and the model's view of that very frame (vision_settled_shot).
 *
 * Each check is one borrowed capture (MIT-SHM: a fraction of a millisecond
 * at 1920x1080) and one XXH3 hash of every row, which runs near memory
 * speed; no copy of the previous picture is kept. Checks are scheduled on
 * absolute deadlines so that capture time does not stretch the interval.
 */
#include <xxhash.h>

#include "base/base.h"
#include "vision/vision-internal.h"

/*
 * Strips instead of one capture of the whole monitor: the capture segment
 * (reused for the life of the display) then holds 64 rows, not a whole
 * 8 MB screen, and the scaler reads each row once while it is still in the
 * cache. The screen was let settle first; a strip a few hundred
 * microseconds younger than the one above it shows the same picture.
 */
static bool next_strip(vision_strips *st, int y)
{
	int n = st->r.height - y < VISION_STRIP_ROWS ? st->r.height - y : VISION_STRIP_ROWS;
	os_rect s = {st->r.x, st->r.y + y, st->r.width, n};
	st->cur = os_capture_borrow(st->d, &s);
	if (st->cur == NULL)
		return vision_fail_os("capture failed");
	st->y0 = y;
	st->y1 = y + n;
	if (st->hashing)
		st->hash = XXH3_64bits_withSeed(&st->hash, sizeof(st->hash),
		                                vision_image_hash(st->cur));
	return true;
}

const uint8_t *vision_strip_row(void *ctx, int y)
{
	vision_strips *st = ctx;
	if (st->cur != NULL && y < st->y0) {
		vision_fail("rows asked out of order (%d after %d)", y, st->y0);
		return NULL;
	}
	/* Strip by strip, in order: one the reader skips still counts for the
	 * hash, which is then the same however the picture is read. */
	while (st->cur == NULL || y >= st->y1)
		if (!next_strip(st, st->cur == NULL ? 0 : st->y1))
			return NULL;
	return st->cur->pixels + (size_t)(y - st->y0) * st->cur->stride;
}

bool vision_strips_finish(vision_strips *st)
{
	for (int y = st->cur != NULL ? st->y1 : 0; y < st->r.height; y = st->y1)
		if (!next_strip(st, y))
			return false;
	return true;
}

bool vision_capture_scaled_into(os_display *d, const os_rect *r, os_image *img,
                                uint64_t *hash)
{
	vision_strips st = {.d = d, .r = *r, .hashing = hash != NULL};
	if (!vision_scale_rows(r->width, r->height, vision_strip_row, &st, img) ||
	    (hash != NULL && !vision_strips_finish(&st)))
		return false;
	if (hash != NULL)
		*hash = st.hash;
	return true;
}

void vision_settle_opts_init(vision_settle_opts *opts)
{
	opts->interval_ms = 10;
	opts->stable_checks = 2;
	opts->cap_ms = 2000;
}

uint64_t vision_image_hash(const os_image *img)
{
	size_t row = (size_t)img->width * 4;
	if ((size_t)img->stride == row)
		return XXH3_64bits(img->pixels, row * (size_t)img->height);
	/* padded rows: chain the rows, each seeded with the hash so far */
	uint64_t h = 0;
	for (int y = 0; y < img->height; y++)
		h = XXH3_64bits_withSeed(img->pixels + (size_t)y * img->stride, row, h);
	return h;
}

/* One picture's hash, captured in strips (as shots are): every row counts.
 * With `frame`, the picture is also scaled into it on the way. */
static bool check(os_display *d, const os_rect *r, uint64_t *hash, os_image *frame)
{
	if (frame != NULL)
		return vision_capture_scaled_into(d, r, frame, hash);
	vision_strips st = {.d = d, .r = *r, .hashing = true};
	if (!vision_strips_finish(&st))
		return vision_fail("settle: %s", vision_error());
	*hash = st.hash;
	return true;
}

/*
 * Whether this check may be the one that confirms the picture is still:
 * then it scales what it captures, so that the settled frame is the one
 * the model sees and nothing is captured again.
 */
static os_image *frame_for(os_image *frame, int stable, const vision_settle_opts *opts)
{
	return stable + 1 >= opts->stable_checks ? frame : NULL;
}

bool vision_settle(os_display *d, const os_rect *region,
                   const vision_settle_opts *opts, vision_settle_result *result)
{
	bool framed;
	return vision_settle_framed(d, region, opts, result, NULL, &framed);
}

bool vision_settle_framed(os_display *d, const os_rect *region,
                          const vision_settle_opts *opts, vision_settle_result *result,
                          os_image *frame, bool *framed)
{
	vision_settle_opts def;
	if (opts == NULL) {
		vision_settle_opts_init(&def);
		opts = &def;
	}
	*framed = false;
	if (opts->interval_ms < 1 || opts->stable_checks < 1 || opts->cap_ms < 0)
		return vision_fail("settle: invalid options (interval %d ms, %d checks, "
		                   "cap %d ms)", opts->interval_ms, opts->stable_checks,
		                   opts->cap_ms);
	os_rect r;
	if (region != NULL) {
		r = *region;
	} else {
		r.x = r.y = 0;
		os_screen_size(d, &r.width, &r.height);
	}
	*result = (vision_settle_result){0};
	int64_t start = base_now_ns();
	int64_t interval = opts->interval_ms * BASE_NS_PER_MS;
	int64_t cap = start + opts->cap_ms * BASE_NS_PER_MS;
	uint64_t prev = 0, cur = 0;
	if (!check(d, &r, &prev, NULL))
		return false;
	result->checks = 1;
	int stable = 0;
	int64_t next = start + interval;
	for (;;) {
		if (next > cap) {
			if (base_now_ns() >= cap)
				break;
			next = cap;
		}
		base_sleep_until(next, NULL);
		os_image *f = frame_for(frame, stable, opts);
		if (!check(d, &r, &cur, f))
			return false;
		result->checks++;
		if (cur == prev) {
			if (++stable >= opts->stable_checks) {
				result->settled = true;
				*framed = f != NULL;
				break;
			}
		} else {
			stable = 0;
			result->changed = true;
			prev = cur;
		}
		int64_t t = base_now_ns();
		next += interval;
		if (next < t)
			next = t;  /* a slow capture: never queue up checks */
		if (t >= cap)
			break;
	}
	result->waited_ms = (int)((base_now_ns() - start + 500000) / 1000000);
	return true;
}

os_image *vision_settled_shot(os_display *d, const vision_shot_opts *opts,
                              const vision_settle_opts *settle, vision_view *view)
{
	vision_shot_opts def;
	if (opts == NULL) {
		vision_shot_opts_init(&def);
		opts = &def;
	}
	os_rect mon;
	vision_view v;
	if (!vision_monitor(d, opts->monitor, &mon) || !vision_view_for(opts, &mon, &v))
		return NULL;
	os_image *img = os_image_create(v.model_w, v.model_h);
	if (img == NULL) {
		vision_fail("out of memory for a %dx%d image", v.model_w, v.model_h);
		return NULL;
	}
	bool framed = false;
	vision_settle_result sr;
	/* The monitor the model sees: changes elsewhere do not delay it. */
	if (settle != NULL && !vision_settle_framed(d, &mon, settle, &sr, img, &framed))
		goto fail;
	if (!framed && !vision_capture_scaled_into(d, &mon, img, NULL))
		goto fail;
	if (opts->grid)
		vision_grid(img, 0);
	*view = v;
	return img;
fail:
	os_image_destroy(img);
	return NULL;
}
