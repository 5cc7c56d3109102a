/*
 * Private to vision/a11y.c, vision/a11y-conn.c and vision/a11y-roles.c:
 * the connection to the accessibility bus that every tree read goes
 * through, and the roles the walk keeps. Never included elsewhere.
 */
#ifndef DESKHAND_VISION_A11Y_INTERNAL_H
#define DESKHAND_VISION_A11Y_INTERNAL_H

#include <stdbool.h>

#include "config.h"
#include "os/os.h"

/*
 * Connects once per process (libatspi's connection is for good), the
 * first call deciding: later calls answer the same. False when no
 * accessibility bus answers, *why then saying why ("no accessibility bus
 * (...)"); *why points at static text, valid for the process.
 */
bool vision_a11y_connect(os_display *d, const char **why);

#if DESKHAND_HAVE_ATSPI
#include <atspi/atspi.h>

/* The allowlist (a11y-roles.c): what a person acts on, and the roles of
 * text that says something when it has a name. */
bool vision_a11y_role_interactive(AtspiRole r);
bool vision_a11y_role_texty(AtspiRole r);
/* GTK 4.8 names an unnamed widget by its class ("GtkToggleButton"). */
bool vision_a11y_gtk_class_name(const char *name);
#endif

#endif
