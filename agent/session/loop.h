/*
 * agent/session/loop — the agent: the user's words go to the model, the model's code
 * and desktop actions come back, pass the gate, run, and their results go
 * back to the model until it is done.
 *
 * agent_main() is the whole of `deskhand [OPTIONS] [MESSAGE]`: options,
 * provider, conversation, audit log, the interactive or one-shot loop, magic
 * commands and Ctrl-C. It returns the process's exit status; nothing below
 * it exits.
 *
 * The gate (agent_gate_* in agent/safety/gate*.c, declared here for the loop only) is the
 * single path from a tool call to an executor or os/: it asks the policy,
 * records the decision in the audit log, asks the human when told to, and
 * only then runs anything.
 */
#ifndef DESKHAND_AGENT_LOOP_H
#define DESKHAND_AGENT_LOOP_H

int agent_main(int argc, char **argv);

#endif
