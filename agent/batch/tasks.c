/*
 * agent/batch/tasks — the task file, read once into batch_task: after
 * this nothing looks at a task's JSON again. See batch-internal.h.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch/batch-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

bool batch_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > BATCH_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

static bool fail(char *err, size_t errsize, const char *name, size_t line, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));
static bool fail(char *err, size_t errsize, const char *name, size_t line, const char *fmt, ...)
{
	int n = snprintf(err, errsize, "%s:%zu: ", name, line);
	if (n < 0 || (size_t)n >= errsize)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + n, errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

void batch_strings_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static void argvs_free(batch_argv *l)
{
	for (size_t i = 0; l != NULL && l[i] != NULL; i++)
		batch_strings_free(l[i]);
	free(l);
}

/* A non-empty array of strings without NULs; NULL (why in *why) when not. */
static batch_argv argv_of(const cJSON *a, const char **why)
{
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
	if (n <= 0) {
		*why = "a non-empty array of strings (a program and its arguments)";
		return NULL;
	}
	batch_argv v = calloc((size_t)n + 1, sizeof(*v));
	int i = 0;
	for (const cJSON *s = a->child; v != NULL && s != NULL; s = s->next, i++) {
		if (!cJSON_IsString(s) || (i == 0 && s->valuestring[0] == '\0')) {
			*why = "an array of strings, the first the program";
			batch_strings_free(v);
			return NULL;
		}
		if ((v[i] = strdup(s->valuestring)) == NULL)
			break;
	}
	if (v == NULL || i < n) {
		*why = "out of memory";
		batch_strings_free(v);
		return NULL;
	}
	return v;
}

/* An array of commands. */
static batch_argv *argvs_of(const cJSON *a, const char **why)
{
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
	if (n < 0) {
		*why = "an array of commands (each an array of strings)";
		return NULL;
	}
	batch_argv *l = calloc((size_t)n + 1, sizeof(*l));
	int i = 0;
	for (const cJSON *c = a->child; l != NULL && c != NULL; c = c->next, i++)
		if ((l[i] = argv_of(c, why)) == NULL)
			break;
	if (l == NULL || i < n) {
		if (l == NULL)
			*why = "out of memory";
		argvs_free(l);
		return NULL;
	}
	return l;
}

static bool screen_of(const char *s, int *w, int *h)
{
	char x;
	int n = 0;
	if (sscanf(s, "%5d%c%5d%n", w, &x, h, &n) != 3 || x != 'x' || s[n] != '\0' ||
	    !isdigit((unsigned char)s[0]))
		return false;
	return *w >= 320 && *w <= 8192 && *h >= 200 && *h <= 8192;
}

static bool whole_in(const cJSON *v, long min, long max, long *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble)
		return false;
	*out = (long)v->valuedouble;
	return *out >= min && *out <= max;
}

enum field {
	F_ID, F_INSTRUCTION, F_SCREEN, F_WM, F_APPS, F_SETUP, F_CHECK, F_TIMEOUT, F_MAX_STEPS,
	F_COUNT
};
static const char *const field_names[F_COUNT] = {
	"id", "instruction", "screen", "wm", "apps", "setup", "check", "timeout_s", "max_steps",
};

/* One member into the task; NULL or the reason it is not what it must be. */
static const char *take(batch_task *t, enum field f, const cJSON *v)
{
	const char *why = NULL;
	switch (f) {
	case F_ID:
		if (!cJSON_IsString(v) || !batch_id_valid(v->valuestring))
			return "must be 1 to 64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)";
		return (t->id = strdup(v->valuestring)) ? NULL : "out of memory";
	case F_INSTRUCTION:
		if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
			return "must be a non-empty string";
		return (t->instruction = strdup(v->valuestring)) ? NULL : "out of memory";
	case F_SCREEN:
		if (!cJSON_IsString(v) || !screen_of(v->valuestring, &t->screen_w, &t->screen_h))
			return "must be \"WxH\", 320x200 to 8192x8192";
		return NULL;
	case F_WM:
		if (cJSON_IsString(v) && v->valuestring[0] != '\0') {
			cJSON *one = cJSON_CreateStringArray((const char *const *)&v->valuestring, 1);
			t->wm = argv_of(one, &why);
			cJSON_Delete(one);
			return why;
		}
		return (t->wm = argv_of(v, &why)) ? NULL : why;
	case F_APPS:
		return (t->apps = argvs_of(v, &why)) ? NULL : why;
	case F_SETUP:
		return (t->setup = argvs_of(v, &why)) ? NULL : why;
	case F_CHECK:
		return (t->check = argv_of(v, &why)) ? NULL : why;
	case F_TIMEOUT:
		return whole_in(v, 1, 86400, &t->timeout_s) ? NULL : "must be a whole number of "
		                                                      "seconds, 1 to 86400";
	case F_MAX_STEPS:
		return whole_in(v, 1, 100000, &t->max_steps) ? NULL : "must be a whole number, "
		                                                      "1 to 100000";
	case F_COUNT:
		break;
	}
	return "is not a field";
}

