/*
 * xrecord — the X client that input tests type and click into. It behaves
 * like an ordinary Xlib application (takes focus, refreshes its keymap on
 * MappingNotify, decodes keys with XLookupString) and writes one line per
 * event to stdout, flushed:
 *
 *   ready window=0x200001
 *   press button=1 x=100 y=200 state=0x0 time=123456
 *   release button=1 x=100 y=200 state=0x100 time=123456
 *   motion x=10 y=20 state=0x0
 *   key-press keycode=28 keysym=0x74 name=t state=0x5 sym=0x54 symname=T
 *   key-release ...
 *   mapping request=keyboard first=93 count=1
 *
 * With XRECORD_STAMP set in the environment every line starts with the
 * CLOCK_MONOTONIC time it was handled at, to compare with another
 * process's timeline when debugging.
 *
 * Other modes:
 *   xrecord [--geometry WxH+X+Y]  record (default: the whole screen)
 *   xrecord --noise N             record the whole screen, an NxN square of
 *                                 pseudo-random pixels at its top left: a
 *                                 screenshot that weighs what a real desktop's
 *                                 does (a white one compresses to nothing)
 *   xrecord --state               print "keys-down K,K,..." (XQueryKeymap)
 *                                 and "state mods=0x.. locked=0x..
 *                                 buttons=0x..", then exit
 *   xrecord --focus TITLE         wait (10 s at most) for a top-level window
 *                                 named TITLE, give it the input focus,
 *                                 print "focused 0x..", exit (there is no
 *                                 window manager on the test servers)
 */
#include <X11/XKBlib.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static Display *dpy;

static int print_state(void)
{
	char keys[32];
	XQueryKeymap(dpy, keys);
	printf("keys-down ");
	int n = 0;
	for (int k = 0; k < 256; k++)
		if (keys[k / 8] & (1 << (k % 8)))
			printf("%s%d", n++ ? "," : "", k);
	printf("\n");
	XkbStateRec xs;
	XkbGetState(dpy, XkbUseCoreKbd, &xs);
	Window r, c;
	int rx, ry, wx, wy;
	unsigned mask = 0;
	XQueryPointer(dpy, DefaultRootWindow(dpy), &r, &c, &rx, &ry, &wx, &wy, &mask);
	printf("state mods=0x%x locked=0x%x buttons=0x%x\n", xs.mods,
	       xs.locked_mods, mask & 0x1f00);
	return 0;
}

static Window find_named(Window w, const char *title)
{
	Window root, parent, *kids = NULL;
	unsigned n = 0;
	Window found = 0;
	if (!XQueryTree(dpy, w, &root, &parent, &kids, &n))
		return 0;
	for (unsigned i = 0; i < n && !found; i++) {
		char *name = NULL;
		if (XFetchName(dpy, kids[i], &name) && name != NULL) {
			XWindowAttributes wa;
			if (strcmp(name, title) == 0 &&
			    XGetWindowAttributes(dpy, kids[i], &wa) &&
			    wa.map_state == IsViewable)
				found = kids[i];
			XFree(name);
		}
	}
	if (kids != NULL)
		XFree(kids);
	return found;
}

/* Waits (bounded: 30 s, for a loaded machine) for the window to map. */
static int focus_named(const char *title)
{
	for (int i = 0; i < 3000; i++) {
		Window w = find_named(DefaultRootWindow(dpy), title);
		if (w != 0) {
			XSetInputFocus(dpy, w, RevertToPointerRoot, CurrentTime);
			XSync(dpy, False);
			Window f;
			int revert;
			XGetInputFocus(dpy, &f, &revert);
			if (f == w) {
				printf("focused 0x%lx\n", w);
				return 0;
			}
		}
		usleep(10000);
	}
	fprintf(stderr, "xrecord: no viewable window named '%s'\n", title);
	return 1;
}

static int ignore_errors(Display *d, XErrorEvent *e)
{
	(void)d;
	(void)e;
	return 0;
}

/* The window's background: white, the noise square drawn on it (the
 * server repaints a background itself, so no Expose handling). 0 if the
 * server cannot make it. */
static Pixmap noise_background(int width, int height, int n)
{
	int scr = DefaultScreen(dpy);
	unsigned depth = (unsigned)DefaultDepth(dpy, scr);
	Pixmap pm = XCreatePixmap(dpy, DefaultRootWindow(dpy), (unsigned)width,
	                          (unsigned)height, depth);
	GC gc = XCreateGC(dpy, pm, 0, NULL);
	XSetForeground(dpy, gc, WhitePixel(dpy, scr));
	XFillRectangle(dpy, pm, gc, 0, 0, (unsigned)width, (unsigned)height);
	n = n < width ? n : width;
	n = n < height ? n : height;
	XImage *img = XCreateImage(dpy, DefaultVisual(dpy, scr), depth, ZPixmap, 0, NULL,
	                           (unsigned)n, (unsigned)n, 32, 0);
	if (img != NULL)
		img->data = malloc((size_t)img->bytes_per_line * (size_t)n);
	if (img == NULL || img->data == NULL) {
		if (img != NULL)
			XDestroyImage(img);
		XFreeGC(dpy, gc);
		XFreePixmap(dpy, pm);
		return 0;
	}
	unsigned long seed = 12345;
	for (int y = 0; y < n; y++)
		for (int x = 0; x < n; x++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			XPutPixel(img, x, y, (seed >> 40) & 0xffffff);
		}
	XPutImage(dpy, pm, gc, img, 0, 0, 0, 0, (unsigned)n, (unsigned)n);
	XDestroyImage(img);
	XFreeGC(dpy, gc);
	return pm;
}

