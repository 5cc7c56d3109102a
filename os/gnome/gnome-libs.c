/*
 * os/gnome/gnome-libs — the GNOME backend's tables, filled when its
 * display is first opened; see gnome-libs.h.
 */
#include "config.h"
#include "os/gnome/gnome-internal.h"
#include "os/gnome/gnome-libs.h"

GNOME_GIO_FUNCS(BASE_DLIB_DEFINE, os_gnome_dl_)
GNOME_GOBJECT_FUNCS(BASE_DLIB_DEFINE, os_gnome_dl_)
GNOME_GLIB_FUNCS(BASE_DLIB_DEFINE, os_gnome_dl_)
GNOME_PIPEWIRE_FUNCS(BASE_DLIB_DEFINE, os_gnome_dl_)

static const base_dlib_sym gio_syms[] = { GNOME_GIO_FUNCS(BASE_DLIB_SYM, os_gnome_dl_) };
static const base_dlib_sym gobject_syms[] = { GNOME_GOBJECT_FUNCS(BASE_DLIB_SYM, os_gnome_dl_) };
static const base_dlib_sym glib_syms[] = { GNOME_GLIB_FUNCS(BASE_DLIB_SYM, os_gnome_dl_) };
static const base_dlib_sym pipewire_syms[] = { GNOME_PIPEWIRE_FUNCS(BASE_DLIB_SYM, os_gnome_dl_) };
static void *gio_handle, *gobject_handle, *glib_handle, *pipewire_handle;

/* Their Debian packages, for the message when one is missing. */
static const base_dlib gnome_libs[] = {
	BASE_DLIB(DESKHAND_GLIB_SONAME, "libglib2.0-0", &glib_handle, glib_syms),
	BASE_DLIB(DESKHAND_GOBJECT_SONAME, "libglib2.0-0", &gobject_handle, gobject_syms),
	BASE_DLIB(DESKHAND_GIO_SONAME, "libglib2.0-0", &gio_handle, gio_syms),
	BASE_DLIB(DESKHAND_PIPEWIRE_SONAME, "libpipewire-0.3-0", &pipewire_handle, pipewire_syms),
};

bool os_gnome_libs_load(void)
{
	for (size_t i = 0; i < sizeof(gnome_libs) / sizeof(gnome_libs[0]); i++)
		if (!base_dlib_load(&gnome_libs[i]))
			return os_fail("the GNOME backend: %s", base_error());
	return true;
}
