/*
 * os/wlroots/pointer — the mouse through a zwlr_virtual_pointer_v1 on the
 * seat: absolute motion over the whole layout, evdev buttons, wheel clicks
 * as discrete axis steps, paced drags that always release the button.
 *
 * Every call ends with a round trip, so the compositor has handled the
 * events when it returns. The position last sent is kept for clicks "at
 * the current position", never reported as the pointer's: the compositor
 * may have moved it since (another device, a warp), and the kill switch
 * must rely only on what is observed.
 */
#include <wayland-client.h>

#include "os/wlroots/wlroots-internal.h"
#include "wlr-virtual-pointer-unstable-v1-client-protocol.h"

/* linux/input-event-codes.h, not included so as not to depend on it */
#define BTN_LEFT 0x110
#define BTN_RIGHT 0x111
#define BTN_MIDDLE 0x112
#define BTN_SIDE 0x113
#define BTN_EXTRA 0x114

/* One wheel click as libinput reports a mouse wheel: 15 degrees. */
#define WHEEL_STEP 15


static struct zwlr_virtual_pointer_v1 *pointer_get(struct os_wl_display *w)
{
	if (!os_wl_alive(w))
		return NULL;
	if (w->pointer == NULL) {
		bool had_pointer = (w->seat_caps & WL_SEAT_CAPABILITY_POINTER) != 0;
		w->pointer = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(
			w->pointer_manager, w->seat);
		/* As for the keyboard (keyboard.c): a seat that gains its first
		 * pointer with ours has each client ask for a wl_pointer again,
		 * and events sent before it has one are lost (a wheel turn right
		 * after the first motion was, on a headless sway). */
		if (!had_pointer) {
			if (!os_wl_roundtrip(w, "adding a pointer to the seat"))
				return NULL;
			os_input_sleep_ms(OS_WL_SEAT_SETTLE_MS);
		}
	}
	return w->pointer;
}

/* Absolute motion to screen point (x,y): the layout spans the extent. */
static void send_motion(struct os_wl_display *w, int x, int y)
{
	os_rect lay = os_wl_layout(w);
	zwlr_virtual_pointer_v1_motion_absolute(w->pointer, os_wl_time_ms(), (uint32_t)x,
	                                        (uint32_t)y, (uint32_t)lay.width,
	                                        (uint32_t)lay.height);
	zwlr_virtual_pointer_v1_frame(w->pointer);
	w->sent_x = x;
	w->sent_y = y;
	w->sent_any = true;
}

static void send_button(struct os_wl_display *w, uint32_t code, bool down)
{
	zwlr_virtual_pointer_v1_button(w->pointer, os_wl_time_ms(), code,
	                               down ? WL_POINTER_BUTTON_STATE_PRESSED
	                                    : WL_POINTER_BUTTON_STATE_RELEASED);
	zwlr_virtual_pointer_v1_frame(w->pointer);
	uint32_t bit = 1u << (code - BTN_LEFT);
	w->buttons_down = down ? w->buttons_down | bit : w->buttons_down & ~bit;
}

bool os_wl_mouse_move(os_display *d, int x, int y)
{
	struct os_wl_display *w = os_wl(d);
	if (!os_point_on_screen(d, x, y) || pointer_get(w) == NULL)
		return false;
	send_motion(w, x, y);
	return os_wl_roundtrip(w, "moving the pointer");
}

bool os_wl_mouse_click(os_display *d, os_button b, int count)
{
	struct os_wl_display *w = os_wl(d);
	uint32_t code = 0;
	if (!os_evdev_button(b, &code))
		return false;
	if (count < 1 || count > 10)
		return os_fail("click count %d is out of range (1..10)", count);
	if (pointer_get(w) == NULL)
		return false;
	/* One burst: the toolkit sees a double or triple click. */
	for (int i = 0; i < count; i++) {
		send_button(w, code, true);
		send_button(w, code, false);
	}
	return os_wl_roundtrip(w, "clicking");
}

bool os_wl_mouse_button(os_display *d, os_button b, bool down)
{
	struct os_wl_display *w = os_wl(d);
	uint32_t code = 0;
	if (!os_evdev_button(b, &code) || pointer_get(w) == NULL)
		return false;
	send_button(w, code, down);
	return os_wl_roundtrip(w, down ? "pressing a button" : "releasing a button");
}

bool os_wl_mouse_scroll(os_display *d, os_scroll dir, int amount)
{
	struct os_wl_display *w = os_wl(d);
	if ((int)dir < 0 || (int)dir >= OS_SCROLL_COUNT)
		return os_fail("unknown scroll direction %d", (int)dir);
	if (amount < 1 || amount > 1000)
		return os_fail("scroll amount %d is out of range (1..1000)", amount);
	if (pointer_get(w) == NULL)
		return false;
	uint32_t axis = dir == OS_SCROLL_UP || dir == OS_SCROLL_DOWN
		? WL_POINTER_AXIS_VERTICAL_SCROLL : WL_POINTER_AXIS_HORIZONTAL_SCROLL;
	int sign = dir == OS_SCROLL_UP || dir == OS_SCROLL_LEFT ? -1 : 1;
	/* One frame per wheel click, as a real wheel sends them. */
	for (int i = 0; i < amount; i++) {
		zwlr_virtual_pointer_v1_axis_source(w->pointer, WL_POINTER_AXIS_SOURCE_WHEEL);
		zwlr_virtual_pointer_v1_axis_discrete(w->pointer, os_wl_time_ms(), axis,
		                                      wl_fixed_from_int(sign * WHEEL_STEP), sign);
		zwlr_virtual_pointer_v1_frame(w->pointer);
		/* Our own output buffer must not fill: libwayland fails a request
		 * it cannot queue, and that ends the connection. */
		if (i % 128 == 127 && !os_wl_roundtrip(w, "scrolling"))
			return false;
	}
	return os_wl_roundtrip(w, "scrolling");
}

void os_wl_pointer_cleanup(struct os_wl_display *w)
{
	if (w->pointer == NULL)
		return;
	if (!w->dead) {
		for (uint32_t i = 0; i < 8; i++)
			if (w->buttons_down & (1u << i))
				send_button(w, BTN_LEFT + i, false);
	}
	zwlr_virtual_pointer_v1_destroy(w->pointer);
	w->pointer = NULL;
}
