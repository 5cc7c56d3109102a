/*
 * gnome-step — one connection to GNOME's Mutter (the gnome backend), as a
 * long-lived process (the agent) holds it, driven by its arguments in
 * turn, one line of output each:
 *
 *   open                 "open ms=M" (the sessions' and streams' set-up)
 *   pixel X Y            a capture of the screen: "pixel X Y RRGGBB ms=M
 *                        received=R taken=T" (PipeWire frames delivered,
 *                        captures that took a new one)
 *   click X Y            os_mouse_move + os_mouse_click (left): "click ms=M"
 *   pointer              os_pointer: "pointer X Y ms=M"
 *   strips X Y W H       reads the region in 64-row strips as vision/ does:
 *                        "strips ms=M taken=T" (new frames taken by the
 *                        strips after the first) and the strips' pixels
 *                        compared with one whole capture: "same=1"
 *   wait                 reads a colour RRGGBB from stdin
 *   poll X Y             captures until (X,Y) is that colour, 5 ms apart,
 *                        200 at most: "poll X Y RRGGBB captures=N"
 *   sleep MS
 *
 * Exits 1 at the first failure, with the error on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os/gnome/gnome-internal.h"
#include "os/os.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "gnome-step: %s: %s\n", what, os_error());
	return 1;
}

static int strips(os_display *d, int x, int y, int w, int h)
{
	uint64_t r0, t0, r1, t1;
	os_gnome_capture_stats(d, &r0, &t0);
	unsigned char *buf = malloc((size_t)w * (size_t)h * 4);
	double t = now_ms();
	for (int sy = 0; sy < h; sy += 64) {
		os_rect r = {x, y + sy, w, sy + 64 <= h ? 64 : h - sy};
		const os_image *img = os_capture_borrow(d, &r);
		if (img == NULL)
			return die("strip");
		for (int row = 0; row < r.height; row++)
			memcpy(buf + (size_t)(sy + row) * (size_t)w * 4,
			       img->pixels + (size_t)row * (size_t)img->stride, (size_t)w * 4);
		if (sy == 0)  /* the first strip may take the newest frames */
			os_gnome_capture_stats(d, &r0, &t0);
	}
	double ms = now_ms() - t;
	os_gnome_capture_stats(d, &r1, &t1);
	os_rect whole = {x, y, w, h};
	const os_image *img = os_capture_borrow(d, &whole);
	if (img == NULL)
		return die("whole");
	int same = 1;
	for (int row = 0; row < h && same; row++)
		same = memcmp(buf + (size_t)row * (size_t)w * 4,
		              img->pixels + (size_t)row * (size_t)img->stride, (size_t)w * 4) == 0;
	printf("strips ms=%.1f taken=%llu same=%d\n", ms, (unsigned long long)(t1 - t0), same);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	char want[16] = "";
	os_display_prefer(OS_BACKEND_GNOME);
	double t = now_ms();
	os_display *d = os_display_open(NULL);
	if (d == NULL)
		return die("open");
	printf("open ms=%.1f\n", now_ms() - t);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "open") == 0) {
			continue;
		} else if (strcmp(argv[i], "pixel") == 0 && i + 2 < argc) {
			int x = atoi(argv[i + 1]), y = atoi(argv[i + 2]);
			i += 2;
			t = now_ms();
			const os_image *img = os_capture_borrow(d, NULL);
			if (img == NULL)
				return die("capture");
			double ms = now_ms() - t;
			const unsigned char *p = img->pixels + (size_t)y * (size_t)img->stride + (size_t)x * 4;
			uint64_t rec, taken;
			os_gnome_capture_stats(d, &rec, &taken);
			printf("pixel %d %d %02x%02x%02x ms=%.1f received=%llu taken=%llu\n", x, y,
			       p[2], p[1], p[0], ms, (unsigned long long)rec, (unsigned long long)taken);
		} else if (strcmp(argv[i], "click") == 0 && i + 2 < argc) {
			int x = atoi(argv[i + 1]), y = atoi(argv[i + 2]);
			i += 2;
			t = now_ms();
			if (!os_mouse_move(d, x, y) || !os_mouse_click(d, OS_BUTTON_LEFT, 1))
				return die("click");
			printf("click ms=%.1f\n", now_ms() - t);
		} else if (strcmp(argv[i], "pointer") == 0) {
			int x, y;
			t = now_ms();
			if (!os_pointer(d, &x, &y))
				return die("pointer");
			printf("pointer %d %d ms=%.1f\n", x, y, now_ms() - t);
		} else if (strcmp(argv[i], "strips") == 0 && i + 4 < argc) {
			if (strips(d, atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]),
			           atoi(argv[i + 4])) != 0)
				return 1;
			i += 4;
		} else if (strcmp(argv[i], "wait") == 0) {
			if (fgets(want, sizeof(want), stdin) == NULL)
				return die("wait");
			want[strcspn(want, "\n")] = '\0';
		} else if (strcmp(argv[i], "poll") == 0 && i + 2 < argc) {
			int x = atoi(argv[i + 1]), y = atoi(argv[i + 2]), n = 0;
			i += 2;
			char got[8] = "";
			while (n < 200 && strcmp(got, want) != 0) {
				const os_image *img = os_capture_borrow(d, NULL);
				if (img == NULL)
					return die("capture");
				const unsigned char *p = img->pixels + (size_t)y * (size_t)img->stride +
				                         (size_t)x * 4;
				snprintf(got, sizeof(got), "%02x%02x%02x", p[2], p[1], p[0]);
				if (++n < 200 && strcmp(got, want) != 0) {
					struct timespec ts = {0, 5000000L};
					nanosleep(&ts, NULL);
				}
			}
			printf("poll %d %d %s captures=%d\n", x, y, got, n);
		} else if (strcmp(argv[i], "sleep") == 0 && i + 1 < argc) {
			struct timespec ts = {0, atoi(argv[++i]) * 1000000L};
			nanosleep(&ts, NULL);
		} else {
			fprintf(stderr, "gnome-step: bad argument %s\n", argv[i]);
			return 2;
		}
		fflush(stdout);
	}
	os_display_close(d);
	return 0;
}
