/*
 * PNG comparison for the capture tests, through deskhand's own decoder:
 *
 *   capture-png compare A.png B.png [X,Y,W,H]
 *       compares A with B (or with the region X,Y,W,H of B) pixel by pixel
 *       on the colour channels; prints "size AxB" and "differ N", exits 0
 *       when equal, 1 when not, 2 on unreadable input.
 *   capture-png info A.png
 *       prints "WxH".
 *   capture-png dump A.png
 *       writes the pixels to standard output as raw RGB, row after row.
 *   capture-png shots DIR X,Y,W,H...
 *       captures each region (0,0,0,0: the whole screen) in turn on one
 *       connection, as a long-lived process does, twice: straight into
 *       DIR/N.png (os_capture_png_file, in strips) and through
 *       os_capture_borrow + os_png_write_file into DIR/N-borrow.png.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"

static int shots(const char *dir, int n, char **regions)
{
	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		fprintf(stderr, "capture-png: %s\n", os_error());
		return 2;
	}
	int status = 0;
	for (int i = 0; i < n && status == 0; i++) {
		os_rect r;
		if (sscanf(regions[i], "%d,%d,%d,%d", &r.x, &r.y, &r.width,
		           &r.height) != 4) {
			fprintf(stderr, "capture-png: bad region %s\n", regions[i]);
			status = 2;
			break;
		}
		const os_rect *want = r.width > 0 ? &r : NULL;
		char path[4096], borrowed[4096];
		snprintf(path, sizeof(path), "%s/%d.png", dir, i);
		snprintf(borrowed, sizeof(borrowed), "%s/%d-borrow.png", dir, i);
		const os_image *img;
		if (!os_capture_png_file(d, want, path, NULL) ||
		    (img = os_capture_borrow(d, want)) == NULL ||
		    !os_png_write_file(img, borrowed, NULL)) {
			fprintf(stderr, "capture-png: %s\n", os_error());
			status = 2;
		}
	}
	os_display_close(d);
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "shots") == 0)
		return shots(argv[2], argc - 3, argv + 3);
	if (argc >= 3 && strcmp(argv[1], "info") == 0) {
		os_image *a = os_png_read_file(argv[2]);
		if (a == NULL) {
			fprintf(stderr, "capture-png: %s\n", os_error());
			return 2;
		}
		printf("%dx%d\n", a->width, a->height);
		os_image_destroy(a);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "dump") == 0) {
		os_image *a = os_png_read_file(argv[2]);
		if (a == NULL) {
			fprintf(stderr, "capture-png: %s\n", os_error());
			return 2;
		}
		for (int y = 0; y < a->height; y++)
			for (int x = 0; x < a->width; x++) {
				const uint8_t *p = a->pixels + (size_t)y * (size_t)a->stride +
				                   (size_t)x * 4;
				uint8_t rgb[3] = {p[2], p[1], p[0]};
				fwrite(rgb, 1, 3, stdout);
			}
		os_image_destroy(a);
		return fflush(stdout) == 0 ? 0 : 2;
	}
	if (argc < 4 || strcmp(argv[1], "compare") != 0) {
		fprintf(stderr, "usage: capture-png compare A B [X,Y,W,H] | info A | dump A\n");
		return 2;
	}
	os_image *a = os_png_read_file(argv[2]);
	os_image *b = a ? os_png_read_file(argv[3]) : NULL;
	if (a == NULL || b == NULL) {
		fprintf(stderr, "capture-png: %s\n", os_error());
		os_image_destroy(a);
		return 2;
	}
	int x = 0, y = 0, w = b->width, h = b->height;
	if (argc >= 5 && sscanf(argv[4], "%d,%d,%d,%d", &x, &y, &w, &h) != 4) {
		fprintf(stderr, "capture-png: bad region %s\n", argv[4]);
		return 2;
	}
	printf("size %dx%d %dx%d\n", a->width, a->height, w, h);
	if (a->width != w || a->height != h || x < 0 || y < 0 ||
	    x + w > b->width || y + h > b->height) {
		printf("differ size\n");
		return 1;
	}
	long differ = 0;
	for (int r = 0; r < h; r++) {
		const uint8_t *pa = a->pixels + (size_t)r * (size_t)a->stride;
		const uint8_t *pb = b->pixels + (size_t)(r + y) * (size_t)b->stride +
		                    (size_t)x * 4;
		for (int c = 0; c < w; c++)
			if (memcmp(pa + c * 4, pb + c * 4, 3) != 0)
				differ++;
	}
	printf("differ %ld\n", differ);
	os_image_destroy(a);
	os_image_destroy(b);
	return differ == 0 ? 0 : 1;
}
