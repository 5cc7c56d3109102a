/*
 * agent/batch/report — DIR/report.html: reading DIR (results.jsonl and
 * each task's folder) into a batch_report, and writing the page
 * atomically. See batch.h and report.h.
 *
 * Nothing in DIR is trusted to be well formed: a file that is missing,
 * too large, not JSON or of the wrong shape becomes a note on the page
 * and the rest is shown. Files are opened without following a symbolic
 * link at their last component: the task's own code could have planted
 * one in its folder, and the report must not copy a file of the user's
 * (check.out -> ~/.ssh/id_ed25519) into a page meant to be shared.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/batch/batch.h"
#include "agent/batch/report.h"
#include "base/base.h"

/* Bounds on what is read: far above what a task writes, low enough that a
 * runaway file cannot take the machine's memory. */
#define JSON_MAX ((size_t)256 << 20)
#define TASK_MAX ((size_t)1 << 20)
/* check.out and agent.err: their first and last bytes when longer. */
#define EXCERPT_HEAD 4096
#define EXCERPT_TAIL 12288

void batch_report_note(agent_buf *notes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = agent_vformat(fmt, ap);
	va_end(ap);
	if (s == NULL) {
		notes->oom = true;
		return;
	}
	agent_buf_puts(notes, s);
	agent_buf_puts(notes, "\n");
	free(s);
}

/* A regular file at dirfd/name, opened read-only without following a
 * link; -1 with errno (ELOOP for a link, EINVAL for another kind). */
