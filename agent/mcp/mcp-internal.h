/*
 * Private to agent/mcp: the server its files share — server.c (the
 * messages, the eras, the worker and the ticker), calls.c (tools/list and
 * one tools/call through the gate), ask.c (the host's place beside the
 * terminal: announcing questions, withdrawals, trusted answers), stdio.c
 * and http.c (the transports), mcp.c (the command).
 */
#ifndef DESKHAND_AGENT_MCP_INTERNAL_H
#define DESKHAND_AGENT_MCP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "agent/mcp/jsonrpc.h"
#include "agent/mcp/mcp.h"
#include "agent/session/session.h"

/* The versions deskhand speaks, newest first; the first of the
 * initialize era is what an unknown initialize version gets. */
#define MCP_V_STATELESS "2026-07-28"
#define MCP_V_INITIALIZE "2025-11-25"

/*
 * Where one request's messages go: the stdio stream, or one HTTP
 * response. send takes the line (malloc'd, no newline; NULL: dropped for
 * want of memory); done says the request is over (after its answer, or
 * with none after a withdrawal). Both may be called from any thread.
 * Sinks are counted: hold/release around every use outside the call
 * that gave it.
 */
typedef struct mcp_sink mcp_sink;
struct mcp_sink {
	void (*send)(mcp_sink *k, char *line);
	void (*done)(mcp_sink *k);
	void (*hold)(mcp_sink *k);
	void (*release)(mcp_sink *k);
};

/* One tools/call, queued or running. */
typedef struct mcp_call {
	struct mcp_call *next;
	char key[80];                 /* the client's id, as jsonrpc.h keys it */
	cJSON *id;                    /* owned copy */
	const agent_mcp_tool *tool;   /* found once, as the call came */
	cJSON *arguments;             /* owned; NULL: none given */
	bool arguments_bad;           /* given, but not an object */
	cJSON *progress;              /* the progress token; NULL: none asked */
	bool stateless;               /* of the 2026-07-28 era: no requests to the client */
	mcp_sink *sink;               /* held */
	bool withdrawn;               /* a cancellation came: no answer is due */
	bool stopped;                 /* the server stops: answered, nothing more runs */
} mcp_call;

typedef struct mcp_server {
	agent_hands *hands;
	agent_term *term;
	bool trust_host;              /* --trust-host-approvals */
	bool tty;                     /* a controlling terminal asks */
	bool console;

	pthread_mutex_t lock;         /* everything below */
	pthread_cond_t wake;
	bool initialized;             /* an initialize was answered */
	char version[16];             /* the initialize era's negotiated version */
	bool can_elicit;              /* the client declared form elicitation */
	char client[160];             /* "NAME VERSION" as the client says; "" */
	mcp_call *queue, *queue_tail;
	mcp_call *running;
	bool stopping;
	bool ended;                   /* the gate ended the run: nothing more runs */
	char **seen;                  /* ids of this connection's requests (stdio) */
	size_t n_seen, cap_seen;
	bool track_ids;
	/* The question of the running call, as the host's place knows it. */
	bool question_open;
	char ask_id[32];              /* the elicitation sent for it; "": none */
	int ask_answer;               /* -1 none yet, 0 no, 1 yes */
	unsigned long ask_serial;
	int wake_pipe[2];             /* the host's place's fd: an answer or a withdrawal */

	pthread_t worker, ticker;
	bool threads;
	unsigned long serial;         /* the audit ids: mcp-1, mcp-2, ... */
} mcp_server;

/* server.c */
bool mcp_server_init(mcp_server *s);
void mcp_server_start(mcp_server *s);
/* Stops: the running call withdrawn, the queue dropped, threads joined. */
void mcp_server_stop(mcp_server *s);
void mcp_server_destroy(mcp_server *s);
/*
 * One message from the client, answered through k (held while needed).
 * `version`: the one the transport names (HTTP's MCP-Protocol-Version),
 * or NULL. False, nothing sent, when the message's _meta names another.
 */
bool mcp_server_message(mcp_server *s, const char *text, size_t len, const char *version,
                        mcp_sink *k);
/* Whether the gate ended the run (the server then ends). */
bool mcp_server_ended(mcp_server *s);
/* A line for k: sends it (NULL-safe: out of memory drops it). */
void mcp_send(mcp_sink *k, char *line);

/* calls.c */
cJSON *mcp_tools_list(void);
/* Runs c through the gate; the result for the client (NULL: none is due). */
cJSON *mcp_call_run(mcp_server *s, mcp_call *c);
/* The error result of a call nothing of which ran: "not run: why". */
cJSON *mcp_call_not_run(const char *why);
void mcp_call_free(mcp_call *c);

/* ask.c: the host's place beside the terminal (agent_term_remote), attached
 * again before each call c (NULL: none yet), for whether the host can
 * answer that call's questions (mcp_ask_host_answers: trusted, and able to
 * be asked them). */
void mcp_ask_attach(mcp_server *s, const mcp_call *c);
bool mcp_ask_host_answers(mcp_server *s, const mcp_call *c);
void mcp_ask_detach(mcp_server *s);
/* A response to deskhand's own request (an elicitation); s->lock held. */
void mcp_ask_response(mcp_server *s, const mcp_msg *m);
/* Wakes the question of the running call (a withdrawal came); s->lock held. */
void mcp_ask_poke(mcp_server *s);

/* stdio.c: serves until the client closes its end; the exit status. */
int mcp_stdio_serve(mcp_server *s, int in_fd, int out_fd);
/* http.c: serves on [ADDR:]PORT until SIGINT/SIGTERM; the exit status. */
int mcp_http_serve(mcp_server *s, const char *listen, bool allow_remote, const char *token_file);

#endif
