/*
 * agent/batch/batch — the command: its arguments, the schedule of tasks
 * over --parallel slots, the progress on standard error and the final
 * line. See batch.h.
 */
#include <stdio.h>
#include <string.h>

#include "agent/batch/batch.h"

int agent_batch_main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--report") == 0) {
		char err[512];
		if (!batch_report_write(argv[2], err, sizeof(err))) {
			fprintf(stderr, "deskhand batch: %s\n", err);
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "deskhand batch: not yet\n");
	return 2;
}
