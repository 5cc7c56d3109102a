/*
 * agent/console — the HTTP side: libmicrohttpd, one thread per connection
 * (bounded), and every request's checks in the order a reviewer reads
 * them: Host allowlist, then who is asking (the one-time token, else the
 * session cookie), then for state changes the method, the exact Origin,
 * the CSRF header, the role, the type and size of the body.
 *
 * Blocking is allowed only here, in the connection's own thread: the
 * event stream waits on the console's condition variable, never the agent.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/console/console-internal.h"
#include "base/base.h"
#include "config.h"

/*
 * libmicrohttpd brings GnuTLS and its crypto (about 2 ms at every start of
 * every command) for a console few runs open: it is loaded when one is.
 */
#define CONSOLE_MHD_FUNCS(X, p) \
	X(p, MHD_add_response_header) X(p, MHD_create_response_from_buffer) \
	X(p, MHD_create_response_from_callback) X(p, MHD_destroy_response) \
	X(p, MHD_get_connection_info) X(p, MHD_get_connection_values) \
	X(p, MHD_get_daemon_info) X(p, MHD_lookup_connection_value) \
	X(p, MHD_queue_response) X(p, MHD_start_daemon) X(p, MHD_stop_daemon)

CONSOLE_MHD_FUNCS(BASE_DLIB_STATIC, console_dl_)
static const base_dlib_sym mhd_syms[] = { CONSOLE_MHD_FUNCS(BASE_DLIB_SYM, console_dl_) };
static void *mhd_handle;
static const base_dlib mhd_lib = BASE_DLIB(DESKHAND_MICROHTTPD_SONAME, "libmicrohttpd12",
                                           &mhd_handle, mhd_syms);

#define MHD_add_response_header (*console_dl_MHD_add_response_header)
#define MHD_create_response_from_buffer (*console_dl_MHD_create_response_from_buffer)
#define MHD_create_response_from_callback (*console_dl_MHD_create_response_from_callback)
#define MHD_destroy_response (*console_dl_MHD_destroy_response)
#define MHD_get_connection_info (*console_dl_MHD_get_connection_info)
#define MHD_get_connection_values (*console_dl_MHD_get_connection_values)
#define MHD_get_daemon_info (*console_dl_MHD_get_daemon_info)
#define MHD_lookup_connection_value (*console_dl_MHD_lookup_connection_value)
#define MHD_queue_response (*console_dl_MHD_queue_response)
#define MHD_start_daemon (*console_dl_MHD_start_daemon)
#define MHD_stop_daemon (*console_dl_MHD_stop_daemon)

#define CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " \
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; " \
	"object-src 'none'"

typedef struct request {
	agent_buf body;
	bool too_big;
	bool answer;             /* /api/answer, else /api/control */
} request;

/* Same length and the same bytes, in time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b)
{
	return base_same_secret(a, b, CONSOLE_TOKEN_HEX);
}

static void secure_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
}

/* Queues r with the page's security headers (and Content-Type when
 * type is given), then lets go of it: MHD keeps it while it sends. */
static enum MHD_Result queue_response(struct MHD_Connection *conn, unsigned status,
                                      struct MHD_Response *r, const char *type)
{
	if (type != NULL)
		MHD_add_response_header(r, "Content-Type", type);
	secure_headers(r);
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_bytes(struct MHD_Connection *conn, unsigned status, const char *type,
                                  const void *data, size_t len, bool copy)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data,
		copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	return queue_response(conn, status, r, type);
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *why)
{
	char body[300];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", why);
	if (!cJSON_PrintPreallocated(o, body, sizeof(body), false))
		snprintf(body, sizeof(body), "{\"error\":\"refused\"}");
	cJSON_Delete(o);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body,
	                                                         MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	if (status == 405)
		MHD_add_response_header(r, "Allow", "POST");
	return queue_response(conn, status, r, "application/json");
}

/* ---- who is asking ----------------------------------------------------- */

