/*
 * wlrecord — the Wayland client that input tests type and click into, as
 * tests/xrecord is on X. It behaves like an ordinary toolkit application
 * (an xdg_toplevel, fullscreen on one output; a wl_keyboard and wl_pointer
 * taken and given back as the seat's capabilities come and go; keys
 * decoded with the keymap the compositor sent last, which changes whenever
 * another keyboard, a virtual one such as wtype's, becomes the active one)
 * and writes one line per event to stdout, flushed:
 *
 *   seat caps=pointer,keyboard
 *   configure width=1920 height=1080 activated=1 fullscreen=1
 *   mapped width=1920 height=1080 output=HEADLESS-1
 *   ready width=1920 height=1080 output=HEADLESS-1
 *   enter x=10 y=20 fx=2560 fy=5120 serial=7
 *   leave serial=8
 *   motion x=10 y=20 fx=2560 fy=5120 time=123
 *   press button=272 serial=9 time=124          (evdev codes: 272 left)
 *   release button=272 serial=10 time=125
 *   axis axis=vertical value=15 fvalue=3840 time=126
 *   axis-discrete axis=vertical discrete=1
 *   axis-source source=wheel
 *   axis-stop axis=vertical time=127
 *   frame
 *   keymap format=xkb_v1 size=48123 min=8 max=255
 *   key-enter serial=11 keys=
 *   key-leave serial=12
 *   key-press keycode=38 evdev=30 keysym=0x61 name=a text=a serial=13 time=128
 *   key-release keycode=38 evdev=30 keysym=0x61 name=a text=a serial=14 time=129
 *   modifiers depressed=0x1 latched=0x0 locked=0x0 group=0 active=Shift
 *   repeat rate=25 delay=600
 *
 * x/y are surface coordinates truncated to integers, fx/fy the same as
 * wl_fixed_t (1/256 px). keycode is the XKB keycode (evdev + 8, as X's).
 * text is what xkbcommon gives for the key in the current state, UTF-8,
 * with bytes up to 0x20, '%' and 0x7f written %XX so a line splits on
 * blanks (urllib.parse.unquote reads it back); empty when none.
 *
 * "mapped" comes once: a fullscreen configure was acked, a buffer of its
 * size committed and the compositor's frame callback for it fired (so a
 * screenshot taken after it shows the window at its place). "ready" comes
 * once too, when it is mapped and activated (the compositor gave it the
 * focus: sway does not focus a window on an output without the focus, so
 * the harness asks it to, `swaymsg [app_id=ID] focus`, after "mapped").
 *
 *   wlrecord [--output NAME] [--color RRGGBB] [--checker N] [--app-id ID]
 *            [--square N+X+Y] [--square-color RRGGBB] [--press-color RRGGBB]
 *
 * --color fills the window (default ffffff); --checker N draws N-pixel
 * squares of the colour and its inverse, square (0,0) in the colour.
 * --square draws one N-pixel square at surface X,Y in --square-color
 * (default ff0000) over that: a target for a model to find on screen.
 * --press-color swaps the fill colour with this one at every button press
 * (and writes "redrawn color=RRGGBB presses=N"): a click's visible effect.
 * --app-id (default "wlrecord") is what `swaymsg [app_id=...]` matches.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "xdg-output-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define MAX_OUTPUTS 8

struct out {
	struct wl_output *wl;
	struct zxdg_output_v1 *xdg;
	char name[64];
};

static struct {
	struct wl_display *dpy;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct wl_seat *seat;
	struct xdg_wm_base *wm;
	struct zxdg_output_manager_v1 *xdg_outputs;
	struct out outputs[MAX_OUTPUTS];
	int n_outputs;
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	struct wl_buffer *buffer;
	int buf_w, buf_h;
	int want_w, want_h;          /* from the last configure */
	bool activated, fullscreen, mapped, ready;
	struct wl_keyboard *keyboard;
	struct wl_pointer *pointer;
	struct xkb_context *xkb;
	struct xkb_keymap *keymap;
	struct xkb_state *state;
	/* options */
	const char *output_name;
	const char *app_id;
	uint32_t colour;
	int checker;
	int sq_size, sq_x, sq_y;
	uint32_t sq_colour;
	uint32_t press_colour;
	bool press_set;
	int presses;
	bool closed;
} g;

