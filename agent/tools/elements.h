/*
 * agent/tools/elements — the `elements` action and the `element: ID`
 * targets of the pointer actions (private to agent/tools).
 *
 * `elements` reads the accessibility tree of the active window
 * (vision/a11y.h) and answers one line per element in the model's
 * coordinates (the last screenshot's view); the list is kept, and an
 * action naming `element: ID` is parsed against it: its point is the
 * element's box centre. Running such an action reads the tree again first:
 * when the element moved, vanished or changed its name since, the action
 * fails with the reason and nothing is done.
 *
 * Owns: the last element list of this process (one agent per process).
 */
#ifndef DESKHAND_AGENT_TOOLS_ELEMENTS_H
#define DESKHAND_AGENT_TOOLS_ELEMENTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/tools/computer.h"

/*
 * The optional "element" field: when present (and no "coordinate"), the
 * action's point becomes the centre of that element of the last list,
 * and a->element and its role, name and box are filled in. False with a
 * message for the model in err.
 */
bool agent_elements_parse(const cJSON *args, const vision_view *view,
                          agent_computer_action *a, char *err, size_t errlen);

/*
 * Runs `elements`: the list as text for the model (and kept), in the
 * coordinates of `view`. *is_error when the tree could not be read at all.
 * Ownership: the caller frees; NULL when out of memory.
 */
char *agent_elements_run(os_display *d, const vision_view *view, bool *is_error);

/*
 * Runs `windows`: the top-level windows, bottom to top, as text for the
 * model (the active one marked, each box in the coordinates of `view`).
 * *is_error when the display cannot list them. Ownership: the caller
 * frees; NULL when out of memory.
 */
char *agent_windows_run(os_display *d, const vision_view *view, bool *is_error);

/*
 * Before acting on an element: the tree read again. True when the element
 * is still there with the same role, name and box; false with the reason
 * (for the model) in why.
 */
bool agent_elements_verify(os_display *d, const agent_computer_action *a, char *why,
                           size_t whylen);

/*
 * After the click that puts the caret in an element to type into: waits,
 * at most `ms`, until the tree says the element has the focus. Chromium
 * moves the focus in its renderer, out of step with the X events, and
 * lost keystrokes sent at once after the click (about one run in six).
 * False when the bound ran out or the tree could not be read; the caller
 * types anyway (not every toolkit reports the focus).
 */
bool agent_elements_await_focus(os_display *d, const agent_computer_action *a, long ms);

#endif
