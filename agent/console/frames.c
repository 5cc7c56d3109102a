/*
 * agent/console — live frames: a thread of its own, on an X connection of
 * its own (os/ is not shared between threads), looks at the screen at most
 * max_fps times a second; only a changed screen is scaled and encoded, and
 * only a changed screen or pointer wakes the streams. The agent's own
 * connection and its screenshots are never touched.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/console/console-internal.h"
#include "base/base.h"
#include "os/os.h"
#include "vision/vision.h"

typedef struct grab {
	uint64_t hash;           /* of the frame last published */
	int px, py;
	bool have;
	long long published_ms;  /* when it was */
	long long pointer_ms;    /* when the pointer alone was last sent */
} grab;

/*
 * The screen is looked at twice as often as frames may go out, so a change
 * waits half as long to be seen; frames themselves stay within max_fps.
 */
#define LOOKS_PER_FRAME 2

/* Scales and encodes the screen; the new frame replaces the old under the lock.
 * False: it could not be encoded (tried again at the next look). */
static bool publish_frame(agent_console *c, const os_image *shot, int px, int py)
{
	int w, h;
	if (!vision_fit(shot->width, shot->height, c->frame_max_w, c->frame_max_h, &w, &h))
		return false;
	os_image *small = (w == shot->width && h == shot->height) ? NULL
	                  : vision_scaled(shot, w, h);
	uint8_t *png = NULL;
	size_t len = 0;
	os_png_options opt = {.level = 1, .filter = -1};
	bool ok = os_png_encode(small ? small : shot, &png, &len, &opt);
	os_image_destroy(small);
	if (!ok)
		return false;
	pthread_mutex_lock(&c->lock);
	free(c->frame_png);
	c->frame_png = png;
	c->frame_len = len;
	c->frame_seq++;
	c->frame_tick++;
	c->frame_w = w;
	c->frame_h = h;
	c->screen_w = shot->width;
	c->screen_h = shot->height;
	c->ptr_x = px;
	c->ptr_y = py;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	return true;
}

/* One look at the screen: a new frame if it changed, a pointer event if only that moved. */
static void look(agent_console *c, os_display *d, grab *last)
{
	int px = 0, py = 0;
	os_pointer(d, &px, &py);
	const os_image *shot = os_capture_borrow(d, NULL);
	if (shot == NULL)
		return;
	uint64_t hash = vision_image_hash(shot);
	long long now = base_now_ms();
	bool may_publish = now - last->published_ms >= 1000 / c->max_fps;
	if ((!last->have || hash != last->hash) && may_publish && publish_frame(c, shot, px, py)) {
		*last = (grab){hash, px, py, true, now, now};
		return;
	}
	/* The pointer alone goes out at the frame rate too: each update costs the page. */
	if ((px != last->px || py != last->py) && now - last->pointer_ms >= 1000 / c->max_fps) {
		last->pointer_ms = now;
		pthread_mutex_lock(&c->lock);
		c->ptr_x = px;
		c->ptr_y = py;
		c->frame_tick++;
		pthread_cond_broadcast(&c->changed);
		pthread_mutex_unlock(&c->lock);
		/* Held back, it goes at a later look: the page ends where the pointer rests. */
		last->px = px;
		last->py = py;
	}
}

static void *capture_main(void *arg)
{
	agent_console *c = arg;
	/* Frames are best effort: under load the agent's own work goes first. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10) != 0)
		(void)0; /* not allowed: frames simply keep their share */
	os_display *d = os_display_open(c->display_name);
	if (d == NULL)
		return NULL;
	grab last = {0};
	long period = 1000 / c->max_fps / LOOKS_PER_FRAME;
	for (;;) {
		long long start = base_now_ms();
		look(c, d, &last);
		pthread_mutex_lock(&c->lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long wait = period - (long)(base_now_ms() - start);
		if (wait < 1)
			wait = 1;
		ts.tv_sec += wait / 1000;
		ts.tv_nsec += (wait % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!c->closing && pthread_cond_timedwait(&c->changed, &c->lock, &ts) == 0)
			;
		bool closing = c->closing;
		pthread_mutex_unlock(&c->lock);
		if (closing)
			break;
	}
	os_display_close(d);
	return NULL;
}

bool console_frames_start(agent_console *c)
{
	if (pthread_create(&c->capture, NULL, capture_main, c) != 0)
		return console_fail("cannot start the console's capture thread");
	c->capture_running = true;
	return true;
}

void console_frames_stop(agent_console *c)
{
	if (!c->capture_running)
		return;
	pthread_join(c->capture, NULL);
	c->capture_running = false;
}
