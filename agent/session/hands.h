/*
 * agent/session/hands — deskhand's hands without its model, for the entry
 * points beside the loop (agent/mcp): the options and start-up notices,
 * the audit log, deskhand's own files out of the code's reach, the
 * desktop and the tools over it, the gate, the console and Ctrl-C, opened
 * and closed exactly as for the agent (setup.c), so that a call from
 * elsewhere passes the same gate with the same settings.
 */
#ifndef DESKHAND_AGENT_SESSION_HANDS_H
#define DESKHAND_AGENT_SESSION_HANDS_H

#include <stdbool.h>

#include "agent/safety/safety.h"
#include "agent/session/options.h"
#include "agent/tools/tools.h"
#include "agent/ui/terminal.h"

typedef struct agent_hands agent_hands;

/*
 * Opens everything but a model over `opt` (parsed and checked; borrowed,
 * as is `term`, both outliving the hands), telling `term` what it tells a
 * session: the override's banner, the kill switch, the console's links.
 * argv is the command line (a key given on it is wiped). NULL, told why,
 * when a part cannot be had: *status is then the exit status (2 for a
 * desktop deskhand does not drive, else 1).
 * Ownership: agent_hands_close.
 */
agent_hands *agent_hands_open(agent_options *opt, agent_term *term, int argc, char **argv,
                              int *status);
void agent_hands_close(agent_hands *h);  /* NULL: no-op */

agent_gate *agent_hands_gate(agent_hands *h);
agent_tools *agent_hands_tools(agent_hands *h);
agent_audit *agent_hands_audit(agent_hands *h);
/* Whether the console serves (someone may answer there). */
bool agent_hands_console(const agent_hands *h);

/*
 * Work comes from elsewhere: agent_hands_begin before each piece (no
 * interruption seen yet), agent_hands_interrupt to withdraw it from
 * another thread, as Ctrl-C does: a waiting question ends unanswered,
 * running code is interrupted, nothing more of it runs.
 * agent_hands_interrupted: whether Ctrl-C or a withdrawal came.
 */
void agent_hands_begin(void);
void agent_hands_interrupt(void);
bool agent_hands_interrupted(void);
/* The flag a place told of questions watches (agent_term_remote.cancel). */
volatile sig_atomic_t *agent_hands_cancel_flag(void);

#endif
