/*
 * agent/tools — the room's insides, shared by its files: the state of the
 * tools (desk.c), read by the proposals (proposal.c), the runner
 * (computer_run.c) and the screenshots (desk.c). Only agent/tools includes
 * this header.
 */
#ifndef DESKHAND_AGENT_TOOLS_INTERNAL_H
#define DESKHAND_AGENT_TOOLS_INTERNAL_H

#include <stdbool.h>

#include "agent/tools/tools.h"

/* Screenshots capture in strips of a few hundred KB; keep no more. */
#define TOOLS_CAPTURE_KEEP_BYTES (1u << 20)

struct agent_tools {
	os_display *display;           /* not owned; NULL: no computer tool */
	vision_shot_opts shot;         /* monitor fixed at create */
	int settle_ms;
	bool marks;
	volatile sig_atomic_t *cancel;
	vision_view view;              /* the last screenshot the model was sent */
};

/* Whether deskhand's own tool `name` is one of the computer's (dialect.c). */
bool tools_deskhand_computer_call(const char *name);

/* Sets agent_tools_error(); returns false. */
bool tools_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