static int open_plain(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The whole of dirfd/name, or NULL with a note (none when it does not
 * exist and `quiet`). Ownership: the caller frees. */
static char *read_file(int dirfd, const char *name, size_t max, size_t *len,
                       agent_buf *notes, bool quiet)
{
	int fd = open_plain(dirfd, name);
	if (fd < 0) {
		if (errno != ENOENT || !quiet)
			batch_report_note(notes, "%s: %s", name, errno == ENOENT ? "missing"
			           : errno == ELOOP || errno == EINVAL ? "not a plain file, not read"
			           : strerror(errno));
		return NULL;
	}
	char *s = base_read_fd(fd, max, len);
	int e = errno;
	close(fd);
	if (s == NULL)
		batch_report_note(notes, "%s: %s", name, e == EFBIG ? "too large, not read" : strerror(e));
	return s;
}

/* A JSON file's value, or NULL with a note. */
static cJSON *read_json(int dirfd, const char *name, size_t max, agent_buf *notes, bool quiet)
{
	size_t len = 0;
	char *s = read_file(dirfd, name, max, &len, notes, quiet);
	if (s == NULL)
		return NULL;
	cJSON *v = cJSON_ParseWithLength(s, len);
	if (v == NULL)
		batch_report_note(notes, "%s: not JSON (%zu bytes), not shown", name, len);
	free(s);
	return v;
}

/* Every line of a JSON Lines file that parses as an object, into an array;
 * lines that do not are counted in a note. NULL when the file is not there. */
static cJSON *read_lines(int dirfd, const char *name, agent_buf *notes, bool quiet)
{
	size_t len = 0, bad = 0, first_bad = 0, lineno = 0;
	char *s = read_file(dirfd, name, JSON_MAX, &len, notes, quiet);
	if (s == NULL)
		return NULL;
	cJSON *arr = cJSON_CreateArray();
	for (char *p = s; arr != NULL && p < s + len;) {
		char *nl = memchr(p, '\n', (size_t)(s + len - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(s + len - p);
		lineno++;
		if (strspn(p, " \t\r") < n) {
			cJSON *o = cJSON_ParseWithLength(p, n);
			if (cJSON_IsObject(o))
				cJSON_AddItemToArray(arr, o);
			else {
				cJSON_Delete(o);
				if (bad++ == 0)
					first_bad = lineno;
			}
		}
		p += n + 1;
	}
	if (bad > 0)
		batch_report_note(notes, "%s: %zu line%s not a JSON object (the first: line %zu), left out",
		           name, bad, bad == 1 ? " is" : "s are", first_bad);
	free(s);
	return arr;
}

/*
 * A log's text for the page: whole when short, else its first and last
 * bytes around a line saying how much was left out (a checker's verdict
 * is usually at its end, its setup at its start). NULL when it is not
 * there. Ownership: the caller frees.
 */
static char *read_excerpt(int dirfd, const char *name, agent_buf *notes)
{
	int fd = open_plain(dirfd, name);
	struct stat st;
	if (fd < 0) {
		if (errno != ENOENT)
			batch_report_note(notes, "%s: not a plain file, not read", name);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size <= EXCERPT_HEAD + EXCERPT_TAIL) {
		char *s = base_read_fd(fd, EXCERPT_HEAD + EXCERPT_TAIL, NULL);
		close(fd);
		return s;
	}
	agent_buf b = {0};
	char head[EXCERPT_HEAD], tail[EXCERPT_TAIL];
	ssize_t nh = pread(fd, head, sizeof(head), 0);
	ssize_t nt = pread(fd, tail, sizeof(tail), st.st_size - (off_t)sizeof(tail));
	close(fd);
	if (nh < 0 || nt < 0) {
		batch_report_note(notes, "%s: %s", name, strerror(errno));
		return NULL;
	}
	agent_buf_append(&b, head, (size_t)nh);
	agent_buf_printf(&b, "\n\n[… %lld bytes left out …]\n\n",
	                 (long long)st.st_size - (long long)nh - (long long)nt);
	agent_buf_append(&b, tail, (size_t)nt);
	return agent_buf_steal(&b);
}

/* "WxH" into *w, *h when it is one (each 1..65535). */
static void parse_screen(const cJSON *v, int *w, int *h)
{
	unsigned a, b;
	char end;
	if (cJSON_IsString(v) && sscanf(v->valuestring, "%ux%u%c", &a, &b, &end) == 2 &&
	    a >= 1 && a <= 65535 && b >= 1 && b <= 65535) {
		*w = (int)a;
		*h = (int)b;
	}
}

/* The last results line of `id` (a task run again has one line, but a
 * hand-edited file may hold more: the newest counts). */
static const cJSON *result_of(const cJSON *results, const char *id)
{
	const cJSON *found = NULL, *o;
	cJSON_ArrayForEach(o, results) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (cJSON_IsString(v) && strcmp(v->valuestring, id) == 0)
			found = o;
	}
	return found;
}

/* Reads one task's folder (if it has one) into t. */
static void load_task(batch_rtask *t, const char *dir, int dirfd, const cJSON *results)
{
	t->dir = dir;
	t->result = result_of(results, t->id);
	int fd = openat(dirfd, t->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		batch_report_note(&t->notes, "the task's folder %s/ is missing", t->id);
		goto screen;
	}
	t->task = read_json(fd, "task.json", TASK_MAX, &t->notes, false);
	if (t->task != NULL && !cJSON_IsObject(t->task))
		batch_report_note(&t->notes, "task.json: not a JSON object");
	if (t->task != NULL)
		parse_screen(cJSON_GetObjectItemCaseSensitive(t->task, "screen"),
		             &t->screen_w, &t->screen_h);
	/* An unfinished task may not have begun: its absent files say nothing. */
	bool quiet = t->result == NULL;
	t->conv = read_json(fd, "conversation.json", JSON_MAX, &t->notes, quiet);
	if (t->conv != NULL &&
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(t->conv, "messages")))
		batch_report_note(&t->notes, "conversation.json: no \"messages\" array");
	t->audit = read_lines(fd, "audit.jsonl", &t->notes, quiet);
	t->check_out = read_excerpt(fd, "check.out", &t->notes);
	t->agent_err = read_excerpt(fd, "agent.err", &t->notes);
	close(fd);
screen:
	if (t->result != NULL)
		parse_screen(cJSON_GetObjectItemCaseSensitive(t->result, "screen"),
		             &t->screen_w, &t->screen_h);
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const batch_rtask *)a)->id, ((const batch_rtask *)b)->id);
}

