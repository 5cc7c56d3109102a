/*
 * agent/batch/results — DIR/results.jsonl, the batch's memory: one line per
 * finished task. Only the batch's main process writes it, and always
 * whole (a temporary file renamed over it), so a batch killed at any
 * moment leaves either the old lines or the old lines and the new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch/batch-internal.h"
#include "base/base.h"

enum { RESULTS_MAX = 64 << 20 };

static char *results_path(const char *dir)
{
	size_t n = strlen(dir) + sizeof("/results.jsonl");
	char *p = malloc(n);
	if (p != NULL)
		snprintf(p, n, "%s/results.jsonl", dir);
	return p;
}

static bool push(batch_results *r, char *line)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		char **l = realloc(r->lines, cap * sizeof(*l));
		cJSON **p = l ? realloc(r->parsed, cap * sizeof(*p)) : NULL;
		if (l != NULL)
			r->lines = l;
		if (p == NULL)
			return false;
		r->parsed = p;
		r->cap = cap;
	}
	cJSON *o = cJSON_Parse(line);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	if (!cJSON_IsObject(o) || !cJSON_IsString(id) || !batch_id_valid(id->valuestring)) {
		cJSON_Delete(o);
		o = NULL;
	}
	r->lines[r->n] = line;
	r->parsed[r->n++] = o;
	return true;
}

bool batch_results_load(const char *dir, batch_results *r, char *err, size_t errsize)
{
	memset(r, 0, sizeof(*r));
	char *path = results_path(dir);
	size_t len = 0;
	char *text = path ? base_read_file(path, RESULTS_MAX, &len) : NULL;
	if (text == NULL) {
		bool none = path != NULL && errno == ENOENT;
		if (!none)
			snprintf(err, errsize, "%s: %s", path ? path : dir, strerror(errno));
		free(path);
		return none;
	}
	bool ok = true;
	for (char *s = text, *nl; ok && *s != '\0'; s = nl + 1) {
		nl = strchr(s, '\n');
		if (nl == NULL)
			nl = s + strlen(s);
		size_t n = (size_t)(nl - s);
		if (n == 0) {
			if (*nl == '\0')
				break;
			continue;
		}
		char *line = strndup(s, n);
		ok = line != NULL && push(r, line);
		if (!ok)
			free(line);
		if (*nl == '\0')
			break;
	}
	if (!ok)
		snprintf(err, errsize, "%s: out of memory", path);
	free(text);
	free(path);
	return ok;
}

void batch_results_free(batch_results *r)
{
	for (size_t i = 0; r != NULL && i < r->n; i++) {
		free(r->lines[i]);
		cJSON_Delete(r->parsed[i]);
	}
	if (r != NULL) {
		free(r->lines);
		free(r->parsed);
		memset(r, 0, sizeof(*r));
	}
}

const cJSON *batch_results_find(const batch_results *r, const char *id)
{
	for (size_t i = r->n; i-- > 0;) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->parsed[i], "id");
		if (v != NULL && strcmp(v->valuestring, id) == 0)
			return r->parsed[i];
	}
	return NULL;
}

bool batch_results_add(const char *dir, batch_results *r, cJSON *result, char *err,
                       size_t errsize)
{
	char *line = cJSON_PrintUnformatted(result);
	cJSON_Delete(result);
	char *path = results_path(dir);
	bool ok = line != NULL && path != NULL && push(r, line);
	if (!ok) {
		free(line);
		snprintf(err, errsize, "results.jsonl: out of memory");
		free(path);
		return false;
	}
	size_t total = 0;
	for (size_t i = 0; i < r->n; i++)
		total += strlen(r->lines[i]) + 1;
	char *text = malloc(total + 1), *p = text;
	for (size_t i = 0; text != NULL && i < r->n; i++) {
		size_t n = strlen(r->lines[i]);
		memcpy(p, r->lines[i], n);
		p[n] = '\n';
		p += n + 1;
	}
	ok = text != NULL && base_atomic_replace(path, text, total, 0644);
	if (!ok)
		snprintf(err, errsize, "%s: %s", path, text ? base_error() : "out of memory");
	free(text);
	free(path);
	return ok;
}
