/*
 * agent/mcp/http — MCP's Streamable HTTP transport (deskhand mcp --http):
 * one endpoint, /mcp, POST only; a message's answer comes back as JSON
 * when it is ready at once, or as an event stream when it is a call
 * that waits (its progress, an elicitation and its result travel there).
 *
 * The console's rules: loopback unless --http-allow-remote; a 128-bit
 * bearer token, told once on standard error and kept in a 0600 file; the
 * Host header allowlisted and an Origin, when sent, exactly this server's
 * (DNS rebinding); no CORS; bounded bodies, headers, connections and
 * request rate. libmicrohttpd serves each connection in its own thread;
 * the calls themselves go to the server's one worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/mcp/mcp-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "config.h"

/* libmicrohttpd (and GnuTLS under it) is loaded when the server starts:
 * every other command would pay ~2 ms at start for it. */
#define MCP_MHD_FUNCS(X, p) \
	X(p, MHD_add_response_header) X(p, MHD_create_response_from_buffer) \
	X(p, MHD_create_response_from_callback) X(p, MHD_destroy_response) \
	X(p, MHD_get_connection_info) X(p, MHD_get_connection_values) X(p, MHD_get_daemon_info) \
	X(p, MHD_lookup_connection_value) X(p, MHD_queue_response) \
	X(p, MHD_start_daemon) X(p, MHD_stop_daemon)

MCP_MHD_FUNCS(BASE_DLIB_STATIC, mcp_dl_)
static const base_dlib_sym mhd_syms[] = { MCP_MHD_FUNCS(BASE_DLIB_SYM, mcp_dl_) };
static void *mhd_handle;
static const base_dlib mhd_lib = BASE_DLIB(DESKHAND_MICROHTTPD_SONAME, "libmicrohttpd12",
                                           &mhd_handle, mhd_syms);

#define MHD_add_response_header (*mcp_dl_MHD_add_response_header)
#define MHD_create_response_from_buffer (*mcp_dl_MHD_create_response_from_buffer)
#define MHD_create_response_from_callback (*mcp_dl_MHD_create_response_from_callback)
#define MHD_destroy_response (*mcp_dl_MHD_destroy_response)
#define MHD_get_connection_info (*mcp_dl_MHD_get_connection_info)
#define MHD_get_connection_values (*mcp_dl_MHD_get_connection_values)
#define MHD_get_daemon_info (*mcp_dl_MHD_get_daemon_info)
#define MHD_lookup_connection_value (*mcp_dl_MHD_lookup_connection_value)
#define MHD_queue_response (*mcp_dl_MHD_queue_response)
#define MHD_start_daemon (*mcp_dl_MHD_start_daemon)
#define MHD_stop_daemon (*mcp_dl_MHD_stop_daemon)

#define TOKEN_BYTES 16
#define TOKEN_HEX (2 * TOKEN_BYTES)
#define MAX_CONNECTIONS 32
#define MAX_HEADERS 64
#define IDLE_SECONDS 600
/* Of the connections, those without a valid token (base_conns): at most
 * this many, each for at most STRANGER_SECONDS however it trickles, so
 * slow strangers cannot lock the host out. */
#define MAX_STRANGERS 8
#define STRANGER_SECONDS 10
#define RATE_PER_S 50.0     /* requests a second, sustained */
#define RATE_BURST 200.0

typedef struct http_server {
	mcp_server *s;
	struct MHD_Daemon *daemon;
	base_conns *conns;        /* which connections are strangers' */
	base_listen at;
	char token[TOKEN_HEX + 1];
	char hosts[4][112];       /* the Host values this server answers to */
	char origins[4][112];     /* the Origins a page of its own would send */
	pthread_mutex_t lock;     /* the rate budgets */
	double budget, bad_budget;
	long long budget_at, bad_at;
} http_server;

/* The answers still on their way (streams not yet sent whole): the stop
 * waits for them, a bounded time, before it closes every connection. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_gone = PTHREAD_COND_INITIALIZER;
static int live_sinks;

static void live_add(int n)
{
	pthread_mutex_lock(&live_lock);
	live_sinks += n;
	pthread_cond_broadcast(&live_gone);
	pthread_mutex_unlock(&live_lock);
}

/* Waits until every answer was sent, or ms went by. */
static void live_drain(long ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&live_lock);
	while (live_sinks > 0 && pthread_cond_timedwait(&live_gone, &live_lock, &until) == 0) {
	}
	pthread_mutex_unlock(&live_lock);
}

/* One POST's messages back: collected, then sent as JSON or streamed. */
typedef struct http_sink {
	mcp_sink base;
	pthread_mutex_t lock;
	pthread_cond_t more;
	agent_buf out;            /* SSE events (or the one JSON answer) not yet sent */
	size_t pos;
	int lines;
	bool done;
	int refs;
} http_sink;

