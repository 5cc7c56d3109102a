/*
 * agent/batch/batch-internal — what the files of agent/batch share: the
 * task as parsed from its line (tasks.c), the results file (results.c),
 * one task's life inside its enclosure (task.c) and the folders' names.
 */
#ifndef DESKHAND_AGENT_BATCH_INTERNAL_H
#define DESKHAND_AGENT_BATCH_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/batch/batch.h"

enum {
	BATCH_ID_MAX = 64,
	BATCH_DEFAULT_TIMEOUT_S = 300,
	BATCH_CHECK_TIMEOUT_S = 60,
	BATCH_DEFAULT_W = 1280,
	BATCH_DEFAULT_H = 800,
};

/* A command: argv, NULL-terminated; the strings are the task's. */
typedef char **batch_argv;

/* Frees a NULL-terminated array of malloc'ed strings and the array; NULL-safe. */
void batch_strings_free(char **v);

typedef struct batch_task {
	char *id;
	char *instruction;
	int screen_w, screen_h;
	batch_argv wm;          /* NULL: none */
	batch_argv *setup;      /* NULL-terminated list; NULL: none */
	batch_argv *apps;
	batch_argv check;
	long timeout_s;
	long max_steps;         /* 0: the agent options' */
	char *line;             /* the line as written */
} batch_task;

typedef struct batch_tasks {
	batch_task *v;
	size_t n;
} batch_tasks;

/*
 * Parses a task file's text: one JSON object a line; blank lines and lines
 * starting with '#' are skipped. Strict: an unknown field, a wrong type, a
 * bad id or screen, a duplicate id is an error naming the line
 * ("tasks.jsonl:3: ..."). Ownership: the caller frees `out` with
 * batch_tasks_free; on false it holds nothing.
 */
bool batch_tasks_parse(const char *name, const char *text, size_t len, batch_tasks *out,
                       char *err, size_t errsize);
void batch_tasks_free(batch_tasks *t);
/* Whether s is a task id: [A-Za-z0-9][A-Za-z0-9._-]{0,63}, ASCII whatever the
 * locale. Only such ids become folders, element ids and links. */
bool batch_id_valid(const char *s);

/*
 * DIR/results.jsonl: the lines of finished tasks, kept as written (a line
 * that is not a result object is kept too, and counts as no task).
 */
typedef struct batch_results {
	char **lines;
	size_t n, cap;
	cJSON **parsed;         /* lines[i] parsed, or NULL */
} batch_results;

/* Loads DIR/results.jsonl (missing: none). Ownership: batch_results_free. */
bool batch_results_load(const char *dir, batch_results *r, char *err, size_t errsize);
void batch_results_free(batch_results *r);
/* The result object of task id, or NULL (the last one, should there be several). */
const cJSON *batch_results_find(const batch_results *r, const char *id);
/* Adds one result (taken: freed here) and rewrites the file atomically. */
bool batch_results_add(const char *dir, batch_results *r, cJSON *result, char *err,
                       size_t errsize);

/* What the batch gives every task. */
typedef struct batch_run {
	const char *out;        /* absolute DIR */
	const char *tasks_dir;  /* absolute folder of TASKS.jsonl */
	const char *self;       /* this executable */
	char **agent_args;      /* the agent options, {id}/{tasks} not yet replaced */
	int nagent_args;
	const char *config;     /* the user's config file, or NULL */
	bool console;
} batch_run;

/*
 * One task's life, in the enclosure's first process: its desktop, setup,
 * apps, the agent, the check; writes DIR/ID/outcome.json and returns the
 * status the process exits with. Everything it started dies with it.
 */
int batch_task_live(const batch_run *run, const batch_task *t);

/* "{id}", "{tasks}", "{workspace}" replaced in s. Ownership: the caller frees. */
char *batch_expand(const char *s, const char *id, const char *tasks_dir,
                   const char *workspace);

/* Removes a tree without following symbolic links, making unreadable
 * folders readable first (a task's code may have chmod'ed them). */
bool batch_remove_tree(const char *path);
/* DIR/ID made afresh (an unfinished run's folder removed), with task.json. */
bool batch_folder_fresh(const char *dir, const batch_task *t, char *err, size_t errsize);
/* DIR/ID/outcome.json, the task init's last word; NULL when it wrote none.
 * Ownership: cJSON_Delete. */
cJSON *batch_folder_outcome(const char *dir, const char *id);

typedef struct batch_counts {
	long steps;             /* the model's turns */
	long actions;           /* tool calls executed */
	long denied;            /* proposals refused */
} batch_counts;
void batch_folder_count(const char *dir, const char *id, batch_counts *c);

#endif
