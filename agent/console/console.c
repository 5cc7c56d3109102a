/*
 * agent/console — start and stop, the timeline, the questions (the
 * terminal's remote), the approver's answers and controls (see console.h
 * and, for the locking contract, console-internal.h).
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "agent/console/console-internal.h"
#include "base/base.h"

BASE_ERROR_TEXT(, console_err, agent_console_error, console_fail)

bool console_random_hex(char out[CONSOLE_TOKEN_HEX + 1])
{
	return base_random_hex(out, CONSOLE_TOKEN_HEX / 2) ||
	       console_fail("getrandom: %s", strerror(errno));
}

__attribute__((format(printf, 1, 2))) static char *format(const char *fmt, ...);
static char *format(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = agent_vformat(fmt, ap);
	va_end(ap);
	return s;
}

/* ---- the timeline ------------------------------------------------------ */

void console_event_push_locked(agent_console *c, char *json)
{
	if (json == NULL)
		return;
	size_t len = strlen(json);
	/* Old events go first: a long session's memory stays bounded. */
	while (c->n_events > 0 && c->bytes + len > CONSOLE_TIMELINE_BYTES) {
		c->bytes -= c->events[0].len;
		free(c->events[0].json);
		memmove(c->events, c->events + 1, (c->n_events - 1) * sizeof(*c->events));
		c->n_events--;
		c->base++;
	}
	if (c->n_events == c->cap_events) {
		size_t cap = c->cap_events ? c->cap_events * 2 : 256;
		console_event *e = realloc(c->events, cap * sizeof(*e));
		if (e == NULL) {
			free(json);
			return;
		}
		c->events = e;
		c->cap_events = cap;
	}
	c->events[c->n_events++] = (console_event){json, len};
	c->bytes += len;
	pthread_cond_broadcast(&c->changed);
}

void console_event_push(agent_console *c, char *json)
{
	pthread_mutex_lock(&c->lock);
	console_event_push_locked(c, json);
	pthread_mutex_unlock(&c->lock);
}

/* o[key] = text as valid UTF-8 (what a program printed may not be). */
static void add_valid(cJSON *o, const char *key, const char *text)
{
	char *valid = agent_utf8_sanitize(text, strlen(text), NULL);
	cJSON_AddStringToObject(o, key, valid ? valid : "");
	free(valid);
}

/* {"type": type, "text": text} */
static void push_text(agent_console *c, const char *type, const char *text)
{
	if (c == NULL)
		return;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", type);
	add_valid(o, "text", text);
	console_event_push(c, cJSON_PrintUnformatted(o));
	cJSON_Delete(o);
}

void agent_console_task(agent_console *c, const char *text)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = false; /* a stop ends one task, not the session */
	pthread_mutex_unlock(&c->lock);
	push_text(c, "task", text);
}

void agent_console_model_text(agent_console *c, const char *text)
{
	if (text != NULL && text[0] != '\0')
		push_text(c, "text", text);
}

void agent_console_audit_line(void *console, const char *line, size_t len)
{
	agent_console *c = console;
	if (c == NULL || len < 2)
		return;
	/* The record as written, wrapped: the page shows the same facts as the log. */
	agent_buf b = {0};
	agent_buf_puts(&b, "{\"type\":\"audit\",\"record\":");
	agent_buf_append(&b, line, line[len - 1] == '\n' ? len - 1 : len);
	agent_buf_puts(&b, "}");
	if (b.oom) {
		agent_buf_finish(&b);
		return;
	}
	console_event_push(c, agent_buf_steal(&b));
}

/* ---- questions: the terminal's remote ---------------------------------- */

static void drain_fd(int fd)
{
	uint64_t v;
	while (read(fd, &v, sizeof(v)) > 0)
		;
}

