/*
 * os/gnome/capture — the pixels and the pointer from Mutter's ScreenCast
 * streams, through libpipewire: one pw_stream per monitor, connected to
 * its node for the life of the display, negotiated to a plain 32-bit
 * layout (BGRx/BGRA/RGBx/RGBA) in memory buffers (memfd or plain memory:
 * Mutter's headless and software renderers offer no DMA-BUF, and a
 * DMA-BUF-only offer is refused by not listing it), with the cursor as
 * SPA_META_Cursor metadata.
 *
 * PipeWire's thread copies every frame that comes into the stream's
 * "latest" buffer (with its arrival time); a capture swaps it with the
 * "held" one it composes from, under the loop's lock, so the loop thread
 * never writes what a borrowed image points into.
 *
 * When a frame is current. Mutter sends a frame only when the monitor's
 * picture changed (damage), at most one per refresh, and every damage is
 * recorded within a refresh or two. So:
 *  - no frame yet (the stream just started): wait for the first;
 *  - input was sent (any Notify*) since the last capture: wait for the
 *    frames arriving after it until they pause for QUIET_MS (the first
 *    is often the pointer's motion, the client's redraw comes a refresh
 *    or two later), at most SETTLE_MS after the input; when none comes
 *    the input changed nothing on screen, and the newest frame is still
 *    the picture (remembered, so the next capture does not wait again);
 *  - otherwise the newest frame is the screen as it is: nothing changed
 *    since it came, or another frame would have followed.
 * A picture that an application redraws later than SETTLE_MS after the
 * input is the settle checks' business (vision/), as on X11.
 *
 * vision/ reads a region in strips of rows, one capture each: a strip
 * that continues the last capture (just below it, as wide, moments later)
 * is composed from the same held frames (os/wlroots/capture.c's rule), so
 * a read never mixes two frames and costs none.
 */
#include <errno.h>
#include <pipewire/pipewire.h>
#include <spa/buffer/meta.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/gnome/gnome-internal.h"
#include "os/gnome/gnome-libs.h"

/* A stream's first frame: Mutter records one as soon as it starts. */
#define FIRST_FRAME_MS 3000
/*
 * ... except when it is lost: Mutter 43 records the first frame at the
 * paint it queues when the stream starts streaming, and drops it when no
 * buffer of ours is ready yet; on a screen that does not change no other
 * frame follows (seen: one stream in five of a two-monitor Mutter never
 * sent one). A stream without a frame this long after connecting is
 * connected again, which makes Mutter queue that paint again.
 */
#define FIRST_FRAME_RETRY_MS 250
/* Input to the frame that shows it: the client's repaint (a frame
 * callback) and Mutter's next paint and record, a few refreshes; frames
 * that follow each other closer than QUIET_MS are one change going on. */
#define SETTLE_MS 150
#define QUIET_MS 40
/*
 * Deskhand's move to the report that shows it. Longer than SETTLE_MS: a
 * report that is late shows the position before the move, which the kill
 * switch would take for a person's hand (seen under load: no report 150 ms
 * after a move). The wait ends at the report that shows the move; only a
 * person moving the pointer at that moment makes it last this long.
 */
#define POINTER_SETTLE_MS 600
/* The strips of one read follow each other within a millisecond or so. */
#define STRIP_CONTINUES_MS 20
/* Room for the cursor bitmap: Mutter offers the metadata at a fixed size
 * for 384x384 sprites, and a range that misses it gets no metadata. */
#define CURSOR_DEF 384
#define CURSOR_MAX 1024
#define CURSOR_META_SIZE(w, h) \
	((int)(sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + (w) * (h) * 4))

struct frame {
	uint8_t *data;             /* width * 4 per row, BGRX after conversion */
	size_t cap;
	int width, height;
	uint64_t seq;              /* 0: none */
	int64_t at_ns;             /* when it arrived */
};

