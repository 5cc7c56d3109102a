/*
 * A small X client for the capture and window tests: it makes the windows
 * whose properties the tests then read back through deskhand, and it
 * churns windows to race the window listing.
 *
 *   capture-xclient window [--class C] [--utf8-name T] [--latin1-name T]
 *                   [--compound-name T] [--no-pid] [--geometry WxH+X+Y]
 *       creates and maps a top-level window, prints its id ("0x...") and
 *       keeps it until standard input closes. --latin1-name takes UTF-8 and
 *       stores it as STRING (ISO 8859-1) in WM_NAME; --compound-name stores
 *       it as COMPOUND_TEXT in WM_NAME; --utf8-name sets _NET_WM_NAME.
 *   capture-xclient framed [--utf8-name T]
 *       plays a reparenting window manager without EWMH: a frame window
 *       (no WM_STATE) at 50,50 holding a client window with WM_STATE at
 *       10,20 inside it; prints "FRAME CLIENT" and waits like `window`.
 *   capture-xclient churn SECONDS
 *       creates, maps and destroys named top-level windows in a loop.
 *   capture-xclient flood SECONDS [POOL [PAUSE_US]]
 *       keeps POOL (default 32, at most 4096) named top-level windows
 *       mapped, destroying the oldest and mapping a new one as fast as the
 *       server takes them (or PAUSE_US microseconds apart: a window
 *       manager then has the time to manage them, and lists them), so
 *       that a listing finds windows and loses some of them while it reads
 *       them; prints "ready" once the first POOL are mapped.
 */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ignore_errors(Display *d, XErrorEvent *e)
{
	(void)d;
	(void)e;
	return 0;
}

static void set_pid(Display *dpy, Window w)
{
	long pid = (long)getpid();
	XChangeProperty(dpy, w, XInternAtom(dpy, "_NET_WM_PID", False),
	                XA_CARDINAL, 32, PropModeReplace, (unsigned char *)&pid, 1);
}

/* UTF-8 to ISO 8859-1 bytes (code points above 0xff become '?'). */
static char *to_latin1(const char *s)
{
	char *out = malloc(strlen(s) + 1);
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		unsigned cp;
		if (*p < 0x80) {
			cp = *p++;
		} else if ((*p & 0xe0) == 0xc0 && p[1]) {
			cp = (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
			p += 2;
		} else {
			cp = '?';
			p++;
			while ((*p & 0xc0) == 0x80)
				p++;
		}
		out[o++] = (char)(cp <= 0xff ? cp : '?');
	}
	out[o] = '\0';
	return out;
}

static int cmd_window(Display *dpy, int argc, char **argv)
{
	const char *klass = "CaptureTest", *utf8 = NULL, *latin1 = NULL;
	const char *compound = NULL;
	unsigned w = 200, h = 100;
	int x = 10, y = 10;
	int pid = 1;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--no-pid") == 0)
			pid = 0;
		else if (i + 1 >= argc)
			return 2;
		else if (strcmp(argv[i], "--class") == 0)
			klass = argv[++i];
		else if (strcmp(argv[i], "--utf8-name") == 0)
			utf8 = argv[++i];
		else if (strcmp(argv[i], "--latin1-name") == 0)
			latin1 = argv[++i];
		else if (strcmp(argv[i], "--compound-name") == 0)
			compound = argv[++i];
		else if (strcmp(argv[i], "--geometry") == 0) {
			if (sscanf(argv[++i], "%ux%u+%d+%d", &w, &h, &x, &y) != 4)
				return 2;
		} else
			return 2;
	}
	Window win = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), x, y, w, h,
	                                 0, 0, 0xffffff);
	XClassHint hint = {(char *)"capture-xclient", (char *)klass};
	XSetClassHint(dpy, win, &hint);
	if (pid)
		set_pid(dpy, win);
	if (utf8 != NULL)
		XChangeProperty(dpy, win, XInternAtom(dpy, "_NET_WM_NAME", False),
		                XInternAtom(dpy, "UTF8_STRING", False), 8,
		                PropModeReplace, (const unsigned char *)utf8,
		                (int)strlen(utf8));
	if (latin1 != NULL) {
		char *l = to_latin1(latin1);
		XChangeProperty(dpy, win, XA_WM_NAME, XA_STRING, 8, PropModeReplace,
		                (unsigned char *)l, (int)strlen(l));
		free(l);
	}
	if (compound != NULL) {
		XTextProperty tp;
		char *list[1] = {(char *)compound};
		if (Xutf8TextListToTextProperty(dpy, list, 1, XCompoundTextStyle,
		                                &tp) != Success) {
			fprintf(stderr, "cannot convert to COMPOUND_TEXT\n");
			return 1;
		}
		XSetWMName(dpy, win, &tp);
		XFree(tp.value);
	}
	XMapWindow(dpy, win);
	XSync(dpy, False);
	printf("0x%lx\n", win);
	fflush(stdout);
	char buf[64];
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

