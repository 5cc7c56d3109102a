/*
 * agent/tools/desk — the desktop as the model's tools see it: the display
 * (none without --os), the view of the last screenshot the model was sent
 * (every coordinate it sends is read with it), and the screenshots
 * themselves: settled, captured once, marked, encoded as PNG in memory.
 * Storing them is the conversation's (agent/llm), done by the session.
 */
#ifndef DESKHAND_AGENT_TOOLS_DESK_H
#define DESKHAND_AGENT_TOOLS_DESK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/tools/dialect.h"
#include "os/os.h"
#include "vision/vision.h"

/* Why the last agent_tools_* call failed (this thread's). */
const char *agent_tools_error(void);

typedef struct agent_tools_config {
	os_display *display;           /* not owned; NULL: the computer tool is off */
	/* Every screenshot for the model (size, grounding, grid); its monitor,
	 * when >= 0, the one the model sees (else the pointer's, chosen once). */
	vision_shot_opts shot;
	int settle_ms;                 /* the cap of the wait for the screen to settle */
	bool marks;                    /* element IDs drawn on every screenshot (--marks) */
	volatile sig_atomic_t *cancel; /* Ctrl-C: a wait stops */
} agent_tools_config;

/*
 * The tools over `cfg->display`, with the monitor chosen once and kept (a
 * click near an edge must not move the model's picture to another
 * monitor). NULL with agent_tools_error() when the monitor asked for does
 * not exist or its view cannot be had. Free with agent_tools_destroy.
 */
agent_tools *agent_tools_create(const agent_tools_config *cfg);
void agent_tools_destroy(agent_tools *t);   /* NULL: no-op */

os_display *agent_tools_display(const agent_tools *t);
/* The view of the last screenshot the model was sent (before the first:
 * the one it would have). */
const vision_view *agent_tools_view(const agent_tools *t);

/* A PNG in memory, and its size in the model's pixels. */
typedef struct agent_shot {
	uint8_t *png;                  /* malloc'd; NULL: none */
	size_t len;
	int width, height;
} agent_shot;
void agent_shot_clear(agent_shot *s);

/*
 * The model's view of the screen: when `settle`, after the screen stopped
 * changing, and then of that very frame (one capture); marked (--marks),
 * encoded. From now on the model's coordinates refer to it. False with
 * agent_tools_error() on failure. Ownership: agent_shot_clear.
 */
bool agent_tools_screenshot(agent_tools *t, bool settle, agent_shot *out);
/*
 * The screenshot that answers a tool's result: agent_tools_screenshot into
 * *shot or, when none can be had, a line saying why after *text
 * (agent_shot_missing).
 */
void agent_tools_screenshot_for(agent_tools *t, bool settle, agent_shot *shot, char **text);
/* *text (malloc'd or NULL; replaced) followed by "[no screenshot: why]". */
void agent_shot_missing(char **text, const char *why);

/*
 * The details of an action for the human (the answer d): the action, the
 * screen point it aims at, the window there, and a preview of the spot
 * (marker and label) stored as PNG in `dir` (*preview: its path, malloc'd;
 * NULL when none could be made). Ownership: the caller frees both.
 */
char *agent_tools_details(agent_tools *t, const agent_proposal *p, const char *dir,
                          char **preview);

#endif
