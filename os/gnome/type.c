/*
 * os/gnome/type — exact text through Mutter's RemoteDesktop session:
 * keysyms for what Mutter can type, the session's clipboard and ctrl+v
 * for the rest, the user's clipboard put back afterwards.
 *
 * What Mutter 43.8 does (measured on a headless Mutter, private bus, into
 * tests/wlrecord and a GTK 3 entry):
 *  - NotifyKeyboardKeysym(k, b) looks k up in its own keymap (the one it
 *    sends clients; "us", pc105+inet here), in the current layout group,
 *    keycode by keycode, level by level, and presses the first key found;
 *    for a keysym at level 1 it presses Shift_L around it, at level 2
 *    ISO_Level3_Shift (higher levels: the bare key, a wrong character).
 *    'A' alone came as Shift_L, a, release, Shift_L up; 'a' with Shift
 *    held came as 'A'; Return and Tab as their keys; EuroSign (keycode
 *    443 of pc105+inet) typed.
 *  - A keysym the keymap lacks (ü and é on "us", U+03A9 as 0x10003a9 or
 *    Greek_OMEGA 0x7d9, U+4E2D, U+1F600 as 0x101f600, U+0430) is dropped:
 *    the call succeeds, nothing reaches any client, Mutter logs "No
 *    keycode found for keyval ... in current group". Mutter 43 never
 *    remaps a spare keycode. So deskhand reads the keymap itself (one
 *    wl_keyboard on Mutter's Wayland socket) and types only what it
 *    proves Mutter will find, in every layout group (which one is current
 *    cannot be read from outside); the rest goes through the clipboard.
 *  - NotifyKeyboardKeycode(c, b) takes evdev codes (30 came as 'a',
 *    keycode 38); a release of a key not pressed is an error ("Invalid
 *    key event").
 *  - The session's virtual keyboard and pointer join the seat with their
 *    first event, not at Start: on a seat without devices (headless) that
 *    event is lost, clients take up the capability a few ms later. A key
 *    Mutter finds nowhere adds the keyboard without typing (input.c).
 *  - Spacing: once a client holds the keyboard, 10 press+release pairs
 *    back to back, and a key right after a click, all arrived (5 of 5);
 *    the loss the reference saw was the first key of a session.
 *  - NotifyPointerAxisDiscrete(axis 0 vertical / 1 horizontal, steps)
 *    gives |steps| wheel frames (source wheel, discrete ±1, value ±10).
 *    NotifyPointerAxis(dx, dy, flags): without the wheel flag (2) a
 *    finger scroll, no axis_stop even with FINISH (1); with it Mutter
 *    made discrete clicks, dx=5 one horizontal and a stray vertical -1.
 *  - Clipboard: EnableClipboard({}) once per session (a second one fails,
 *    "Already enabled", also after DisableClipboard); then
 *    SelectionOwnerChanged({mime-types, session-is-owner}) comes at once
 *    when the clipboard has an owner, and at each change. SetSelection(
 *    {mime-types}) makes the session the owner; Mutter's clipboard
 *    manager then asks for text/plain;charset=utf-8 at once (one
 *    SelectionTransfer(mime, serial) not caused by any paste), to keep a
 *    copy. A paste is another SelectionTransfer; SelectionWrite(serial)
 *    answers an fd (in the GUnixFDList) to write the bytes to and close,
 *    then SelectionWriteDone(serial, true). GTK 3 asks once per offer (a
 *    second ctrl+v of the same offer pasted from its cache). SelectionRead
 *    (mime) answers an fd the owner writes to (EOF at once when there is
 *    none). DisableClipboard while owning hands the clipboard to Mutter's
 *    manager, which then serves its copy (text/plain;charset=utf-8 only:
 *    an image/png of a session that went away was gone).
 *  - Paste keys: in a GTK 3 entry ctrl+v and shift+Insert paste the
 *    clipboard, ctrl+shift+v does nothing; foot pastes the clipboard with
 *    ctrl+shift+v and the primary selection with shift+Insert (which the
 *    session cannot set), and sends ctrl+v to the program as ^V. deskhand
 *    pastes with ctrl+v and proves the paste by the transfer it causes: no
 *    transfer within PASTE_WAIT_MS is an error naming the key, never a
 *    silent loss.
 */
#include <errno.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "base/base.h"
#include "os/gnome/gnome-internal.h"
#include "os/keys.h"
#include "os/gnome/gnome-libs.h"