struct stream {
	struct os_gnome_capture *cap;
	int mon;
	struct pw_stream *st;
	struct spa_hook listener;
	struct spa_video_info_raw fmt;
	bool have_format;
	struct frame latest, held;
	/* The cursor, from the metadata: in the stream's pixels. */
	bool cursor_known, cursor_here;
	int cx, cy;
	int64_t cursor_ns;
	char error[160];
	/* For a reconnection: the node, the offer's size, when connected. */
	uint32_t node;
	int offer_w, offer_h;
	int64_t connected_ns;
};

struct os_gnome_capture {
	struct pw_thread_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	char core_error[160];
	struct stream s[OS_GNOME_MAX_MONITORS];
	int n;
	uint64_t seq;
	uint64_t taken;            /* frames made held (os_gnome_capture_stats) */
	uint64_t settled_input;    /* input_seq known to be shown (or to show nothing) */
	/* The composed image and the last region, for strips. */
	uint8_t *img_mem;
	size_t img_cap;
	os_image img;
	os_rect last_region;
	int64_t last_ns;
};

/* ---- PipeWire's thread -------------------------------------------------------- */

static bool frame_fit(struct frame *f, int w, int h)
{
	size_t need = (size_t)w * (size_t)h * 4;
	if (need > f->cap) {
		uint8_t *n = realloc(f->data, need);
		if (n == NULL)
			return false;
		f->data = n;
		f->cap = need;
	}
	f->width = w;
	f->height = h;
	return true;
}

static bool rgb_order(uint32_t format)
{
	return format == SPA_VIDEO_FORMAT_RGBx || format == SPA_VIDEO_FORMAT_RGBA;
}

/* Copies one buffer's pixels into s->latest as BGRX. */
static void take_pixels(struct stream *s, const struct spa_data *d)
{
	int w = (int)s->fmt.size.width, h = (int)s->fmt.size.height;
	int stride = d->chunk->stride > 0 ? d->chunk->stride : w * 4;
	const uint8_t *src = (const uint8_t *)d->data + d->chunk->offset;
	if (d->chunk->offset + (size_t)stride * (size_t)(h - 1) + (size_t)w * 4 > d->maxsize ||
	    !frame_fit(&s->latest, w, h))
		return;
	bool swap = rgb_order(s->fmt.format);
	for (int y = 0; y < h; y++) {
		const uint8_t *r = src + (size_t)y * (size_t)stride;
		uint8_t *o = s->latest.data + (size_t)y * (size_t)w * 4;
		if (!swap) {
			memcpy(o, r, (size_t)w * 4);
			continue;
		}
		for (int x = 0; x < w; x++) {
			o[4 * x] = r[4 * x + 2];
			o[4 * x + 1] = r[4 * x + 1];
			o[4 * x + 2] = r[4 * x];
			o[4 * x + 3] = r[4 * x + 3];
		}
	}
	s->latest.seq = ++s->cap->seq;
	s->latest.at_ns = base_now_ns();
}

/* Mutter's cursor metadata: id 0 means "no news"; a position of -1,-1
 * means the pointer is not on this monitor (or hidden). */
static void take_cursor(struct stream *s, struct spa_buffer *b)
{
	struct spa_meta_cursor *c = spa_buffer_find_meta_data(b, SPA_META_Cursor, sizeof(*c));
	if (c == NULL || !spa_meta_cursor_is_valid(c))
		return;
	s->cursor_known = true;
	s->cursor_here = c->position.x >= 0 && c->position.y >= 0;
	s->cx = c->position.x;
	s->cy = c->position.y;
	s->cursor_ns = base_now_ns();
}

static void on_process(void *data)
{
	struct stream *s = data;
	struct pw_buffer *b, *last = NULL;
	/* Only the newest counts; older ones go straight back. */
	while ((b = pw_stream_dequeue_buffer(s->st)) != NULL) {
		take_cursor(s, b->buffer);
		if (b->buffer->n_datas > 0 && b->buffer->datas[0].chunk->size > 0 &&
		    b->buffer->datas[0].data != NULL &&
		    !(b->buffer->datas[0].chunk->flags & SPA_CHUNK_FLAG_CORRUPTED)) {
			if (last != NULL)
				pw_stream_queue_buffer(s->st, last);
			last = b;
		} else {
			pw_stream_queue_buffer(s->st, b);  /* cursor-only */
		}
	}
	if (last != NULL) {
		if (s->have_format)
			take_pixels(s, &last->buffer->datas[0]);
		pw_stream_queue_buffer(s->st, last);
	}
	pw_thread_loop_signal(s->cap->loop, false);
}