static void sink_release(mcp_sink *k)
{
	http_sink *h = (http_sink *)k;
	pthread_mutex_lock(&h->lock);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&h->lock);
	if (!last)
		return;
	agent_buf_finish(&h->out);
	pthread_cond_destroy(&h->more);
	pthread_mutex_destroy(&h->lock);
	free(h);
	live_add(-1);
}

static void sink_hold(mcp_sink *k)
{
	http_sink *h = (http_sink *)k;
	pthread_mutex_lock(&h->lock);
	h->refs++;
	pthread_mutex_unlock(&h->lock);
}

static void sink_send(mcp_sink *k, char *line)
{
	http_sink *h = (http_sink *)k;
	pthread_mutex_lock(&h->lock);
	if (!h->done) {
		agent_buf_puts(&h->out, "event: message\ndata: ");
		agent_buf_puts(&h->out, line);
		agent_buf_puts(&h->out, "\n\n");
		h->lines++;
		pthread_cond_broadcast(&h->more);
	}
	pthread_mutex_unlock(&h->lock);
	free(line);
}

static void sink_done(mcp_sink *k)
{
	http_sink *h = (http_sink *)k;
	pthread_mutex_lock(&h->lock);
	h->done = true;
	pthread_cond_broadcast(&h->more);
	pthread_mutex_unlock(&h->lock);
}

static http_sink *sink_new(void)
{
	http_sink *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->base = (mcp_sink){.send = sink_send, .done = sink_done, .hold = sink_hold,
	                     .release = sink_release};
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->more, NULL);
	agent_buf_init(&h->out);
	h->refs = 1;
	live_add(1);
	return h;
}

/* ---- responses ---------------------------------------------------------- */

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status,
                             struct MHD_Response *r, const char *type)
{
	if (r == NULL)
		return MHD_NO;
	if (type != NULL)
		MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *why)
{
	char *line = mcp_line_error(NULL, MCP_INVALID_REQUEST, why, NULL);
	const char *body = line != NULL ? line : "{}";
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
	                                                         MHD_RESPMEM_MUST_COPY);
	free(line);
	if (r != NULL && status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"deskhand mcp\"");
	if (r != NULL && status == 405)
		MHD_add_response_header(r, "Allow", "POST");
	return queue(conn, status, r, "application/json");
}

/* The stream of a call that waits: its lines as they come, until it is over. */
static ssize_t stream_read(void *cls, uint64_t at, char *buf, size_t max)
{
	(void)at;
	http_sink *h = cls;
	pthread_mutex_lock(&h->lock);
	while (h->pos == h->out.len && !h->done) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 15;
		if (pthread_cond_timedwait(&h->more, &h->lock, &until) != 0 && h->pos == h->out.len) {
			/* A comment keeps proxies and clients from timing the stream out. */
			agent_buf_puts(&h->out, ": waiting\n\n");
		}
	}
	size_t n = h->out.len - h->pos;
	if (n == 0) {
		pthread_mutex_unlock(&h->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (n > max)
		n = max;
	memcpy(buf, h->out.data + h->pos, n);
	h->pos += n;
	pthread_mutex_unlock(&h->lock);
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	sink_release(cls);
}

/* The answer to one POSTed message: at once as JSON, 202 for none, or a stream. */
static enum MHD_Result answer(http_server *hs, struct MHD_Connection *conn, const char *body,
                              size_t len)
{
	http_sink *h = sink_new();
	if (h == NULL)
		return refuse(conn, 503, "out of memory");
	const char *ver = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	if (!mcp_server_message(hs->s, body, len, ver, &h->base)) {
		sink_release(&h->base);
		return refuse(conn, 400, "MCP-Protocol-Version differs from the version in _meta");
	}
	pthread_mutex_lock(&h->lock);
	/* A call (held, or already over with more than its answer) streams. */
	bool waits = (h->refs > 1 && !h->done) || h->lines > 1;
	int lines = h->lines;
	pthread_mutex_unlock(&h->lock);
	if (waits) {
		struct MHD_Response *r = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, h, stream_free);
		if (r == NULL)
			sink_release(&h->base);
		return queue(conn, 200, r, "text/event-stream");
	}
	enum MHD_Result ret;
	if (lines == 0) {
		ret = queue(conn, 202, MHD_create_response_from_buffer(0, (void *)"",
		                                                       MHD_RESPMEM_PERSISTENT), NULL);
	} else {
		/* One event: its data line is the JSON answer. */
		const char *data = strstr(h->out.data, "data: ") + 6;
		size_t n = (size_t)(strstr(data, "\n\n") - data);
		ret = queue(conn, 200, MHD_create_response_from_buffer(n, (void *)data,
		                                                       MHD_RESPMEM_MUST_COPY),
		            "application/json");
	}
	sink_release(&h->base);
	return ret;
}

