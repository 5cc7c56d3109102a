/*
 * wlinput — a virtual pointer and keyboard for the Wayland tests. A
 * headless wlroots compositor has no input devices, so its seat offers no
 * pointer (nor keyboard) to clients until a virtual one exists: this holds
 * one of each for as long as it runs (wtype brings a keyboard only while
 * it types, and keys sent before a client has taken its new wl_keyboard
 * are lost) and moves, clicks, scrolls and presses keys as told, one
 * command a line on stdin, answering "ok" on stdout once the compositor
 * has handled it (a roundtrip):
 *
 *   move X Y               absolute, in layout pixels (--extent W H: the
 *                          layout's size; default 1920 1080)
 *   rel DX DY              relative motion
 *   button CODE down|up    evdev code (272 left, 273 right, 274 middle)
 *   scroll vertical|horizontal VALUE STEPS    a wheel: axis_source wheel,
 *                          axis_discrete VALUE (pixels) STEPS, frame
 *   key CODE down|up       evdev code (30 is "a" on a US keymap)
 *   mods DEPRESSED LATCHED LOCKED GROUP   the modifier state (wlroots does
 *                          not derive it from a virtual keyboard's keys: its
 *                          client says it, as wtype does; 0x1 is Shift)
 *
 * It prints "ready" once both devices exist. Options: --no-keyboard,
 * --no-pointer. The protocols (wlr-virtual-pointer-unstable-v1 version 1,
 * virtual-keyboard-unstable-v1 version 1) are in no Debian package, so
 * their few requests are described here by hand: names, signatures and
 * request order are the wire protocol.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

static const struct wl_interface *nulls[5];
extern const struct wl_interface vpointer_interface, vkeyboard_interface;
static const struct wl_interface *vp_create_types[] = {&wl_seat_interface,
                                                       &vpointer_interface};
static const struct wl_interface *vk_create_types[] = {&wl_seat_interface,
                                                       &vkeyboard_interface};

enum { VP_MOTION, VP_MOTION_ABSOLUTE, VP_BUTTON, VP_AXIS, VP_FRAME, VP_AXIS_SOURCE,
       VP_AXIS_STOP, VP_AXIS_DISCRETE, VP_DESTROY };
static const struct wl_message vpointer_requests[] = {
	{"motion", "uff", nulls},
	{"motion_absolute", "uuuuu", nulls},
	{"button", "uuu", nulls},
	{"axis", "uuf", nulls},
	{"frame", "", nulls},
	{"axis_source", "u", nulls},
	{"axis_stop", "uu", nulls},
	{"axis_discrete", "uufi", nulls},
	{"destroy", "", nulls},
};
const struct wl_interface vpointer_interface = {
	"zwlr_virtual_pointer_v1", 1, 9, vpointer_requests, 0, NULL,
};
static const struct wl_message vp_manager_requests[] = {
	{"create_virtual_pointer", "?on", vp_create_types},
	{"destroy", "", nulls},
};
static const struct wl_interface vp_manager_interface = {
	"zwlr_virtual_pointer_manager_v1", 1, 2, vp_manager_requests, 0, NULL,
};

enum { VK_KEYMAP, VK_KEY, VK_MODIFIERS, VK_DESTROY };
static const struct wl_message vkeyboard_requests[] = {
	{"keymap", "uhu", nulls},
	{"key", "uuu", nulls},
	{"modifiers", "uuuu", nulls},
	{"destroy", "", nulls},
};
const struct wl_interface vkeyboard_interface = {
	"zwp_virtual_keyboard_v1", 1, 4, vkeyboard_requests, 0, NULL,
};
static const struct wl_message vk_manager_requests[] = {
	{"create_virtual_keyboard", "on", vk_create_types},
};
static const struct wl_interface vk_manager_interface = {
	"zwp_virtual_keyboard_manager_v1", 1, 1, vk_manager_requests, 0, NULL,
};

static struct wl_seat *seat;
static struct wl_proxy *vp_manager, *vk_manager, *pointer, *keyboard;

static void global(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
                   uint32_t version)
{
	if (strcmp(iface, "wl_seat") == 0 && seat == NULL)
		seat = wl_registry_bind(reg, name, &wl_seat_interface, 1);
	else if (strcmp(iface, vp_manager_interface.name) == 0)
		vp_manager = wl_registry_bind(reg, name, &vp_manager_interface, 1);
	else if (strcmp(iface, vk_manager_interface.name) == 0)
		vk_manager = wl_registry_bind(reg, name, &vk_manager_interface, 1);
}

static void global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {global, global_remove};

static uint32_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint32_t)(t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

/* The default keymap (evdev rules, us) as the keyboard's: the compositor
 * needs one before the first key. */
static bool upload_keymap(void)
{
	struct xkb_context *ctx = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	struct xkb_rule_names names = {"evdev", "pc105", "us", "", ""};
	struct xkb_keymap *km = ctx ? xkb_keymap_new_from_names(ctx, &names, 0) : NULL;
	char *text = km ? xkb_keymap_get_as_string(km, XKB_KEYMAP_FORMAT_TEXT_V1) : NULL;
	bool ok = false;
	if (text != NULL) {
		size_t size = strlen(text) + 1;
		int fd = memfd_create("wlinput-keymap", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, text, size) == (ssize_t)size) {
			wl_proxy_marshal_flags(keyboard, VK_KEYMAP, NULL, 1, 0,
			                       WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, fd, (uint32_t)size);
			ok = true;
		}
		if (fd >= 0)
			close(fd);
	}
	free(text);
	xkb_keymap_unref(km);
	xkb_context_unref(ctx);
	return ok;
}

