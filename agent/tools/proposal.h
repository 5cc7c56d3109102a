/*
 * agent/tools/proposal — a tool call turned into the one value the gate
 * decides on: what kind it is (code, an action, the end of the task, or a
 * call that cannot run), the parsed action or the code, the vendor's
 * safety checks, and the facts the policy needs about the desktop, read
 * once when the proposal is made (whether the input would reach
 * deskhand's own terminal; the pointer and the monitors, for the kill
 * switch).
 *
 * The action's JSON object is built once and is what the audit line, the
 * question, the console and an edit start from; its description is what
 * the human reads. Nothing here runs anything: the gate decides, then runs
 * an action through the runner (computer-run.h).
 */
#ifndef DESKHAND_AGENT_TOOLS_PROPOSAL_H
#define DESKHAND_AGENT_TOOLS_PROPOSAL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "agent/tools/computer.h"
#include "agent/tools/dialect.h"
#include "executors/exec.h"

/* The monitors a proposal keeps (as many as the kill switch judges). */
#define AGENT_PROPOSAL_MONITORS 16

typedef enum agent_proposal_kind {
	AGENT_PROPOSAL_REFUSED, /* cannot run: `text` says why (the model is told) */
	AGENT_PROPOSAL_CODE,    /* run `code` */
	AGENT_PROPOSAL_ACTION,  /* perform `action` on the desktop */
	AGENT_PROPOSAL_FINAL,   /* the model ends the task: `text` is what it said */
} agent_proposal_kind;

struct agent_proposal {
	const agent_tool_call *call;      /* borrowed */
	agent_proposal_kind kind;
	/* A call of the computer tool (whatever its dialect): refused, it
	 * ends the model's batch as a failed action does. */
	bool computer;
	agent_computer_action action;     /* ACTION */
	struct {
		exec_lang lang;
		char *code;
		bool display;             /* run with access to the display */
	} code;                           /* CODE */
	char *text;                       /* REFUSED: why; FINAL: the model's words */
	cJSON *json;                      /* ACTION: the action as deskhand's arguments */
	char *json_text;                  /* ... printed once (question, console, edit) */
	char *description;                /* ACTION: for the human ("left_click at ...") */
	cJSON *checks;                    /* the vendor's safety checks (an array); NULL: none */
	bool own_terminal;                /* ACTION: input would reach deskhand's own terminal */
	/* CODE and ACTION with a display: where the pointer was and the
	 * monitors, for the kill switch (have_pointer false: unknown). */
	bool have_pointer;
	os_point pointer;
	os_rect monitors[AGENT_PROPOSAL_MONITORS];
	int n_monitors;
};

/*
 * The proposal of `call` (borrowed: it must outlive p). Always fills p; a
 * call that cannot run is AGENT_PROPOSAL_REFUSED with the reason. The
 * facts are read from the desktop now. Ownership: agent_proposal_finish.
 */
void agent_tools_propose(agent_tools *t, const agent_tool_call *call, agent_proposal *p);
void agent_proposal_finish(agent_proposal *p);

/*
 * The human's edit of p: for code the new code, for an action its JSON
 * (deskhand's arguments), checked like the model's and its facts read
 * again: an edited proposal is a new one. False, p unchanged, with the
 * reason in why (for the human) when the edit is not valid.
 */
bool agent_tools_edit(agent_tools *t, agent_proposal *p, const char *edited, char *why,
                      size_t whylen);

/* ---- for the dialects (dialect.h) --------------------------------------- */

/* Refuses p with a printf message for the model. */
void agent_proposal_refuse(agent_proposal *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * p becomes action `name` (NULL: args' own "action") with arguments args
 * (deskhand's computer vocabulary, a JSON object), parsed strictly against
 * the last screenshot's view; refused with the parser's reason otherwise.
 * Refused too when the computer tool is off (no --os).
 */
void agent_tools_parse_action(agent_tools *t, const char *name, const cJSON *args,
                              agent_proposal *p);
/* The same for arguments built by a translator (consumed; NULL: err says why). */
void agent_tools_parse_translated(agent_tools *t, cJSON *args, const char *err,
                                  agent_proposal *p);
/* Whether the computer tool is on; refuses p saying so when it is not. */
bool agent_tools_computer_on(agent_tools *t, agent_proposal *p);
/* Where the pointer is in the model's coordinates; false off its screenshot. */
bool agent_tools_pointer_in_view(agent_tools *t, int xy[2]);

#endif