static void remote_open(void *ctx, const char *id, const char *question, const char *choices,
                        const agent_term_ask_info *info)
{
	agent_console *c = ctx;
	drain_fd(c->answer_fd);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "question");
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "question", question);
	cJSON_AddStringToObject(o, "choices", choices);
	if (info != NULL && info->edit_text != NULL) {
		add_valid(o, "edit", info->edit_text);
		if (info->language != NULL)
			cJSON_AddStringToObject(o, "language", info->language);
	}
	cJSON *t = cJSON_AddArrayToObject(o, "targets");
	for (int i = 0; info != NULL && i < info->n_targets && i < 2; i++) {
		cJSON *pt = cJSON_CreateArray();
		cJSON_AddItemToArray(pt, cJSON_CreateNumber(info->x[i]));
		cJSON_AddItemToArray(pt, cJSON_CreateNumber(info->y[i]));
		cJSON_AddItemToArray(t, pt);
	}
	pthread_mutex_lock(&c->lock);
	c->qid++;
	c->q_open = true;
	c->q_answered = false;
	free(c->q_edit);
	c->q_edit = NULL;
	snprintf(c->q_choices, sizeof(c->q_choices), "%s", choices);
	cJSON_AddNumberToObject(o, "qid", (double)c->qid);
	console_event_push_locked(c, cJSON_PrintUnformatted(o));
	pthread_mutex_unlock(&c->lock);
	cJSON_Delete(o);
}

static void remote_details(void *ctx, const char *id, const char *text)
{
	agent_console *c = ctx;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "details");
	cJSON_AddStringToObject(o, "id", id);
	add_valid(o, "text", text);
	console_event_push(c, cJSON_PrintUnformatted(o));
	cJSON_Delete(o);
}

/* Tells every page who settled question qid, and how. Lock held. */
static void push_answered_locked(agent_console *c, agent_term_answer a, const char *who)
{
	char *json = format("{\"type\":\"answered\",\"qid\":%llu,\"answer\":\"%s\","
	                          "\"who\":\"%s\"}", (unsigned long long)c->qid,
	                          agent_term_answer_name(a), who);
	console_event_push_locked(c, json);
}

static bool remote_settle(void *ctx, agent_term_answer *a, char **edit, char *who, size_t wholen)
{
	agent_console *c = ctx;
	bool console_won;
	pthread_mutex_lock(&c->lock);
	console_won = c->q_answered;
	if (console_won) {
		*a = c->q_answer;
		*edit = c->q_edit;
		c->q_edit = NULL;
		snprintf(who, wholen, "%s", c->q_who);
	} else {
		push_answered_locked(c, *a, who); /* who settled it: the terminal or another place */
	}
	c->q_open = false;
	c->q_answered = false;
	pthread_mutex_unlock(&c->lock);
	return console_won;
}

/* The approver answers question qid. Lock held. False: not open (someone was first). */
static bool answer_locked(agent_console *c, uint64_t qid, agent_term_answer a, char *edit,
                          const char *who)
{
	if (!c->q_open || c->q_answered || qid != c->qid) {
		free(edit);
		return false;
	}
	c->q_answered = true;
	c->q_answer = a;
	c->q_edit = edit;
	snprintf(c->q_who, sizeof(c->q_who), "%s", who);
	push_answered_locked(c, a, who);
	uint64_t one = 1;
	ssize_t w = write(c->answer_fd, &one, sizeof(one));
	(void)w; /* an eventfd write only fails at its maximum count */
	return true;
}

