/*
 * agent/batch/report_step — a task's trajectory on the page: each of the
 * model's turns as a step, with the screenshot it acted on and the action
 * drawn there, its text, its calls, the gate's decision on each (from
 * audit.jsonl) and the tool's answer. See report.h.
 *
 * An image is linked only when the conversation names it in the form
 * deskhand writes (conversation.images/NNNN.png): a path is built from the
 * task's valid id and that name, never taken whole from the file, so a
 * planted "../../etc/passwd" or "file:///…" never becomes a link.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/batch/report.h"

#define TEXT_MAX 65536
#define ARGS_MAX 16384
#define RESULT_MAX 4096

/* An image the model saw: its name inside the task's folder (checked),
 * its size in pixels. name[0] == '\0': none. */
typedef struct shot {
	char name[40];
	int w, h;
	bool present;   /* the file is there */
} shot;

static const cJSON *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = field(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "conversation.images/" then 4 to 9 digits then ".png": what
 * conv_file.c writes beside DIR/ID/conversation.json. */
static bool image_name_ok(const char *p)
{
	static const char prefix[] = "conversation.images/";
	if (p == NULL || strncmp(p, prefix, sizeof(prefix) - 1) != 0)
		return false;
	const char *d = p + sizeof(prefix) - 1;
	size_t n = strspn(d, "0123456789");
	return n >= 4 && n <= 9 && strcmp(d + n, ".png") == 0;
}

/* The image of a tool result, when it has one. A path of another form is
 * not used, and reported in out (unless NULL). */
static bool result_shot(agent_buf *out, const batch_rtask *t, const cJSON *res, shot *s)
{
	const cJSON *img = field(res, "image");
	if (!cJSON_IsObject(img))
		return false;
	const char *p = str(img, "path");
	const cJSON *w = field(img, "width"), *h = field(img, "height");
	if (!image_name_ok(p)) {
		if (out == NULL)
			return false;
		agent_buf_puts(out, "<p class=\"notes refused\">An image path not of deskhand's form "
		               "was not linked: ");
		batch_html_cut(out, p != NULL ? p : "(none)", 200);
		agent_buf_puts(out, "</p>\n");
		return false;
	}
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", p);
	bool sized = cJSON_IsNumber(w) && cJSON_IsNumber(h) && w->valuedouble >= 1 &&
	             h->valuedouble >= 1 && w->valuedouble <= 32768 && h->valuedouble <= 32768;
	s->w = sized ? (int)w->valuedouble : 0;
	s->h = sized ? (int)h->valuedouble : 0;
	char path[4096 + 128];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/%s", t->dir, t->id, s->name);
	s->present = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
	return true;
}

/* The tool_result item answering call `id`, or NULL. */
static const cJSON *result_of(const cJSON *msgs, const char *id)
{
	const cJSON *m, *c;
	if (id == NULL)
		return NULL;
	cJSON_ArrayForEach(m, msgs) {
		const char *role = str(m, "role");
		if (role == NULL || strcmp(role, "tool") != 0)
			continue;
		cJSON_ArrayForEach(c, field(m, "content")) {
			const char *type = str(c, "type"), *cid = str(c, "call_id");
			if (type != NULL && strcmp(type, "tool_result") == 0 && cid != NULL &&
			    strcmp(cid, id) == 0)
				return c;
		}
	}
	return NULL;
}

/* The audit's "proposed" line of call `id`, or NULL. */
static const cJSON *proposed_of(const batch_rtask *t, const char *id)
{
	const cJSON *e;
	if (id == NULL)
		return NULL;
	cJSON_ArrayForEach(e, t->audit) {
		const char *ev = str(e, "event"), *eid = str(e, "id");
		if (ev != NULL && eid != NULL && strcmp(ev, "proposed") == 0 && strcmp(eid, id) == 0)
			return e;
	}
	return NULL;
}

/* The computer action of a call: the audit's normalized one (the same for
 * every model's vocabulary), else the call's own arguments when they look
 * like one. NULL for code and other tools. */
static const cJSON *action_of(const batch_rtask *t, const char *id, const cJSON *args)
{
	const cJSON *a = field(proposed_of(t, id), "action");
	if (cJSON_IsObject(a) && cJSON_IsString(field(a, "action")))
		return a;
	return cJSON_IsObject(args) && cJSON_IsString(field(args, "action")) ? args : NULL;
}

static bool is_action(const cJSON *action, const char *name)
{
	const char *n = str(action, "action");
	return n != NULL && strcmp(n, name) == 0;
}

/* The screenshot with the action drawn over it, linked to the file. */
static void put_shot(agent_buf *out, const batch_rtask *t, const shot *s, const cJSON *action,
                     const char *when)
{
	const char *file = strrchr(s->name, '/') + 1;
	agent_buf_printf(out, "<figure class=\"shot-fig\"><div class=\"shot\">"
	                 "<a href=\"%s/%s\"><img src=\"%s/%s\" alt=\"screenshot %s\" "
	                 "loading=\"lazy\"", t->id, s->name, t->id, s->name, file);
	if (s->w > 0)
		agent_buf_printf(out, " width=\"%d\" height=\"%d\"", s->w, s->h);
	agent_buf_puts(out, "></a>");
	if (action != NULL && s->w > 0 && batch_action_draws(action))
		batch_html_overlay(out, action, s->w, s->h, t->screen_w, t->screen_h);
	agent_buf_printf(out, "</div><figcaption>%s, %s", file, when);
	if (!s->present)
		agent_buf_puts(out, " <span class=\"notes missing\">(the file is missing)</span>");
	agent_buf_puts(out, "</figcaption></figure>\n");
}

/* The gate's story of one call: every audit line with its id. */
static void put_decision(agent_buf *out, const batch_rtask *t, const char *id)
{
	const cJSON *e;
	const cJSON *events = id != NULL ? t->audit : NULL;
	size_t n = 0;
	agent_buf_puts(out, "<ul class=\"decisions\">\n");
	cJSON_ArrayForEach(e, events) {
		const char *ev = str(e, "event"), *eid = str(e, "id");
		if (ev == NULL || eid == NULL || strcmp(eid, id) != 0 || strcmp(ev, "proposed") == 0)
			continue;
		n++;
		agent_buf_puts(out, "<li class=\"decision ");
		batch_html_text(out, ev);
		agent_buf_puts(out, "\"><b>");
		batch_html_text(out, ev);
		agent_buf_puts(out, "</b>");
		if (str(e, "by") != NULL) {
			agent_buf_puts(out, " by <span class=\"by\">");
			batch_html_text(out, str(e, "by"));
			agent_buf_puts(out, "</span>");
		}
		if (str(e, "from") != NULL) {
			agent_buf_puts(out, " (from ");
			batch_html_text(out, str(e, "from"));
			agent_buf_puts(out, ")");
		}
		const cJSON *st = field(e, "status"), *ms = field(e, "duration_ms");
		if (cJSON_IsNumber(st))
			agent_buf_printf(out, ": status <span class=\"status\">%.0f</span>", st->valuedouble);
		if (cJSON_IsNumber(ms))
			agent_buf_printf(out, " in %.0f ms", ms->valuedouble);
		const char *why = str(e, "reason") != NULL ? str(e, "reason") : str(e, "error");
		if (why == NULL && str(e, "worst") != NULL)
			why = str(e, "worst");
		if (why != NULL && why[0] != '\0') {
			agent_buf_puts(out, ": <span class=\"reason\">");
			batch_html_cut(out, why, 2048);
			agent_buf_puts(out, "</span>");
		}
		agent_buf_puts(out, "</li>\n");
	}
	if (n == 0)
		agent_buf_puts(out, "<li class=\"decision none\">no decision in the audit log</li>\n");
	agent_buf_puts(out, "</ul>\n");
}

/* The call's arguments: code as code, anything else as indented JSON, and
 * what is not JSON as it came. */
static void put_args(agent_buf *out, const char *raw, const cJSON *args)
{
	const char *code = str(args, "code");
	agent_buf_puts(out, "<pre class=\"args\">");
	if (code != NULL) {
		batch_html_cut(out, code, ARGS_MAX);
	} else if (args != NULL) {
		char *pretty = cJSON_Print(args);
		if (pretty == NULL)
			out->oom = true;
		batch_html_cut(out, pretty, ARGS_MAX);
		free(pretty);
	} else {
		batch_html_cut(out, raw, ARGS_MAX);
	}
	agent_buf_puts(out, "</pre>\n");
}

/*
 * One call of a step. A drawn action goes on the image the model last saw
 * before it (it aimed there), else on the one it got back; an observation
 * (a screenshot) shows what it got back, and nothing when it got nothing.
 */
static void put_call(agent_buf *out, const batch_rtask *t, const cJSON *call,
                     const cJSON *msgs, const shot *before)
{
	const char *id = str(call, "id"), *name = str(call, "name"), *raw = str(call, "arguments");
	cJSON *args = raw != NULL ? cJSON_Parse(raw) : NULL;
	const cJSON *action = action_of(t, id, args);
	const cJSON *res = result_of(msgs, id);
	agent_buf_puts(out, "<div class=\"call\">\n<p class=\"tool\">call <code>");
	batch_html_text(out, name != NULL ? name : "(no name)");
	agent_buf_puts(out, "</code>");
	if (action != NULL) {
		agent_buf_puts(out, " <code class=\"action\">");
		batch_html_text(out, str(action, "action"));
		agent_buf_puts(out, "</code>");
	}
	agent_buf_puts(out, "</p>\n");
	shot after = {0};
	bool has_after = res != NULL && result_shot(out, t, res, &after);
	/* A picture without a size could not carry the drawing. */
	if (action != NULL && batch_action_draws(action) && before->name[0] != '\0' && before->w > 0)
		put_shot(out, t, before, action, "the screen the model acted on");
	else if (has_after)
		put_shot(out, t, &after, action, "the screen the call gave back");
	put_args(out, raw, args);
	put_decision(out, t, id);
	if (res == NULL) {
		agent_buf_puts(out, "<p class=\"notes\">No result in the conversation.</p>\n");
	} else {
		bool err = cJSON_IsTrue(field(res, "is_error"));
		agent_buf_printf(out, "<pre class=\"result%s\">", err ? " bad" : "");
		batch_html_cut(out, str(res, "text"), RESULT_MAX);
		agent_buf_puts(out, "</pre>\n");
	}
	agent_buf_puts(out, "</div>\n");
	cJSON_Delete(args);
}

/* One assistant message: its text, then each call. */
static void put_step(agent_buf *out, const batch_rtask *t, const cJSON *msg, const cJSON *msgs,
                     const shot *before, int n)
{
	const cJSON *c;
	agent_buf_printf(out, "<li class=\"step\" id=\"task-%s-step-%d\" data-step=\"%d\">\n"
	                 "<p class=\"said\">", t->id, n, n);
	size_t text_len = 0;
	cJSON_ArrayForEach(c, field(msg, "content")) {
		const char *type = str(c, "type"), *text = str(c, "text");
		if (type == NULL || strcmp(type, "text") != 0 || text == NULL)
			continue;
		if (text_len > 0)
			agent_buf_puts(out, "\n");
		batch_html_cut(out, text, text_len < TEXT_MAX ? TEXT_MAX - text_len : 0);
		text_len += strlen(text);
	}
	agent_buf_puts(out, "</p>\n");
	cJSON_ArrayForEach(c, field(msg, "content")) {
		const char *type = str(c, "type");
		if (type != NULL && strcmp(type, "tool_call") == 0)
			put_call(out, t, c, msgs, before);
	}
	agent_buf_puts(out, "</li>\n");
}

/* A tool message: its last image becomes what the model has seen, unless
 * it is a zoom's (a part of the screen at another scale, where the next
 * action's coordinates do not point). */
static void saw(const batch_rtask *t, const cJSON *msg, shot *last)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, field(msg, "content")) {
		const char *type = str(c, "type");
		shot s;
		if (type == NULL || strcmp(type, "tool_result") != 0)
			continue;
		const cJSON *call = proposed_of(t, str(c, "call_id"));
		if (result_shot(NULL, t, c, &s) && !is_action(field(call, "action"), "zoom"))
			*last = s;
	}
}

void batch_html_trajectory(agent_buf *out, const batch_rtask *t)
{
	const cJSON *msgs = t->conv != NULL ? field(t->conv, "messages") : NULL;
	const cJSON *m;
	shot last = {0};
	int step = 0;
	if (!cJSON_IsArray(msgs)) {
		agent_buf_puts(out, "<p class=\"no-conversation\">No conversation to show.</p>\n");
		return;
	}
	agent_buf_puts(out, "<ol class=\"steps\">\n");
	cJSON_ArrayForEach(m, msgs) {
		const char *role = str(m, "role");
		if (role != NULL && strcmp(role, "assistant") == 0)
			put_step(out, t, m, msgs, &last, ++step);
		else if (role != NULL && strcmp(role, "tool") == 0)
			saw(t, m, &last);
	}
	agent_buf_puts(out, "</ol>\n");
	if (step == 0)
		agent_buf_puts(out, "<p class=\"no-steps\">The model took no step.</p>\n");
}