#define RD_NAME "org.gnome.Mutter.RemoteDesktop"
#define RD_SESSION "org.gnome.Mutter.RemoteDesktop.Session"
#define MIME_UTF8 "text/plain;charset=utf-8"
#define CALL_MS 5000
/* The clipboard manager's fetch right after SetSelection; the wait ends
 * at the fetch. Handed back before it, the user's restored clipboard is
 * lost (seen on a loaded machine with 300 ms: the clipboard read empty). */
#define MANAGER_WAIT_MS 2000
/* A paste's request for the clipboard after ctrl+v. Only a window that
 * does not paste with ctrl+v waits all of it; a loaded machine was seen to
 * make a GTK entry ask later than 1.5 s. */
#define PASTE_WAIT_MS 3000
/* After the bytes were written: the client reads them and inserts them
 * before the keys that follow (not observable from here). */
#define PASTE_SETTLE_MS 100
#define SAVE_WAIT_MS 2000
#define SAVE_MAX (16u << 20)
#define MAX_MIMES 16

struct clip_item {
	char *mime;
	GBytes *data;
};

struct os_gnome_typer {
	GMainContext *ctx;           /* the selection signals are delivered here */
	guint sub;
	struct xkb_context *xkb;
	struct xkb_keymap *keymap;   /* Mutter's, as its clients get it */
	/* What the session offers now (answers SelectionTransfer). */
	struct clip_item serve[MAX_MIMES];
	int nserve;
	unsigned transfers;          /* transfers answered */
	/* The clipboard's mime types, from SelectionOwnerChanged. */
	char *owner_mimes[MAX_MIMES];
	int nowner;
	bool ours;                   /* session-is-owner */
};

static void items_clear(struct clip_item *it, int *n)
{
	for (int i = 0; i < *n; i++) {
		g_free(it[i].mime);
		if (it[i].data != NULL)
			g_bytes_unref(it[i].data);
	}
	*n = 0;
}

/* ---- the selection signals ---------------------------------------------------- */

static void answer_transfer(struct os_gnome_display *g, const char *mime, guint32 serial)
{
	struct os_gnome_typer *t = g->typer;
	GBytes *data = NULL;
	for (int i = 0; i < t->nserve && data == NULL; i++)
		if (strcmp(t->serve[i].mime, mime) == 0)
			data = t->serve[i].data;
	bool ok = false;
	GUnixFDList *fds = NULL;
	GVariant *r = data == NULL ? NULL : g_dbus_connection_call_with_unix_fd_list_sync(
		g->bus, RD_NAME, g->rd_session, RD_SESSION, "SelectionWrite",
		g_variant_new("(u)", serial), G_VARIANT_TYPE("(h)"), G_DBUS_CALL_FLAGS_NONE,
		CALL_MS, NULL, &fds, NULL, NULL);
	if (r != NULL && fds != NULL) {
		gint32 h = 0;
		g_variant_get(r, "(h)", &h);
		int fd = g_unix_fd_list_get(fds, h, NULL);
		gsize len = 0;
		const void *p = g_bytes_get_data(data, &len);
		ok = fd >= 0 && base_write_all(fd, p, len);
		if (fd >= 0)
			close(fd);
	}
	if (r != NULL)
		g_variant_unref(r);
	if (fds != NULL)
		g_object_unref(fds);
	GVariant *done = g_dbus_connection_call_sync(
		g->bus, RD_NAME, g->rd_session, RD_SESSION, "SelectionWriteDone",
		g_variant_new("(ub)", serial, ok), NULL, G_DBUS_CALL_FLAGS_NONE, CALL_MS, NULL,
		NULL);
	if (done != NULL)
		g_variant_unref(done);
	if (ok)
		t->transfers++;
}

static void owner_changed(struct os_gnome_typer *t, GVariant *opts)
{
	for (int i = 0; i < t->nowner; i++)
		g_free(t->owner_mimes[i]);
	t->nowner = 0;
	gboolean ours = FALSE;
	g_variant_lookup(opts, "session-is-owner", "b", &ours);
	t->ours = ours;
	GVariantIter *it = NULL;
	const char *m;
	if (g_variant_lookup(opts, "mime-types", "(as)", &it) ||
	    g_variant_lookup(opts, "mime-types", "as", &it)) {
		while (g_variant_iter_next(it, "&s", &m))
			if (t->nowner < MAX_MIMES)
				t->owner_mimes[t->nowner++] = g_strdup(m);
		g_variant_iter_free(it);
	}
}

