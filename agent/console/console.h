/*
 * agent/console — the session's control console in a browser
 * (`deskhand --console [ADDR:]PORT`): the live screen, the timeline, every
 * question the terminal asks (first answer wins), pause / resume / take
 * over / stop, for an approver link and a read-only observer link.
 *
 * It never blocks the agent: HTTP is served by libmicrohttpd's own
 * threads (one per connection, bounded) and frames are taken by a capture
 * thread of its own, on its own X connection (through os/ and vision/,
 * never Xlib). Everything the agent and those threads share lives in one
 * struct behind one mutex (console-internal.h); the agent's calls here
 * take it only for short copies, never across I/O.
 *
 * Security is the point of the design (docs/console.md): a 128-bit token
 * per role from getrandom(), accepted once in the URL and exchanged for an
 * HttpOnly SameSite=Strict cookie; a Host allowlist (DNS rebinding); the
 * exact Origin, a JSON body and a CSRF header bound to the session and its
 * role on every state change (POST only); no CORS; a strict CSP; bounded
 * bodies, headers, connections and memory. Nothing here can change the
 * policy's settings: -y and --os-auto-approve stay start-up decisions.
 *
 * The door of agent/console. Owns: the HTTP daemon and its threads, the
 * capture thread and its display connection, the timeline, the tokens and
 * sessions, the open question's console side.
 * May call: agent/ui (the remote-answer interface of terminal.h),
 * agent/util, base/, os/, vision/, libmicrohttpd (only this room knows
 * it), cJSON.
 */
#ifndef DESKHAND_AGENT_CONSOLE_H
#define DESKHAND_AGENT_CONSOLE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/ui/terminal.h"

typedef struct agent_console agent_console;

typedef struct agent_console_config {
	const char *listen;          /* "[ADDR:]PORT" as given to --console */
	bool allow_remote;           /* --console-allow-remote */
	const char *display;         /* X display for live frames; NULL: none (no --os) */
	int max_fps;                 /* frames per second at most; <= 0: 10 */
	int frame_max_w, frame_max_h;/* frames are scaled to fit; <= 0: 1280x800 */
	volatile sig_atomic_t *cancel; /* set on stop, as Ctrl-C sets it */
} agent_console_config;

/*
 * Binds, starts the HTTP threads and the capture thread. NULL with the
 * reason in agent_console_error() (bad address, a non-loopback address
 * without allow_remote, no port, no randomness). Ownership: the caller
 * destroys it with agent_console_destroy (NULL is a no-op), which stops
 * every thread and wipes the tokens.
 */
agent_console *agent_console_start(const agent_console_config *cfg);
void agent_console_destroy(agent_console *c);
const char *agent_console_error(void);
/* Whether the HTTP server can be had: libmicrohttpd is loaded on first
 * use (this loads it). False with the reason in agent_console_error(). */
bool agent_console_ready(void);

/* The port bound (useful with --console 0). */
int agent_console_port(const agent_console *c);
/* Whether the address is loopback (a warning is due otherwise). */
bool agent_console_is_remote(const agent_console *c);
/*
 * The links, each holding its role's one-time token: for the terminal
 * and the 0600 file only, never for a log. Owned by c.
 */
const char *agent_console_url(const agent_console *c, bool approver);

/* The remote-answer interface the terminal uses (terminal.h); owned by c. */
const agent_term_remote *agent_console_remote(agent_console *c);

/* The timeline: every audit line as written (agent_audit_listener's shape). */
void agent_console_audit_line(void *console, const char *line, size_t len);
/* The user's task, and the model's text of one turn. */
void agent_console_task(agent_console *c, const char *text);
void agent_console_model_text(agent_console *c, const char *text);

typedef enum agent_console_hold {
	AGENT_CONSOLE_GO,
	AGENT_CONSOLE_TOOK_OVER,   /* a human drove the desktop while the agent waited */
	AGENT_CONSOLE_STOP,
} agent_console_hold;

/*
 * Called by the agent between actions: returns at once unless the
 * approver paused or took over, then waits (noticing *cancel) until they
 * resume or stop. Never waits on the network.
 */
agent_console_hold agent_console_hold_here(agent_console *c);

#endif