static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param)
{
	struct stream *s = data;
	if (param == NULL || id != SPA_PARAM_Format)
		return;
	struct spa_video_info_raw fmt;
	uint32_t media_type, media_subtype;
	if (spa_format_parse(param, &media_type, &media_subtype) < 0 ||
	    media_type != SPA_MEDIA_TYPE_video || media_subtype != SPA_MEDIA_SUBTYPE_raw ||
	    spa_format_video_raw_parse(param, &fmt) < 0)
		return;
	s->fmt = fmt;
	s->have_format = true;
	uint8_t buf[1024];
	struct spa_pod_builder pb = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *params[3];
	params[0] = spa_pod_builder_add_object(&pb, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
		SPA_PARAM_BUFFERS_dataType,
		SPA_POD_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
	params[1] = spa_pod_builder_add_object(&pb, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
		SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
		SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
	params[2] = spa_pod_builder_add_object(&pb, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
		SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
		SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(
			CURSOR_META_SIZE(CURSOR_DEF, CURSOR_DEF), CURSOR_META_SIZE(1, 1),
			CURSOR_META_SIZE(CURSOR_MAX, CURSOR_MAX)));
	pw_stream_update_params(s->st, params, 3);
}

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state,
                             const char *error)
{
	struct stream *s = data;
	if (state == PW_STREAM_STATE_ERROR || state == PW_STREAM_STATE_UNCONNECTED)
		snprintf(s->error, sizeof(s->error), "the PipeWire stream %s",
		         error != NULL ? error : "was disconnected");
	pw_thread_loop_signal(s->cap->loop, false);
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_state_changed,
	.param_changed = on_param_changed,
	.process = on_process,
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct os_gnome_capture *c = data;
	if (id == PW_ID_CORE)
		snprintf(c->core_error, sizeof(c->core_error), "PipeWire: %s", message);
	pw_thread_loop_signal(c->loop, false);
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.error = on_core_error,
};

/* ---- set-up -------------------------------------------------------------------- */

/* The formats deskhand reads, at the monitor's size in the stream's pixels
 * (its logical size times the scale), any frame rate Mutter likes. */
static const struct spa_pod *format_offer(struct spa_pod_builder *pb, int w, int h)
{
	struct spa_rectangle def = SPA_RECTANGLE((uint32_t)w, (uint32_t)h);
	struct spa_rectangle min = SPA_RECTANGLE(1, 1), max = SPA_RECTANGLE(16384, 16384);
	struct spa_fraction fdef = SPA_FRACTION(60, 1), fmin = SPA_FRACTION(0, 1),
	                    fmax = SPA_FRACTION(360, 1);
	return spa_pod_builder_add_object(pb, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
		SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx,
			SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBx,
			SPA_VIDEO_FORMAT_RGBA),
		SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def, &min, &max),
		SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&fdef, &fmin, &fmax));
}

static bool stream_connect(struct stream *s)
{
	uint8_t buf[1024];
	struct spa_pod_builder pb = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *offer = format_offer(&pb, s->offer_w, s->offer_h);
	s->connected_ns = base_now_ns();
	return pw_stream_connect(s->st, PW_DIRECTION_INPUT, s->node,
	                         PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS,
	                         &offer, 1) >= 0;
}

