/*
 * agent/mcp/server — what a client's messages do: the two eras (an
 * initialize handshake, or the version in each request's _meta), the
 * cheap requests answered at once, tools/call queued for the one worker
 * that takes them to the gate in turn, cancellations, and the ticker that
 * sends progress while a call waits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/mcp/mcp-internal.h"
#include "base/base.h"
#include "config.h"

/* Every version a client may name, newest first. */
static const char *const versions[] = {MCP_V_STATELESS, MCP_V_INITIALIZE, "2025-06-18",
                                       "2025-03-26"};
#define N_VERSIONS (sizeof(versions) / sizeof(versions[0]))

void mcp_send(mcp_sink *k, char *line)
{
	if (line == NULL) {
		fprintf(stderr, "deskhand mcp: out of memory: a message was dropped\n");
		return;
	}
	k->send(k, line);
}

static void answer(mcp_sink *k, const cJSON *id, cJSON *result)
{
	mcp_send(k, mcp_line_result(id, result));
}

static void fail(mcp_sink *k, const cJSON *id, int code, const char *why, cJSON *data)
{
	mcp_send(k, mcp_line_error(id, code, why, data));
}

static cJSON *supported(void)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < N_VERSIONS; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(versions[i]));
	return a;
}

static cJSON *capabilities(void)
{
	cJSON *c = cJSON_CreateObject();
	cJSON *tools = cJSON_AddObjectToObject(c, "tools");
	cJSON_AddFalseToObject(tools, "listChanged");
	return c;
}

static cJSON *server_info(void)
{
	cJSON *i = cJSON_CreateObject();
	cJSON_AddStringToObject(i, "name", "deskhand");
	cJSON_AddStringToObject(i, "title", "deskhand: the desktop, with a human's yes per action");
	cJSON_AddStringToObject(i, "version", DESKHAND_VERSION);
	return i;
}

static const char instructions[] =
	"deskhand drives this Linux desktop. Take a screenshot first: every x, y is a pixel of "
	"the last screenshot. Each desktop action and each code run that reaches the display "
	"waits for a human's yes in deskhand's own terminal or console; a denied or unanswered "
	"one comes back as an error result, and nothing of it ran.";

/* The client's name for the audit log: self-reported, for the record only. */
static void note_client(mcp_server *s, const cJSON *info)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "name"));
	const char *ver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "version"));
	if (name == NULL)
		return;
	snprintf(s->client, sizeof(s->client), "%.80s%s%.40s", name, ver ? " " : "", ver ? ver : "");
}

static void initialize(mcp_server *s, const mcp_msg *m, mcp_sink *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->params, "protocolVersion");
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(m->params, "capabilities");
	if (!cJSON_IsString(v) || (caps != NULL && !cJSON_IsObject(caps))) {
		fail(k, m->id, MCP_INVALID_PARAMS, "initialize needs protocolVersion (a string) "
		     "and capabilities (an object)", NULL);
		return;
	}
	/* The client's version when deskhand speaks it this way, else its own. */
	const char *use = MCP_V_INITIALIZE;
	for (size_t i = 1; i < N_VERSIONS; i++)
		if (strcmp(v->valuestring, versions[i]) == 0)
			use = versions[i];
	const cJSON *el = cJSON_GetObjectItemCaseSensitive(caps, "elicitation");
	pthread_mutex_lock(&s->lock);
	s->initialized = true;
	snprintf(s->version, sizeof(s->version), "%s", use);
	/* An empty elicitation object means form mode (2025-11-25). */
	s->can_elicit = cJSON_IsObject(el) &&
	                (cJSON_GetObjectItemCaseSensitive(el, "form") != NULL ||
	                 cJSON_GetArraySize(el) == 0);
	note_client(s, cJSON_GetObjectItemCaseSensitive(m->params, "clientInfo"));
	pthread_mutex_unlock(&s->lock);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", use);
	cJSON_AddItemToObject(r, "capabilities", capabilities());
	cJSON_AddItemToObject(r, "serverInfo", server_info());
	cJSON_AddStringToObject(r, "instructions", instructions);
	answer(k, m->id, r);
}

static void discover(const mcp_msg *m, mcp_sink *k)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "supportedVersions", supported());
	cJSON_AddItemToObject(r, "capabilities", capabilities());
	cJSON_AddItemToObject(r, "serverInfo", server_info());
	cJSON_AddStringToObject(r, "instructions", instructions);
	answer(k, m->id, r);
}

/*
 * The era of a request: its _meta's version (2026-07-28), or the
 * handshake's. False, answered, when it has neither or names a version
 * deskhand does not speak this way. *stateless: of the 2026-07-28 era.
 */
