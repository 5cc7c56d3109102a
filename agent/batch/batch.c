/*
 * agent/batch/batch — the command: its arguments, the schedule of tasks
 * over --parallel slots, each in an enclosure of its own, the results as
 * each ends, the progress on standard error and the final line. This
 * process stays single-threaded: each enclosure is a fork of it that goes
 * on running its code. See batch.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/batch/batch-internal.h"
#include "agent/session/session.h"
#include "base/base.h"
#include "executors/exec.h"

enum { SLOTS_MAX = 64, TASKS_MAX_BYTES = 64 << 20, HARD_GRACE_S = 90 };

struct slot {
	pid_t pid;                      /* 0: free */
	size_t task;
	int64_t started_ns, hard_ns;
	char started[32];
	bool link_shown;
};

struct batch {
	batch_run run;
	batch_tasks tasks;
	batch_results results;
	const char *tasks_file;
	char out[PATH_MAX], tasks_dir[PATH_MAX], self[PATH_MAX], cwd[PATH_MAX];
	char *keep[SANDBOX_ENCLOSURE_MAX];
	size_t nkeep;
	long parallel, index, count;
	bool os_auto_approve;
	size_t *share, nshare;          /* this run's share of the tasks, in order */
	size_t *torun, ntorun, next;    /* those not done already */
	size_t done, failed, resumed;
	double seconds_sum;
	struct slot slots[SLOTS_MAX];
	int64_t started_ns, last_progress_ns;
	int sigfd;
	int alive[2];                   /* held open by this process alone */
	bool tty;
};

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "deskhand batch: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: deskhand batch TASKS.jsonl --out DIR [--parallel N] [--index I "
	        "--count C] [--console] [AGENT OPTIONS] (deskhand batch --help)\n");
	return 2;
}

static void iso_now(char *buf, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static bool whole(const char *s, long min, long max, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max || s[0] == '+' ||
	    s[0] == '-' || s[0] == ' ')
		return false;
	*out = v;
	return true;
}

/* An agent option's file made absolute: the agent runs in the task's
 * workspace, not here. */
static char *absolute_value(const char *cwd, const char *flag, const char *v)
{
	bool as_is = v[0] == '/' || strncmp(v, "{tasks}", 7) == 0;
	char *out = NULL;
	if (asprintf(&out, "%s%s%s%s%s", flag ? flag : "", flag ? "=" : "", as_is ? "" : cwd,
	             as_is ? "" : "/", v) < 0)
		return NULL;
	return out;
}

/* Takes the agent's options, making --script's and --config's files absolute. */
static bool agent_arg(struct batch *b, int argc, char **argv, int *i)
{
	static const char *const paths[] = {"--script", "--config"};
	char **v = realloc(b->run.agent_args, (size_t)(b->run.nagent_args + 2) * sizeof(*v));
	if (v == NULL)
		return false;
	b->run.agent_args = v;
	const char *a = argv[*i];
	for (size_t k = 0; k < 2; k++) {
		size_t n = strlen(paths[k]);
		if (strcmp(a, paths[k]) == 0 && *i + 1 < argc) {
			v[b->run.nagent_args++] = strdup(a);
			v[b->run.nagent_args++] = absolute_value(b->cwd, NULL, argv[++*i]);
			return v[b->run.nagent_args - 1] != NULL;
		}
		if (strncmp(a, paths[k], n) == 0 && a[n] == '=') {
			v[b->run.nagent_args++] = absolute_value(b->cwd, paths[k], a + n + 1);
			return v[b->run.nagent_args - 1] != NULL;
		}
	}
	return (v[b->run.nagent_args++] = strdup(a)) != NULL;
}