bool console_answer(agent_console *c, const char *body, size_t len, char *err, size_t errlen,
                    int *status)
{
	cJSON *o = cJSON_ParseWithLength(body, len);
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "qid");
	const char *ans = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "answer"));
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "text"));
	bool ok = false;
	*status = 400;
	if (!cJSON_IsNumber(q) || ans == NULL || strlen(ans) != 1) {
		snprintf(err, errlen, "want {\"qid\": N, \"answer\": \"y|n|e|d\"}");
		goto out;
	}
	static const struct { char key; agent_term_answer a; } keys[] = {
		{'y', AGENT_ANSWER_YES}, {'n', AGENT_ANSWER_NO},
		{'e', AGENT_ANSWER_EDIT}, {'d', AGENT_ANSWER_DETAILS},
	};
	agent_term_answer a = AGENT_ANSWER_NO;
	bool known = false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].key == ans[0]) {
			a = keys[i].a;
			known = true;
		}
	if (!known || (a == AGENT_ANSWER_EDIT && text == NULL)) {
		snprintf(err, errlen, "unknown answer, or an edit without its text");
		goto out;
	}
	char *edit = a == AGENT_ANSWER_EDIT ? strdup(text) : NULL;
	pthread_mutex_lock(&c->lock);
	bool offered = strchr(c->q_choices, ans[0]) != NULL;
	ok = offered && answer_locked(c, (uint64_t)q->valuedouble, a, edit, "console:approver");
	if (!offered)
		free(edit);
	pthread_mutex_unlock(&c->lock);
	if (!ok) {
		*status = 409;
		snprintf(err, errlen, "that question is no longer open (answered elsewhere)");
	}
out:
	cJSON_Delete(o);
	return ok;
}

/* ---- control ----------------------------------------------------------- */

static void push_state_locked(agent_console *c, const char *what)
{
	char *json = format("{\"type\":\"state\",\"what\":\"%s\",\"paused\":%s,"
	                          "\"took_over\":%s}", what, c->paused ? "true" : "false",
	                          c->took_over ? "true" : "false");
	console_event_push_locked(c, json);
}

bool console_control(agent_console *c, const char *body, size_t len, char *err, size_t errlen,
                     int *status)
{
	cJSON *o = cJSON_ParseWithLength(body, len);
	const char *act = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "action"));
	bool ok = true;
	pthread_mutex_lock(&c->lock);
	if (act != NULL && strcmp(act, "pause") == 0) {
		c->paused = true;
	} else if (act != NULL && strcmp(act, "resume") == 0) {
		c->paused = false;
	} else if (act != NULL && strcmp(act, "takeover") == 0) {
		c->paused = true;
		c->took_over = true;
	} else if (act != NULL && strcmp(act, "stop") == 0) {
		/* The kill switch: the batch ends, the model's request is cancelled,
		 * an open question is answered no. */
		c->stop = true;
		c->paused = false;
		if (c->cancel != NULL)
			*c->cancel = 1;
		answer_locked(c, c->qid, AGENT_ANSWER_NO, NULL, "console:approver (stop)");
	} else {
		ok = false;
		*status = 400;
		snprintf(err, errlen, "want {\"action\": \"pause|resume|takeover|stop\"}");
	}
	if (ok)
		push_state_locked(c, act);
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	cJSON_Delete(o);
	return ok;
}

