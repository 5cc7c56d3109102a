/*
 * agent/batch — `deskhand batch TASKS.jsonl --out DIR`: unattended task
 * batches. Each task gets a desktop of its own (a private X server, a
 * session bus, a window manager where it names one), runs its setup, apps,
 * the agent (a child `deskhand` process with the batch's agent options)
 * and its checker inside an enclosure of its own (executors/: its own
 * mount and pid namespaces, so no task sees another's files, display, bus
 * or processes, and ending the task ends everything it started), and ends
 * as one line of DIR/results.jsonl. A batch run again resumes: finished
 * tasks are skipped. DIR/report.html shows the summary and each task's
 * trajectory.
 *
 * The door of agent/batch. Owns: the task file's parsing (tasks.c), the
 * schedule and the progress (batch.c), one task's life (task.c, desk.c),
 * results.jsonl (results.c), the report (report.c).
 * May call: agent/session (the agent options' names), agent/util, base/,
 * os/ (the task's windows), executors/ (the enclosure), cJSON.
 */
#ifndef DESKHAND_AGENT_BATCH_H
#define DESKHAND_AGENT_BATCH_H

#include <stdbool.h>
#include <stddef.h>

/* `deskhand batch ...`: the process's exit status (0 every task succeeded,
 * 1 one failed or could not run, 2 a usage error). */
int agent_batch_main(int argc, char **argv);

/*
 * Writes DIR/report.html (atomically: a temporary file renamed over it)
 * from what DIR holds: results.jsonl and each task's folder (task.json,
 * conversation.json and its images, audit.jsonl, check.out). Tasks without
 * a result line yet are shown as unfinished. False with the reason in
 * err (at most errsize bytes) when it cannot be written.
 */
bool batch_report_write(const char *dir, char *err, size_t errsize);

#endif
