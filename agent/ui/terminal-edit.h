/*
 * agent/ui/terminal — the line editor (libedit's readline interface),
 * loaded when a prompt on a terminal first needs it (terminal_edit.c),
 * not linked: it and the terminfo library under it were mapped at the
 * start of every command, most of which never prompt. Included last by
 * terminal.c and terminal_input.c alone: from here on the names call
 * through the table.
 */
#ifndef DESKHAND_AGENT_TERMINAL_EDIT_H
#define DESKHAND_AGENT_TERMINAL_EDIT_H

#include <stdbool.h>
#include <stdio.h>

#include <editline/readline.h>

#include "base/base.h"

#define TERM_EDIT_FUNCS(X, p) \
	X(p, add_history) X(p, read_history) X(p, readline) X(p, rl_parse_and_bind) \
	X(p, stifle_history) X(p, using_history) X(p, write_history)

TERM_EDIT_FUNCS(BASE_DLIB_EXTERN, agent_dl_)

/* Loads libedit once; false when it is missing (the plain line reading
 * then serves: no editing, no history). */
bool term_edit_load(void);

#define add_history (*agent_dl_add_history)
#define read_history (*agent_dl_read_history)
#define readline (*agent_dl_readline)
#define rl_parse_and_bind (*agent_dl_rl_parse_and_bind)
#define stifle_history (*agent_dl_stifle_history)
#define using_history (*agent_dl_using_history)
#define write_history (*agent_dl_write_history)

#endif