static void task_free(batch_task *t)
{
	free(t->id);
	free(t->instruction);
	batch_strings_free(t->wm);
	argvs_free(t->setup);
	argvs_free(t->apps);
	batch_strings_free(t->check);
	free(t->line);
}

static bool parse_line(const char *name, size_t lineno, const char *s, size_t n, batch_task *t,
                       char *err, size_t errsize)
{
	memset(t, 0, sizeof(*t));
	t->screen_w = BATCH_DEFAULT_W;
	t->screen_h = BATCH_DEFAULT_H;
	t->timeout_s = BATCH_DEFAULT_TIMEOUT_S;
	const char *end = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(s, n, &end, false);
	bool ok = false;
	if (!agent_utf8_valid(s, n) || memchr(s, '\0', n) != NULL) {
		fail(err, errsize, name, lineno, "not UTF-8 text");
		goto out;
	}
	if (agent_json_has_escaped_nul(s, n)) {
		fail(err, errsize, name, lineno, "a string holds a NUL character (\\u0000)");
		goto out;
	}
	if (o == NULL || !cJSON_IsObject(o)) {
		fail(err, errsize, name, lineno, "not a JSON object");
		goto out;
	}
	for (; end < s + n && (*end == ' ' || *end == '\t' || *end == '\r'); end++)
		;
	if (end != s + n) {
		fail(err, errsize, name, lineno, "something follows the task's object");
		goto out;
	}
	bool seen[F_COUNT] = {false};
	for (const cJSON *m = o->child; m != NULL; m = m->next) {
		int f = base_name_index(field_names, F_COUNT, m->string);
		if (f < 0 || f >= F_COUNT) {
			fail(err, errsize, name, lineno, "unknown field \"%.40s\" (fields: id, "
			     "instruction, screen, wm, apps, setup, check, timeout_s, max_steps)",
			     m->string);
			goto out;
		}
		const char *why = seen[f] ? "is given twice" : take(t, (enum field)f, m);
		seen[f] = true;
		if (why != NULL) {
			fail(err, errsize, name, lineno, "%s %s", field_names[f], why);
			goto out;
		}
	}
	static const enum field required[] = {F_ID, F_INSTRUCTION, F_CHECK};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!seen[required[i]]) {
			fail(err, errsize, name, lineno, "%s is missing", field_names[required[i]]);
			goto out;
		}
	ok = (t->line = strndup(s, n)) != NULL;
	if (!ok)
		fail(err, errsize, name, lineno, "out of memory");
out:
	cJSON_Delete(o);
	if (!ok)
		task_free(t);
	return ok;
}

void batch_tasks_free(batch_tasks *t)
{
	for (size_t i = 0; t != NULL && i < t->n; i++)
		task_free(&t->v[i]);
	if (t != NULL) {
		free(t->v);
		t->v = NULL;
		t->n = 0;
	}
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return s[i] == '#';
	return true;
}

bool batch_tasks_parse(const char *name, const char *text, size_t len, batch_tasks *out,
                       char *err, size_t errsize)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0, lineno = 0;
	for (size_t pos = 0; pos < len; lineno++) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *s = text + pos;
		pos += n + (nl != NULL);
		if (is_blank(s, n))
			continue;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			batch_task *v = realloc(out->v, cap * sizeof(*v));
			if (v == NULL) {
				batch_tasks_free(out);
				return fail(err, errsize, name, lineno + 1, "out of memory");
			}
			out->v = v;
		}
		if (!parse_line(name, lineno + 1, s, n, &out->v[out->n], err, errsize)) {
			batch_tasks_free(out);
			return false;
		}
		for (size_t i = 0; i < out->n; i++)
			if (strcmp(out->v[i].id, out->v[out->n].id) == 0) {
				fail(err, errsize, name, lineno + 1, "id \"%s\" is taken by an earlier "
				     "task", out->v[i].id);
				out->n++;
				batch_tasks_free(out);
				return false;
			}
		out->n++;
	}
	if (out->n == 0)
		return fail(err, errsize, name, lineno, "no tasks");
	return true;
}