static bool era_ok(mcp_server *s, const mcp_msg *m, mcp_sink *k, bool *stateless)
{
	*stateless = false;
	if (m->meta_version != NULL) {
		if (strcmp(m->meta_version, MCP_V_STATELESS) == 0) {
			if (m->meta_capabilities == NULL) {
				fail(k, m->id, MCP_INVALID_PARAMS, "_meta needs "
				     "io.modelcontextprotocol/clientCapabilities (an object, may be {})", NULL);
				return false;
			}
			*stateless = true;
			pthread_mutex_lock(&s->lock);
			note_client(s, m->meta_client);
			pthread_mutex_unlock(&s->lock);
			return true;
		}
		pthread_mutex_lock(&s->lock);
		bool same = s->initialized && strcmp(m->meta_version, s->version) == 0;
		pthread_mutex_unlock(&s->lock);
		if (same)
			return true;
		cJSON *data = cJSON_CreateObject();
		cJSON_AddItemToObject(data, "supported", supported());
		cJSON_AddStringToObject(data, "requested", m->meta_version);
		fail(k, m->id, MCP_UNSUPPORTED_VERSION, "unsupported protocol version (versions "
		     "before " MCP_V_STATELESS " are negotiated with initialize)", data);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	bool init = s->initialized;
	pthread_mutex_unlock(&s->lock);
	if (init || m->method == MCP_M_INITIALIZE || m->method == MCP_M_PING ||
	    m->method == MCP_M_DISCOVER)
		return true;
	fail(k, m->id, MCP_INVALID_REQUEST, "not initialized: send initialize first, or name the "
	     "protocol version in params._meta (" MCP_V_STATELESS ")", NULL);
	return false;
}

/* A request id the client already used on this connection is refused. */
static bool id_fresh(mcp_server *s, const mcp_msg *m)
{
	bool fresh = true;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_seen && fresh; i++)
		fresh = strcmp(s->seen[i], m->id_key) != 0;
	if (s->running != NULL && fresh)
		fresh = strcmp(s->running->key, m->id_key) != 0;
	for (mcp_call *c = s->queue; c != NULL && fresh; c = c->next)
		fresh = strcmp(c->key, m->id_key) != 0;
	if (fresh && s->track_ids) {
		if (s->n_seen == s->cap_seen) {
			size_t cap = s->cap_seen ? s->cap_seen * 2 : 64;
			char **grown = realloc(s->seen, cap * sizeof(*grown));
			if (grown != NULL) {
				s->seen = grown;
				s->cap_seen = cap;
			}
		}
		char *copy = s->n_seen < s->cap_seen ? strdup(m->id_key) : NULL;
		if (copy != NULL)
			s->seen[s->n_seen++] = copy;
	}
	pthread_mutex_unlock(&s->lock);
	return fresh;
}

static void queue_call(mcp_server *s, const mcp_msg *m, bool stateless, mcp_sink *k)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
	if (!cJSON_IsString(name)) {
		fail(k, m->id, MCP_INVALID_PARAMS, "tools/call needs \"name\" (a string)", NULL);
		return;
	}
	const agent_mcp_tool *tool = agent_mcp_tool_find(name->valuestring);
	if (tool == NULL) {
		fail(k, m->id, MCP_INVALID_PARAMS, "unknown tool (tools/list names them)", NULL);
		return;
	}
	mcp_call *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		fail(k, m->id, MCP_INTERNAL_ERROR, "out of memory", NULL);
		return;
	}
	snprintf(c->key, sizeof(c->key), "%s", m->id_key);
	c->id = cJSON_Duplicate(m->id, true);
	c->tool = tool;
	c->arguments_bad = args != NULL && !cJSON_IsObject(args) && !cJSON_IsNull(args);
	/* No arguments are no arguments: an empty object. */
	c->arguments = cJSON_IsObject(args) ? cJSON_Duplicate(args, true)
	               : c->arguments_bad ? NULL : cJSON_CreateObject();
	c->progress = m->progress_token ? cJSON_Duplicate(m->progress_token, true) : NULL;
	c->stateless = stateless;
	k->hold(k);
	c->sink = k;
	pthread_mutex_lock(&s->lock);
	if (s->queue_tail != NULL)
		s->queue_tail->next = c;
	else
		s->queue = c;
	s->queue_tail = c;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* notifications/cancelled: a queued call is dropped, the running one withdrawn. */
