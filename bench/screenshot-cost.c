/*
 * In-process cost of a screenshot on the current $DISPLAY: capture through
 * MIT-SHM and through XGetImage (borrowed and owned), then PNG encoding of
 * that capture with the default settings and a grid of levels and filters.
 * Prints medians of `runs` repetitions (default 15). Used by
 * bench/screenshot; run alone as: screenshot-cost [RUNS] [--grid]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/os.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median time of `runs` captures; first_ms gets the first (cold) one. */
static bool time_capture(os_display *d, bool borrow, int runs, double *med,
                         double *first_ms)
{
	double *t = calloc((size_t)runs, sizeof(*t));
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();
		if (borrow) {
			if (os_capture_borrow(d, NULL) == NULL)
				goto fail;
		} else {
			os_image *img = os_capture(d, NULL);
			if (img == NULL)
				goto fail;
			os_image_destroy(img);
		}
		t[i] = now_ms() - t0;
	}
	*first_ms = t[0];
	*med = median(t, runs);
	free(t);
	return true;
fail:
	fprintf(stderr, "screenshot-cost: %s\n", os_error());
	free(t);
	return false;
}

static void time_encode(const os_image *img, int level, int filter,
                        const char *label, int runs)
{
	double *t = calloc((size_t)runs, sizeof(*t));
	size_t len = 0;
	os_png_options opt = {level, filter};
	for (int i = 0; i < runs; i++) {
		uint8_t *png = NULL;
		double t0 = now_ms();
		if (!os_png_encode(img, &png, &len, &opt)) {
			fprintf(stderr, "screenshot-cost: %s\n", os_error());
			exit(1);
		}
		t[i] = now_ms() - t0;
		free(png);
	}
	printf("encode %-22s %7.1f ms %9zu bytes\n", label, median(t, runs), len);
	free(t);
}

/*
 * The screenshot command's path (os_capture_png_fd: strips, each band
 * compressed as soon as it is there) against capture, then encode; to
 * /dev/null, interleaved. The strips are used on a first capture only
 * (bench/screenshot times that, whole process): here both should match.
 */
static bool time_to_png(os_display *d, int runs)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double *t[2] = {calloc((size_t)runs, sizeof(double)),
	                calloc((size_t)runs, sizeof(double))};
	bool ok = fd >= 0 && t[0] != NULL && t[1] != NULL;
	for (int i = 0; i < runs && ok; i++) {
		double t0 = now_ms();
		ok = os_capture_png_fd(d, NULL, fd, NULL);
		double t1 = now_ms();
		const os_image *img = os_capture_borrow(d, NULL);
		ok = ok && img != NULL && os_png_write_fd(img, fd, NULL);
		t[0][i] = t1 - t0;
		t[1][i] = now_ms() - t1;
	}
	if (ok) {
		printf("to PNG in strips           %7.2f ms\n", median(t[0], runs));
		printf("to PNG, capture then encode %6.2f ms\n", median(t[1], runs));
	} else {
		fprintf(stderr, "screenshot-cost: %s\n", os_error());
	}
	free(t[0]);
	free(t[1]);
	if (fd >= 0)
		close(fd);
	return ok;
}

int main(int argc, char **argv)
{
	int runs = 15;
	bool grid = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--grid") == 0)
			grid = true;
		else
			runs = atoi(argv[i]);
	}
	if (runs < 1)
		runs = 1;
	os_display *shm = os_display_open(NULL);
	if (shm == NULL) {
		fprintf(stderr, "screenshot-cost: %s\n", os_error());
		return 1;
	}
	int w, h;
	os_screen_size(shm, &w, &h);
	double med, first;
	printf("screen %dx%d, %d runs, medians\n", w, h, runs);
	if (!os_capture_uses_shm(shm))
		printf("capture: MIT-SHM not available on this display\n");
	if (!time_capture(shm, true, runs, &med, &first))
		return 1;
	printf("capture %-21s %7.2f ms (first %.2f ms)\n",
	       os_capture_uses_shm(shm) ? "shm borrow" : "xgetimage borrow", med,
	       first);
	if (!time_capture(shm, false, runs, &med, &first))
		return 1;
	printf("capture %-21s %7.2f ms\n",
	       os_capture_uses_shm(shm) ? "shm + copy" : "xgetimage + copy", med);

	setenv("DESKHAND_NO_SHM", "1", 1);
	os_display *get = os_display_open(NULL);
	if (get == NULL || os_capture_uses_shm(get))
		return 1;
	if (!time_capture(get, true, runs, &med, &first))
		return 1;
	printf("capture %-21s %7.2f ms\n", "xgetimage borrow", med);
	os_display_close(get);

	os_image *img = os_capture(shm, NULL);
	if (img == NULL)
		return 1;
	time_encode(img, -1, -1, "default", runs);
	if (!time_to_png(shm, runs))
		return 1;
	if (grid) {
		static const struct {
			int bits;
			const char *name;
		} filters[] = {
			{OS_PNG_FILTER_NONE, "none"}, {OS_PNG_FILTER_SUB, "sub"},
			{OS_PNG_FILTER_UP, "up"}, {OS_PNG_FILTER_AVG, "avg"},
			{OS_PNG_FILTER_PAETH, "paeth"}, {OS_PNG_FILTER_ALL, "adaptive"},
		};
		for (int level = 1; level <= 9; level += (level < 3 ? 1 : 3))
			for (size_t f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
				char label[64];
				snprintf(label, sizeof(label), "level %d %s", level,
				         filters[f].name);
				time_encode(img, level, filters[f].bits, label,
				            runs > 5 ? 5 : runs);
			}
	}
	os_image_destroy(img);
	os_display_close(shm);
	return 0;
}