/* The Host header names this console (DNS rebinding sends another name). */
static bool host_allowed(const agent_console *c, const char *host)
{
	if (host == NULL)
		return false;
	char want[128];
	const char *names[] = {"127.0.0.1", "localhost", "[::1]", c->addr_host};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "%s:%d", names[i], c->port);
		if (strcmp(host, want) == 0)
			return true;
	}
	return false;
}

/* Bad tokens cost: 5 at once, then one every 2 s. Lock held. False: refused now. */
static bool bad_budget_left(agent_console *c)
{
	long long now = base_now_ms();
	c->bad_budget += (double)(now - c->bad_at_ms) / 2000.0;
	if (c->bad_budget > 5)
		c->bad_budget = 5;
	c->bad_at_ms = now;
	return c->bad_budget >= 1;
}

/* The session the cookie names, copied out; ROLE_NONE when none. Lock held. */
static console_role session_of(agent_console *c, const char *cookie, console_session *out)
{
	console_role role = ROLE_NONE;
	for (size_t i = 0; cookie != NULL && i < c->n_sessions; i++)
		if (same_secret(cookie, c->sessions[i].id)) {
			*out = c->sessions[i];
			role = out->role;
		}
	return role;
}

/*
 * GET /?t=TOKEN: the token, good once, becomes a session cookie and the
 * browser is sent on to / so the token leaves the address bar and history.
 */
static enum MHD_Result exchange_token(agent_console *c, struct MHD_Connection *conn,
                                      const char *token)
{
	console_session s = {.role = ROLE_NONE};
	int status = 401;
	pthread_mutex_lock(&c->lock);
	if (!bad_budget_left(c)) {
		status = 429;
	} else {
		for (int r = 0; r < 2; r++)
			if (same_secret(token, c->token[r]) && !c->token_used[r]) {
				c->token_used[r] = true;
				s.role = r ? ROLE_APPROVER : ROLE_OBSERVER;
			}
		if (s.role == ROLE_NONE)
			c->bad_budget -= 1;
		else if (c->n_sessions < CONSOLE_MAX_SESSIONS && console_random_hex(s.id) &&
		         console_random_hex(s.csrf))
			c->sessions[c->n_sessions++] = s;
		else
			s.role = ROLE_NONE, status = 503;
	}
	pthread_mutex_unlock(&c->lock);
	if (s.role == ROLE_NONE)
		return send_error(conn, (unsigned)status, status == 429 ? "too many bad tokens: wait"
		                  : "this link is not valid (or was used already)");
	char cookie[128];
	snprintf(cookie, sizeof(cookie), "dh_s=%s; HttpOnly; SameSite=Strict; Path=/", s.id);
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Set-Cookie", cookie);
	MHD_add_response_header(r, "Location", "/");
	enum MHD_Result ret = queue_response(conn, 303, r, NULL);
	explicit_bzero(cookie, sizeof(cookie));
	return ret;
}

/* ---- the event stream -------------------------------------------------- */

typedef struct stream {
	agent_console *c;
	size_t next;             /* the next timeline event to send */
	uint64_t frame_tick;     /* the last frame or pointer sent */
	agent_buf out;           /* bytes taken from the console, not yet given to MHD */
	size_t out_pos;
	long long last_send_ms;
} stream;

