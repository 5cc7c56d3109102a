/* base/error — the per-thread error text of every room; see base.h. */
#include <errno.h>
#include <stdio.h>

#include "base/base.h"
#include "base/base-internal.h"

/* base's own reason: base_atomic_* and base_dlib_load leave it. */
BASE_ERROR_TEXT(, base_err, base_error, base_fail)

void base_error_vset(base_error_text *e, const char *fmt, va_list ap)
{
	/* The caller may still want errno after reporting with it. */
	int saved = errno;
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	errno = saved;
}
