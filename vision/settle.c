/*
 * vision/settle — wait until the screen stops changing instead of sleeping a
 * fixed time after each action.
 *
 * Each check is one borrowed capture (MIT-SHM: a fraction of a millisecond
 * at 1920x1080) and one XXH3 hash of every row, which runs near memory
 * speed; no copy of the previous picture is kept. Checks are scheduled on
 * absolute deadlines so that capture time does not stretch the interval.
 */
#include <xxhash.h>

#include "base/base.h"
#include "vision/vision-internal.h"

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

/*
 * One picture's hash, captured in strips (as vision_shot does) so the
 * reused capture segment stays small: every row still counts.
 */
static bool check(os_display *d, const os_rect *region, uint64_t *hash)
{
	os_rect r;
	if (region != NULL) {
		r = *region;
	} else {
		r.x = r.y = 0;
		os_screen_size(d, &r.width, &r.height);
	}
	uint64_t h = 0;
	for (int y = 0; y < r.height; y += VISION_STRIP_ROWS) {
		int n = r.height - y < VISION_STRIP_ROWS ? r.height - y : VISION_STRIP_ROWS;
		os_rect s = {r.x, r.y + y, r.width, n};
		const os_image *img = os_capture_borrow(d, &s);
		if (img == NULL)
			return vision_fail_os("settle: capture failed");
		h = XXH3_64bits_withSeed(&h, sizeof(h), vision_image_hash(img));
	}
	*hash = h;
	return true;
}

bool vision_settle(os_display *d, const os_rect *region,
                   const vision_settle_opts *opts, vision_settle_result *result)
{
	vision_settle_opts def;
	if (opts == NULL) {
		vision_settle_opts_init(&def);
		opts = &def;
	}
	if (opts->interval_ms < 1 || opts->stable_checks < 1 || opts->cap_ms < 0)
		return vision_fail("settle: invalid options (interval %d ms, %d checks, "
		                   "cap %d ms)", opts->interval_ms, opts->stable_checks,
		                   opts->cap_ms);
	*result = (vision_settle_result){0};
	int64_t start = base_now_ns();
	int64_t interval = opts->interval_ms * BASE_NS_PER_MS;
	int64_t cap = start + opts->cap_ms * BASE_NS_PER_MS;
	uint64_t prev = 0, cur = 0;
	if (!check(d, region, &prev))
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
		if (!check(d, region, &cur))
			return false;
		result->checks++;
		if (cur == prev) {
			if (++stable >= opts->stable_checks) {
				result->settled = true;
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
