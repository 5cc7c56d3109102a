/*
 * vision-probe — runs vision/ library calls against the display in $DISPLAY
 * and prints their results, for the integration tests (there is no command
 * for settle or for the model-coordinate find_text outside the agent loop).
 *
 *   vision-probe settle INTERVAL_MS CHECKS CAP_MS
 *       settled=0|1 changed=0|1 waited_ms=N checks=N end=T
 *   vision-probe view [--monitor N] [--max WxH]
 *       view SX SY SW SH MW MH
 *   vision-probe map MX MY [--monitor N] [--max WxH]     model -> root
 *       view ..., then "screen X Y" or the error on stderr (exit 2)
 *   vision-probe find-view TEXT [--monitor N] [--max WxH]
 *       view ..., then "MX MY MW MH CONF TEXT" per match (model pixels)
 *   vision-probe zoom X0 Y0 X1 Y1 OUT.png [--monitor N] [--max WxH]
 *       view ..., then "zoom SX SY SW SH MW MH"
 *
 * T is CLOCK_MONOTONIC in seconds, comparable with xpaint's "done T".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os/os.h"
#include "vision/vision.h"

static void print_view(const char *what, const vision_view *v)
{
	printf("%s %d %d %d %d %d %d\n", what, v->screen_x, v->screen_y, v->screen_w,
	       v->screen_h, v->model_w, v->model_h);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: vision-probe settle|view|map|find-view|zoom ...\n");
		return 2;
	}
	vision_shot_opts so;
	vision_shot_opts_init(&so);
	char *pos[8];
	int npos = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--monitor") == 0 && i + 1 < argc)
			so.monitor = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
			sscanf(argv[++i], "%dx%d", &so.max_w, &so.max_h);
		else if (npos < 8)
			pos[npos++] = argv[i];
	}
	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		fprintf(stderr, "vision-probe: %s\n", os_error());
		return 1;
	}
	int status = 1;
	const char *cmd = argv[1];
	if (strcmp(cmd, "settle") == 0 && npos == 3) {
		vision_settle_opts o = {atoi(pos[0]), atoi(pos[1]), atoi(pos[2])};
		vision_settle_result r;
		if (!vision_settle(d, NULL, &o, &r))
			goto fail;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("settled=%d changed=%d waited_ms=%d checks=%d end=%.6f\n",
		       r.settled, r.changed, r.waited_ms, r.checks,
		       ts.tv_sec + ts.tv_nsec / 1e9);
		status = 0;
		goto out;
	}
	vision_view v;
	os_image *img = vision_shot(d, &so, &v);
	if (img == NULL)
		goto fail;
	os_image_destroy(img);
	print_view("view", &v);
	if (strcmp(cmd, "view") == 0) {
		status = 0;
	} else if (strcmp(cmd, "map") == 0 && npos == 2) {
		int sx, sy;
		if (!vision_model_to_screen(&v, atoi(pos[0]), atoi(pos[1]), &sx, &sy)) {
			fprintf(stderr, "vision-probe: %s\n", vision_error());
			status = 2;
			goto out;
		}
		printf("screen %d %d\n", sx, sy);
		status = 0;
	} else if (strcmp(cmd, "find-view") == 0 && npos == 1) {
		vision_match *m;
		size_t n;
		if (!vision_ocr_find_view(d, &v, pos[0], &m, &n))
			goto fail;
		for (size_t i = 0; i < n; i++)
			printf("%d %d %d %d %.0f %s\n", m[i].x, m[i].y, m[i].width,
			       m[i].height, (double)m[i].confidence, m[i].text);
		vision_matches_free(m, n);
		status = 0;
	} else if (strcmp(cmd, "zoom") == 0 && npos == 5) {
		vision_view zv;
		os_image *z = vision_zoom(d, &v, atoi(pos[0]), atoi(pos[1]), atoi(pos[2]),
		                          atoi(pos[3]), 0, 0, &zv);
		if (z == NULL)
			goto fail;
		bool ok = os_png_write_file(z, pos[4], NULL);
		os_image_destroy(z);
		if (!ok) {
			fprintf(stderr, "vision-probe: %s\n", os_error());
			goto out;
		}
		print_view("zoom", &zv);
		status = 0;
	} else {
		fprintf(stderr, "vision-probe: bad arguments\n");
		status = 2;
	}
	goto out;
fail:
	fprintf(stderr, "vision-probe: %s\n", vision_error());
out:
	os_display_close(d);
	return status;
}