static void on_signal(GDBusConnection *c, const char *sender, const char *path,
                      const char *iface, const char *name, GVariant *params, gpointer ud)
{
	(void)c; (void)sender; (void)path; (void)iface;
	struct os_gnome_display *g = ud;
	if (strcmp(name, "SelectionTransfer") == 0) {
		const char *mime;
		guint32 serial;
		g_variant_get(params, "(&su)", &mime, &serial);
		answer_transfer(g, mime, serial);
	} else if (strcmp(name, "SelectionOwnerChanged") == 0) {
		GVariant *opts = g_variant_get_child_value(params, 0);
		owner_changed(g->typer, opts);
		g_variant_unref(opts);
	}
}

/* Runs the delivered signals for up to `ms` (0: what is there), or until
 * `*count` exceeds `above`. */
static void pump(struct os_gnome_display *g, int ms, const unsigned *count, unsigned above)
{
	int64_t end = base_now_ns() + (int64_t)ms * BASE_NS_PER_MS;
	for (;;) {
		while (g_main_context_iteration(g->typer->ctx, FALSE))
			;
		if ((count != NULL && *count > above) || base_now_ns() >= end ||
		    os_input_signal_caught() != 0)
			return;
		g_usleep(1000);
	}
}

static struct os_gnome_typer *typer_get(struct os_gnome_display *g)
{
	if (g->typer != NULL)
		return g->typer;
	struct os_gnome_typer *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		os_fail("out of memory");
		return NULL;
	}
	t->ctx = g_main_context_new();
	t->xkb = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	g_main_context_push_thread_default(t->ctx);
	t->sub = g_dbus_connection_signal_subscribe(g->bus, NULL, RD_SESSION, NULL,
	                                            g->rd_session, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
	                                            on_signal, g, NULL);
	g_main_context_pop_thread_default(t->ctx);
	g->typer = t;
	return t;
}

void os_gnome_type_free(struct os_gnome_display *g)
{
	struct os_gnome_typer *t = g->typer;
	if (t == NULL)
		return;
	if (t->sub != 0 && g->bus != NULL)
		g_dbus_connection_signal_unsubscribe(g->bus, t->sub);
	pump(g, 0, NULL, 0);
	items_clear(t->serve, &t->nserve);
	for (int i = 0; i < t->nowner; i++)
		g_free(t->owner_mimes[i]);
	xkb_keymap_unref(t->keymap);
	xkb_context_unref(t->xkb);
	g_main_context_unref(t->ctx);
	free(t);
	g->typer = NULL;
}

/* ---- Mutter's keymap ------------------------------------------------------------ */

struct km_fetch {
	struct wl_seat *seat;
	struct wl_keyboard *kb;
	uint32_t caps;
	bool caps_known;
	char *text;                  /* the keymap, malloc'ed */
	bool failed;
};

static void kb_keymap(void *data, struct wl_keyboard *kb, uint32_t format, int32_t fd,
                      uint32_t size)
{
	(void)kb;
	struct km_fetch *f = data;
	void *p = format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1 && size > 0
		? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED) {
		f->failed = true;
		return;
	}
	g_free(f->text);
	f->text = g_strndup(p, size);
	munmap(p, size);
}
static void kb_enter(void *d, struct wl_keyboard *k, uint32_t s, struct wl_surface *w,
                     struct wl_array *keys) { (void)d; (void)k; (void)s; (void)w; (void)keys; }
static void kb_leave(void *d, struct wl_keyboard *k, uint32_t s, struct wl_surface *w)
{ (void)d; (void)k; (void)s; (void)w; }
static void kb_key(void *d, struct wl_keyboard *k, uint32_t s, uint32_t t, uint32_t key,
                   uint32_t st) { (void)d; (void)k; (void)s; (void)t; (void)key; (void)st; }
static void kb_mods(void *d, struct wl_keyboard *k, uint32_t s, uint32_t a, uint32_t b,
                    uint32_t c, uint32_t e) { (void)d; (void)k; (void)s; (void)a; (void)b; (void)c; (void)e; }
static void kb_repeat(void *d, struct wl_keyboard *k, int32_t r, int32_t l)
{ (void)d; (void)k; (void)r; (void)l; }
static const struct wl_keyboard_listener kb_listener = {
	kb_keymap, kb_enter, kb_leave, kb_key, kb_mods, kb_repeat,
};