/* ---- who is asking -------------------------------------------------------- */

static bool listed(const char *v, const char (*names)[112])
{
	for (size_t i = 0; v != NULL && i < 4; i++)
		if (strcmp(v, names[i]) == 0)
			return true;
	return false;
}

/* Tokens run out: RATE_BURST at once, RATE_PER_S after. False: refused now. */
static bool spend(http_server *hs, double *budget, long long *at, double per_s, double burst)
{
	pthread_mutex_lock(&hs->lock);
	long long now = base_now_ms();
	*budget += (double)(now - *at) / 1000.0 * per_s;
	if (*budget > burst)
		*budget = burst;
	*at = now;
	bool ok = *budget >= 1;
	if (ok)
		*budget -= 1;
	pthread_mutex_unlock(&hs->lock);
	return ok;
}

static bool bearer_ok(http_server *hs, const char *auth)
{
	static const char prefix[] = "Bearer ";
	return auth != NULL && strncmp(auth, prefix, sizeof(prefix) - 1) == 0 &&
	       base_same_secret(auth + sizeof(prefix) - 1, hs->token, TOKEN_HEX);
}

/* The version header, when sent, is one deskhand speaks. */
static bool version_ok(const char *v)
{
	static const char *const known[] = {MCP_V_STATELESS, MCP_V_INITIALIZE, "2025-06-18",
	                                    "2025-03-26"};
	if (v == NULL)
		return true;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(v, known[i]) == 0)
			return true;
	return false;
}

/* Every check a request passes before its body is read; 0: it may go on. */
static unsigned check(http_server *hs, struct MHD_Connection *conn, const char *url,
                      const char *method, const char **why)
{
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *ver = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	if (MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL) > MAX_HEADERS)
		return *why = "too many headers", 431;
	if (!listed(host, hs->hosts))
		return *why = "this Host is not deskhand's", 403;
	if (origin != NULL && !listed(origin, hs->origins))
		return *why = "this Origin may not call deskhand", 403;
	if (!spend(hs, &hs->budget, &hs->budget_at, RATE_PER_S, RATE_BURST))
		return *why = "too many requests", 429;
	if (!bearer_ok(hs, auth)) {
		if (!spend(hs, &hs->bad_budget, &hs->bad_at, 0.5, 5))
			return *why = "too many bad tokens", 429;
		return *why = "a bearer token is needed (deskhand printed it at start)", 401;
	}
	if (strcmp(url, "/mcp") != 0)
		return *why = "not found: the endpoint is /mcp", 404;
	if (strcmp(method, "POST") != 0)
		return *why = "POST only (deskhand sends nothing unasked)", 405;
	if (type == NULL || strncmp(type, "application/json", 16) != 0)
		return *why = "Content-Type must be application/json", 415;
	if (!version_ok(ver))
		return *why = "unsupported MCP-Protocol-Version", 400;
	return 0;
}

/* ---- the handler --------------------------------------------------------- */

typedef struct request {
	agent_buf body;
	bool too_big;
} request;

