/*
 * agent/batch/report — what DIR/report.html is made of, shared by the
 * reader of DIR (report.c), the page (report_html.c) and one step of a
 * trajectory with its action drawn (report_step.c). Internal to
 * agent/batch; batch.h has batch_report_write.
 *
 * Everything read from DIR is untrusted: the model's text and calls, the
 * tools' output, the checker's output and even the file names. The reader
 * keeps what parsed and notes what did not; the writers escape every
 * character of it and link only to paths they built themselves from a
 * valid task id and an image name of deskhand's own form.
 */
#ifndef DESKHAND_AGENT_BATCH_REPORT_H
#define DESKHAND_AGENT_BATCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "agent/batch/batch-internal.h"
#include "agent/util/textutil.h"

/* One task as DIR shows it. Owns everything it points to but `result`,
 * which lives in the report's results array. */
typedef struct batch_rtask {
	char id[BATCH_ID_MAX + 1];
	const char *dir;        /* DIR, as batch_report_write was given it */
	cJSON *task;            /* DIR/ID/task.json, or NULL */
	const cJSON *result;    /* its line of results.jsonl, or NULL: unfinished */
	cJSON *conv;            /* conversation.json, or NULL */
	cJSON *audit;           /* audit.jsonl's lines that parsed (an array), or NULL */
	int screen_w, screen_h; /* the task's screen, as its results line or task.json
	                         * says; 0 x 0 when neither does */
	char *check_out;        /* check.out, its middle left out when long; NULL: none */
	char *agent_err;        /* agent.err, likewise */
	agent_buf notes;        /* what is missing or malformed, one line each */
} batch_rtask;

typedef struct batch_report {
	batch_rtask *tasks;     /* sorted by id */
	size_t ntasks;
	cJSON *results;         /* results.jsonl's lines that parsed, or NULL */
	agent_buf notes;        /* what is wrong with DIR as a whole */
} batch_report;

/* Appends a note (a line of plain text; escaped when shown). */
void batch_report_note(agent_buf *notes, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- the page's pieces (report_html.c) ---- */

/* Foreign text as HTML character data or a quoted attribute's value:
 * controls and invisible characters shown as marks (agent_show_*), then
 * & < > " ' escaped. s may be NULL (nothing). */
void batch_html_text(agent_buf *out, const char *s);
/* The same for at most max bytes of s (cut at a character), then a note
 * of how much was left out. */
void batch_html_cut(agent_buf *out, const char *s, size_t max);

/* The whole page. Its memory is out's. */
void batch_html_page(agent_buf *out, const batch_report *r);

/* ---- one step (report_step.c) ---- */

/*
 * The trajectory of one task: each assistant message as a step, with the
 * screenshot the model last saw and its action drawn on it, its text, its
 * calls, their decisions in the audit log and the tools' answers.
 */
void batch_html_trajectory(agent_buf *out, const batch_rtask *t);

/* Whether batch_html_overlay draws anything for the action: it has a
 * place (a point, a path, a region) or a text (type, key). */
bool batch_action_draws(const cJSON *action);

/*
 * The drawing of one computer action over an image w x h pixels (the
 * model's view), as an SVG element sized as the image. `action` is the
 * audit's normalized action (or the call's arguments). A point is the
 * screen's (screen_coordinate scaled by w / screen_w) when the screen's
 * size is known (screen_w > 0), else the model's own coordinate.
 */
void batch_html_overlay(agent_buf *out, const cJSON *action, int w, int h,
                        int screen_w, int screen_h);

#endif