static void seat_caps(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct km_fetch *f = data;
	f->caps = caps;
	f->caps_known = true;
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && f->kb == NULL) {
		f->kb = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(f->kb, &kb_listener, f);
	}
}
static void seat_name(void *d, struct wl_seat *s, const char *n) { (void)d; (void)s; (void)n; }
static const struct wl_seat_listener seat_listener = { seat_caps, seat_name };

static void reg_global(void *data, struct wl_registry *reg, uint32_t name,
                       const char *iface, uint32_t version)
{
	struct km_fetch *f = data;
	if (f->seat == NULL && strcmp(iface, wl_seat_interface.name) == 0) {
		f->seat = wl_registry_bind(reg, name, &wl_seat_interface, version < 5 ? version : 5);
		wl_seat_add_listener(f->seat, &seat_listener, f);
	}
}
static void reg_remove(void *d, struct wl_registry *r, uint32_t n) { (void)d; (void)r; (void)n; }
static const struct wl_registry_listener reg_listener = { reg_global, reg_remove };

/*
 * Reads the keymap Mutter sends its clients: one connection to its
 * Wayland socket ($WAYLAND_DISPLAY), a wl_keyboard, its keymap event.
 * Needs the seat to have a keyboard (input.c wakes the session's first).
 */
static bool keymap_load(struct os_gnome_display *g)
{
	struct os_gnome_typer *t = g->typer;
	if (!os_gnome_key_send(g, 0x100fffeu, true) || !os_gnome_key_send(g, 0x100fffeu, false))
		return false;
	struct wl_display *wl = wl_display_connect(NULL);
	if (wl == NULL)
		return os_fail("cannot connect to Mutter's Wayland socket (WAYLAND_DISPLAY) to read "
		               "its keymap: without it deskhand cannot tell which characters Mutter "
		               "would drop");
	struct km_fetch f = {0};
	struct wl_registry *reg = wl_display_get_registry(wl);
	wl_registry_add_listener(reg, &reg_listener, &f);
	for (int i = 0; i < 4 && f.text == NULL && !f.failed; i++)
		if (wl_display_roundtrip(wl) < 0)
			break;
	bool ok = false;
	if (f.text == NULL) {
		os_fail("Mutter's Wayland socket gave no keymap (%s)",
		        f.seat == NULL ? "no wl_seat" : !(f.caps & WL_SEAT_CAPABILITY_KEYBOARD)
		        ? "its seat has no keyboard" : "the keymap could not be read");
		goto out;
	}
	struct xkb_keymap *km = xkb_keymap_new_from_string(t->xkb, f.text,
	                                                   XKB_KEYMAP_FORMAT_TEXT_V1,
	                                                   XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (km == NULL) {
		os_fail("libxkbcommon could not compile Mutter's keymap");
		goto out;
	}
	xkb_keymap_unref(t->keymap);
	t->keymap = km;
	ok = true;
out:
	if (f.kb != NULL)
		wl_keyboard_release(f.kb);
	if (f.seat != NULL)
		wl_seat_release(f.seat);
	wl_registry_destroy(reg);
	wl_display_disconnect(wl);
	g_free(f.text);
	return ok;
}

/* Mutter's search (meta-virtual-input-device-native.c): the first keycode
 * (min..max-1), level, holding `sym` in layout `group`. */
static bool mutter_pick(struct xkb_keymap *km, xkb_layout_index_t group, uint32_t sym,
                        xkb_keycode_t *code, xkb_level_index_t *level)
{
	xkb_keycode_t max = xkb_keymap_max_keycode(km);
	for (xkb_keycode_t kc = xkb_keymap_min_keycode(km); kc < max; kc++) {
		xkb_level_index_t n = xkb_keymap_num_levels_for_key(km, kc, group);
		for (xkb_level_index_t l = 0; l < n; l++) {
			const xkb_keysym_t *syms;
			int ns = xkb_keymap_key_get_syms_by_level(km, kc, group, l, &syms);
			for (int s = 0; s < ns; s++) {
				if (syms[s] == sym) {
					*code = kc;
					*level = l;
					return true;
				}
			}
		}
	}
	return false;
}

/* Whether Mutter, pressing what it presses for `sym` in `group` (the
 * key, Shift_L for level 1, ISO_Level3_Shift for level 2), produces it. */
static bool group_reaches(struct xkb_keymap *km, xkb_layout_index_t group, uint32_t sym)
{
	xkb_keycode_t kc, mod = 0;
	xkb_level_index_t level, ml;
	if (!mutter_pick(km, group, sym, &kc, &level) || level > 2)
		return false;
	if (level > 0 && !mutter_pick(km, group, level == 1 ? XKB_KEY_Shift_L
	                                                    : XKB_KEY_ISO_Level3_Shift, &mod, &ml))
		return false;
	struct xkb_state *st = xkb_state_new(km);
	if (st == NULL)
		return false;
	xkb_state_update_mask(st, 0, 0, 0, 0, 0, group);
	if (mod != 0)
		xkb_state_update_key(st, mod, XKB_KEY_DOWN);
	bool ok = xkb_state_key_get_one_sym(st, kc) == sym;
	xkb_state_unref(st);
	return ok;
}

static bool reachable(struct os_gnome_typer *t, uint32_t sym)
{
	xkb_layout_index_t n = xkb_keymap_num_layouts(t->keymap);
	for (xkb_layout_index_t gr = 0; gr < n; gr++)
		if (!group_reaches(t->keymap, gr, sym))
			return false;
	return n > 0;
}

bool os_gnome_keysym_reachable(struct os_gnome_display *g, uint32_t keysym)
{
	struct os_gnome_typer *t = typer_get(g);
	if (t == NULL || (t->keymap == NULL && !keymap_load(g)))
		return false;
	if (reachable(t, keysym))
		return true;
	char name[64];
	xkb_keysym_get_name(keysym, name, sizeof(name));
	return os_fail("key %s is not in GNOME's keyboard layout (Mutter would drop it "
	               "silently)", name);
}

/* The keysym Mutter types for code point cp, 0 when none (the clipboard). */
static uint32_t char_keysym(struct os_gnome_typer *t, uint32_t cp)
{
	uint32_t cand[2] = { os_keysym_for_char(cp), cp == '\n' || cp == '\t' ? 0
	                     : xkb_utf32_to_keysym(cp) };
	for (int i = 0; i < 2; i++)
		if (cand[i] != 0 && (i == 0 || cand[1] != cand[0]) && reachable(t, cand[i]))
			return cand[i];
	return 0;
}

/* ---- the clipboard ------------------------------------------------------------- */

static bool clip_enable(struct os_gnome_display *g)
{
	if (g->clipboard_enabled)
		return true;
	GError *err = NULL;
	GVariant *r = g_dbus_connection_call_sync(g->bus, RD_NAME, g->rd_session, RD_SESSION,
	                                          "EnableClipboard", g_variant_new("(a{sv})", NULL),
	                                          NULL, G_DBUS_CALL_FLAGS_NONE, CALL_MS, NULL, &err);
	if (r == NULL && strstr(err->message, "Already enabled") == NULL) {
		os_fail("cannot use GNOME's clipboard (EnableClipboard): %s", err->message);
		g_error_free(err);
		return false;
	}
	if (r != NULL)
		g_variant_unref(r);
	g_clear_error(&err);
	g->clipboard_enabled = true;
	/* Mutter announces the current owner's mime types right away. */
	pump(g, 50, NULL, 0);
	return true;
}

/* Reads the clipboard as `mime` (bounded in time and size); NULL when the
 * owner gave nothing. */
static GBytes *clip_read(struct os_gnome_display *g, const char *mime)
{
	GUnixFDList *fds = NULL;
	GVariant *r = g_dbus_connection_call_with_unix_fd_list_sync(
		g->bus, RD_NAME, g->rd_session, RD_SESSION, "SelectionRead",
		g_variant_new("(s)", mime), G_VARIANT_TYPE("(h)"), G_DBUS_CALL_FLAGS_NONE, CALL_MS,
		NULL, &fds, NULL, NULL);
	if (r == NULL || fds == NULL) {
		if (r != NULL)
			g_variant_unref(r);
		return NULL;
	}
	gint32 h = 0;
	g_variant_get(r, "(h)", &h);
	g_variant_unref(r);
	int fd = g_unix_fd_list_get(fds, h, NULL);
	g_object_unref(fds);
	if (fd < 0)
		return NULL;
	GByteArray *buf = g_byte_array_new();
	int64_t end = base_now_ns() + (int64_t)SAVE_WAIT_MS * BASE_NS_PER_MS;
	bool eof = false;
	while (!eof && buf->len <= SAVE_MAX && base_now_ns() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 20) <= 0)
			continue;
		guint8 chunk[65536];
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = true;
		else
			g_byte_array_append(buf, chunk, (guint)n);
	}
	close(fd);
	if (!eof || buf->len > SAVE_MAX) {
		g_byte_array_unref(buf);
		return NULL;
	}
	return g_byte_array_free_to_bytes(buf);
}

