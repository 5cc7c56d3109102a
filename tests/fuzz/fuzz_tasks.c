/*
 * A task file of deskhand batch (agent/batch/tasks.c), whatever its bytes.
 *
 * Checked:
 *  - the parse fails with a reason that names the file and a line, or
 *    gives at least one task;
 *  - every task has a valid, unique id (a folder name: no '/', no "..",
 *    nothing but [A-Za-z0-9._-]), a non-empty instruction, a check whose
 *    first string is a program, a screen in range, a timeout of 1 s to a
 *    day, and commands that are NULL-terminated arrays of strings;
 *  - each task's line, parsed alone, is the same task (same id, same
 *    check), so what the batch writes to DIR/ID/task.json reads back.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/batch/batch-internal.h"

static void check_argv(batch_argv a, const char *what)
{
	fuzz_check(a != NULL && a[0] != NULL && a[0][0] != '\0', "%s: no program", what);
	for (size_t i = 0; a[i] != NULL; i++)
		fuzz_check(i < 1u << 20, "%s: unterminated", what);
}

static void check_task(const batch_task *t)
{
	fuzz_check(batch_id_valid(t->id), "id %s", t->id);
	fuzz_check(strchr(t->id, '/') == NULL && strcmp(t->id, "..") != 0 && t->id[0] != '.',
	           "id %s is a path", t->id);
	fuzz_check(t->instruction != NULL && t->instruction[0] != '\0', "no instruction");
	check_argv(t->check, "check");
	if (t->wm != NULL)
		check_argv(t->wm, "wm");
	for (size_t i = 0; t->setup != NULL && t->setup[i] != NULL; i++)
		check_argv(t->setup[i], "setup");
	for (size_t i = 0; t->apps != NULL && t->apps[i] != NULL; i++)
		check_argv(t->apps[i], "apps");
	fuzz_check(t->screen_w >= 320 && t->screen_w <= 8192 && t->screen_h >= 200 &&
	           t->screen_h <= 8192, "screen %dx%d", t->screen_w, t->screen_h);
	fuzz_check(t->timeout_s >= 1 && t->timeout_s <= 86400, "timeout %ld", t->timeout_s);
	fuzz_check(t->max_steps >= 0 && t->max_steps <= 100000, "max_steps %ld", t->max_steps);
	fuzz_check(t->line != NULL, "no line");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	batch_tasks ts;
	char err[512] = "";
	if (!batch_tasks_parse("t.jsonl", (const char *)data, size, &ts, err, sizeof(err))) {
		fuzz_check(strncmp(err, "t.jsonl:", 8) == 0, "reason %s", err);
		return 0;
	}
	fuzz_check(ts.n > 0, "no tasks but success");
	for (size_t i = 0; i < ts.n; i++) {
		check_task(&ts.v[i]);
		for (size_t k = 0; k < i; k++)
			fuzz_check(strcmp(ts.v[i].id, ts.v[k].id) != 0, "duplicate %s", ts.v[i].id);
		batch_tasks one;
		bool ok = batch_tasks_parse("t.jsonl", ts.v[i].line, strlen(ts.v[i].line), &one, err,
		                            sizeof(err));
		fuzz_check(ok && one.n == 1, "line %zu does not read back: %s", i, err);
		fuzz_check(strcmp(one.v[0].id, ts.v[i].id) == 0, "id changed");
		fuzz_check(strcmp(one.v[0].check[0], ts.v[i].check[0]) == 0, "check changed");
		batch_tasks_free(&one);
	}
	batch_tasks_free(&ts);
	return 0;
}