/* Adds id to the list unless it is there. False when out of memory. */
static bool add_id(batch_report *r, size_t *cap, const char *id)
{
	for (size_t i = 0; i < r->ntasks; i++)
		if (strcmp(r->tasks[i].id, id) == 0)
			return true;
	if (r->ntasks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		batch_rtask *n = realloc(r->tasks, ncap * sizeof(*n));
		if (n == NULL)
			return false;
		r->tasks = n;
		*cap = ncap;
	}
	batch_rtask *t = &r->tasks[r->ntasks++];
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	return true;
}

/* The tasks: every folder with a task.json, and every id with a results
 * line. Names that are not task ids are noted and never used. */
static bool find_tasks(batch_report *r, int dirfd)
{
	size_t cap = 0, bad = 0;
	const cJSON *o;
	cJSON_ArrayForEach(o, r->results) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (!cJSON_IsString(v) || !batch_id_valid(v->valuestring))
			bad++;
		else if (!add_id(r, &cap, v->valuestring))
			return false;
	}
	if (bad > 0)
		batch_report_note(&r->notes, "results.jsonl: %zu line%s without a valid task id, left out",
		           bad, bad == 1 ? "" : "s");
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	struct dirent *e;
	size_t odd = 0;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char name[sizeof(e->d_name) + 16];
		snprintf(name, sizeof(name), "%s/task.json", e->d_name);
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!batch_id_valid(e->d_name))
			odd++;
		else if (!add_id(r, &cap, e->d_name)) {
			closedir(d);
			return false;
		}
	}
	if (odd > 0)
		batch_report_note(&r->notes, "%zu folder%s with a task.json but a name that is not a task id, "
		           "left out", odd, odd == 1 ? "" : "s");
	closedir(d);
	qsort(r->tasks, r->ntasks, sizeof(*r->tasks), by_id);
	return true;
}

static void report_finish(batch_report *r)
{
	for (size_t i = 0; i < r->ntasks; i++) {
		batch_rtask *t = &r->tasks[i];
		cJSON_Delete(t->task);
		cJSON_Delete(t->conv);
		cJSON_Delete(t->audit);
		free(t->check_out);
		free(t->agent_err);
		agent_buf_finish(&t->notes);
	}
	free(r->tasks);
	cJSON_Delete(r->results);
	agent_buf_finish(&r->notes);
}

bool batch_report_write(const char *dir, char *err, size_t errsize)
{
	batch_report r = {0};
	agent_buf page = {0};
	bool ok = false;
	char path[4096];
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, errsize, "%s: %s", dir, strerror(errno));
		return false;
	}
	if (snprintf(path, sizeof(path), "%s/report.html", dir) >= (int)sizeof(path)) {
		snprintf(err, errsize, "%s: the path is too long", dir);
		goto out;
	}
	/* No results.jsonl yet: no task has finished, which the summary says. */
	r.results = read_lines(dirfd, "results.jsonl", &r.notes, true);
	if (!find_tasks(&r, dirfd)) {
		snprintf(err, errsize, "%s: cannot list the tasks: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < r.ntasks; i++)
		load_task(&r.tasks[i], dir, dirfd, r.results);
	batch_html_page(&page, &r);
	if (page.oom) {
		snprintf(err, errsize, "%s: out of memory", path);
		goto out;
	}
	if (!base_atomic_replace(path, page.data, page.len, 0666)) {
		snprintf(err, errsize, "cannot write %s: %s", path, base_error());
		goto out;
	}
	ok = true;
out:
	agent_buf_finish(&page);
	report_finish(&r);
	close(dirfd);
	return ok;
}
