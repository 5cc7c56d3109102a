/* base/ — what its files share and no room sees. */
#ifndef DESKHAND_BASE_INTERNAL_H
#define DESKHAND_BASE_INTERNAL_H

#include <stdbool.h>

/* Leaves base_error() (error.c); returns false. */
bool base_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
