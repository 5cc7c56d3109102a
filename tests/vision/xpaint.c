/*
 * xpaint — a tiny X client for the vision tests: a borderless,
 * override-redirect window of one colour at an exact place, optionally
 * repainting it in a new shade every PERIOD_MS for a while (something that
 * is "still drawing"; every frame differs from the last 255, so no check
 * interval can alias two frames into one picture).
 *
 *   xpaint X Y W H RRGGBB [ANIMATE_MS [PERIOD_MS]]
 *
 * Prints "ready WINDOW-ID" once the window is on the screen and, when animating,
 * "done T" (CLOCK_MONOTONIC seconds) after the last change; ANIMATE_MS 0
 * animates until killed. Then waits to be killed.
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: xpaint X Y W H RRGGBB [ANIMATE_MS [PERIOD_MS]]\n");
		return 2;
	}
	int x = atoi(argv[1]), y = atoi(argv[2]);
	unsigned w = (unsigned)atoi(argv[3]), h = (unsigned)atoi(argv[4]);
	unsigned long colour = strtoul(argv[5], NULL, 16) & 0xffffff;
	int animate = argc > 6 ? atoi(argv[6]) : -1;
	int period = argc > 7 ? atoi(argv[7]) : 5;
	Display *dpy = XOpenDisplay(NULL);
	if (dpy == NULL) {
		fprintf(stderr, "xpaint: cannot open display\n");
		return 1;
	}
	int scr = DefaultScreen(dpy);
	XSetWindowAttributes a = {0};
	a.override_redirect = True;
	a.background_pixel = colour;  /* TrueColor 24-bit: 0xRRGGBB */
	a.event_mask = ExposureMask | StructureNotifyMask;
	Window win = XCreateWindow(dpy, RootWindow(dpy, scr), x, y, w, h, 0,
	                           CopyFromParent, InputOutput, CopyFromParent,
	                           CWOverrideRedirect | CWBackPixel | CWEventMask, &a);
	XMapRaised(dpy, win);
	for (;;) {
		XEvent ev;
		XNextEvent(dpy, &ev);
		if (ev.type == Expose)
			break;
	}
	XSync(dpy, False);
	printf("ready 0x%lx\n", (unsigned long)win);
	fflush(stdout);
	if (animate >= 0) {
		double end = now_s() + animate / 1000.0;
		unsigned long frame = 0;
		while (animate == 0 || now_s() < end) {
			frame = (frame + 1) & 0xff;
			/* cycle the green channel through all 256 values */
			XSetWindowBackground(dpy, win, (colour & 0xff00ff) | (frame << 8));
			XClearWindow(dpy, win);
			XSync(dpy, False);
			usleep((useconds_t)period * 1000);
		}
		XSetWindowBackground(dpy, win, colour);
		XClearWindow(dpy, win);
		XSync(dpy, False);
		printf("done %.6f\n", now_s());
		fflush(stdout);
	}
	for (;;)
		pause();
}