static base_conn *conn_entry(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info != NULL ? info->socket_context : NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
	(void)version;
	http_server *hs = cls;
	request *rq = *con_cls;
	if (rq == NULL) {
		const char *why = "";
		unsigned status = check(hs, conn, url, method, &why);
		if (status != 0)
			return refuse(conn, status, why);
		base_conns_known(hs->conns, conn_entry(conn));
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO;
		agent_buf_init(&rq->body);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (rq->body.len + *upload_data_size > MCP_MAX_MESSAGE)
			rq->too_big = true;
		else
			agent_buf_append(&rq->body, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rq->too_big || rq->body.oom)
		return refuse(conn, 413, "the message is too large");
	return answer(hs, conn, rq->body.data != NULL ? rq->body.data : "", rq->body.len);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	http_server *hs = cls;
	base_conns_ended(hs->conns, conn_entry(conn));
	request *rq = *con_cls;
	if (rq != NULL) {
		agent_buf_finish(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- start, tell, serve --------------------------------------------------- */

/* Each connection a stranger's until its request carries the token. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	http_server *hs = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		base_conns_closed(hs->conns, *socket_context);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info == NULL)
		return;
	*socket_context = base_conns_opened(hs->conns, info->connect_fd);
	if (*socket_context == NULL)
		shutdown(info->connect_fd, SHUT_RDWR);
}

static bool start(http_server *hs)
{
	struct sockaddr_in sa4 = {0};
	struct sockaddr_in6 sa6 = {0};
	struct sockaddr *sa = (struct sockaddr *)&sa4;
	if (hs->at.v6) {
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)hs->at.port);
		inet_pton(AF_INET6, hs->at.addr, &sa6.sin6_addr);
		sa = (struct sockaddr *)&sa6;
	} else {
		sa4.sin_family = AF_INET;
		sa4.sin_port = htons((uint16_t)hs->at.port);
		inet_pton(AF_INET, hs->at.addr, &sa4.sin_addr);
	}
	hs->conns = base_conns_new(MAX_STRANGERS, STRANGER_SECONDS * 1000L);
	if (hs->conns == NULL)
		return false;
	/* No error log: nothing of a request (a token) is ever printed. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	                 (hs->at.v6 ? MHD_USE_IPv6 : 0);
	hs->daemon = MHD_start_daemon(flags, (uint16_t)hs->at.port, NULL, NULL, handle, hs,
		MHD_OPTION_SOCK_ADDR, sa,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_SECONDS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
		MHD_OPTION_NOTIFY_COMPLETED, completed, hs,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, hs,
		MHD_OPTION_END);
	if (hs->daemon == NULL)
		return false;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(hs->daemon,
	                                                       MHD_DAEMON_INFO_BIND_PORT);
	if (info != NULL && info->port != 0)
		hs->at.port = info->port;
	const char *names[4] = {"127.0.0.1", "localhost", "[::1]", hs->at.addr};
	char bracketed[70];
	if (hs->at.v6) {
		snprintf(bracketed, sizeof(bracketed), "[%s]", hs->at.addr);
		names[3] = bracketed;
	}
	for (int i = 0; i < 4; i++) {
		snprintf(hs->hosts[i], sizeof(hs->hosts[i]), "%s:%d", names[i], hs->at.port);
		snprintf(hs->origins[i], sizeof(hs->origins[i]), "http://%s:%d", names[i],
		         hs->at.port);
	}
	return true;
}

/* The URL and the token: told once on standard error, and kept 0600 in `file`. */
static void tell(http_server *hs, const char *file)
{
	char url[128];
	snprintf(url, sizeof(url), "http://%s/mcp", hs->hosts[hs->at.loopback ? 0 : 3]);
	agent_term_notice(hs->s->term, "deskhand mcp: Streamable HTTP at %s", url);
	agent_term_notice(hs->s->term, "deskhand mcp: send \"Authorization: Bearer %s\" (also "
	                  "in %s)", hs->token, file);
	unlink(file);
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		agent_term_warning(hs->s->term, "cannot write %s: %s", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "{\"url\":\"%s\",\"token\":\"%s\",\"port\":%d}\n", url, hs->token, hs->at.port);
	fclose(f);
}

static int listen_error(mcp_server *s, const char *listen, const char *why)
{
	agent_term_error(s->term, "deskhand mcp --http %s: %s", listen, why);
	return 2;
}

int mcp_http_serve(mcp_server *s, const char *listen, bool allow_remote, const char *file)
{
	http_server hs = {.s = s, .budget = RATE_BURST, .bad_budget = 5};
	if (!base_listen_parse(listen, &hs.at))
		return listen_error(s, listen, "want [ADDR:]PORT, the address numeric IPv4 or IPv6");
	if (hs.at.wildcard)
		return listen_error(s, listen, "give the address clients will use, not a wildcard");
	if (!hs.at.loopback && !allow_remote)
		return listen_error(s, listen, "not a loopback address: anyone who can reach it "
		                    "could try the token; add --http-allow-remote (and put TLS in "
		                    "front) if that is meant");
	if (!base_dlib_load(&mhd_lib)) {
		agent_term_error(s->term, "deskhand mcp: --http: %s", base_error());
		return 1;
	}
	if (!base_random_hex(hs.token, TOKEN_BYTES)) {
		agent_term_error(s->term, "deskhand mcp: getrandom: %s", strerror(errno));
		return 1;
	}
	hs.budget_at = hs.bad_at = base_now_ms();
	pthread_mutex_init(&hs.lock, NULL);
	/* Every thread started from here on leaves the stop signals to this one. */
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	mcp_server_start(s);
	int status = 0;
	if (!start(&hs)) {
		status = listen_error(s, listen, "cannot listen there (in use?)");
	} else {
		tell(&hs, file);
		struct timespec second = {.tv_sec = 1};
		while (!mcp_server_ended(s) && sigtimedwait(&stop, NULL, &second) < 0 &&
		       (errno == EAGAIN || errno == EINTR)) {
		}
		status = mcp_server_ended(s) ? 1 : 0;
	}
	/* The worker first: every pending call is answered ("not run"), then
	 * its stream is let finish before the connections close. */
	mcp_server_stop(s);
	live_drain(2000);
	if (hs.daemon != NULL)
		MHD_stop_daemon(hs.daemon);
	base_conns_destroy(hs.conns);   /* every connection is closed by now */
	unlink(file);
	explicit_bzero(hs.token, sizeof(hs.token));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_destroy(&hs.lock);
	return status;
}
