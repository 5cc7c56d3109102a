/*
 * agent/tools/openai_actions — OpenAI's computer actions (the Responses
 * API's computer_call `actions[]`, and the single `action` of the legacy
 * computer_use_preview tool) put in deskhand's terms: each one becomes the
 * arguments of one action of the one table (actions.h), which
 * agent_computer_parse then validates against the view like any other.
 *
 * Pure: no I/O, no X. Called by the gate's proposal parser for calls of
 * toolset "openai"; nothing here runs anything.
 *
 * The mapping:
 *   click{button,x,y,keys?}   left|right|wheel|back|forward -> left_click,
 *                             right_click, middle_click, back_click,
 *                             forward_click; keys held during the click
 *   double_click{x,y,keys?}   double_click
 *   drag{path,keys?}          left_click_drag along every point of path
 *   keypress{keys}            key: one combination, OpenAI's key names
 *                             (CTRL, ALT, SHIFT, ENTER, ARROWLEFT, ...) as
 *                             xdotool names
 *   move{x,y,keys?}           mouse_move
 *   scroll{x,y,scroll_x,scroll_y,keys?}
 *                             scroll: pixels become wheel clicks, one click
 *                             per AGENT_ACTION_SCROLL_PX pixels (rounded,
 *                             at least one); one axis per action
 *   type{text}                type
 *   screenshot{}              screenshot
 *   wait{}                    wait AGENT_OPENAI_WAIT_S seconds
 */
#ifndef DESKHAND_AGENT_OPENAI_ACTIONS_H
#define DESKHAND_AGENT_OPENAI_ACTIONS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* OpenAI's wait action carries no duration; its guide waits about 2 s. */
#define AGENT_OPENAI_WAIT_S 2

/*
 * Translates one OpenAI action object into the arguments of a deskhand
 * computer action ({"action": "left_click", "coordinate": [x, y], ...}).
 * On failure returns NULL and writes a message for the model into err.
 * Ownership: the caller deletes the result.
 */
cJSON *agent_openai_action_args(const cJSON *action, char *err, size_t errlen);

/*
 * One OpenAI key name as the name deskhand's key parser reads ("CTRL" ->
 * "ctrl", "ARROWLEFT" -> "Left", "C" -> "c"); names it does not know are
 * passed on as they are (the key parser then accepts X keysym names or
 * refuses). Writes into buf; returns buf.
 */
const char *agent_openai_key_name(const char *key, char *buf, size_t size);

/*
 * keys[] (key names, one per entry) joined as one combination
 * "ctrl+shift+t", each name through agent_openai_key_name. Absent or null
 * keys: "" unless required. NULL (err set) when malformed. Shared by the
 * translators of vendors that list keys (OpenAI, Qwen). Caller frees.
 */
char *agent_openai_key_combo(const cJSON *keys, bool required, char *err, size_t errlen);

#endif