static bool stream_open(struct os_gnome_display *g, struct stream *s, int mon)
{
	const struct os_gnome_monitor *m = &g->mon[mon];
	s->cap = g->cap;
	s->mon = mon;
	char name[64];
	snprintf(name, sizeof(name), "deskhand %s", m->connector);
	s->st = pw_stream_new(g->cap->core, name,
	                      pw_properties_new(PW_KEY_MEDIA_TYPE, "Video",
	                                        PW_KEY_MEDIA_CATEGORY, "Capture",
	                                        PW_KEY_MEDIA_ROLE, "Screen", NULL));
	if (s->st == NULL)
		return os_fail("cannot create a PipeWire stream for monitor %s", m->connector);
	pw_stream_add_listener(s->st, &s->listener, &stream_events, s);
	s->node = m->node;
	s->offer_w = (int)(m->logical.width * m->scale + 0.5);
	s->offer_h = (int)(m->logical.height * m->scale + 0.5);
	if (!stream_connect(s))
		return os_fail("cannot connect to PipeWire node %u (monitor %s)", m->node,
		               m->connector);
	return true;
}

bool os_gnome_capture_start(struct os_gnome_display *g)
{
	pw_init(NULL, NULL);
	/* os/ never prints: PipeWire's own warnings stay quiet unless asked. */
	if (getenv("PIPEWIRE_DEBUG") == NULL)
		pw_log_set_level(SPA_LOG_LEVEL_NONE);
	struct os_gnome_capture *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return os_fail("out of memory");
	g->cap = c;
	c->loop = pw_thread_loop_new("deskhand-pw", NULL);
	if (c->loop == NULL)
		return os_fail("cannot create PipeWire's loop");
	c->context = pw_context_new(pw_thread_loop_get_loop(c->loop), NULL, 0);
	if (c->context == NULL || pw_thread_loop_start(c->loop) < 0)
		return os_fail("cannot start PipeWire's loop");
	pw_thread_loop_lock(c->loop);
	bool ok = true;
	c->core = pw_context_connect(c->context, NULL, 0);
	if (c->core == NULL) {
		const char *rt = getenv("XDG_RUNTIME_DIR");
		ok = os_fail("cannot connect to PipeWire (%s/%s): %s", rt != NULL ? rt : "?",
		             getenv("PIPEWIRE_REMOTE") ? getenv("PIPEWIRE_REMOTE") : "pipewire-0",
		             strerror(errno));
	} else {
		pw_core_add_listener(c->core, &c->core_listener, &core_events, c);
	}
	for (int i = 0; ok && i < g->nmon; i++) {
		ok = stream_open(g, &c->s[i], i);
		c->n = i + 1;
	}
	pw_thread_loop_unlock(c->loop);
	return ok;
}

void os_gnome_capture_stop(struct os_gnome_display *g)
{
	struct os_gnome_capture *c = g->cap;
	if (c == NULL)
		return;
	if (c->loop != NULL)
		pw_thread_loop_stop(c->loop);
	for (int i = 0; i < c->n; i++) {
		if (c->s[i].st != NULL)
			pw_stream_destroy(c->s[i].st);
		free(c->s[i].latest.data);
		free(c->s[i].held.data);
	}
	if (c->core != NULL)
		pw_core_disconnect(c->core);
	if (c->context != NULL)
		pw_context_destroy(c->context);
	if (c->loop != NULL)
		pw_thread_loop_destroy(c->loop);
	free(c->img_mem);
	free(c);
	g->cap = NULL;
}

/* ---- waiting for frames (the loop locked) --------------------------------------- */

/* Waits for PipeWire's thread to signal, until deadline; false once past. */
static bool wait_until(struct os_gnome_capture *c, int64_t deadline)
{
	int64_t left = deadline - base_now_ns();
	if (left <= 0)
		return false;
	struct timespec abs;
	pw_thread_loop_get_time(c->loop, &abs, left);
	pw_thread_loop_timed_wait_full(c->loop, &abs);
	return true;
}

static bool stream_failed(struct os_gnome_capture *c, const struct stream *s,
                          const struct os_gnome_display *g)
{
	if (c->core_error[0] != '\0')
		return os_fail("capture of monitor %s: %s", g->mon[s->mon].connector, c->core_error);
	if (s->error[0] != '\0')
		return os_fail("capture of monitor %s: %s", g->mon[s->mon].connector, s->error);
	return true;
}

