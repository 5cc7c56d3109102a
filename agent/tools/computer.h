/*
 * agent/tools/computer — the model's `computer` tool: Anthropic's action names,
 * for every provider.
 *
 * Parsing is pure and strict: the arguments the model sent (JSON) become a
 * validated action with its coordinates already mapped to the screen with
 * the view of the last screenshot the model saw — or an error text that goes
 * back to the model as an error result. Nothing is guessed or clamped: a
 * coordinate outside that screenshot, an unknown key name or a missing field
 * is an error.
 *
 * Running an action is agent/tools/computer-run.h, a separate door only the gate
 * goes through (after the policy and the human allowed it).
 */
#ifndef DESKHAND_AGENT_COMPUTER_H
#define DESKHAND_AGENT_COMPUTER_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/tools/actions.h"
#include "os/os.h"
#include "vision/vision.h"

/* An action of the computer tool: the one table in actions.h. */
typedef agent_action agent_computer_kind;

#define AC_MAX_COMBOS 16
#define AC_MAX_TEXT (64 * 1024)
#define AC_MAX_PATH 64 /* points of a drag path */
#define AC_MAX_SECONDS 300 /* hold_key and wait: the toolset's bound */

typedef struct agent_computer_action {
	agent_computer_kind kind;
	const char *name;        /* the action's name, static */
	bool input;              /* its class is INPUT: it changes the desktop (actions.h) */
	bool has_point;          /* coordinate given */
	int mx, my;              /* in the model's screenshot */
	int sx, sy;              /* on the screen (root pixels) */
	bool has_start;          /* start_coordinate (drag) */
	int start_mx, start_my, start_sx, start_sy;
	char *text;              /* type/find_text text, key/hold_key combos, held modifiers */
	os_combo combos[AC_MAX_COMBOS];
	int n_combos;            /* key: the combos in order; clicks: modifiers held */
	int repeat;              /* key: times the whole sequence is pressed (1-100) */
	bool clear_first;        /* type: empty the field (ctrl+a, BackSpace) before typing */
	os_scroll direction;
	int amount;              /* scroll clicks */
	int duration_ms;         /* hold_key, wait */
	int region[4];           /* zoom: x0,y0,x1,y1 in the model's screenshot */
	/* left_click_drag along "path": every point, in the model's screenshot
	 * and on the screen (start and point are then its first and last) */
	int n_path;
	int path_m[AC_MAX_PATH][2], path_s[AC_MAX_PATH][2];
	/* element: ID (0: none) from the last elements list; the point is its
	 * box centre, checked again when the action runs (tools/elements.h) */
	int element;
	char *element_role, *element_name;
	os_rect element_box;     /* root coordinates */
} agent_computer_action;


/*
 * Parses and validates `args` (the tool call's JSON object) against `view`
 * (the last screenshot's). On failure returns false, writes a message for
 * the model into err and leaves nothing to free. Ownership: on success free
 * with agent_computer_action_finish.
 */
bool agent_computer_parse(const cJSON *args, const vision_view *view,
                          agent_computer_action *out, char *err, size_t errlen);
/* The same for the action `name` (NULL: args' "action"), whose tool names
 * the action itself (Anthropic's toolset, find_text, elements): args need
 * not, and must not be made to, say which. */
bool agent_computer_parse_named(const char *name, const cJSON *args, const vision_view *view,
                                agent_computer_action *out, char *err, size_t errlen);
void agent_computer_action_finish(agent_computer_action *a);

/*
 * The screen points the action aims at, in order (a drag's start, then its
 * point): 0, 1 or 2 written into pts. An action without one acts where the
 * pointer is.
 */
int agent_computer_points(const agent_computer_action *a, os_point pts[2]);

/*
 * A human description ("left_click at 640,360 (screen 960,540)"), whole:
 * the text to type, press or find is never cut, and shows every character
 * (agent_show_typed, agent_show_append), so it may span lines. Ownership:
 * the caller frees; NULL when out of memory.
 */
char *agent_computer_describe(const agent_computer_action *a);

/*
 * Set-of-marks on the model's next image `shot` of `view`: the active
 * window's elements read, outlined with their IDs, and kept as the list
 * element: targets refer to (tools/elements.c). Returns a note for the
 * model ("12 elements marked", or why none), malloc'd; NULL when out of
 * memory.
 */
char *agent_computer_marks(os_display *d, os_image *shot, const vision_view *view);

/*
 * The action as deskhand's arguments (for the audit log, the question and
 * `e` edit): agent_computer_parse reads it back as the same action.
 * Ownership: the caller deletes (frees, printed); NULL when out of memory.
 */
cJSON *agent_computer_json(const agent_computer_action *a);
char *agent_computer_to_json(const agent_computer_action *a);



#endif