/* The user's clipboard: each of its mime types that could be read. */
static bool clip_save(struct os_gnome_display *g, struct clip_item *saved, int *nsaved)
{
	struct os_gnome_typer *t = g->typer;
	*nsaved = 0;
	if (t->ours)
		return true;       /* what we offer is no one's content */
	for (int i = 0; i < t->nowner; i++) {
		GBytes *b = clip_read(g, t->owner_mimes[i]);
		if (b == NULL) {
			if (strcmp(t->owner_mimes[i], MIME_UTF8) == 0) {
				items_clear(saved, nsaved);
				return os_fail("cannot read the clipboard's text to put it back "
				               "afterwards: nothing was typed");
			}
			continue;  /* X targets (TARGETS, TIMESTAMP) give nothing */
		}
		saved[*nsaved] = (struct clip_item){ g_strdup(t->owner_mimes[i]), b };
		(*nsaved)++;
	}
	return true;
}

/* Offers items[0..n) as the clipboard (the session answers transfers of
 * them) and lets Mutter's clipboard manager take its copy first. */
static bool clip_offer(struct os_gnome_display *g, const struct clip_item *items, int n)
{
	struct os_gnome_typer *t = g->typer;
	items_clear(t->serve, &t->nserve);
	GVariantBuilder mimes;
	g_variant_builder_init(&mimes, G_VARIANT_TYPE("as"));
	for (int i = 0; i < n; i++) {
		t->serve[i] = (struct clip_item){ g_strdup(items[i].mime), g_bytes_ref(items[i].data) };
		g_variant_builder_add(&mimes, "s", items[i].mime);
	}
	t->nserve = n;
	GVariantBuilder opts;
	g_variant_builder_init(&opts, G_VARIANT_TYPE("a{sv}"));
	g_variant_builder_add(&opts, "{sv}", "mime-types", g_variant_builder_end(&mimes));
	unsigned before = t->transfers;
	if (!os_gnome_rd(g, "SetSelection", g_variant_new("(a{sv})", &opts),
	                 "setting the clipboard"))
		return false;
	pump(g, n > 0 ? MANAGER_WAIT_MS : 0, &t->transfers, before);
	return true;
}