static int parse_args(struct batch *b, int argc, char **argv, const char **out)
{
	if (argc < 2 || argv[1][0] == '-')
		return usage("%s", "TASKS.jsonl comes first");
	b->tasks_file = argv[1];
	b->parallel = 1;
	b->count = 1;
	bool index_given = false, count_given = false;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (strcmp(a, "--out") == 0 && more)
			*out = argv[++i];
		else if (strcmp(a, "--parallel") == 0 && more) {
			if (!whole(argv[++i], 1, SLOTS_MAX, &b->parallel))
				return usage("--parallel %s: a whole number, 1 to 64", argv[i]);
		} else if (strcmp(a, "--index") == 0 && more) {
			if (!whole(argv[++i], 0, 1000000, &b->index))
				return usage("--index %s: a whole number from 0", argv[i]);
			index_given = true;
		} else if (strcmp(a, "--count") == 0 && more) {
			if (!whole(argv[++i], 1, 1000000, &b->count))
				return usage("--count %s: a whole number from 1", argv[i]);
			count_given = true;
		} else if (strcmp(a, "--console") == 0)
			b->run.console = true;
		else if (!agent_arg(b, argc, argv, &i))
			return usage("%s", strerror(errno));
	}
	if (*out == NULL)
		return usage("%s", "--out DIR is needed");
	if (index_given != count_given || b->index >= b->count)
		return usage("%s", "--index I and --count C go together, with I < C");
	return -1;
}

/* The agent options, checked once as the agent would read them (with a
 * task's names in): a usage error now, not in every task. */
static int check_agent_options(struct batch *b)
{
	int n = b->run.nagent_args;
	char **v = calloc((size_t)n + 2, sizeof(*v));
	if (v == NULL)
		return usage("%s", strerror(ENOMEM));
	v[0] = (char *)"deskhand";
	for (int i = 0; i < n; i++)
		v[i + 1] = batch_expand(b->run.agent_args[i], "id", b->tasks_dir, b->cwd);
	agent_options opt;
	agent_options_init(&opt);
	const char *cfg = agent_options_config_arg(n + 1, v);
	int status = -1;
	if (!agent_options_load_config(&opt, cfg) || !agent_options_parse(&opt, n + 1, v) ||
	    !agent_options_validate(&opt))
		status = usage("%s", agent_options_error());
	else if (opt.conversation || opt.audit || opt.workspace || opt.message || opt.console ||
	         opt.list_conversations || opt.help || opt.version)
		status = usage("%s", "each task's conversation, audit log, workspace, message and "
		               "console are the batch's (--console without a value: one per task)");
	else if (opt.api_key_from_flag)
		status = usage("%s", "--api-key: every task's processes could read it on the "
		               "batch's command line; give the key in the environment "
		               "(OPENAI_API_KEY, ...) or as api_key in the config file");
	b->os_auto_approve = opt.os_auto_approve;
	if (status < 0 && cfg == NULL && opt.config_path != NULL)
		b->run.config = strdup(opt.config_path);
	agent_options_finish(&opt);
	for (int i = 0; i < n; i++)
		free(v[i + 1]);
	free(v);
	return status;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* Folders the tasks need that the private /tmp and /dev/shm would hide
 * (one that holds the output folder shows it covered all the same). */
static void keep_if_hidden(struct batch *b, const char *path)
{
	if (b->nkeep + 1 >= SANDBOX_ENCLOSURE_MAX)
		return;
	for (size_t i = 0; i < b->nkeep; i++)
		if (under(path, b->keep[i]))
			return;
	if (under(path, "/tmp") || under(path, "/dev/shm"))
		b->keep[b->nkeep++] = strdup(path);
}

static int load_tasks(struct batch *b)
{
	size_t len = 0;
	char *text = base_read_file(b->tasks_file, TASKS_MAX_BYTES, &len), err[512];
	if (text == NULL) {
		fprintf(stderr, "deskhand batch: %s: %s\n", b->tasks_file, strerror(errno));
		return 2;
	}
	bool ok = batch_tasks_parse(b->tasks_file, text, len, &b->tasks, err, sizeof(err));
	free(text);
	if (!ok) {
		fprintf(stderr, "deskhand batch: %s\n", err);
		return 2;
	}
	b->share = calloc(b->tasks.n, sizeof(*b->share));
	b->torun = calloc(b->tasks.n, sizeof(*b->torun));
	if (b->share == NULL || b->torun == NULL)
		return usage("%s", strerror(ENOMEM));
	for (size_t i = (size_t)b->index; i < b->tasks.n; i += (size_t)b->count)
		b->share[b->nshare++] = i;
	return -1;
}

/*
 * The folder's lock. A batch killed a moment ago still holds it until its
 * enclosures (which keep it, so that no task of that run still writes when
 * another starts) have died of its death: a run started right after is let
 * wait that moment, LOCK_WAIT_MS, not refused. A batch that is running
 * holds it longer.
 */
enum { LOCK_WAIT_MS = 3000, LOCK_STEP_MS = 50 };
static bool lock_out(int fd)
{
	for (int waited = 0;; waited += LOCK_STEP_MS) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return true;
		if (errno != EWOULDBLOCK || waited >= LOCK_WAIT_MS)
			return false;
		base_sleep_ms(LOCK_STEP_MS, NULL);
	}
}

