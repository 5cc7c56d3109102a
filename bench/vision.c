/*
 * bench/vision — the cost of the model's view, in process, on the display in
 * $DISPLAY (bench/vision.sh starts a busy Xvfb and runs this):
 *   capture       os_capture_borrow of the whole screen (MIT-SHM)
 *   scale         vision_scale of that capture to the model size
 *   encode        os_png_encode of the scaled image (tuned defaults)
 *   view          vision_shot + os_png_encode: what the loop does per step
 *   settle        vision_settle on the still screen (default options)
 *   step          settle + view: the vision part of one OS step
 * Each figure is the mean over RUNS (default 50) after two warm-up runs,
 * with the median and minimum beside it.
 *
 *   bench-vision [RUNS] [--max WxH]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os/os.h"
#include "vision/vision.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Why one_view failed: the module's own message. */
static const char *view_error = "";

/*
 * The model's view as the agent makes it: settle first when `settle` is
 * given, then capture, scale and encode. False with view_error set.
 */
static bool one_view(os_display *d, const vision_settle_opts *settle,
                     const vision_shot_opts *so, size_t *png_len)
{
	vision_settle_result r;
	vision_view v;
	uint8_t *png = NULL;
	if (settle != NULL && !vision_settle(d, NULL, settle, &r)) {
		view_error = vision_error();
		return false;
	}
	os_image *img = vision_shot(d, so, &v);
	if (img == NULL) {
		view_error = vision_error();
		return false;
	}
	bool ok = os_png_encode(img, &png, png_len, NULL);
	if (!ok)
		view_error = os_error();
	os_image_destroy(img);
	free(png);
	return ok;
}

static void report(const char *what, double *t, int n, const char *extra)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += t[i];
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	printf("%-8s mean %7.2f ms   median %7.2f ms   min %7.2f ms%s\n", what,
	       sum / n, t[n / 2], t[0], extra);
}

int main(int argc, char **argv)
{
	int runs = 50, max_w = 1280, max_h = 800;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
			if (sscanf(argv[++i], "%dx%d", &max_w, &max_h) != 2) {
				fprintf(stderr, "bench-vision: --max WxH\n");
				return 2;
			}
		} else {
			runs = atoi(argv[i]);
			if (runs < 1) {
				fprintf(stderr, "usage: bench-vision [RUNS] [--max WxH]\n");
				return 2;
			}
		}
	}
	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		fprintf(stderr, "bench-vision: %s\n", os_error());
		return 1;
	}
	int sw, sh;
	os_screen_size(d, &sw, &sh);
	vision_shot_opts so;
	vision_shot_opts_init(&so);
	so.max_w = max_w;
	so.max_h = max_h;
	int mw, mh;
	vision_fit(sw, sh, max_w, max_h, &mw, &mh);
	printf("screen %dx%d, model view %dx%d, capture through %s, %d runs\n",
	       sw, sh, mw, mh, os_capture_uses_shm(d) ? "MIT-SHM" : "XGetImage",
	       runs);

	double *t = calloc((size_t)runs, sizeof(double));
	os_image *model = os_image_create(mw, mh);
	if (t == NULL || model == NULL)
		return 1;
	size_t png_len = 0;
	char extra[96];
	int status = 1;

	for (int i = -2; i < runs; i++) {
		double t0 = now_ms();
		if (os_capture_borrow(d, NULL) == NULL)
			goto fail_os;
		if (i >= 0)
			t[i] = now_ms() - t0;
	}
	report("capture", t, runs, "");

	const os_image *cap = os_capture_borrow(d, NULL);
	if (cap == NULL)
		goto fail_os;
	os_image *full = os_capture(d, NULL);
	if (full == NULL)
		goto fail_os;
	for (int i = -2; i < runs; i++) {
		double t0 = now_ms();
		if (!vision_scale(full, model))
			goto fail_vision;
		if (i >= 0)
			t[i] = now_ms() - t0;
	}
	os_image_destroy(full);
	snprintf(extra, sizeof(extra), "   (%dx%d -> %dx%d)", sw, sh, mw, mh);
	report("scale", t, runs, extra);

	for (int i = -2; i < runs; i++) {
		uint8_t *png = NULL;
		double t0 = now_ms();
		if (!os_png_encode(model, &png, &png_len, NULL))
			goto fail_os;
		if (i >= 0)
			t[i] = now_ms() - t0;
		free(png);
	}
	snprintf(extra, sizeof(extra), "   (%zu KB)", png_len / 1024);
	report("encode", t, runs, extra);

	for (int i = -2; i < runs; i++) {
		double t0 = now_ms();
		if (!one_view(d, NULL, &so, &png_len))
			goto fail;
		if (i >= 0)
			t[i] = now_ms() - t0;
	}
	report("view", t, runs, "   (capture + scale + encode)");

	vision_settle_opts st;
	vision_settle_opts_init(&st);
	int unsettled = 0;
	for (int i = -2; i < runs; i++) {
		vision_settle_result r;
		double t0 = now_ms();
		if (!vision_settle(d, NULL, &st, &r))
			goto fail_vision;
		if (i >= 0) {
			t[i] = now_ms() - t0;
			unsettled += !r.settled;
		}
	}
	snprintf(extra, sizeof(extra), "   (still screen, %d ms interval, %d checks%s)",
	         st.interval_ms, st.stable_checks, unsettled ? ", SOME DID NOT SETTLE" : "");
	report("settle", t, runs, extra);

	for (int i = -2; i < runs; i++) {
		double t0 = now_ms();
		if (!one_view(d, &st, &so, &png_len))
			goto fail;
		if (i >= 0)
			t[i] = now_ms() - t0;
	}
	report("step", t, runs, "   (settle + view)");
	status = 0;
	goto out;

fail:
	fprintf(stderr, "bench-vision: %s\n", view_error);
	goto out;

fail_os:
	fprintf(stderr, "bench-vision: %s\n", os_error());
	goto out;
fail_vision:
	fprintf(stderr, "bench-vision: %s\n", vision_error());
out:
	os_image_destroy(model);
	free(t);
	os_display_close(d);
	return status;
}
