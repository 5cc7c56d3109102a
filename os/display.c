/*
 * os/display — the one door to a display, whichever backend drives it:
 * the choice, made once at connect (os_display_open), and every public
 * call on a display passed to its backend's struct of functions. Nothing
 * here names a backend's protocol; the table of backends below is the one
 * place that lists them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "os/backend.h"

BASE_ERROR_TEXT(, os_err, os_error, os_fail)

const char *const os_backend_names[OS_BACKEND_COUNT] = {
	[OS_BACKEND_AUTO] = "auto",
	[OS_BACKEND_X11] = "x11",
	[OS_BACKEND_WLROOTS] = "wlroots",
	[OS_BACKEND_GNOME] = "gnome",
};

bool os_backend_parse(const char *name, os_backend_choice *out)
{
	int i = base_name_index(os_backend_names, OS_BACKEND_COUNT, name);
	if (i < 0) {
		char names[80];
		base_names_join(os_backend_names, OS_BACKEND_COUNT, ", ", ", ", names, sizeof(names));
		return os_fail("unknown display backend '%s' (one of: %s)", name, names);
	}
	*out = (os_backend_choice)i;
	return true;
}

const char *const os_feature_names[OS_FEATURE_COUNT] = {
	[OS_FEATURE_CAPTURE] = "capture",
	[OS_FEATURE_POINTER] = "pointer",
	[OS_FEATURE_KEYS] = "keys",
	[OS_FEATURE_TYPING] = "typing",
	[OS_FEATURE_WINDOWS] = "windows",
	[OS_FEATURE_OWNERS] = "owners",
	[OS_FEATURE_POINTER_POSITION] = "pointer-position",
	[OS_FEATURE_HELD_KEYS] = "held-keys",
};

/*
 * The backends: X11 for an X session, then the Wayland ones, tried in
 * order on a Wayland session; `drives` is what the refusal names.
 */
static const struct {
	os_backend_choice choice;
	os_backend_open_fn open;
	bool wayland;
	const char *drives;
} backends[] = {
	{OS_BACKEND_X11, os_x11_open, false, "X11"},
	{OS_BACKEND_WLROOTS, os_wlroots_open, true,
	 "wlroots compositors (sway, Hyprland, river, labwc, wayfire)"},
	{OS_BACKEND_GNOME, os_gnome_open, true,
	 "GNOME (Mutter's RemoteDesktop and ScreenCast)"},
	{OS_BACKEND_COUNT, NULL, false, NULL},
};

static os_backend_choice preferred = OS_BACKEND_AUTO;

void os_display_prefer(os_backend_choice c)
{
	preferred = c;
}

bool os_session_is_wayland(void)
{
	const char *wl = getenv("WAYLAND_DISPLAY");
	const char *type = getenv("XDG_SESSION_TYPE");
	return (wl != NULL && wl[0] != '\0') || (type != NULL && strcmp(type, "wayland") == 0);
}

static os_display *open_wayland(const char *name, bool *unsupported)
{
	char why[1024] = "";
	char drives[256] = "";
	bool tried = false;
	*unsupported = true;
	for (size_t i = 0; backends[i].open != NULL; i++) {
		if (!backends[i].wayland ||
		    (preferred != OS_BACKEND_AUTO && preferred != backends[i].choice))
			continue;
		bool not_mine = false;
		os_display *d = backends[i].open(name, &not_mine);
		if (d != NULL)
			return d;
		/* Each backend's reason for "not mine" (a compositor without
		 * wlroots' protocols and a bus without Mutter's: both matter);
		 * one that is ours but cannot be reached says it alone. */
		if (!not_mine || !tried)
			snprintf(why, sizeof(why), "%s", os_error());
		else
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "; %s", os_error());
		snprintf(drives + strlen(drives), sizeof(drives) - strlen(drives), "%s%s",
		         tried ? " and " : "", backends[i].drives);
		tried = true;
		if (!not_mine) {
			*unsupported = false;  /* one that is ours cannot be reached */
			break;
		}
	}
	os_fail("%s; on Wayland deskhand drives %s; X11 input on this session would "
	        "reach only XWayland's windows (--display-backend x11 to drive just those)",
	        why, drives);
	return NULL;
}

os_display *os_display_open(const char *name)
{
	bool unsupported;
	return os_display_connect(name, &unsupported);
}

os_display *os_display_connect(const char *name, bool *unsupported)
{
	*unsupported = false;
	bool wayland = os_session_is_wayland();
	if (preferred == OS_BACKEND_X11 || (preferred == OS_BACKEND_AUTO && !wayland)) {
		bool not_mine;
		os_display *d = backends[0].open(name, &not_mine);
		if (d != NULL && wayland)
			os_display_set(&d->warning, "driving X11 on a Wayland session: only "
			               "XWayland's windows receive input and show in screenshots");
		return d;
	}
	/* An X display's name (":3", from a session opened before) names no
	 * Wayland socket. */
	return open_wayland(name != NULL && strchr(name, ':') != NULL ? NULL : name, unsupported);
}

void os_display_close(os_display *d)
{
	if (d != NULL)
		d->impl->destroy(d);
}

bool os_display_init_head(os_display *d, const struct os_backend_impl *impl,
                          const char *name)
{
	d->impl = impl;
	d->session = "";
	d->name = strdup(name != NULL ? name : "");
	d->server = strdup("");
	d->offers = strdup("");
	if (d->name == NULL || d->server == NULL || d->offers == NULL)
		return os_fail("out of memory");
	return true;
}

void os_display_free_head(os_display *d)
{
	if (d == NULL)
		return;
	free(d->name);
	free(d->server);
	free(d->offers);
	free(d->warning);
	free(d);
}

void os_display_set(char **field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) >= 0) {
		free(*field);
		*field = s;
	}
	va_end(ap);
}

const char *os_display_name(const os_display *d) { return d->name; }
const char *os_display_backend(const os_display *d) { return d->impl->name; }
const char *os_display_server(const os_display *d) { return d->server; }
const char *os_display_session(const os_display *d) { return d->session; }
const char *os_display_offers(const os_display *d) { return d->offers; }
const char *os_display_warning(const os_display *d) { return d->warning; }
bool os_display_lost(const os_display *d) { return d->impl->lost != NULL && d->impl->lost(d); }

const char *os_feature_how(os_display *d, os_feature f, const char **why)
{
	static const char *none = "the display backend cannot";
	*why = none;
	if ((unsigned)f >= OS_FEATURE_COUNT || d->impl->feature == NULL)
		return NULL;
	const char *how = d->impl->feature(d, f, why);
	if (how == NULL && *why == NULL)
		*why = none;
	return how;
}

void os_window_clear(os_window *w)
{
	free(w->klass);
	free(w->title);
	w->klass = w->title = NULL;
}

void os_windows_free(os_window *w, size_t count)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < count; i++)
		os_window_clear(&w[i]);
	free(w);
}