/* The output folder (made, locked for this run) and the paths every task uses. */
static int prepare(struct batch *b, const char *out)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", b->tasks_file);
	char *slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	if (realpath(slash ? dir : ".", b->tasks_dir) == NULL ||
	    (mkdir(out, 0755) != 0 && errno != EEXIST) || realpath(out, b->out) == NULL ||
	    strlen(b->out) > PATH_MAX - 200) {
		fprintf(stderr, "deskhand batch: %s: %s\n", out,
		        errno ? strerror(errno) : "too long a path");
		return 1;
	}
	/* The output folder is hidden from every task: one that holds the
	 * task file's folder would hide the checkers and data with it. */
	if (under(b->tasks_dir, b->out)) {
		fprintf(stderr, "deskhand batch: --out %s holds the tasks' folder %s, which every "
		        "task would then not see: put the results elsewhere\n", out, b->tasks_dir);
		return 2;
	}
	char lock[PATH_MAX];
	snprintf(lock, sizeof(lock), "%.*s/.batch.lock", PATH_MAX - 16, b->out);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || !lock_out(fd)) {
		fprintf(stderr, "deskhand batch: %s: %s\n", b->out,
		        errno == EWOULDBLOCK ? "another deskhand batch is writing there"
		                             : strerror(errno));
		return 1;
	}
	ssize_t n = readlink("/proc/self/exe", b->self, sizeof(b->self) - 1);
	if (n <= 0)
		return fprintf(stderr, "deskhand batch: /proc/self/exe: %s\n", strerror(errno)), 1;
	b->self[n] = '\0';
	char self_dir[PATH_MAX];
	snprintf(self_dir, sizeof(self_dir), "%s", b->self);
	*strrchr(self_dir, '/') = '\0';
	keep_if_hidden(b, b->tasks_dir);
	keep_if_hidden(b, self_dir);
	keep_if_hidden(b, b->cwd);
	b->run.out = b->out;
	b->run.tasks_dir = b->tasks_dir;
	b->run.self = b->self;
	char err[512];
	if (!batch_results_load(b->out, &b->results, err, sizeof(err))) {
		fprintf(stderr, "deskhand batch: %s\n", err);
		return 1;
	}
	return -1;
}

static void fmt_duration(double s, char *buf, size_t size)
{
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, size, "%lds", t);
}

static size_t running(const struct batch *b)
{
	size_t n = 0;
	for (long i = 0; i < b->parallel; i++)
		n += b->slots[i].pid > 0;
	return n;
}

static void progress(struct batch *b, bool force)
{
	int64_t now = base_now_ns();
	int64_t every = (b->tty ? 1000 : 10000) * BASE_NS_PER_MS;
	if (!force && now - b->last_progress_ns < every)
		return;
	b->last_progress_ns = now;
	double elapsed = (double)(now - b->started_ns) / 1e9;
	char el[32], left[48] = "";
	fmt_duration(elapsed, el, sizeof(el));
	size_t ran = b->done - b->resumed, todo = b->nshare - b->done;
	if (ran > 0 && todo > 0) {
		double per = b->seconds_sum / (double)ran;
		double slots = (double)(b->parallel < (long)todo ? b->parallel : (long)todo);
		fmt_duration(per * (double)todo / slots, left + 8, sizeof(left) - 8);
		memcpy(left, ", about ", 8);
		strcat(left, " left");
	}
	fprintf(stderr, "%sbatch: %zu/%zu done (%zu failed), %zu running, %s elapsed%s%s",
	        b->tty ? "\r\033[K" : "", b->done, b->nshare, b->failed, running(b), el, left,
	        b->tty ? "" : "\n");
	fflush(stderr);
}