agent_console_hold agent_console_hold_here(agent_console *c)
{
	if (c == NULL)
		return AGENT_CONSOLE_GO;
	pthread_mutex_lock(&c->lock);
	bool waited = false;
	while (c->paused && !c->stop && !c->closing && (c->cancel == NULL || !*c->cancel)) {
		if (!waited)
			push_state_locked(c, "held");
		waited = true;
		/* Ctrl-C comes by a flag, not a broadcast: look again now and then. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&c->changed, &c->lock, &ts);
	}
	agent_console_hold h = AGENT_CONSOLE_GO;
	if (c->stop)
		h = AGENT_CONSOLE_STOP;
	else if (c->took_over && !c->paused)
		h = AGENT_CONSOLE_TOOK_OVER;
	if (h != AGENT_CONSOLE_STOP && !c->paused)
		c->took_over = false;
	if (h == AGENT_CONSOLE_STOP)
		c->stop = false; /* said once; the agent stops its batch */
	pthread_mutex_unlock(&c->lock);
	return h;
}

/* ---- start and stop ---------------------------------------------------- */

static bool make_tokens(agent_console *c, const char *addr, bool v6)
{
	if (!console_random_hex(c->token[0]) || !console_random_hex(c->token[1]))
		return false;
	snprintf(c->addr_host, sizeof(c->addr_host), v6 ? "[%s]" : "%s", addr);
	for (int r = 0; r < 2; r++)
		snprintf(c->url[r], sizeof(c->url[r]), "http://%s:%d/?t=%s",
		         c->remote ? c->addr_host : (v6 ? "[::1]" : "127.0.0.1"), c->port,
		         c->token[r]);
	return true;
}

/*
 * The console's threads (the HTTP daemon's, one per connection, the
 * capture) are started with the terminal's signals blocked, which they
 * inherit: Ctrl-C, a hang-up or a resize then always reach the main
 * thread, where the question waiting at the terminal sees them. A SIGINT
 * taken by one of these threads interrupted nothing there.
 */
static bool start_threads(agent_console *c, const char *addr, int port, bool v6)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	bool ok = console_http_start(c, addr, port, v6) && make_tokens(c, addr, v6) &&
	          (c->display_name == NULL || console_frames_start(c));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

agent_console *agent_console_start(const agent_console_config *cfg)
{
	base_listen at;
	if (!base_listen_parse(cfg->listen, &at)) {
		console_fail("--console %s: want [ADDR:]PORT, the address numeric IPv4 or IPv6",
		             cfg->listen);
		return NULL;
	}
	const char *addr = at.addr;
	int port = at.port;
	bool v6 = at.v6;
	if (at.wildcard) {
		/* The Host header is checked against the address: it must be one a browser uses. */
		console_fail("--console %s: give the address browsers will use, not a wildcard",
		             cfg->listen);
		return NULL;
	}
	bool remote = !at.loopback;
	if (remote && !cfg->allow_remote) {
		console_fail("--console %s is not a loopback address: anyone who can reach it "
		             "could try the console; add --console-allow-remote (and put TLS in "
		             "front) if that is meant", cfg->listen);
		return NULL;
	}
	agent_console *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		console_fail("out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->changed, NULL);
	c->remote = remote;
	c->cancel = cfg->cancel;
	c->bad_budget = 5;
	c->bad_at_ms = base_now_ms();
	c->max_fps = cfg->max_fps > 0 ? cfg->max_fps : 10;
	c->frame_max_w = cfg->frame_max_w > 0 ? cfg->frame_max_w : 1280;
	c->frame_max_h = cfg->frame_max_h > 0 ? cfg->frame_max_h : 800;
	c->answer_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->remote_if = (agent_term_remote){
		.ctx = c, .fd = c->answer_fd, .cancel = cfg->cancel, .open = remote_open, .settle = remote_settle,
		.details = remote_details,
	};
	if (c->answer_fd < 0) {
		console_fail("eventfd: %s", strerror(errno));
		goto fail;
	}
	if (cfg->display != NULL && (c->display_name = strdup(cfg->display)) == NULL) {
		console_fail("out of memory");
		goto fail;
	}
	if (!start_threads(c, addr, port, v6))
		goto fail;
	return c;
fail:
	agent_console_destroy(c);
	return NULL;
}

void agent_console_destroy(agent_console *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	console_frames_stop(c);
	console_http_stop(c);
	if (c->answer_fd >= 0)
		close(c->answer_fd);
	for (size_t i = 0; i < c->n_events; i++)
		free(c->events[i].json);
	free(c->events);
	free(c->frame_png);
	free(c->q_edit);
	free(c->display_name);
	pthread_cond_destroy(&c->changed);
	pthread_mutex_destroy(&c->lock);
	/* The tokens and sessions must not outlive the console in memory. */
	explicit_bzero(c, sizeof(*c));
	free(c);
}

int agent_console_port(const agent_console *c)
{
	return c->port;
}

bool agent_console_is_remote(const agent_console *c)
{
	return c->remote;
}

const char *agent_console_url(const agent_console *c, bool approver)
{
	return c->url[approver ? 1 : 0];
}

const agent_term_remote *agent_console_remote(agent_console *c)
{
	return &c->remote_if;
}