static int cmd_framed(Display *dpy, int argc, char **argv)
{
	const char *name = "framed client";
	if (argc >= 4 && strcmp(argv[2], "--utf8-name") == 0)
		name = argv[3];
	Window frame = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), 50, 50,
	                                   300, 200, 0, 0, 0x808080);
	Window client = XCreateSimpleWindow(dpy, frame, 10, 20, 280, 170, 0, 0,
	                                    0xffffff);
	Atom wm_state = XInternAtom(dpy, "WM_STATE", False);
	long state[2] = {NormalState, None};
	XChangeProperty(dpy, client, wm_state, wm_state, 32, PropModeReplace,
	                (unsigned char *)state, 2);
	XChangeProperty(dpy, client, XInternAtom(dpy, "_NET_WM_NAME", False),
	                XInternAtom(dpy, "UTF8_STRING", False), 8, PropModeReplace,
	                (const unsigned char *)name, (int)strlen(name));
	XClassHint hint = {(char *)"framed", (char *)"Framed"};
	XSetClassHint(dpy, client, &hint);
	set_pid(dpy, client);
	XMapWindow(dpy, client);
	XMapWindow(dpy, frame);
	XSync(dpy, False);
	printf("0x%lx 0x%lx\n", frame, client);
	fflush(stdout);
	char buf[64];
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

static int cmd_churn(Display *dpy, int argc, char **argv)
{
	if (argc < 3)
		return 2;
	double seconds = atof(argv[2]);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Atom name = XInternAtom(dpy, "_NET_WM_NAME", False);
	Atom utf8 = XInternAtom(dpy, "UTF8_STRING", False);
	unsigned long n = 0;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) +
		    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			break;
		Window ws[8];
		for (int i = 0; i < 8; i++) {
			ws[i] = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), i * 20,
			                            i * 10, 50, 50, 0, 0, 0);
			XStoreName(dpy, ws[i], "churn");
			XChangeProperty(dpy, ws[i], name, utf8, 8, PropModeReplace,
			                (const unsigned char *)"churn", 5);
			set_pid(dpy, ws[i]);
			XMapWindow(dpy, ws[i]);
		}
		XSync(dpy, False);
		/* Alive for a moment, so that listings see them and then lose
		 * them half-way through reading their properties. */
		nanosleep(&(struct timespec){0, (long)(n % 4) * 500000}, NULL);
		for (int i = 0; i < 8; i++) {
			XDestroyWindow(dpy, ws[i]);
			XFlush(dpy);
		}
		XSync(dpy, False);
		n++;
	}
	printf("%lu\n", n * 8);
	return 0;
}

/* One flood window: named, with a pid, a class and some size, mapped. */
static Window flood_window(Display *dpy, unsigned long n, Atom name, Atom utf8)
{
	Window w = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), (int)(n % 40) * 15,
	                               (int)(n % 30) * 12, 60 + (unsigned)(n % 7) * 10, 40, 0, 0,
	                               0xffffff);
	char title[32];
	int len = snprintf(title, sizeof(title), "flood %lu", n);
	XStoreName(dpy, w, title);
	XChangeProperty(dpy, w, name, utf8, 8, PropModeReplace, (const unsigned char *)title, len);
	char res_name[] = "flood", res_class[] = "Flood";
	XClassHint hint = {res_name, res_class};
	XSetClassHint(dpy, w, &hint);
	set_pid(dpy, w);
	XMapWindow(dpy, w);
	return w;
}

static int cmd_flood(Display *dpy, int argc, char **argv)
{
	if (argc < 3)
		return 2;
	double seconds = atof(argv[2]);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Atom name = XInternAtom(dpy, "_NET_WM_NAME", False);
	Atom utf8 = XInternAtom(dpy, "UTF8_STRING", False);
	unsigned long size = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
	if (size < 1 || size > 4096)
		return 2;
	long pause_us = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
	if (pause_us < 0 || pause_us > 1000000)
		return 2;
	Window pool[4096];
	unsigned long n = 0;
	for (; n < size; n++)
		pool[n] = flood_window(dpy, n, name, utf8);
	XSync(dpy, False);
	printf("ready\n");
	fflush(stdout);
	for (;; n++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			break;
		XDestroyWindow(dpy, pool[n % size]);
		pool[n % size] = flood_window(dpy, n, name, utf8);
		/* Now and then a round trip, so the flood goes at the server's
		 * pace instead of piling requests up in the connection. */
		if (n % 32 == 0 || pause_us > 0)
			XSync(dpy, False);
		else
			XFlush(dpy);
		if (pause_us > 0)
			nanosleep(&(struct timespec){0, pause_us * 1000}, NULL);
	}
	printf("%lu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	if (argc < 2) {
		fprintf(stderr, "usage: capture-xclient window|framed|churn|flood ...\n");
		return 2;
	}
	Display *dpy = XOpenDisplay(NULL);
	if (dpy == NULL) {
		fprintf(stderr, "capture-xclient: cannot open display\n");
		return 1;
	}
	XSetErrorHandler(ignore_errors);
	int rc = 2;
	if (strcmp(argv[1], "window") == 0)
		rc = cmd_window(dpy, argc, argv);
	else if (strcmp(argv[1], "framed") == 0)
		rc = cmd_framed(dpy, argc, argv);
	else if (strcmp(argv[1], "churn") == 0)
		rc = cmd_churn(dpy, argc, argv);
	else if (strcmp(argv[1], "flood") == 0)
		rc = cmd_flood(dpy, argc, argv);
	XCloseDisplay(dpy);
	return rc;
}