/* Moves what is new into s->out. Lock held. */
static void stream_fill_locked(stream *s)
{
	agent_console *c = s->c;
	if (s->next < c->base) {
		/* Fell behind what is kept: the page starts again from what is. */
		agent_buf_puts(&s->out, "event: reset\ndata: {}\n\n");
		s->next = c->base;
	}
	while (s->next < c->base + c->n_events && s->out.len < 64 * 1024) {
		const console_event *e = &c->events[s->next - c->base];
		agent_buf_puts(&s->out, "event: ev\ndata: ");
		agent_buf_append(&s->out, e->json, e->len);
		agent_buf_puts(&s->out, "\n\n");
		s->next++;
	}
	if (c->frame_tick != s->frame_tick && c->frame_seq != 0) {
		s->frame_tick = c->frame_tick;
		agent_buf_printf(&s->out, "event: frame\ndata: {\"seq\":%llu,\"w\":%d,\"h\":%d,"
		                 "\"sw\":%d,\"sh\":%d,\"px\":%d,\"py\":%d,\"t\":%lld}\n\n",
		                 (unsigned long long)c->frame_seq, c->frame_w, c->frame_h,
		                 c->screen_w, c->screen_h, c->ptr_x, c->ptr_y, base_now_ms());
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	stream *s = cls;
	agent_console *c = s->c;
	if (s->out_pos == s->out.len) {
		agent_buf_reset(&s->out);
		s->out_pos = 0;
		pthread_mutex_lock(&c->lock);
		stream_fill_locked(s);
		while (s->out.len == 0 && !c->closing) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 5;
			if (pthread_cond_timedwait(&c->changed, &c->lock, &ts) != 0)
				break; /* a keep-alive comment shows the stream is alive */
			stream_fill_locked(s);
		}
		bool closing = c->closing;
		pthread_mutex_unlock(&c->lock);
		/* Closing: what the timeline still holds (the last answer, the
		 * end) is sent first, then the stream ends. */
		if ((closing && s->out.len == 0) || s->out.oom)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->out.len == 0)
			agent_buf_puts(&s->out, ": alive\n\n");
	}
	size_t n = s->out.len - s->out_pos;
	if (n > max)
		n = max;
	memcpy(buf, s->out.data + s->out_pos, n);
	s->out_pos += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	stream *s = cls;
	agent_console *c = s->c;
	pthread_mutex_lock(&c->lock);
	c->n_streams--;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	agent_buf_finish(&s->out);
	free(s);
}

static enum MHD_Result send_stream(agent_console *c, struct MHD_Connection *conn)
{
	stream *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return send_error(conn, 503, "out of memory");
	s->c = c;
	pthread_mutex_lock(&c->lock);
	s->next = c->base; /* a new page replays the whole timeline */
	c->n_streams++;    /* stream_free counts it out */
	pthread_mutex_unlock(&c->lock);
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
	                                                           stream_read, s, stream_free);
	if (r == NULL) {
		stream_free(s);
		return MHD_NO;
	}
	return queue_response(conn, 200, r, "text/event-stream");
}

/* ---- plain GETs -------------------------------------------------------- */

static enum MHD_Result send_frame(agent_console *c, struct MHD_Connection *conn)
{
	pthread_mutex_lock(&c->lock);
	size_t len = c->frame_len;
	uint8_t *copy = len ? malloc(len) : NULL;
	if (copy != NULL)
		memcpy(copy, c->frame_png, len);
	pthread_mutex_unlock(&c->lock);
	if (copy == NULL)
		return send_error(conn, 404, "no frame yet");
	struct MHD_Response *r = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(copy);
		return MHD_NO;
	}
	return queue_response(conn, 200, r, "image/png");
}

static enum MHD_Result send_state(struct MHD_Connection *conn, const console_session *s)
{
	char body[160];
	snprintf(body, sizeof(body), "{\"role\":\"%s\",\"csrf\":\"%s\"}",
	         s->role == ROLE_APPROVER ? "approver" : "observer", s->csrf);
	enum MHD_Result r = send_bytes(conn, 200, "application/json", body, strlen(body), true);
	explicit_bzero(body, sizeof(body));
	return r;
}

static enum MHD_Result send_get(agent_console *c, struct MHD_Connection *conn, const char *url,
                                const console_session *s)
{
	if (strcmp(url, "/api/events") == 0)
		return send_stream(c, conn);
	if (strcmp(url, "/api/state") == 0)
		return send_state(conn, s);
	if (strcmp(url, "/frame.png") == 0)
		return send_frame(c, conn);
	for (size_t i = 0; i < console_n_assets; i++)
		if (strcmp(url, console_assets[i].path) == 0)
			return send_bytes(conn, 200, console_assets[i].type, console_assets[i].data,
			                  console_assets[i].len, false);
	return send_error(conn, 404, "not found");
}