/* Puts the saved clipboard back, then hands it to Mutter's clipboard
 * manager, which serves it without deskhand (its text; see the top). */
static bool clip_restore(struct os_gnome_display *g, struct clip_item *saved, int *nsaved)
{
	/* An empty clipboard cannot be offered back: Mutter's manager then
	 * keeps the pasted characters (its copy of our offer). */
	bool ok = *nsaved == 0 || clip_offer(g, saved, *nsaved);
	items_clear(saved, nsaved);
	items_clear(g->typer->serve, &g->typer->nserve);
	return os_gnome_rd(g, "DisableClipboard", NULL, "handing the clipboard back") && ok;
}

/* Pastes `len` bytes of text with ctrl+v; the paste is proven by the
 * transfer it causes. */
static bool paste_run(struct os_gnome_display *g, const char *text, size_t len, size_t at)
{
	struct os_gnome_typer *t = g->typer;
	GBytes *b = g_bytes_new(text, len);
	struct clip_item ours[2] = { { (char *)MIME_UTF8, b }, { (char *)"text/plain", b } };
	bool ok = clip_offer(g, ours, 2);
	g_bytes_unref(b);
	if (!ok)
		return false;
	if (!reachable(t, XKB_KEY_v) || !reachable(t, XKB_KEY_Control_L))
		return os_fail("character %zu is not in GNOME's keyboard layout, and ctrl+v "
		               "cannot be typed to paste it", at + 1);
	unsigned before = t->transfers;
	ok = os_gnome_key_send(g, XKB_KEY_Control_L, true) && os_gnome_key_send(g, XKB_KEY_v, true) &&
	     os_gnome_key_send(g, XKB_KEY_v, false);
	ok = os_gnome_key_send(g, XKB_KEY_Control_L, false) && ok;
	if (!ok)
		return false;
	pump(g, PASTE_WAIT_MS, &t->transfers, before);
	if (t->transfers == before)
		return os_fail("characters %zu on are not in GNOME's keyboard layout and were to be "
		               "pasted, but the focused window did not paste after ctrl+v (a terminal "
		               "pastes with ctrl+shift+v: there, ctrl+v sent ^V); the text before them "
		               "was typed", at + 1);
	pump(g, 30, NULL, 0);
	os_input_sleep_ms(PASTE_SETTLE_MS);
	return true;
}

