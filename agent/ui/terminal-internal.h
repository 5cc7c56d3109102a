/*
 * agent/ui/terminal — the terminal's insides, shared by its files:
 * terminal.c keeps the terminal (its modes between prompts, the line
 * editor's history, the spinner, the second place that answers),
 * terminal_output.c writes what deskhand shows (both faces: text for a
 * person, JSON events for --json), terminal_input.c reads what the person
 * types (lines, answers to questions). Only they include this header.
 */
#ifndef DESKHAND_AGENT_TERMINAL_INTERNAL_H
#define DESKHAND_AGENT_TERMINAL_INTERNAL_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/ui/markdown.h"
#include "agent/ui/terminal.h"
#include "agent/util/textutil.h"

struct agent_term {
	char *history;          /* the line editor's history file, or NULL */
	bool json;
	bool color;
	bool tty_in;
	bool err_tty;
	agent_md md;
	bool in_text;
	bool in_thinking;       /* dimmed thinking was written; a newline closes it */
	/* Foreign text on its way to the terminal: the model's, code output's. */
	agent_show text_show, out_show[2];
	pthread_mutex_t lock;
	pthread_t spinner;
	bool spinner_running;
	volatile bool spinner_stop;
	char spinner_label[64];
	bool work_mode;         /* the terminal is held between prompts */
	bool discard_at_read;   /* an action ran: discard its input before reading */
	/* Other places told of questions (agent_term_set_remote): the console's
	 * and an MCP host's, in that order; have_remote[i]: slot i is set. */
	agent_term_remote remote[AGENT_TERM_REMOTES];
	bool have_remote[AGENT_TERM_REMOTES];
	bool borrowed;          /* the terminal is someone else's: its modes are never held */
	bool stdin_ended;       /* with a remote: the terminal can no longer answer */
	char answered_from[64];
	char *edit_text;        /* the remote's edit, until taken */
};

/* Whether any remote is set; whether one that answers is. */
bool term_any_remote(const agent_term *t);
bool term_remote_answers(const agent_term *t);

/* Holds the terminal in work mode (see terminal.c) when it is deskhand's to hold. */
void term_tty_hold(agent_term *t);

/* A new JSON event {"event": type}. Ownership: term_emit takes it. */
cJSON *term_event(const char *type);
/* Adds a string member, replacing invalid UTF-8 so the line stays JSON. */
void term_add_text(cJSON *o, const char *key, const char *s, size_t n);
/* Emits one JSON event line; takes ownership of `ev`. */
void term_emit(agent_term *t, cJSON *ev);

#endif
