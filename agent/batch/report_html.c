/*
 * agent/batch/report_html — the page of DIR/report.html: its head (a
 * Content-Security-Policy that allows no script at all, so that even a
 * mistake in escaping runs nothing), the summary, the table of tasks and
 * one section per task. See report.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch/report.h"

/* The model's text can be long; a report is read by people. */
#define INSTRUCTION_MAX 16384
#define ERROR_MAX 2048

/* Inline style only: the page is one file, and the policy below allows
 * no other source of anything but images under DIR. */
static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n"
	"<meta name=\"referrer\" content=\"no-referrer\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<title>deskhand batch report</title>\n<style>\n"
	"body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;"
	"padding:0 1em;color:#222}\n"
	"pre{white-space:pre-wrap;tab-size:4;word-break:break-word;background:#f5f5f5;padding:.5em;"
	"margin:.3em 0;max-height:30em;overflow:auto}\n"
	"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}\n"
	"td.n{text-align:right}dl.facts{display:grid;grid-template-columns:max-content auto;gap:0 1em}\n"
	"dt{font-weight:600}dd{margin:0}.ok{color:#070}.bad{color:#b00}.open{color:#a60}\n"
	"section.task{border-top:2px solid #888;margin-top:2em}\n"
	"li.step{margin:1em 0;padding-bottom:.5em;border-bottom:1px dotted #bbb}\n"
	".shot{position:relative;width:min(100%,960px)}\n"
	".shot img{display:block;box-sizing:border-box;width:100%;height:auto;border:1px solid #999}\n"
	".shot svg{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}\n"
	".call{border-left:3px solid #46a;padding-left:.6em;margin:.5em 0}\n"
	".decision.approved{color:#070}.decision.denied,.decision.blocked{color:#b00}\n"
	".notes{color:#a60}.said{white-space:pre-wrap}\n"
	"</style>\n</head>\n<body>\n";

void batch_html_text(agent_buf *out, const char *s)
{
	agent_buf shown = {0};
	if (s == NULL)
		return;
	agent_show_append(&shown, s, strlen(s), AGENT_SHOW_LINES);
	if (shown.oom) {
		out->oom = true;
		goto out;
	}
	for (size_t i = 0; i < shown.len; i++) {
		char c = shown.data[i];
		switch (c) {
		case '&': agent_buf_puts(out, "&amp;"); break;
		case '<': agent_buf_puts(out, "&lt;"); break;
		case '>': agent_buf_puts(out, "&gt;"); break;
		case '"': agent_buf_puts(out, "&quot;"); break;
		case '\'': agent_buf_puts(out, "&#39;"); break;
		default: agent_buf_append(out, &c, 1);
		}
	}
out:
	agent_buf_finish(&shown);
}

void batch_html_cut(agent_buf *out, const char *s, size_t max)
{
	size_t n = s != NULL ? strlen(s) : 0;
	if (n <= max) {
		batch_html_text(out, s);
		return;
	}
	size_t cut = max;
	while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
		cut--;
	char *head = strndup(s, cut);
	if (head == NULL) {
		out->oom = true;
		return;
	}
	batch_html_text(out, head);
	agent_buf_printf(out, "\n[… %zu more bytes not shown]", n - cut);
	free(head);
}

static const cJSON *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A number of a results line as a table cell's text: an integer, or "—"
 * for null and for what is not a number. */
static void put_int(agent_buf *out, const cJSON *o, const char *k)
{
	const cJSON *v = field(o, k);
	if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e15)
		agent_buf_printf(out, "%.0f", v->valuedouble);
	else
		agent_buf_puts(out, "—");
}

static void put_seconds(agent_buf *out, const cJSON *o)
{
	const cJSON *v = field(o, "seconds");
	if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e12)
		agent_buf_printf(out, "%.1f", v->valuedouble);
	else
		agent_buf_puts(out, "—");
}

typedef enum { TASK_UNFINISHED, TASK_SUCCEEDED, TASK_FAILED } task_state;

static task_state state_of(const batch_rtask *t)
{
	if (t->result == NULL)
		return TASK_UNFINISHED;
	return cJSON_IsTrue(field(t->result, "success")) ? TASK_SUCCEEDED : TASK_FAILED;
}

static const char *const state_word[] = {"unfinished", "succeeded", "failed"};
static const char *const state_class[] = {"open", "ok", "bad"};

static void put_notes(agent_buf *out, const agent_buf *notes)
{
	if (notes->len == 0)
		return;
	agent_buf_puts(out, "<ul class=\"notes\">\n");
	const char *p = agent_buf_cstr(notes);
	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, n);
		agent_buf_puts(out, "<li>");
		batch_html_text(out, line);
		agent_buf_puts(out, "</li>\n");
		free(line);
		p += n + (nl != NULL);
	}
	agent_buf_puts(out, "</ul>\n");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One figure of the summary: "median M, mean A" of a results field over
 * the finished tasks that have it. */