static void cancelled(mcp_server *s, const mcp_msg *m)
{
	char key[80];
	if (!mcp_id_key(cJSON_GetObjectItemCaseSensitive(m->params, "requestId"), key, sizeof(key)))
		return;
	pthread_mutex_lock(&s->lock);
	if (s->running != NULL && strcmp(s->running->key, key) == 0 && !s->running->withdrawn) {
		s->running->withdrawn = true;
		agent_hands_interrupt();
		mcp_ask_poke(s);
	}
	for (mcp_call **p = &s->queue; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0) {
			(*p)->withdrawn = true;
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

static void request(mcp_server *s, const mcp_msg *m, mcp_sink *k)
{
	bool stateless;
	if (!era_ok(s, m, k, &stateless))
		return;
	if (!id_fresh(s, m)) {
		fail(k, m->id, MCP_INVALID_REQUEST, "this request id was already used", NULL);
		return;
	}
	switch (m->method) {
	case MCP_M_INITIALIZE:
		initialize(s, m, k);
		return;
	case MCP_M_DISCOVER:
		discover(m, k);
		return;
	case MCP_M_PING:
		answer(k, m->id, NULL);
		return;
	case MCP_M_TOOLS_LIST: {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddItemToObject(r, "tools", mcp_tools_list());
		answer(k, m->id, r);
		return;
	}
	case MCP_M_TOOLS_CALL:
		queue_call(s, m, stateless, k);
		return;
	default:
		fail(k, m->id, MCP_METHOD_NOT_FOUND, "method not found (deskhand serves tools)", NULL);
	}
}

bool mcp_server_message(mcp_server *s, const char *text, size_t len, const char *version,
                        mcp_sink *k)
{
	mcp_msg m;
	if (!mcp_msg_parse(text, len, &m)) {
		fail(k, m.id, m.code, m.why, NULL);
		mcp_msg_finish(&m);
		return true;
	}
	/* The transport's version and the message's must agree (HTTP's header). */
	if (version != NULL && m.meta_version != NULL && strcmp(version, m.meta_version) != 0) {
		mcp_msg_finish(&m);
		return false;
	}
	switch (m.kind) {
	case MCP_REQUEST:
		request(s, &m, k);
		break;
	case MCP_NOTIFICATION:
		if (m.method == MCP_M_CANCELLED)
			cancelled(s, &m);
		break;
	case MCP_RESPONSE:
		pthread_mutex_lock(&s->lock);
		mcp_ask_response(s, &m);
		pthread_mutex_unlock(&s->lock);
		break;
	default:
		break;
	}
	mcp_msg_finish(&m);
	return true;
}

/* ---- the worker and the ticker ---------------------------------------- */

static void *worker_main(void *arg)
{
	mcp_server *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->queue == NULL && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		if (s->stopping)
			break;
		mcp_call *c = s->queue;
		s->queue = c->next;
		if (s->queue == NULL)
			s->queue_tail = NULL;
		c->next = NULL;
		s->running = c;
		pthread_mutex_unlock(&s->lock);
		cJSON *result = mcp_call_run(s, c);
		pthread_mutex_lock(&s->lock);
		s->running = NULL;
		bool withdrawn = c->withdrawn;
		pthread_mutex_unlock(&s->lock);
		/* After a withdrawal the client expects no answer. */
		if (result != NULL && !withdrawn)
			answer(c->sink, c->id, result);
		else
			cJSON_Delete(result);
		c->sink->done(c->sink);
		mcp_call_free(c);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Progress while a call is pending, for clients that asked (progressToken). */
static void *ticker_main(void *arg)
{
	mcp_server *s = arg;
	unsigned long n = 0;
	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
		mcp_call *c = s->running;
		if (s->stopping || c == NULL || c->progress == NULL || c->withdrawn)
			continue;
		cJSON *p = cJSON_CreateObject();
		cJSON_AddItemToObject(p, "progressToken", mcp_id_copy(c->progress));
		cJSON_AddNumberToObject(p, "progress", (double)++n);
		cJSON_AddStringToObject(p, "message", s->question_open
		                        ? "waiting for a human's answer in deskhand's terminal or console"
		                        : "running");
		mcp_send(c->sink, mcp_line_notification("notifications/progress", p));
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

bool mcp_server_init(mcp_server *s)
{
	if (pipe2(s->wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
		return false;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	s->ask_answer = -1;
	return true;
}

void mcp_server_start(mcp_server *s)
{
	mcp_ask_attach(s, NULL);
	s->threads = pthread_create(&s->worker, NULL, worker_main, s) == 0;
	if (s->threads && pthread_create(&s->ticker, NULL, ticker_main, s) != 0) {
		mcp_server_stop(s);
		s->threads = false;
	}
}

void mcp_server_stop(mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	if (s->running != NULL && !s->running->withdrawn && !s->running->stopped) {
		s->running->stopped = true;
		agent_hands_interrupt();
		mcp_ask_poke(s);
	}
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->threads) {
		pthread_join(s->worker, NULL);
		pthread_join(s->ticker, NULL);
		s->threads = false;
	}
	/* Calls that never ran are answered so: the client waits for nothing. */
	while (s->queue != NULL) {
		mcp_call *c = s->queue;
		s->queue = c->next;
		if (!c->withdrawn)
			answer(c->sink, c->id, mcp_call_not_run("deskhand mcp was stopped before it "
			                                        "ran"));
		c->sink->done(c->sink);
		mcp_call_free(c);
	}
	s->queue_tail = NULL;
	mcp_ask_detach(s);
}

bool mcp_server_ended(mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	bool ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	return ended;
}

void mcp_server_destroy(mcp_server *s)
{
	if (s->wake_pipe[0] < 0)
		return; /* never initialised */
	for (size_t i = 0; i < s->n_seen; i++)
		free(s->seen[i]);
	free(s->seen);
	close(s->wake_pipe[0]);
	close(s->wake_pipe[1]);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
}