/* ---- state changes ----------------------------------------------------- */

static bool is_state_path(const char *url)
{
	return strcmp(url, "/api/answer") == 0 || strcmp(url, "/api/control") == 0;
}

/*
 * What a state change must carry before its body is read; 0 when all is
 * there, else the status to refuse it with (and *why).
 */
static unsigned check_state_change(agent_console *c, struct MHD_Connection *conn,
                                   const char *method, const console_session *s,
                                   const char **why)
{
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *csrf = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Deskhand-CSRF");
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	char own[160];
	snprintf(own, sizeof(own), "http://%s", host != NULL ? host : "");
	if (strcmp(method, "POST") != 0)
		return *why = "state changes are POST only", 405;
	/* SameSite does not tell one local port from another: the Origin does. */
	if (origin == NULL || strcmp(origin, own) != 0)
		return *why = "the Origin is not this console", 403;
	if (csrf == NULL || !same_secret(csrf, s->csrf))
		return *why = "missing or wrong X-Deskhand-CSRF", 403;
	if (s->role != ROLE_APPROVER)
		return *why = "an observer cannot answer or control", 403;
	if (type == NULL || strncmp(type, "application/json", 16) != 0 ||
	    (type[16] != '\0' && type[16] != ';'))
		return *why = "the body must be application/json", 415;
	if (clen != NULL && strtoull(clen, NULL, 10) > CONSOLE_MAX_BODY)
		return *why = "the body is over 64 KiB", 413;
	(void)c;
	return 0;
}

static enum MHD_Result finish_post(agent_console *c, struct MHD_Connection *conn, request *rq)
{
	if (rq->too_big)
		return send_error(conn, 413, "the body is over 64 KiB");
	char err[200] = "";
	int status = 200;
	const char *body = agent_buf_cstr(&rq->body);
	bool ok = rq->answer ? console_answer(c, body, rq->body.len, err, sizeof(err), &status)
	                     : console_control(c, body, rq->body.len, err, sizeof(err), &status);
	if (!ok)
		return send_error(conn, (unsigned)status, err);
	return send_bytes(conn, 200, "application/json", "{\"ok\":true}", 11, false);
}

/* ---- the handler ------------------------------------------------------- */

/* The connection's entry in the table of strangers' connections (base_conns). */
static base_conn *conn_entry(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info != NULL ? info->socket_context : NULL;
}