/* A line of its own on a terminal, above the progress line. */
static void say(struct batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct batch *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (b->tty)
		fputs("\r\033[K", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	progress(b, true);
}

/* The enclosure's first process: ends with the batch however the batch
 * ends (a kill -9 included), so a resumed batch never meets a task of the
 * run before still writing. */
static _Noreturn void task_child(struct batch *b, size_t t, int alive_r, int alive_w)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close(alive_w);
	struct pollfd p = {alive_r, POLLIN, 0};
	if (poll(&p, 1, 0) > 0)
		_exit(125);
	close(alive_r);
	close(b->sigfd);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);
	_exit(batch_task_live(&b->run, &b->tasks.v[t]));
}

static bool start_task(struct batch *b, struct slot *s, size_t t)
{
	const batch_task *task = &b->tasks.v[t];
	char err[600], own[PATH_MAX];
	if (!batch_folder_fresh(b->out, task, err, sizeof(err))) {
		say(b, "deskhand batch: %s", err);
		return false;
	}
	snprintf(own, sizeof(own), "%s/%s", b->out, task->id);
	sandbox_enclosure e = {.cover = {b->out, NULL}, .keep = {NULL}, .own = own};
	for (size_t i = 0; i < b->nkeep; i++)
		e.keep[i] = b->keep[i];
	s->task = t;
	s->started_ns = base_now_ns();
	s->hard_ns = s->started_ns + (task->timeout_s + BATCH_CHECK_TIMEOUT_S + HARD_GRACE_S) *
	                                 1000 * BASE_NS_PER_MS;
	s->link_shown = !b->run.console;
	iso_now(s->started, sizeof(s->started));
	pid_t pid = sandbox_enclosure_enter(&e);
	if (pid == 0)
		task_child(b, t, b->alive[0], b->alive[1]);
	if (pid < 0) {
		say(b, "deskhand batch: %s: %s", task->id, sandbox_error());
		return false;
	}
	s->pid = pid;
	return true;
}

static void refusal_hint(const struct batch *b, const batch_counts *c, char *buf, size_t size)
{
	if (c->denied == 0 || b->os_auto_approve)
		return;
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, "%s%ld proposal%s refused: nobody approves in a batch; "
	         "desktop actions run with --os-auto-approve (code with -y), or approve them "
	         "with --console", n ? "; " : "", c->denied, c->denied == 1 ? " was" : "s were");
}

