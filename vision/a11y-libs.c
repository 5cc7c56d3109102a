/*
 * vision/a11y-libs — the accessibility stack's tables, filled on first
 * use; see a11y-libs.h.
 */
#include "config.h"

#if DESKHAND_HAVE_ATSPI

#include <stdio.h>

#include "vision/a11y-libs.h"

A11Y_ATSPI_FUNCS(BASE_DLIB_DEFINE, vision_dl_)
A11Y_GOBJECT_FUNCS(BASE_DLIB_DEFINE, vision_dl_)
A11Y_GLIB_FUNCS(BASE_DLIB_DEFINE, vision_dl_)
A11Y_DBUS_FUNCS(BASE_DLIB_DEFINE, vision_dl_)

static const base_dlib_sym atspi_syms[] = { A11Y_ATSPI_FUNCS(BASE_DLIB_SYM, vision_dl_) };
static const base_dlib_sym gobject_syms[] = { A11Y_GOBJECT_FUNCS(BASE_DLIB_SYM, vision_dl_) };
static const base_dlib_sym glib_syms[] = { A11Y_GLIB_FUNCS(BASE_DLIB_SYM, vision_dl_) };
static const base_dlib_sym dbus_syms[] = { A11Y_DBUS_FUNCS(BASE_DLIB_SYM, vision_dl_) };
static void *atspi_handle, *gobject_handle, *glib_handle, *dbus_handle;

/* Their Debian packages, for the message when one is missing. */
static const base_dlib a11y_libs[] = {
	BASE_DLIB(DESKHAND_GLIB_SONAME, "libglib2.0-0", &glib_handle, glib_syms),
	BASE_DLIB(DESKHAND_GOBJECT_SONAME, "libglib2.0-0", &gobject_handle, gobject_syms),
	BASE_DLIB(DESKHAND_DBUS_SONAME, "libdbus-1-3", &dbus_handle, dbus_syms),
	BASE_DLIB(DESKHAND_ATSPI_SONAME, "libatspi2.0-0", &atspi_handle, atspi_syms),
};

bool a11y_libs_load(const char **why)
{
	static _Thread_local char reason[300];
	for (size_t i = 0; i < sizeof(a11y_libs) / sizeof(a11y_libs[0]); i++) {
		if (!base_dlib_load(&a11y_libs[i])) {
			snprintf(reason, sizeof(reason), "%s", base_error());
			*why = reason;
			return false;
		}
	}
	return true;
}

#endif /* DESKHAND_HAVE_ATSPI */