static void fail(const char *what)
{
	fprintf(stderr, "wlrecord: %s\n", what);
	exit(1);
}

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ---- drawing ----------------------------------------------------------- */

static void fill(uint32_t *px, int w, int h)
{
	uint32_t a = 0xff000000u | g.colour, b = 0xff000000u | (~g.colour & 0xffffffu);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			px[(size_t)y * (size_t)w + (size_t)x] =
				g.checker > 0 && ((x / g.checker + y / g.checker) & 1) ? b : a;
	for (int y = g.sq_y; g.sq_size > 0 && y < g.sq_y + g.sq_size && y < h; y++)
		for (int x = g.sq_x; x < g.sq_x + g.sq_size && x < w; x++)
			px[(size_t)y * (size_t)w + (size_t)x] = 0xff000000u | g.sq_colour;
}

static void buffer_release(void *data, struct wl_buffer *buf)
{
	/* One buffer per size, drawn once: a buffer replaced by a resize is
	 * destroyed when the compositor is done with it. */
	if (buf != g.buffer)
		wl_buffer_destroy(buf);
}

static const struct wl_buffer_listener buffer_listener = {buffer_release};

/* A wl_shm buffer of w x h filled with the pattern (memfd: no file). */
static struct wl_buffer *make_buffer(int w, int h)
{
	size_t stride = (size_t)w * 4, size = stride * (size_t)h;
	int fd = memfd_create("wlrecord", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		fail("cannot create the shared-memory buffer");
	void *px = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (px == MAP_FAILED)
		fail("cannot map the shared-memory buffer");
	fill(px, w, h);
	munmap(px, size);
	struct wl_shm_pool *pool = wl_shm_create_pool(g.shm, fd, (int32_t)size);
	struct wl_buffer *buf = wl_shm_pool_create_buffer(pool, 0, w, h, (int32_t)stride,
	                                                  WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	wl_buffer_add_listener(buf, &buffer_listener, NULL);
	return buf;
}

static void check_ready(void)
{
	if (g.mapped && g.activated && !g.ready) {
		g.ready = true;
		line("ready width=%d height=%d output=%s", g.buf_w, g.buf_h,
		     g.output_name ? g.output_name : "any");
	}
}

static void frame_done(void *data, struct wl_callback *cb, uint32_t time)
{
	wl_callback_destroy(cb);
	bool fullscreen = (bool)(uintptr_t)data;
	if (g.mapped || !fullscreen)
		return;
	g.mapped = true;
	line("mapped width=%d height=%d output=%s", g.buf_w, g.buf_h,
	     g.output_name ? g.output_name : "any");
	check_ready();
}

static const struct wl_callback_listener frame_listener = {frame_done};

static void redraw(void)
{
	int w = g.want_w > 0 ? g.want_w : 640, h = g.want_h > 0 ? g.want_h : 480;
	if (g.buffer == NULL || w != g.buf_w || h != g.buf_h) {
		/* The old buffer is destroyed on its release (buffer_release). */
		g.buffer = make_buffer(w, h);
		g.buf_w = w;
		g.buf_h = h;
		wl_surface_attach(g.surface, g.buffer, 0, 0);
		wl_surface_damage_buffer(g.surface, 0, 0, w, h);
	}
	/* Until mapped, each commit asks when it is shown: the first frame at
	 * the fullscreen size is the "mapped" line. */
	if (!g.mapped)
		wl_callback_add_listener(wl_surface_frame(g.surface), &frame_listener,
		                         (void *)(uintptr_t)g.fullscreen);
	wl_surface_commit(g.surface);
}

/* ---- xdg-shell --------------------------------------------------------- */

static void wm_ping(void *data, struct xdg_wm_base *wm, uint32_t serial)
{
	xdg_wm_base_pong(wm, serial);
}

static const struct xdg_wm_base_listener wm_listener = {wm_ping};

static void xdg_surface_configure(void *data, struct xdg_surface *s, uint32_t serial)
{
	xdg_surface_ack_configure(s, serial);
	redraw();
	check_ready();
}

static const struct xdg_surface_listener xdg_surface_listener = {xdg_surface_configure};

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
                               struct wl_array *states)
{
	bool activated = false, fullscreen = false;
	uint32_t *st;
	wl_array_for_each(st, states) {
		activated = activated || *st == XDG_TOPLEVEL_STATE_ACTIVATED;
		fullscreen = fullscreen || *st == XDG_TOPLEVEL_STATE_FULLSCREEN;
	}
	g.activated = activated;
	g.fullscreen = fullscreen;
	if (w > 0 && h > 0) {
		g.want_w = w;
		g.want_h = h;
	}
	line("configure width=%d height=%d activated=%d fullscreen=%d", w, h, activated,
	     fullscreen);
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	line("close");
	g.closed = true;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

/* ---- pointer ----------------------------------------------------------- */

static const char *axis_name(uint32_t axis)
{
	return axis == WL_POINTER_AXIS_VERTICAL_SCROLL ? "vertical" :
	       axis == WL_POINTER_AXIS_HORIZONTAL_SCROLL ? "horizontal" : "unknown";
}

static void ptr_enter(void *data, struct wl_pointer *p, uint32_t serial,
                      struct wl_surface *s, wl_fixed_t x, wl_fixed_t y)
{
	line("enter x=%d y=%d fx=%d fy=%d serial=%u", wl_fixed_to_int(x), wl_fixed_to_int(y),
	     x, y, serial);
}

static void ptr_leave(void *data, struct wl_pointer *p, uint32_t serial,
                      struct wl_surface *s)
{
	line("leave serial=%u", serial);
}

static void ptr_motion(void *data, struct wl_pointer *p, uint32_t time, wl_fixed_t x,
                       wl_fixed_t y)
{
	line("motion x=%d y=%d fx=%d fy=%d time=%u", wl_fixed_to_int(x), wl_fixed_to_int(y),
	     x, y, time);
}

static void redraw(void);

static void ptr_button(void *data, struct wl_pointer *p, uint32_t serial, uint32_t time,
                       uint32_t button, uint32_t state)
{
	line("%s button=%u serial=%u time=%u",
	     state == WL_POINTER_BUTTON_STATE_PRESSED ? "press" : "release", button, serial,
	     time);
	if (!g.press_set || state != WL_POINTER_BUTTON_STATE_PRESSED)
		return;
	/* --press-color: every press swaps the fill colours, drawn at once. */
	uint32_t t = g.colour;
	g.colour = g.press_colour;
	g.press_colour = t;
	g.buffer = NULL;  /* the shown one is destroyed on its release */
	redraw();
	line("redrawn color=%06x presses=%d", g.colour, ++g.presses);
}

static void ptr_axis(void *data, struct wl_pointer *p, uint32_t time, uint32_t axis,
                     wl_fixed_t value)
{
	line("axis axis=%s value=%d fvalue=%d time=%u", axis_name(axis),
	     wl_fixed_to_int(value), value, time);
}

static void ptr_frame(void *data, struct wl_pointer *p)
{
	line("frame");
}

static void ptr_axis_source(void *data, struct wl_pointer *p, uint32_t source)
{
	static const char *const names[] = {"wheel", "finger", "continuous", "wheel-tilt"};
	line("axis-source source=%s", source < 4 ? names[source] : "unknown");
}

static void ptr_axis_stop(void *data, struct wl_pointer *p, uint32_t time, uint32_t axis)
{
	line("axis-stop axis=%s time=%u", axis_name(axis), time);
}

static void ptr_axis_discrete(void *data, struct wl_pointer *p, uint32_t axis,
                              int32_t discrete)
{
	line("axis-discrete axis=%s discrete=%d", axis_name(axis), discrete);
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = ptr_enter,
	.leave = ptr_leave,
	.motion = ptr_motion,
	.button = ptr_button,
	.axis = ptr_axis,
	.frame = ptr_frame,
	.axis_source = ptr_axis_source,
	.axis_stop = ptr_axis_stop,
	.axis_discrete = ptr_axis_discrete,
};

/* ---- keyboard ---------------------------------------------------------- */

static void kb_keymap(void *data, struct wl_keyboard *k, uint32_t format, int32_t fd,
                      uint32_t size)
{
	if (format != WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1) {
		line("keymap format=%u size=%u", format, size);
		close(fd);
		return;
	}
	/* MAP_PRIVATE: since version 7 the compositor may send a read-only fd. */
	char *text = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (text == MAP_FAILED) {
		line("keymap format=xkb_v1 size=%u error=mmap", size);
		return;
	}
	struct xkb_keymap *km = xkb_keymap_new_from_buffer(g.xkb, text, strnlen(text, size),
	                                                   XKB_KEYMAP_FORMAT_TEXT_V1,
	                                                   XKB_KEYMAP_COMPILE_NO_FLAGS);
	munmap(text, size);
	if (km == NULL) {
		line("keymap format=xkb_v1 size=%u error=compile", size);
		return;
	}
	/* The new keymap replaces the old one at once: the compositor sends the
	 * modifiers for it next, and every key after it is in its terms. */
	xkb_state_unref(g.state);
	xkb_keymap_unref(g.keymap);
	g.keymap = km;
	g.state = xkb_state_new(km);
	line("keymap format=xkb_v1 size=%u min=%u max=%u", size, xkb_keymap_min_keycode(km),
	     xkb_keymap_max_keycode(km));
}

static void kb_enter(void *data, struct wl_keyboard *k, uint32_t serial,
                     struct wl_surface *s, struct wl_array *keys)
{
	char buf[512];
	size_t pos = 0;
	buf[0] = '\0';
	uint32_t *key;
	wl_array_for_each(key, keys) {
		int n = snprintf(buf + pos, sizeof(buf) - pos, "%s%u", pos ? "," : "", *key + 8);
		if (n < 0 || (size_t)n >= sizeof(buf) - pos)
			break;
		pos += (size_t)n;
	}
	line("key-enter serial=%u keys=%s", serial, buf);
}

static void kb_leave(void *data, struct wl_keyboard *k, uint32_t serial,
                     struct wl_surface *s)
{
	line("key-leave serial=%u", serial);
}

/* The text, with blanks, controls, '%' and DEL as %XX (one token per field). */
static void escape(const char *in, char *out, size_t size)
{
	size_t o = 0;
	for (const unsigned char *c = (const unsigned char *)in; *c && o + 4 < size; c++) {
		if (*c <= 0x20 || *c == '%' || *c == 0x7f)
			o += (size_t)snprintf(out + o, size - o, "%%%02X", *c);
		else
			out[o++] = (char)*c;
	}
	out[o] = '\0';
}

static void kb_key(void *data, struct wl_keyboard *k, uint32_t serial, uint32_t time,
                   uint32_t key, uint32_t state)
{
	const char *kind = state == WL_KEYBOARD_KEY_STATE_PRESSED ? "key-press" : "key-release";
	if (g.state == NULL) {
		line("%s keycode=%u evdev=%u keysym=0x0 name=NoSymbol text= serial=%u time=%u",
		     kind, key + 8, key, serial, time);
		return;
	}
	xkb_keysym_t sym = xkb_state_key_get_one_sym(g.state, key + 8);
	char name[64], text[64], shown[200];
	if (xkb_keysym_get_name(sym, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "NoSymbol");
	xkb_state_key_get_utf8(g.state, key + 8, text, sizeof(text));
	escape(text, shown, sizeof(shown));
	line("%s keycode=%u evdev=%u keysym=0x%x name=%s text=%s serial=%u time=%u", kind,
	     key + 8, key, sym, name, shown, serial, time);
}

static void kb_modifiers(void *data, struct wl_keyboard *k, uint32_t serial,
                         uint32_t depressed, uint32_t latched, uint32_t locked,
                         uint32_t group)
{
	char active[256];
	size_t pos = 0;
	active[0] = '\0';
	if (g.state != NULL) {
		xkb_state_update_mask(g.state, depressed, latched, locked, 0, 0, group);
		for (xkb_mod_index_t m = 0; m < xkb_keymap_num_mods(g.keymap); m++) {
			if (xkb_state_mod_index_is_active(g.state, m, XKB_STATE_MODS_EFFECTIVE) <= 0)
				continue;
			int n = snprintf(active + pos, sizeof(active) - pos, "%s%s", pos ? "," : "",
			                 xkb_keymap_mod_get_name(g.keymap, m));
			if (n < 0 || (size_t)n >= sizeof(active) - pos)
				break;
			pos += (size_t)n;
		}
	}
	line("modifiers depressed=0x%x latched=0x%x locked=0x%x group=%u active=%s",
	     depressed, latched, locked, group, active);
}

static void kb_repeat(void *data, struct wl_keyboard *k, int32_t rate, int32_t delay)
{
	line("repeat rate=%d delay=%d", rate, delay);
}

static const struct wl_keyboard_listener keyboard_listener = {
	.keymap = kb_keymap,
	.enter = kb_enter,
	.leave = kb_leave,
	.key = kb_key,
	.modifiers = kb_modifiers,
	.repeat_info = kb_repeat,
};

/* ---- seat and registry ------------------------------------------------- */

/* Devices come and go (wtype's keyboard lives as long as wtype runs): the
 * keyboard and pointer objects follow the seat's capabilities. */
static void seat_caps(void *data, struct wl_seat *seat, uint32_t caps)
{
	bool kb = caps & WL_SEAT_CAPABILITY_KEYBOARD, ptr = caps & WL_SEAT_CAPABILITY_POINTER;
	line("seat caps=%s%s%s", ptr ? "pointer" : "", ptr && kb ? "," : "",
	     kb ? "keyboard" : "");
	if (kb && g.keyboard == NULL) {
		g.keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(g.keyboard, &keyboard_listener, NULL);
	} else if (!kb && g.keyboard != NULL) {
		wl_keyboard_release(g.keyboard);
		g.keyboard = NULL;
	}
	if (ptr && g.pointer == NULL) {
		g.pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(g.pointer, &pointer_listener, NULL);
	} else if (!ptr && g.pointer != NULL) {
		wl_pointer_release(g.pointer);
		g.pointer = NULL;
	}
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {seat_caps, seat_name};

static void xo_position(void *d, struct zxdg_output_v1 *o, int32_t x, int32_t y) {}
static void xo_size(void *d, struct zxdg_output_v1 *o, int32_t w, int32_t h) {}
static void xo_done(void *d, struct zxdg_output_v1 *o) {}
static void xo_desc(void *d, struct zxdg_output_v1 *o, const char *s) {}

static void xo_name(void *data, struct zxdg_output_v1 *o, const char *name)
{
	struct out *out = data;
	snprintf(out->name, sizeof(out->name), "%s", name);
}

static const struct zxdg_output_v1_listener xdg_output_listener = {
	xo_position, xo_size, xo_done, xo_name, xo_desc,
};

static void global(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
                   uint32_t version)
{
	if (strcmp(iface, wl_compositor_interface.name) == 0) {
		g.compositor = wl_registry_bind(reg, name, &wl_compositor_interface, 4);
	} else if (strcmp(iface, wl_shm_interface.name) == 0) {
		g.shm = wl_registry_bind(reg, name, &wl_shm_interface, 1);
	} else if (strcmp(iface, wl_seat_interface.name) == 0 && g.seat == NULL) {
		/* 5: axis_source/axis_stop/axis_discrete/frame and release. */
		g.seat = wl_registry_bind(reg, name, &wl_seat_interface, version < 5 ? version : 5);
		wl_seat_add_listener(g.seat, &seat_listener, NULL);
	} else if (strcmp(iface, xdg_wm_base_interface.name) == 0) {
		g.wm = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(g.wm, &wm_listener, NULL);
	} else if (strcmp(iface, zxdg_output_manager_v1_interface.name) == 0 && version >= 2) {
		g.xdg_outputs = wl_registry_bind(reg, name, &zxdg_output_manager_v1_interface, 2);
	} else if (strcmp(iface, wl_output_interface.name) == 0 && g.n_outputs < MAX_OUTPUTS) {
		g.outputs[g.n_outputs++].wl = wl_registry_bind(reg, name, &wl_output_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {global, global_remove};

/* The wl_output named `name` (xdg-output's names), or NULL for none. */
static struct wl_output *find_output(const char *name)
{
	if (name == NULL)
		return NULL;
	if (g.xdg_outputs == NULL)
		fail("--output needs zxdg_output_manager_v1 (version 2) for the names");
	for (int i = 0; i < g.n_outputs; i++) {
		g.outputs[i].xdg = zxdg_output_manager_v1_get_xdg_output(g.xdg_outputs,
		                                                         g.outputs[i].wl);
		zxdg_output_v1_add_listener(g.outputs[i].xdg, &xdg_output_listener, &g.outputs[i]);
	}
	wl_display_roundtrip(g.dpy);
	for (int i = 0; i < g.n_outputs; i++)
		if (strcmp(g.outputs[i].name, name) == 0)
			return g.outputs[i].wl;
	fprintf(stderr, "wlrecord: no output named %s; there are:", name);
	for (int i = 0; i < g.n_outputs; i++)
		fprintf(stderr, " %s", g.outputs[i].name);
	fprintf(stderr, "\n");
	exit(1);
}

static void parse_args(int argc, char **argv)
{
	g.colour = 0xffffff;
	g.sq_colour = 0xff0000;
	g.app_id = "wlrecord";
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (v != NULL && strcmp(argv[i], "--output") == 0) {
			g.output_name = v;
		} else if (v != NULL && strcmp(argv[i], "--app-id") == 0) {
			g.app_id = v;
		} else if (v != NULL && strcmp(argv[i], "--color") == 0) {
			g.colour = (uint32_t)strtoul(v, &end, 16);
			if (*end != '\0' || strlen(v) != 6)
				fail("bad colour (RRGGBB)");
		} else if (v != NULL && strcmp(argv[i], "--square") == 0) {
			char tail;
			if (sscanf(v, "%d+%d+%d%c", &g.sq_size, &g.sq_x, &g.sq_y, &tail) != 3 ||
			    g.sq_size <= 0 || g.sq_x < 0 || g.sq_y < 0)
				fail("bad --square (N+X+Y)");
		} else if (v != NULL && strcmp(argv[i], "--square-color") == 0) {
			g.sq_colour = (uint32_t)strtoul(v, &end, 16);
			if (*end != '\0' || strlen(v) != 6)
				fail("bad --square-color (RRGGBB)");
		} else if (v != NULL && strcmp(argv[i], "--press-color") == 0) {
			g.press_colour = (uint32_t)strtoul(v, &end, 16);
			g.press_set = true;
			if (*end != '\0' || strlen(v) != 6)
				fail("bad --press-color (RRGGBB)");
		} else if (v != NULL && strcmp(argv[i], "--checker") == 0) {
			g.checker = (int)strtol(v, &end, 10);
			if (*end != '\0' || g.checker <= 0)
				fail("bad --checker (a size in pixels)");
		} else {
			fprintf(stderr, "usage: wlrecord [--output NAME] [--color RRGGBB] "
			        "[--checker N] [--app-id ID] [--square N+X+Y] "
			        "[--square-color RRGGBB] [--press-color RRGGBB]\n");
			exit(2);
		}
		i++;
	}
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	if ((g.xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS)) == NULL)
		fail("no xkb context");
	if ((g.dpy = wl_display_connect(NULL)) == NULL)
		fail("cannot connect to the Wayland display");
	struct wl_registry *reg = wl_display_get_registry(g.dpy);
	wl_registry_add_listener(reg, &registry_listener, NULL);
	wl_display_roundtrip(g.dpy);
	if (g.compositor == NULL || g.shm == NULL || g.wm == NULL)
		fail("the compositor lacks wl_compositor, wl_shm or xdg_wm_base");
	struct wl_output *output = find_output(g.output_name);
	g.surface = wl_compositor_create_surface(g.compositor);
	g.xdg_surface = xdg_wm_base_get_xdg_surface(g.wm, g.surface);
	xdg_surface_add_listener(g.xdg_surface, &xdg_surface_listener, NULL);
	g.toplevel = xdg_surface_get_toplevel(g.xdg_surface);
	xdg_toplevel_add_listener(g.toplevel, &toplevel_listener, NULL);
	xdg_toplevel_set_title(g.toplevel, "wlrecord");
	xdg_toplevel_set_app_id(g.toplevel, g.app_id);
	xdg_toplevel_set_fullscreen(g.toplevel, output);
	/* The initial commit without a buffer asks for the first configure. */
	wl_surface_commit(g.surface);
	while (!g.closed && wl_display_dispatch(g.dpy) != -1) {
	}
	if (!g.closed)
		fprintf(stderr, "wlrecord: the connection ended: %s\n", strerror(errno));
	return g.closed ? 0 : 1;
}