/* The task's line of results.jsonl, from its outcome and its folder. */
static cJSON *result_of(const struct batch *b, const struct slot *s, int status)
{
	const batch_task *t = &b->tasks.v[s->task];
	cJSON *outcome = batch_folder_outcome(b->out, t->id), *r = cJSON_CreateObject();
	batch_counts c;
	batch_folder_count(b->out, t->id, &c);
	const cJSON *check = cJSON_GetObjectItemCaseSensitive(outcome, "check_exit");
	const cJSON *agent = cJSON_GetObjectItemCaseSensitive(outcome, "agent_exit");
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(outcome, "error");
	bool success = cJSON_IsNumber(check) && check->valueint == 0;
	char why[1200] = "";
	if (cJSON_IsString(error))
		snprintf(why, sizeof(why), "%s", error->valuestring);
	else if (outcome == NULL && status < 0)
		snprintf(why, sizeof(why), "did not end within %ld s and was killed",
		         t->timeout_s + BATCH_CHECK_TIMEOUT_S + HARD_GRACE_S);
	else if (outcome == NULL)
		snprintf(why, sizeof(why), "the task ended without an outcome (%s %d)",
		         WIFSIGNALED(status) ? "signal" : "status",
		         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else if (!success && cJSON_IsNumber(check))
		snprintf(why, sizeof(why), "the check failed (exit %d)", check->valueint);
	if (!success)
		refusal_hint(b, &c, why, sizeof(why));
	char ended[32], screen[32];
	iso_now(ended, sizeof(ended));
	snprintf(screen, sizeof(screen), "%dx%d", t->screen_w, t->screen_h);
	cJSON_AddStringToObject(r, "id", t->id);
	cJSON_AddBoolToObject(r, "success", success);
	cJSON_AddItemToObject(r, "check_exit", cJSON_IsNumber(check) ? cJSON_Duplicate(check, 0)
	                                                             : cJSON_CreateNull());
	cJSON_AddItemToObject(r, "agent_exit", cJSON_IsNumber(agent) ? cJSON_Duplicate(agent, 0)
	                                                             : cJSON_CreateNull());
	cJSON_AddNumberToObject(r, "steps", (double)c.steps);
	cJSON_AddNumberToObject(r, "actions", (double)c.actions);
	double secs = (double)(base_now_ns() - s->started_ns) / 1e9;
	cJSON_AddNumberToObject(r, "seconds", (double)(long)(secs * 1000 + 0.5) / 1000);
	cJSON_AddItemToObject(r, "error", why[0] ? cJSON_CreateString(why) : cJSON_CreateNull());
	cJSON_AddStringToObject(r, "started", s->started);
	cJSON_AddStringToObject(r, "ended", ended);
	cJSON_AddStringToObject(r, "screen", screen);
	cJSON_Delete(outcome);
	return r;
}

/* A running task's console link, once its init has written it. */
static void show_link(struct batch *b, struct slot *s)
{
	if (s->pid <= 0 || s->link_shown)
		return;
	char path[PATH_MAX], url[1024];
	if (snprintf(path, sizeof(path), "%s/%s/console.url", b->out, b->tasks.v[s->task].id) <
	        (int)sizeof(path) &&
	    base_read_small(AT_FDCWD, path, url, sizeof(url)) > 0) {
		url[strcspn(url, "\n")] = '\0';
		say(b, "%s: console %s", b->tasks.v[s->task].id, url);
		s->link_shown = true;
	}
}

static void show_links(struct batch *b)
{
	for (long i = 0; i < b->parallel; i++)
		show_link(b, &b->slots[i]);
}

static void write_report(struct batch *b)
{
	char err[600];
	if (!batch_report_write(b->out, err, sizeof(err)))
		say(b, "deskhand batch: the report: %s", err);
}

/* status < 0: killed by the batch at its hard deadline. False: the
 * result could not be recorded, and the batch stops. */
static bool finish_task(struct batch *b, struct slot *s, int status)
{
	cJSON *r = result_of(b, s, status);
	const batch_task *t = &b->tasks.v[s->task];
	bool success = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "success"));
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
	double secs = cJSON_GetObjectItemCaseSensitive(r, "seconds")->valuedouble;
	char why[1400] = "";
	if (cJSON_IsString(err))
		snprintf(why, sizeof(why), ": %s", err->valuestring);
	char msg[600];
	show_link(b, s);    /* a task quicker than a tick of the progress */
	s->pid = 0;
	if (!batch_results_add(b->out, &b->results, r, msg, sizeof(msg))) {
		say(b, "deskhand batch: %s: the result cannot be recorded, so the batch stops "
		    "(run it again to resume): %s", t->id, msg);
		return false;
	}
	b->done++;
	b->failed += !success;
	b->seconds_sum += secs;
	say(b, "%s %s in %.1f s%s", success ? "ok  " : "FAIL", t->id, secs, why);
	write_report(b);
	return true;
}

/* Reaps what ended and kills what overran; false: stop (a result could
 * not be recorded). */
static bool reap(struct batch *b)
{
	int st;
	for (long i = 0; i < b->parallel; i++) {
		struct slot *s = &b->slots[i];
		if (s->pid <= 0)
			continue;
		pid_t r = waitpid(s->pid, &st, WNOHANG);
		if (r == 0 && base_now_ns() >= s->hard_ns) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &st, 0);
			st = -1;
			r = s->pid;
		}
		if (r == s->pid && !finish_task(b, s, st))
			return false;
	}
	return true;
}

static void kill_all(struct batch *b)
{
	for (long i = 0; i < b->parallel; i++)
		if (b->slots[i].pid > 0) {
			kill(b->slots[i].pid, SIGKILL);
			waitpid(b->slots[i].pid, NULL, 0);
			b->slots[i].pid = 0;
		}
}