/* Every stream of `use` has a frame (its first may still be coming). */
static bool first_frames(struct os_gnome_display *g, const int *use, int n)
{
	struct os_gnome_capture *c = g->cap;
	int64_t deadline = base_now_ns() + FIRST_FRAME_MS * BASE_NS_PER_MS;
	for (int i = 0; i < n; i++) {
		struct stream *s = &c->s[use[i]];
		while (s->latest.seq == 0 && s->held.seq == 0) {
			if (!stream_failed(c, s, g))
				return false;
			int64_t retry = s->connected_ns + FIRST_FRAME_RETRY_MS * BASE_NS_PER_MS;
			if (base_now_ns() >= retry) {
				pw_stream_disconnect(s->st);
				s->have_format = false;
				s->error[0] = '\0';  /* "disconnected": ours */
				if (!stream_connect(s))
					return os_fail("cannot connect to PipeWire node %u (monitor %s)",
					               s->node, g->mon[s->mon].connector);
				continue;
			}
			if (!wait_until(c, retry < deadline ? retry : deadline) &&
			    base_now_ns() >= deadline)
				return os_fail("capture of monitor %s: Mutter sent no frame in %d ms",
				               g->mon[s->mon].connector, FIRST_FRAME_MS);
		}
	}
	return true;
}

/* The newest arrival among the streams of `use`. */
static int64_t newest_arrival(const struct os_gnome_capture *c, const int *use, int n)
{
	int64_t t = 0;
	for (int i = 0; i < n; i++) {
		const struct stream *s = &c->s[use[i]];
		t = s->latest.at_ns > t ? s->latest.at_ns : t;
		t = s->held.at_ns > t ? s->held.at_ns : t;
	}
	return t;
}

/* After input not yet seen on screen: frames that came after it, until
 * they pause for QUIET_MS, or SETTLE_MS of nothing (the input changed
 * nothing). The first frame after a click is often the pointer's motion
 * (Mutter repaints for it), the client's redraw a refresh or two later. */
static void frames_after_input(struct os_gnome_display *g, const int *use, int n)
{
	struct os_gnome_capture *c = g->cap;
	if (c->settled_input == g->input_seq)
		return;
	int64_t deadline = g->input_ns + SETTLE_MS * BASE_NS_PER_MS;
	for (;;) {
		int64_t last = newest_arrival(c, use, n);
		int64_t until = deadline;
		if (last > g->input_ns) {
			until = last + QUIET_MS * BASE_NS_PER_MS;
			if (until > deadline)
				until = deadline;
		}
		if (!wait_until(c, until))
			break;
	}
	c->settled_input = g->input_seq;
}

/* The newest frames become the held ones, which images point into. */
static void hold_newest(struct os_gnome_capture *c, const int *use, int n)
{
	for (int i = 0; i < n; i++) {
		struct stream *s = &c->s[use[i]];
		if (s->latest.seq > s->held.seq) {
			struct frame t = s->held;
			s->held = s->latest;
			s->latest = t;
			c->taken++;
		}
	}
}

/* ---- into the image --------------------------------------------------------------- */

/* The source span [*a, *b) of logical coordinate v of `len` (box filter). */
static void span(int v, int len, int src_len, int *a, int *b)
{
	*a = (int)((long long)v * src_len / len);
	*b = (int)((long long)(v + 1) * src_len / len);
	if (*b <= *a)
		*b = *a + 1;
	if (*b > src_len)
		*b = src_len;
}

/* The part `in` (screen coordinates) of monitor rectangle o from frame f,
 * resampled when the stream's pixels are not logical ones (scale != 1). */