static enum MHD_Result first_call(agent_console *c, struct MHD_Connection *conn,
                                  const char *url, const char *method, void **con_cls)
{
	if (MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL) > CONSOLE_MAX_HEADERS)
		return send_error(conn, 431, "too many headers");
	if (!host_allowed(c, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
		return send_error(conn, 403, "this Host is not the console's");
	const char *token = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "t");
	if (strcmp(url, "/") == 0 && strcmp(method, "GET") == 0 && token != NULL)
		return exchange_token(c, conn, token);
	const char *cookie = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "dh_s");
	console_session s;
	pthread_mutex_lock(&c->lock);
	console_role role = session_of(c, cookie, &s);
	if (role == ROLE_NONE && cookie != NULL)
		(void)bad_budget_left(c), c->bad_budget -= 1;
	pthread_mutex_unlock(&c->lock);
	if (role == ROLE_NONE)
		return send_error(conn, 401, "open the link deskhand printed");
	/* A session's request: the connection is no longer a stranger's. */
	base_conns_known(c->conns, conn_entry(conn));
	if (!is_state_path(url)) {
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return send_error(conn, 405, "read-only path");
		return send_get(c, conn, url, &s);
	}
	const char *why = "";
	unsigned status = check_state_change(c, conn, method, &s, &why);
	explicit_bzero(&s, sizeof(s));
	if (status != 0)
		return send_error(conn, status, why);
	request *rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return MHD_NO;
	rq->answer = strcmp(url, "/api/answer") == 0;
	*con_cls = rq;
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
	agent_console *c = cls;
	request *rq = *con_cls;
	if (rq == NULL)
		return first_call(c, conn, url, method, con_cls);
	if (*upload_data_size > 0) {
		if (rq->body.len + *upload_data_size > CONSOLE_MAX_BODY)
			rq->too_big = true;
		else
			agent_buf_append(&rq->body, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	return finish_post(c, conn, rq);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	agent_console *c = cls;
	base_conns_ended(c->conns, conn_entry(conn));
	request *rq = *con_cls;
	if (rq != NULL) {
		agent_buf_finish(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/*
 * A small send buffer per connection: a client that stops reading fills it
 * soon, its sends stop making progress, and the idle timeout drops it
 * (with the kernel's default, megabytes would go unread into it first).
 * Each connection is a stranger's (base_conns) until it shows a session:
 * trickling strangers hold at most CONSOLE_MAX_STRANGERS of the
 * CONSOLE_MAX_CONNECTIONS slots, for CONSOLE_IDLE_SECONDS each, so the
 * approver's page always gets in.
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	agent_console *c = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		base_conns_closed(c->conns, *socket_context);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info == NULL)
		return;
	int size = 64 * 1024;
	setsockopt(info->connect_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	*socket_context = base_conns_opened(c->conns, info->connect_fd);
	if (*socket_context == NULL)
		shutdown(info->connect_fd, SHUT_RDWR);
}

bool agent_console_ready(void)
{
	return base_dlib_load(&mhd_lib) || console_fail("%s", base_error());
}

bool console_http_start(agent_console *c, const char *addr, int port, bool v6)
{
	if (!agent_console_ready())
		return console_fail("--console: %s", agent_console_error());
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
	struct sockaddr *sa;
	memset(&sa4, 0, sizeof(sa4));
	memset(&sa6, 0, sizeof(sa6));
	if (v6) {
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &sa6.sin6_addr);
		sa = (struct sockaddr *)&sa6;
	} else {
		sa4.sin_family = AF_INET;
		sa4.sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &sa4.sin_addr);
		sa = (struct sockaddr *)&sa4;
	}
	c->conns = base_conns_new(CONSOLE_MAX_STRANGERS, CONSOLE_IDLE_SECONDS * 1000L);
	if (c->conns == NULL)
		return console_fail("--console: out of memory");
	/* No MHD_USE_ERROR_LOG: nothing of a request (a token) is ever printed. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	                 (v6 ? MHD_USE_IPv6 : 0);
	c->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, c,
		MHD_OPTION_SOCK_ADDR, sa,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONSOLE_MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONSOLE_IDLE_SECONDS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
		MHD_OPTION_NOTIFY_COMPLETED, completed, c,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, c,
		MHD_OPTION_END);
	if (c->daemon == NULL) {
		base_conns_destroy(c->conns);
		c->conns = NULL;
		return console_fail("--console: cannot listen on %s port %d (in use?)", addr, port);
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(c->daemon,
	                                                       MHD_DAEMON_INFO_BIND_PORT);
	c->port = info != NULL && info->port != 0 ? info->port : port;
	return true;
}

/* How long the close waits for open event streams to send their last events. */
#define CONSOLE_DRAIN_MS 1000

void console_http_stop(agent_console *c)
{
	/* Stopping the daemon cuts every connection at once: the streams are
	 * let finish first (closing is set: each sends what it has, then ends),
	 * so the pages see how the run ended, the last answer included. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (CONSOLE_DRAIN_MS % 1000) * 1000000L;
	until.tv_sec += CONSOLE_DRAIN_MS / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&c->lock);
	while (c->daemon != NULL && c->n_streams > 0 &&
	       pthread_cond_timedwait(&c->changed, &c->lock, &until) == 0)
		;
	pthread_mutex_unlock(&c->lock);
	if (c->daemon != NULL)
		MHD_stop_daemon(c->daemon);
	c->daemon = NULL;
	base_conns_destroy(c->conns);   /* every connection is closed by now */
	c->conns = NULL;
}