/* 0: every task is done; 1: stopped; 130: interrupted. */
static int schedule(struct batch *b)
{
	for (;;) {
		for (long i = 0; i < b->parallel && b->next < b->ntorun; i++)
			if (b->slots[i].pid == 0) {
				size_t t = b->torun[b->next++];
				if (!start_task(b, &b->slots[i], t)) {
					kill_all(b);
					return 1;
				}
				progress(b, true);
			}
		if (running(b) == 0)
			return 0;
		struct pollfd p = {b->sigfd, POLLIN, 0};
		if (poll(&p, 1, 1000) > 0) {
			struct signalfd_siginfo si;
			while (read(b->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				if (si.ssi_signo != SIGCHLD) {
					kill_all(b);
					say(b, "deskhand batch: interrupted; the unfinished tasks start over "
					    "when the same command runs again");
					return 130;
				}
		}
		if (!reap(b)) {
			kill_all(b);
			return 1;
		}
		show_links(b);
		progress(b, false);
	}
}

static int cmp_double(const void *a, const void *c)
{
	double x = *(const double *)a, y = *(const double *)c;
	return (x > y) - (x < y);
}

/* "N tasks, K succeeded (P %), median T s", over this run's share, resumed
 * tasks included. 0 when every one succeeded. */
static int summary(struct batch *b)
{
	double *secs = calloc(b->nshare + 1, sizeof(*secs));
	size_t n = 0, ok = 0;
	for (size_t i = 0; i < b->nshare; i++) {
		const cJSON *r = batch_results_find(&b->results, b->tasks.v[b->share[i]].id);
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "seconds");
		if (r == NULL)
			continue;
		ok += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "success"));
		if (secs != NULL && cJSON_IsNumber(s))
			secs[n++] = s->valuedouble;
	}
	double median = 0;
	if (secs != NULL && n > 0) {
		qsort(secs, n, sizeof(*secs), cmp_double);
		median = n % 2 ? secs[n / 2] : (secs[n / 2 - 1] + secs[n / 2]) / 2;
	}
	free(secs);
	if (b->tty)
		fputs("\r\033[K", stderr);
	printf("%zu tasks, %zu succeeded (%.0f %%), median %.1f s\n", b->nshare, ok,
	       b->nshare ? 100.0 * (double)ok / (double)b->nshare : 0.0, median);
	fflush(stdout);
	return ok == b->nshare ? 0 : 1;
}

static void batch_free(struct batch *b)
{
	for (int i = 0; i < b->run.nagent_args; i++)
		free(b->run.agent_args[i]);
	free(b->run.agent_args);
	free((char *)b->run.config);
	for (size_t i = 0; i < b->nkeep; i++)
		free(b->keep[i]);
	free(b->share);
	free(b->torun);
	batch_tasks_free(&b->tasks);
	batch_results_free(&b->results);
	if (b->sigfd >= 0)
		close(b->sigfd);
}

/* The tasks of the share that are done already are not run again. */
static void count_resumed(struct batch *b)
{
	for (size_t i = 0; i < b->nshare; i++) {
		const cJSON *r = batch_results_find(&b->results, b->tasks.v[b->share[i]].id);
		if (r == NULL) {
			b->torun[b->ntorun++] = b->share[i];
			continue;
		}
		b->resumed++;
		b->failed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "success"));
	}
	b->done = b->resumed;
}

static int run_batch(struct batch *b)
{
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) != 0 ||
	    (b->sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    pipe2(b->alive, O_CLOEXEC) != 0) {
		fprintf(stderr, "deskhand batch: %s\n", strerror(errno));
		return 1;
	}
	b->tty = isatty(STDERR_FILENO);
	b->started_ns = base_now_ns();
	count_resumed(b);
	if (b->resumed > 0)
		say(b, "batch: %zu of %zu tasks are done already (%s/results.jsonl): resuming",
		    b->resumed, b->nshare, b->out);
	int status = schedule(b);
	write_report(b);
	int sum = summary(b);
	return status != 0 ? status : sum;
}

int agent_batch_main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--report") == 0) {
		char err[512];
		if (!batch_report_write(argv[2], err, sizeof(err))) {
			fprintf(stderr, "deskhand batch: %s\n", err);
			return 1;
		}
		return 0;
	}
	struct batch b = {.sigfd = -1};
	const char *out = NULL;
	if (getcwd(b.cwd, sizeof(b.cwd)) == NULL)
		return fprintf(stderr, "deskhand batch: the current directory: %s\n",
		               strerror(errno)), 1;
	int status = parse_args(&b, argc, argv, &out);
	if (status < 0)
		status = load_tasks(&b);
	if (status < 0)
		status = prepare(&b, out);
	if (status < 0)
		status = check_agent_options(&b);
	if (status < 0)
		status = run_batch(&b);
	batch_free(&b);
	return status;
}
