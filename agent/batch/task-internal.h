/*
 * agent/batch/task-internal — the processes of one task as its init sees
 * them (task_proc.c), for task.c.
 */
#ifndef DESKHAND_AGENT_BATCH_TASK_INTERNAL_H
#define DESKHAND_AGENT_BATCH_TASK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum { TASK_WATCHED_MAX = 40 };

typedef struct task_procs {
	int sigfd;                      /* SIGCHLD, as a descriptor */
	struct {
		pid_t pid;              /* 0 once it ended */
		int status;
		const char *what;       /* "the X server", "app 2", ... */
	} watched[TASK_WATCHED_MAX];
	const char *died;               /* the first watched process that ended */
} task_procs;

/* Blocks SIGCHLD and opens its descriptor. */
bool task_proc_init(task_procs *p);
/* Starts argv (PATH searched in env's PATH) in cwd, its own process
 * group, stdin /dev/null, stdout to out_fd, stderr to err_fd; `powerless`:
 * without capabilities (the task's commands; not the agent). -1: fork
 * failed. */
pid_t task_spawn(char *const *argv, char *const *env, const char *cwd, int out_fd, int err_fd,
                 bool powerless);
/* Processes whose end is news (the desktop's, the apps). */
void task_watch(task_procs *p, pid_t pid, const char *what);
/* Waits for pid until the deadline, reaping the others; false: still running. */
bool task_wait(task_procs *p, pid_t pid, int64_t deadline_ns, int *status);
/* Ends pid and its process group: SIGTERM, grace_ms, then SIGKILL. Its status. */
int task_end(task_procs *p, pid_t pid, long grace_ms);
/* This process's environment without other desktops' doors, then
 * `extra` ("NAME=value", NULL-terminated; its names replace the
 * environment's). Holds no secret once task_take_secrets has run: only
 * what `extra` adds. The strings are borrowed. Ownership: free() the array. */
char **task_env(char *const *extra);
/* Takes what sandbox_env_blocked names (the model's keys, tokens, other
 * buses) out of this process's environment, so that nothing the task
 * starts inherits it, and returns it ("NAME=value", NULL-terminated) for
 * the agent's environment alone; NULL (nothing taken out) when out of
 * memory. Ownership: batch_strings_free. */
char **task_take_secrets(void);

#endif
