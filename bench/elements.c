/*
 * bench-elements: the cost of reading the active window's accessibility
 * tree (vision_elements_read) in process, as the agent pays it per
 * `elements` action or element: target. Run on a prepared display (see
 * bench/elements, which starts Xvfb, a session bus and the app):
 *   bench-elements [RUNS]
 * prints the first call (connection included), then median, min and max
 * of the others, with the nodes visited, the elements kept and the D-Bus
 * calls to the application per read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vision/vision.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 30;
	if (runs < 2 || runs > 10000) {
		fprintf(stderr, "usage: bench-elements [RUNS >= 2]\n");
		return 2;
	}
	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		fprintf(stderr, "bench-elements: %s\n", os_error());
		return 1;
	}
	double *ms = calloc((size_t)runs, sizeof(*ms));
	int nodes = 0, calls = 0;
	size_t count = 0;
	for (int i = 0; ms != NULL && i < runs; i++) {
		double t0 = now_ms();
		vision_elements *e = vision_elements_read(d, NULL);
		ms[i] = now_ms() - t0;
		if (e == NULL) {
			fprintf(stderr, "bench-elements: %s\n", vision_error());
			return 1;
		}
		if (e->note[0] != '\0')
			fprintf(stderr, "bench-elements: note: %s\n", e->note);
		nodes = e->nodes;
		calls = e->calls;
		count = e->count;
		vision_elements_destroy(e);
	}
	if (ms == NULL)
		return 1;
	double first = ms[0];
	qsort(ms + 1, (size_t)runs - 1, sizeof(*ms), cmp);
	printf("elements: %d nodes visited, %zu kept, %d calls to the app; first call %.1f ms; "
	       "then median %.1f ms (min %.1f, max %.1f, %d runs)\n",
	       nodes, count, calls, first, ms[1 + (runs - 1) / 2], ms[1], ms[runs - 1], runs - 1);
	free(ms);
	os_display_close(d);
	return 0;
}