static void copy_part(const struct frame *f, os_rect o, os_rect in, const os_image *img,
                      int dx, int dy)
{
	size_t fstride = (size_t)f->width * 4;
	for (int y = in.y - o.y; y < in.y - o.y + in.height; y++) {
		uint8_t *d = img->pixels + (size_t)(dy + y - (in.y - o.y)) * (size_t)img->stride +
		             (size_t)dx * 4;
		if (f->width == o.width && f->height == o.height) {
			memcpy(d, f->data + (size_t)y * fstride + (size_t)(in.x - o.x) * 4,
			       (size_t)in.width * 4);
			continue;
		}
		int sy0, sy1;
		span(y, o.height, f->height, &sy0, &sy1);
		for (int x = in.x - o.x; x < in.x - o.x + in.width; x++, d += 4) {
			int sx0, sx1;
			span(x, o.width, f->width, &sx0, &sx1);
			unsigned sum[3] = {0, 0, 0}, cnt = 0;
			for (int sy = sy0; sy < sy1; sy++) {
				const uint8_t *s = f->data + (size_t)sy * fstride + (size_t)sx0 * 4;
				for (int sx = sx0; sx < sx1; sx++, s += 4, cnt++) {
					sum[0] += s[0];
					sum[1] += s[1];
					sum[2] += s[2];
				}
			}
			for (int k = 0; k < 3; k++)
				d[k] = (uint8_t)((sum[k] + cnt / 2) / cnt);
			d[3] = 0xff;
		}
	}
}

static bool compose(struct os_gnome_display *g, const os_rect *r, const int *use, int n)
{
	struct os_gnome_capture *c = g->cap;
	if (n == 1) {
		const struct frame *f = &c->s[use[0]].held;
		os_rect o = g->mon[use[0]].logical, in;
		if (os_rect_meet(o, *r, &in) && in.width == r->width && in.height == r->height &&
		    f->width == o.width && f->height == o.height) {
			c->img = (os_image){f->data + ((size_t)(r->y - o.y) * (size_t)f->width +
			                               (size_t)(r->x - o.x)) * 4,
			                    r->width, r->height, f->width * 4};
			return true;
		}
	}
	size_t need = (size_t)r->width * (size_t)r->height * 4;
	if (need > c->img_cap) {
		free(c->img_mem);
		c->img_cap = 0;
		if ((c->img_mem = malloc(need)) == NULL)
			return os_fail("out of memory for a %dx%d capture", r->width, r->height);
		c->img_cap = need;
	}
	memset(c->img_mem, 0, need);  /* what no monitor covers is black */
	c->img = (os_image){c->img_mem, r->width, r->height, r->width * 4};
	for (int i = 0; i < n; i++) {
		os_rect o = g->mon[use[i]].logical, in;
		if (os_rect_meet(o, *r, &in))
			copy_part(&c->s[use[i]].held, o, in, &c->img, in.x - r->x, in.y - r->y);
	}
	return true;
}

/* ---- the backend's calls ------------------------------------------------------------- */

static bool strip_continues(const struct os_gnome_capture *c, const os_rect *r,
                            const int *use, int n)
{
	const os_rect *l = &c->last_region;
	if (c->last_ns == 0 || r->x != l->x || r->width != l->width ||
	    r->y != l->y + l->height ||
	    base_now_ns() - c->last_ns > STRIP_CONTINUES_MS * BASE_NS_PER_MS)
		return false;
	for (int i = 0; i < n; i++)
		if (c->s[use[i]].held.seq == 0)
			return false;
	return true;
}

const os_image *os_gnome_capture_borrow(os_display *d, const os_rect *region)
{
	struct os_gnome_display *g = os_gnome(d);
	struct os_gnome_capture *c = g->cap;
	if (!os_gnome_alive(g))
		return NULL;
	os_rect r = region != NULL ? *region : g->layout;
	if (r.width <= 0 || r.height <= 0 || r.x < 0 || r.y < 0 ||
	    r.x + r.width > g->layout.width || r.y + r.height > g->layout.height) {
		os_fail("region %dx%d+%d+%d is not inside the screen (%dx%d)", r.width, r.height,
		        r.x, r.y, g->layout.width, g->layout.height);
		return NULL;
	}
	int use[OS_GNOME_MAX_MONITORS], n = 0;
	for (int i = 0; i < c->n; i++) {
		os_rect in;
		if (os_rect_meet(g->mon[i].logical, r, &in))
			use[n++] = i;
	}
	if (!strip_continues(c, &r, use, n)) {
		pw_thread_loop_lock(c->loop);
		bool ok = first_frames(g, use, n);
		if (ok) {
			os_trace("frame");  /* every stream has one: after open, its start */
			frames_after_input(g, use, n);
			hold_newest(c, use, n);
		}
		pw_thread_loop_unlock(c->loop);
		if (!ok) {
			c->last_ns = 0;
			return NULL;
		}
	}
	if (!compose(g, &r, use, n))
		return NULL;
	c->last_region = r;
	c->last_ns = base_now_ns();
	return &c->img;
}