static void put_spread(agent_buf *out, const batch_report *r, const char *k, int digits)
{
	double *v = calloc(r->ntasks + 1, sizeof(*v));
	size_t n = 0;
	double sum = 0;
	for (size_t i = 0; v != NULL && i < r->ntasks; i++) {
		const cJSON *x = r->tasks[i].result ? field(r->tasks[i].result, k) : NULL;
		if (cJSON_IsNumber(x) && isfinite(x->valuedouble) && fabs(x->valuedouble) < 1e12) {
			v[n++] = x->valuedouble;
			sum += x->valuedouble;
		}
	}
	if (n == 0) {
		agent_buf_puts(out, "—");
	} else {
		qsort(v, n, sizeof(*v), cmp_double);
		double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		agent_buf_puts(out, "median <span data-k=\"median\">");
		agent_buf_printf(out, "%.*f", digits, med);
		agent_buf_puts(out, "</span>, mean ");
		agent_buf_printf(out, "%.*f", digits, sum / (double)n);
	}
	free(v);
}

static void put_summary(agent_buf *out, const batch_report *r)
{
	size_t count[3] = {0};
	for (size_t i = 0; i < r->ntasks; i++)
		count[state_of(&r->tasks[i])]++;
	size_t finished = count[TASK_SUCCEEDED] + count[TASK_FAILED];
	agent_buf_puts(out, "<h2>Summary</h2>\n<dl class=\"facts\" id=\"summary\">\n");
	agent_buf_printf(out, "<dt>tasks</dt><dd data-k=\"tasks\">%zu</dd>\n", r->ntasks);
	agent_buf_printf(out, "<dt>finished</dt><dd data-k=\"finished\">%zu</dd>\n", finished);
	agent_buf_printf(out, "<dt>succeeded</dt><dd data-k=\"succeeded\">%zu</dd>\n",
	                 count[TASK_SUCCEEDED]);
	agent_buf_printf(out, "<dt>failed</dt><dd data-k=\"failed\">%zu</dd>\n", count[TASK_FAILED]);
	agent_buf_printf(out, "<dt>unfinished</dt><dd data-k=\"unfinished\">%zu</dd>\n",
	                 count[TASK_UNFINISHED]);
	agent_buf_puts(out, "<dt>success rate</dt><dd data-k=\"rate\">");
	if (finished > 0)
		agent_buf_printf(out, "%.1f %% of the finished tasks",
		                 100.0 * (double)count[TASK_SUCCEEDED] / (double)finished);
	else
		agent_buf_puts(out, "— (no task finished yet)");
	agent_buf_puts(out, "</dd>\n<dt>seconds per task</dt><dd data-k=\"seconds\">");
	put_spread(out, r, "seconds", 1);
	agent_buf_puts(out, "</dd>\n<dt>steps per task</dt><dd data-k=\"steps\">");
	put_spread(out, r, "steps", 1);
	agent_buf_puts(out, "</dd>\n<dt>actions per task</dt><dd data-k=\"actions\">");
	put_spread(out, r, "actions", 1);
	agent_buf_puts(out, "</dd>\n</dl>\n");
}

static void put_table(agent_buf *out, const batch_report *r)
{
	agent_buf_puts(out, "<table id=\"tasks\">\n<thead><tr><th>id</th><th>success</th>"
	               "<th>check exit</th><th>agent exit</th><th>steps</th><th>actions</th>"
	               "<th>seconds</th><th>error</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->ntasks; i++) {
		const batch_rtask *t = &r->tasks[i];
		task_state s = state_of(t);
		/* The id is valid (batch_id_valid): safe in an attribute and a link. */
		agent_buf_printf(out, "<tr data-id=\"%s\" class=\"%s\"><td><a href=\"#task-%s\">%s</a></td>"
		                 "<td class=\"success\">%s</td>", t->id, state_word[s], t->id, t->id,
		                 s == TASK_SUCCEEDED ? "yes" : s == TASK_FAILED ? "no" : "unfinished");
		static const char *const ints[] = {"check_exit", "agent_exit", "steps", "actions"};
		for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
			agent_buf_printf(out, "<td class=\"n %s\">", ints[k]);
			put_int(out, t->result, ints[k]);
			agent_buf_puts(out, "</td>");
		}
		agent_buf_puts(out, "<td class=\"n seconds\">");
		put_seconds(out, t->result);
		agent_buf_puts(out, "</td><td class=\"error\">");
		const cJSON *e = field(t->result, "error");
		if (cJSON_IsString(e))
			batch_html_cut(out, e->valuestring, 200);
		agent_buf_puts(out, "</td></tr>\n");
	}
	agent_buf_puts(out, "</tbody>\n</table>\n");
}