static int record(int width, int height, int x, int y, unsigned long colour, bool coloured,
                  int noise)
{
	int scr = DefaultScreen(dpy);
	if (width <= 0) {
		width = DisplayWidth(dpy, scr);
		height = DisplayHeight(dpy, scr);
	}
	XSetWindowAttributes wa;
	/* A coloured window is a target the vision tests look for in screenshots. */
	wa.background_pixel = coloured ? colour : WhitePixel(dpy, scr);
	unsigned long mask = CWBackPixel | CWEventMask;
	wa.background_pixmap = noise > 0 ? noise_background(width, height, noise) : 0;
	if (wa.background_pixmap != 0)
		mask = CWBackPixmap | CWEventMask;
	wa.event_mask = ButtonPressMask | ButtonReleaseMask | KeyPressMask |
	                KeyReleaseMask | PointerMotionMask | StructureNotifyMask |
	                FocusChangeMask;
	Window w = XCreateWindow(dpy, DefaultRootWindow(dpy), x, y, (unsigned)width,
	                         (unsigned)height, 0, CopyFromParent, InputOutput,
	                         CopyFromParent, mask, &wa);
	XStoreName(dpy, w, "xrecord");
	XMapRaised(dpy, w);
	bool ready = false;
	bool stamp = getenv("XRECORD_STAMP") != NULL;
	for (;;) {
		XEvent ev;
		XNextEvent(dpy, &ev);
		if (stamp) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			printf("%ld.%06ld ", (long)t.tv_sec, t.tv_nsec / 1000);
		}
		switch (ev.type) {
		case MapNotify:
			XSetInputFocus(dpy, w, RevertToPointerRoot, CurrentTime);
			break;
		case FocusIn:
			if (!ready) {
				Window f;
				int revert;
				XGetInputFocus(dpy, &f, &revert);
				if (f == w) {
					ready = true;
					printf("ready window=0x%lx\n", w);
				}
			}
			break;
		case ButtonPress:
		case ButtonRelease:
			printf("%s button=%u x=%d y=%d state=0x%x time=%lu\n",
			       ev.type == ButtonPress ? "press" : "release",
			       ev.xbutton.button, ev.xbutton.x_root, ev.xbutton.y_root,
			       ev.xbutton.state, ev.xbutton.time);
			break;
		case MotionNotify:
			printf("motion x=%d y=%d state=0x%x\n", ev.xmotion.x_root,
			       ev.xmotion.y_root, ev.xmotion.state);
			break;
		case KeyPress:
		case KeyRelease: {
			KeySym base = XLookupKeysym(&ev.xkey, 0);
			KeySym sym = NoSymbol;
			char text[32];
			XLookupString(&ev.xkey, text, sizeof(text), &sym, NULL);
			const char *bn = XKeysymToString(base);
			const char *sn = XKeysymToString(sym);
			printf("%s keycode=%u keysym=0x%lx name=%s state=0x%x sym=0x%lx "
			       "symname=%s\n",
			       ev.type == KeyPress ? "key-press" : "key-release",
			       ev.xkey.keycode, base, bn ? bn : "NoSymbol",
			       ev.xkey.state, sym, sn ? sn : "NoSymbol");
			break;
		}
		case MappingNotify:
			XRefreshKeyboardMapping(&ev.xmapping);
			printf("mapping request=%s first=%d count=%d\n",
			       ev.xmapping.request == MappingKeyboard ? "keyboard" :
			       ev.xmapping.request == MappingModifier ? "modifier" :
			       "pointer", ev.xmapping.first_keycode, ev.xmapping.count);
			break;
		case DestroyNotify:
			return 0;
		default:
			break;
		}
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	dpy = XOpenDisplay(NULL);
	if (dpy == NULL) {
		fprintf(stderr, "xrecord: cannot open display\n");
		return 1;
	}
	XSetErrorHandler(ignore_errors);
	if (argc == 2 && strcmp(argv[1], "--state") == 0)
		return print_state();
	if (argc == 3 && strcmp(argv[1], "--focus") == 0)
		return focus_named(argv[2]);
	int w = 0, h = 0, x = 0, y = 0, noise = 0;
	unsigned long colour = 0;
	bool coloured = false;
	if (argc == 5 && strcmp(argv[3], "--color") == 0) {
		char *end;
		colour = strtoul(argv[4], &end, 16);
		if (*end != '\0' || strlen(argv[4]) != 6) {
			fprintf(stderr, "xrecord: bad colour '%s' (RRGGBB)\n", argv[4]);
			return 2;
		}
		coloured = true;
		argc = 3;
	}
	if (argc == 3 && strcmp(argv[1], "--geometry") == 0) {
		unsigned uw, uh;
		int mask = XParseGeometry(argv[2], &x, &y, &uw, &uh);
		if (!(mask & WidthValue) || !(mask & HeightValue)) {
			fprintf(stderr, "xrecord: bad geometry '%s'\n", argv[2]);
			return 2;
		}
		w = (int)uw;
		h = (int)uh;
	} else if (argc == 3 && strcmp(argv[1], "--noise") == 0) {
		noise = atoi(argv[2]);
		if (noise <= 0) {
			fprintf(stderr, "xrecord: bad noise size '%s'\n", argv[2]);
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, "usage: xrecord [--geometry WxH+X+Y [--color RRGGBB]] | --noise N | "
		        "--state | --focus TITLE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return record(w, h, x, y, colour, coloured, noise);
}
