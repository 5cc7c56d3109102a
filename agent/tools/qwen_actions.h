/*
 * agent/tools/qwen_actions — Qwen's computer_use function (Qwen2.5-VL and
 * Qwen3-VL cookbooks: one function whose "action" argument names what to
 * do) put in deskhand's terms: each call becomes the arguments of one
 * action of the one table (actions.h), which agent_computer_parse then
 * checks against the view like any other. The coordinates are passed on
 * unchanged: the view the model was sent (smart-resize pixels for
 * Qwen2.5-VL, the 0..999 grid for Qwen3-VL) is what gives them meaning.
 *
 * Pure: no I/O, no X. Called by the gate's proposal parser for calls of
 * toolset "qwen"; nothing here runs anything.
 *
 * The mapping:
 *   key{keys[]}              key: one combination ("ctrl"+"c" -> "ctrl+c"),
 *                            Qwen's pyautogui names as xdotool names
 *   type{text}               type
 *   mouse_move{coordinate}   mouse_move
 *   left_click, right_click, middle_click, double_click, triple_click
 *     {coordinate?}          the same click, where the pointer is when no
 *                            coordinate is given
 *   left_click_drag{coordinate}
 *                            left_click_drag from where the pointer is
 *                            (given by the caller) to coordinate
 *   scroll{pixels, coordinate?}   scroll up (pixels > 0) or down (< 0),
 *   hscroll{pixels, coordinate?}  right (> 0) or left (< 0): one wheel click
 *                            per AGENT_ACTION_SCROLL_PX pixels (at least one)
 *   wait{time}               wait that many seconds (default AGENT_QWEN_WAIT_S)
 *   terminate{status}, answer{text}
 *                            not actions: the task ends (agent_qwen_final)
 */
#ifndef DESKHAND_AGENT_QWEN_ACTIONS_H
#define DESKHAND_AGENT_QWEN_ACTIONS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define AGENT_QWEN_WAIT_S 2

/*
 * Translates the arguments of one computer_use call into the arguments of a
 * deskhand computer action ({"action": "left_click", "coordinate": [x, y]}).
 * pointer (may be NULL: unknown) is where the pointer is, in the model's
 * coordinates: where left_click_drag starts. terminate and answer are
 * refused here (ask agent_qwen_final first). On failure returns NULL and
 * writes a message for the model into err. The caller deletes the result.
 */
cJSON *agent_qwen_action_args(const cJSON *args, const int *pointer, char *err, size_t errlen);

/*
 * Whether the call ends the task (terminate, answer); then *text is what
 * to tell the user ("success", the answer), malloc'd, owned by the caller.
 * False for any other call (args that are not an object included).
 */
bool agent_qwen_final(const cJSON *args, char **text);

#endif
