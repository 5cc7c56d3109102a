/*
 * Private to vision/a11y.c and vision/a11y-conn.c: the connection to the
 * accessibility bus that every tree read goes through. Never included
 * elsewhere.
 */
#ifndef DESKHAND_VISION_A11Y_INTERNAL_H
#define DESKHAND_VISION_A11Y_INTERNAL_H

#include <stdbool.h>

#include "os/os.h"

/*
 * Connects once per process (libatspi's connection is for good), the
 * first call deciding: later calls answer the same. False when no
 * accessibility bus answers, *why then saying why ("no accessibility bus
 * (...)"); *why points at static text, valid for the process.
 */
bool vision_a11y_connect(os_display *d, const char **why);

#endif