/* The facts of a task's results line, and its folder's files. */
static void put_facts(agent_buf *out, const batch_rtask *t)
{
	static const char *const ints[] = {"check_exit", "agent_exit", "steps", "actions"};
	static const char *const strs[] = {"started", "ended", "screen"};
	if (t->result == NULL) {
		agent_buf_puts(out, "<p>No result yet: the task has not finished.</p>\n");
		return;
	}
	agent_buf_puts(out, "<dl class=\"facts\">\n");
	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
		agent_buf_printf(out, "<dt>%s</dt><dd data-k=\"%s\">", ints[k], ints[k]);
		put_int(out, t->result, ints[k]);
		agent_buf_puts(out, "</dd>\n");
	}
	agent_buf_puts(out, "<dt>seconds</dt><dd data-k=\"seconds\">");
	put_seconds(out, t->result);
	agent_buf_puts(out, "</dd>\n");
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
		const cJSON *v = field(t->result, strs[k]);
		if (!cJSON_IsString(v))
			continue;
		agent_buf_printf(out, "<dt>%s</dt><dd>", strs[k]);
		batch_html_cut(out, v->valuestring, 100);
		agent_buf_puts(out, "</dd>\n");
	}
	const cJSON *e = field(t->result, "error");
	if (cJSON_IsString(e)) {
		agent_buf_puts(out, "<dt>error</dt><dd class=\"bad\" data-k=\"error\">");
		batch_html_cut(out, e->valuestring, ERROR_MAX);
		agent_buf_puts(out, "</dd>\n");
	}
	agent_buf_puts(out, "</dl>\n");
}

/* A log of the task's folder: its excerpt, and a link to the whole file. */
static void put_log(agent_buf *out, const batch_rtask *t, const char *name, const char *text,
                    bool open)
{
	if (text == NULL)
		return;
	agent_buf_printf(out, "<details class=\"log\" data-name=\"%s\"%s><summary>"
	                 "<a href=\"%s/%s\">%s</a></summary>\n", name, open ? " open" : "",
	                 t->id, name, name);
	if (text[0] == '\0') {
		agent_buf_puts(out, "<p>(empty)</p>");
	} else {
		agent_buf_puts(out, "<pre>");
		batch_html_text(out, text);
		agent_buf_puts(out, "</pre>");
	}
	agent_buf_puts(out, "\n</details>\n");
}

static void put_task(agent_buf *out, const batch_rtask *t)
{
	task_state s = state_of(t);
	agent_buf_printf(out, "<section class=\"task %s\" id=\"task-%s\" data-id=\"%s\">\n"
	                 "<h2><a href=\"#task-%s\">%s</a> <span class=\"%s state\">%s</span></h2>\n",
	                 state_word[s], t->id, t->id, t->id, t->id, state_class[s], state_word[s]);
	put_facts(out, t);
	put_notes(out, &t->notes);
	const cJSON *ins = t->task != NULL ? field(t->task, "instruction") : NULL;
	agent_buf_puts(out, "<h3>Instruction</h3>\n");
	if (cJSON_IsString(ins)) {
		agent_buf_puts(out, "<pre class=\"instruction\">");
		batch_html_cut(out, ins->valuestring, INSTRUCTION_MAX);
		agent_buf_puts(out, "</pre>\n");
	} else {
		agent_buf_puts(out, "<p class=\"notes\">task.json gives no instruction.</p>\n");
	}
	agent_buf_puts(out, "<h3>Trajectory</h3>\n");
	batch_html_trajectory(out, t);
	agent_buf_puts(out, "<h3>Check</h3>\n");
	if (t->check_out == NULL)
		agent_buf_puts(out, "<p class=\"check-none\">No check output.</p>\n");
	put_log(out, t, "check.out", t->check_out, true);
	put_log(out, t, "agent.err", t->agent_err, false);
	agent_buf_printf(out, "<p class=\"files\">Files: <a href=\"%s/\">%s/</a>, "
	                 "<a href=\"%s/conversation.json\">conversation.json</a>, "
	                 "<a href=\"%s/audit.jsonl\">audit.jsonl</a>, "
	                 "<a href=\"%s/agent.jsonl\">agent.jsonl</a></p>\n</section>\n",
	                 t->id, t->id, t->id, t->id, t->id);
}

void batch_html_page(agent_buf *out, const batch_report *r)
{
	agent_buf_puts(out, page_head);
	agent_buf_puts(out, "<h1>deskhand batch report</h1>\n");
	put_notes(out, &r->notes);
	put_summary(out, r);
	put_table(out, r);
	for (size_t i = 0; i < r->ntasks; i++)
		put_task(out, &r->tasks[i]);
	agent_buf_puts(out, "</body>\n</html>\n");
}