/* ---- typing ----------------------------------------------------------------------- */

static bool caps_locked(struct os_gnome_display *g)
{
	GVariant *r = os_gnome_call(g, RD_NAME, g->rd_session, "org.freedesktop.DBus.Properties",
	                            "Get", g_variant_new("(ss)", RD_SESSION, "CapsLockState"),
	                            "reading Caps Lock");
	if (r == NULL)
		return false;
	GVariant *v = NULL;
	g_variant_get(r, "(v)", &v);
	bool on = g_variant_is_of_type(v, G_VARIANT_TYPE_BOOLEAN) && g_variant_get_boolean(v);
	g_variant_unref(v);
	g_variant_unref(r);
	return on;
}

static bool tap(struct os_gnome_display *g, uint32_t sym)
{
	return os_gnome_key_send(g, sym, true) && os_gnome_key_send(g, sym, false);
}

/* Types cps[0..n): keysyms, and runs of untypable characters pasted. */
static bool type_all(struct os_gnome_display *g, const uint32_t *cps, const uint32_t *syms,
                     size_t n, int delay_ms, struct clip_item *saved, int *nsaved, bool *took)
{
	for (size_t i = 0; i < n && os_input_signal_caught() == 0;) {
		if (syms[i] != 0) {
			if (!tap(g, syms[i]))
				return false;
			i++;
		} else {
			size_t j = i;
			GString *run = g_string_new(NULL);
			while (j < n && syms[j] == 0)
				g_string_append_unichar(run, cps[j++]);
			bool ok = (*took || (clip_enable(g) && clip_save(g, saved, nsaved)));
			*took = *took || ok;
			ok = ok && paste_run(g, run->str, run->len, i);
			g_string_free(run, TRUE);
			if (!ok)
				return false;
			i = j;
		}
		if (delay_ms > 0)
			os_input_sleep_ms(delay_ms);
	}
	return true;
}

bool os_gnome_type(os_display *d, const char *utf8, size_t len, int delay_ms)
{
	struct os_gnome_display *g = os_gnome(d);
	if (g->nkeys_down > 0)
		return os_fail("keys are held down (key down): typing would combine with them");
	uint32_t *cps = NULL, *syms = NULL;
	size_t n = 0;
	if (!os_text_decode(utf8, len, &cps, &n))
		return false;
	struct os_gnome_typer *t = typer_get(g);
	bool ok = t != NULL && keymap_load(g);
	syms = ok ? calloc(n ? n : 1, sizeof(*syms)) : NULL;
	ok = ok && (syms != NULL || os_fail("out of memory"));
	for (size_t i = 0; ok && i < n; i++)
		syms[i] = char_keysym(t, cps[i]);
	struct clip_item saved[MAX_MIMES];
	int nsaved = 0;
	bool took = false, caps = false;
	struct os_signal_guard guard;
	os_input_signals_begin(&guard);
	/* A locked Caps Lock would turn letters' case: lifted meanwhile. */
	caps = ok && caps_locked(g);
	ok = ok && (!caps || tap(g, XKB_KEY_Caps_Lock));
	ok = ok && type_all(g, cps, syms, n, delay_ms, saved, &nsaved, &took);
	char why[512] = "";
	if (!ok)
		snprintf(why, sizeof(why), "%s", os_error());
	/* Put back also after a failure or a signal. */
	if (took && !clip_restore(g, saved, &nsaved) && why[0] == '\0')
		snprintf(why, sizeof(why), "%s", os_error());
	if (caps && !tap(g, XKB_KEY_Caps_Lock) && why[0] == '\0')
		snprintf(why, sizeof(why), "%s", os_error());
	int sig = os_input_signal_caught();
	os_input_signals_end(&guard);
	free(cps);
	free(syms);
	if (why[0] != '\0')
		return os_fail("%s", why);
	if (sig != 0)
		return os_fail("typing interrupted by signal %d", sig);
	return true;
}
