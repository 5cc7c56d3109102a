/*
 * Private to agent/console: the state the agent's thread, the HTTP
 * threads and the capture thread share.
 *
 * The contract: every field below `lock` is read and written only with
 * `lock` held; `changed` is broadcast after anything a stream shows
 * changes (a timeline event, a frame, the stop). Nobody holds `lock`
 * across I/O, an X call, encoding or a wait other than on `changed`.
 * Fields above `lock` are fixed between start and destroy.
 */
#ifndef DESKHAND_AGENT_CONSOLE_INTERNAL_H
#define DESKHAND_AGENT_CONSOLE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/console/console.h"
#include "base/base.h"
#include "agent/util/textutil.h"

#define CONSOLE_TOKEN_HEX 32              /* 128 bits */
#define CONSOLE_MAX_SESSIONS 32
#define CONSOLE_MAX_BODY (64 * 1024)
#define CONSOLE_MAX_HEADERS 40
#define CONSOLE_MAX_CONNECTIONS 48
#define CONSOLE_MAX_STRANGERS 16          /* of those, without a session (base_conns) */
#define CONSOLE_TIMELINE_BYTES (4u << 20) /* older events are dropped past this */
#define CONSOLE_IDLE_SECONDS 10           /* no progress: the connection is dropped */

typedef enum console_role { ROLE_NONE, ROLE_OBSERVER, ROLE_APPROVER } console_role;

typedef struct console_session {
	char id[CONSOLE_TOKEN_HEX + 1];       /* the cookie */
	char csrf[CONSOLE_TOKEN_HEX + 1];     /* the header state changes carry */
	console_role role;
} console_session;

typedef struct console_event {
	char *json;                           /* one complete JSON object */
	size_t len;
} console_event;

struct agent_console {
	/* Fixed from start to destroy. */
	struct MHD_Daemon *daemon;
	base_conns *conns;                    /* which connections are strangers' */
	int port;
	bool remote;
	char addr_host[80];                   /* the configured address as in a Host header */
	char url[2][160];                     /* [0] observer, [1] approver */
	char token[2][CONSOLE_TOKEN_HEX + 1]; /* [0] observer, [1] approver */
	volatile sig_atomic_t *cancel;
	agent_term_remote remote_if;
	int answer_fd;                        /* eventfd: the console answered */
	pthread_t capture;
	bool capture_running;
	char *display_name;
	int max_fps, frame_max_w, frame_max_h;

	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool closing;
	int n_streams;                        /* event streams open (drained at close) */
	bool token_used[2];
	/* Bad tokens: a bucket refilled one per 2 s, burst 5. */
	double bad_budget;
	long long bad_at_ms;
	console_session sessions[CONSOLE_MAX_SESSIONS];
	size_t n_sessions;
	/* The timeline: events[0] is event number `base`. */
	console_event *events;
	size_t n_events, cap_events, base, bytes;
	/* The latest frame. */
	uint8_t *frame_png;
	size_t frame_len;
	uint64_t frame_seq;                   /* 0: none yet */
	int frame_w, frame_h, screen_w, screen_h, ptr_x, ptr_y;
	uint64_t frame_tick;                  /* bumps with the frame or the pointer */
	/* The open question. */
	uint64_t qid;                         /* number of the last question asked */
	bool q_open;                          /* asked and not yet settled */
	bool q_answered;                      /* settled by the console (q_answer, q_edit) */
	char q_choices[8];
	agent_term_answer q_answer;
	char *q_edit;
	char q_who[48];
	/* Control. */
	bool paused, took_over, stop;
};

/* console.c */
/* Appends a timeline event (takes json, a malloc'd object text). Lock held. */
void console_event_push_locked(agent_console *c, char *json);
void console_event_push(agent_console *c, char *json);
/* The approver's POST bodies, parsed; false with a reason for a 4xx. */
bool console_answer(agent_console *c, const char *body, size_t len, char *err, size_t errlen,
                    int *status);
bool console_control(agent_console *c, const char *body, size_t len, char *err, size_t errlen,
                     int *status);
bool console_random_hex(char out[CONSOLE_TOKEN_HEX + 1]);
bool console_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* http.c */
bool console_http_start(agent_console *c, const char *addr, int port, bool v6);
void console_http_stop(agent_console *c);

/* frames.c */
bool console_frames_start(agent_console *c);
void console_frames_stop(agent_console *c);

/* page.c (generated from page/ at build time) */
typedef struct console_asset {
	const char *path;
	const char *type;
	const unsigned char *data;
	size_t len;
} console_asset;
extern const console_asset console_assets[];
extern const size_t console_n_assets;

#endif
