/*
 * os/mouse — the pointer through XTest: motion, buttons, clicks, paced
 * drags (interruptible by the guarded signals, the button always
 * released) and wheel clicks.
 */
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

#include "base/base.h"
#include "os/x11/input-internal.h"

static bool mouse_ready(os_x11 *d)
{
	return os_input_state(d) != NULL;
}

static bool valid_button(os_button b)
{
	if (b != OS_BUTTON_LEFT && b != OS_BUTTON_MIDDLE && b != OS_BUTTON_RIGHT &&
	    b != OS_BUTTON_BACK && b != OS_BUTTON_FORWARD)
		return os_fail("unknown mouse button %d", (int)b);
	return true;
}

bool os_x11_mouse_move(os_x11 *d, int x, int y)
{
	if (!os_point_on_screen(&d->base, x, y) || !mouse_ready(d))
		return false;
	XTestFakeMotionEvent(d->dpy, d->screen, x, y, CurrentTime);
	return os_input_sync(d);
}

bool os_x11_mouse_click(os_x11 *d, os_button b, int count)
{
	if (!valid_button(b))
		return false;
	if (count < 1 || count > 10)
		return os_fail("click count %d is out of range (1..10)", count);
	if (!mouse_ready(d))
		return false;
	/*
	 * All pairs go out in one burst: the server stamps them within the same
	 * few milliseconds, well inside any toolkit's multi-click interval.
	 */
	for (int i = 0; i < count; i++) {
		XTestFakeButtonEvent(d->dpy, (unsigned)b, True, CurrentTime);
		XTestFakeButtonEvent(d->dpy, (unsigned)b, False, CurrentTime);
	}
	return os_input_sync(d);
}

bool os_x11_mouse_button(os_x11 *d, os_button b, bool down)
{
	if (!valid_button(b) || !mouse_ready(d))
		return false;
	XTestFakeButtonEvent(d->dpy, (unsigned)b, down ? True : False, CurrentTime);
	return os_input_sync(d);
}

bool os_x11_mouse_scroll(os_x11 *d, os_scroll dir, int amount)
{
	static const unsigned buttons[] = {
		[OS_SCROLL_UP] = 4, [OS_SCROLL_DOWN] = 5,
		[OS_SCROLL_LEFT] = 6, [OS_SCROLL_RIGHT] = 7,
	};
	if ((int)dir < 0 || (int)dir >= OS_SCROLL_COUNT)
		return os_fail("unknown scroll direction %d", (int)dir);
	if (amount < 1 || amount > 1000)
		return os_fail("scroll amount %d is out of range (1..1000)", amount);
	if (!mouse_ready(d))
		return false;
	for (int i = 0; i < amount; i++) {
		XTestFakeButtonEvent(d->dpy, buttons[dir], True, CurrentTime);
		XTestFakeButtonEvent(d->dpy, buttons[dir], False, CurrentTime);
	}
	return os_input_sync(d);
}