static int state_arg(const char *s)
{
	return strcmp(s, "down") == 0 ? 1 : strcmp(s, "up") == 0 ? 0 : -1;
}

/* One command; false when it is not one. */
static bool command(const char *cmd, long ext_w, long ext_h)
{
	char a[32], b[32];
	long x, y, v;
	unsigned long m[4];
	uint32_t t = now_ms();
	if (pointer != NULL && sscanf(cmd, "move %ld %ld", &x, &y) == 2 && x >= 0 && y >= 0) {
		wl_proxy_marshal_flags(pointer, VP_MOTION_ABSOLUTE, NULL, 1, 0, t, (uint32_t)x,
		                       (uint32_t)y, (uint32_t)ext_w, (uint32_t)ext_h);
	} else if (pointer != NULL && sscanf(cmd, "rel %ld %ld", &x, &y) == 2) {
		wl_proxy_marshal_flags(pointer, VP_MOTION, NULL, 1, 0, t,
		                       wl_fixed_from_int((int)x), wl_fixed_from_int((int)y));
	} else if (pointer != NULL && sscanf(cmd, "button %ld %31s", &x, a) == 2 &&
	           state_arg(a) >= 0) {
		wl_proxy_marshal_flags(pointer, VP_BUTTON, NULL, 1, 0, t, (uint32_t)x,
		                       (uint32_t)state_arg(a));
	} else if (pointer != NULL && sscanf(cmd, "scroll %31s %ld %ld", b, &v, &y) == 3 &&
	           (strcmp(b, "vertical") == 0 || strcmp(b, "horizontal") == 0)) {
		uint32_t axis = b[0] == 'v' ? WL_POINTER_AXIS_VERTICAL_SCROLL
		                            : WL_POINTER_AXIS_HORIZONTAL_SCROLL;
		wl_proxy_marshal_flags(pointer, VP_AXIS_SOURCE, NULL, 1, 0,
		                       WL_POINTER_AXIS_SOURCE_WHEEL);
		wl_proxy_marshal_flags(pointer, VP_AXIS_DISCRETE, NULL, 1, 0, t, axis,
		                       wl_fixed_from_int((int)v), (int32_t)y);
	} else if (keyboard != NULL && sscanf(cmd, "key %ld %31s", &x, a) == 2 &&
	           state_arg(a) >= 0) {
		wl_proxy_marshal_flags(keyboard, VK_KEY, NULL, 1, 0, t, (uint32_t)x,
		                       (uint32_t)state_arg(a));
		return true;
	} else if (keyboard != NULL && sscanf(cmd, "mods %lx %lx %lx %lx", &m[0], &m[1], &m[2],
	                                      &m[3]) == 4) {
		wl_proxy_marshal_flags(keyboard, VK_MODIFIERS, NULL, 1, 0, (uint32_t)m[0],
		                       (uint32_t)m[1], (uint32_t)m[2], (uint32_t)m[3]);
		return true;
	} else {
		return false;
	}
	wl_proxy_marshal_flags(pointer, VP_FRAME, NULL, 1, 0);
	return true;
}

int main(int argc, char **argv)
{
	bool want_kb = true, want_ptr = true;
	long ext_w = 1920, ext_h = 1080;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-keyboard") == 0) {
			want_kb = false;
		} else if (strcmp(argv[i], "--no-pointer") == 0) {
			want_ptr = false;
		} else if (strcmp(argv[i], "--extent") == 0 && i + 2 < argc) {
			ext_w = strtol(argv[i + 1], NULL, 10);
			ext_h = strtol(argv[i + 2], NULL, 10);
			i += 2;
		} else {
			fprintf(stderr, "usage: wlinput [--extent W H] [--no-keyboard] [--no-pointer]\n");
			return 2;
		}
	}
	struct wl_display *dpy = wl_display_connect(NULL);
	if (dpy == NULL) {
		fprintf(stderr, "wlinput: cannot connect to the Wayland display\n");
		return 1;
	}
	wl_registry_add_listener(wl_display_get_registry(dpy), &registry_listener, NULL);
	wl_display_roundtrip(dpy);
	if (seat == NULL || (want_ptr && vp_manager == NULL) || (want_kb && vk_manager == NULL)) {
		fprintf(stderr, "wlinput: the compositor lacks wl_seat, %s or %s\n",
		        vp_manager_interface.name, vk_manager_interface.name);
		return 1;
	}
	if (want_ptr)
		pointer = wl_proxy_marshal_flags(vp_manager, 0, &vpointer_interface, 1, 0, seat,
		                                 NULL);
	if (want_kb) {
		keyboard = wl_proxy_marshal_flags(vk_manager, 0, &vkeyboard_interface, 1, 0,
		                                  seat, NULL);
		if (!upload_keymap()) {
			fprintf(stderr, "wlinput: cannot build a keymap\n");
			return 1;
		}
	}
	if (wl_display_roundtrip(dpy) < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	char cmd[256];
	while (fgets(cmd, sizeof(cmd), stdin) != NULL) {
		bool ok = command(cmd, ext_w, ext_h);
		if (wl_display_roundtrip(dpy) < 0) {
			fprintf(stderr, "wlinput: the connection ended\n");
			return 1;
		}
		printf(ok ? "ok\n" : "error unknown command\n");
	}
	return 0;
}