void os_gnome_capture_stats(os_display *d, uint64_t *received, uint64_t *taken)
{
	struct os_gnome_capture *c = os_gnome(d)->cap;
	pw_thread_loop_lock(c->loop);
	*received = c->seq;
	*taken = c->taken;
	pw_thread_loop_unlock(c->loop);
}

void os_gnome_capture_trim(os_display *d, size_t max_bytes)
{
	struct os_gnome_capture *c = os_gnome(d)->cap;
	/* The streams' frames are the capture itself (PipeWire's thread
	 * fills them whenever Mutter sends one): only the image goes. */
	if (c == NULL || c->img_cap <= max_bytes)
		return;
	free(c->img_mem);
	c->img_mem = NULL;
	c->img_cap = 0;
	c->img = (os_image){0};
	c->last_ns = 0;
}

/* The newest report of a stream that has the pointer on its monitor, in
 * screen coordinates; false when none has. `known`: some stream reported. */
static bool newest_cursor(struct os_gnome_display *g, int *x, int *y, bool *known)
{
	struct os_gnome_capture *c = g->cap;
	const struct stream *best = NULL;
	for (int i = 0; i < c->n; i++) {
		const struct stream *s = &c->s[i];
		*known = *known || s->cursor_known;
		if (s->cursor_known && s->cursor_here && (best == NULL || s->cursor_ns > best->cursor_ns))
			best = s;
	}
	if (best == NULL)
		return false;
	const os_rect *o = &g->mon[best->mon].logical;
	int fw = (int)best->fmt.size.width, fh = (int)best->fmt.size.height;
	*x = o->x + (fw > 0 ? (int)((long long)best->cx * o->width / fw) : best->cx);
	*y = o->y + (fh > 0 ? (int)((long long)best->cy * o->height / fh) : best->cy);
	return true;
}

/*
 * Right after deskhand's own move the metadata may still tell the
 * position before it: read then, the agent's kill switch would take its
 * own click for a person's move. Until the report shows the position
 * sent, at most POINTER_SETTLE_MS after the move, it waits; a person moving the
 * pointer meanwhile is then seen where they put it.
 */
bool os_gnome_pointer(os_display *d, int *x, int *y)
{
	struct os_gnome_display *g = os_gnome(d);
	struct os_gnome_capture *c = g->cap;
	if (!os_gnome_alive(g))
		return false;
	int all[OS_GNOME_MAX_MONITORS];
	for (int i = 0; i < c->n; i++)
		all[i] = i;
	pw_thread_loop_lock(c->loop);
	/* The metadata comes with the streams' buffers: the first included. */
	bool ok = first_frames(g, all, c->n), known = false, found = false;
	int64_t deadline = g->motion_ns + POINTER_SETTLE_MS * BASE_NS_PER_MS;
	while (ok) {
		found = newest_cursor(g, x, y, &known);
		if (!g->motion_unseen || (found && *x == g->sent_x && *y == g->sent_y) ||
		    !wait_until(c, deadline))
			break;
	}
	if (ok)
		g->motion_unseen = false;
	pw_thread_loop_unlock(c->loop);
	if (!ok)
		return false;
	if (!found)
		return os_fail(known ? "the pointer is on no monitor (Mutter reports it hidden)"
		                     : "Mutter has not reported the pointer (no cursor metadata yet)");
	return true;
}
