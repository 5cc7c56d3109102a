/*
 * agent/batch/report — DIR/report.html. See batch.h.
 */
#include <stdio.h>

#include "agent/batch/batch.h"

bool batch_report_write(const char *dir, char *err, size_t errsize)
{
	snprintf(err, errsize, "%s: the report is not written yet", dir);
	return false;
}
