/*
 * agent/tools/gemini_actions — Google Gemini's predefined computer-use
 * functions put in deskhand's terms: each function call becomes the
 * arguments of one action of the one table (actions.h), which
 * agent_computer_parse then validates against the view like any other.
 *
 * Pure: no I/O, no X. Called by the gate's proposal parser for calls of
 * toolset "gemini"; nothing here runs anything.
 *
 * Coordinates stay in Gemini's convention, 0..999 on both axes: the view
 * the gate parses them with has a 1000x1000 coordinate grid (--provider
 * gemini), so the one mapping turns them into screen pixels and refuses
 * anything outside the grid. Every function may carry "intent" and
 * "safety_decision"; both are ignored here (the provider turned the
 * latter into the call's safety checks).
 *
 * Both of Google's sets are read, whichever model sends them:
 *   3.5 desktop set                  deskhand action
 *   click|double_click|triple_click|middle_click|right_click{x,y}
 *                                    left_click, double_click, ...
 *   mouse_down|mouse_up{x?,y?}       left_mouse_down / left_mouse_up there
 *   move{x,y}                        mouse_move
 *   type{text,press_enter?,x?,y?}    type (press_enter: a final newline,
 *                                    which types Return)
 *   drag_and_drop{start_x,start_y,end_x,end_y}
 *     or {x,y,destination_x,destination_y}
 *                                    left_click_drag
 *   scroll{x,y,direction,magnitude_in_pixels|magnitude}
 *                                    scroll (see the unit below)
 *   press_key|key_down|key_up{key}   key / key_down / key_up
 *   hotkey{keys:[...]}               key, one combination
 *   take_screenshot                  screenshot
 *   wait{seconds?=1}                 wait
 *   legacy 2.5 set
 *   click_at, hover_at{x,y}          left_click, mouse_move
 *   type_text_at{x,y,text,press_enter?=true,clear_before_typing?=true}
 *                                    type at the point (clicked first),
 *                                    field emptied, then Return
 *   key_combination{keys:"Control+A"} key, one combination
 *   scroll_at{x,y,direction,magnitude?=800}, scroll_document{direction}
 *                                    scroll (the document: at the centre,
 *                                    by a whole screen)
 *   wait_5_seconds                   wait 5 s
 *   navigate, go_back, go_forward, search, open_web_browser
 *                                    refused: browser-only functions
 *
 * The scroll unit: the magnitude (either name) is read on the 0..999 grid
 * along the scroll's axis, as Google's reference agent converts it (999 is
 * the screen's height for up/down, its width for left/right); those screen
 * pixels become X wheel clicks, one per AGENT_ACTION_SCROLL_PX, rounded, at
 * least one and at most 100.
 *
 * Key names are Gemini's ("Control", "Enter", "ArrowLeft", "Meta", "A")
 * read by agent_openai_key_name (the same browser-style names), then by
 * the key parser's aliases and X keysym names.
 */
#ifndef DESKHAND_AGENT_GEMINI_ACTIONS_H
#define DESKHAND_AGENT_GEMINI_ACTIONS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "vision/vision.h"

/* Defaults Google documents: scroll's magnitude_in_pixels, scroll_at's magnitude. */
#define AGENT_GEMINI_SCROLL_DEFAULT 300
#define AGENT_GEMINI_SCROLL_AT_DEFAULT 800

/*
 * Translates the call `name` with arguments `args` (a JSON object) into the
 * arguments of a deskhand computer action ({"action": "left_click",
 * "coordinate": [x, y], ...}); `view` gives the screen's size for the
 * scroll unit. On failure returns NULL and writes a message for the model
 * into err. Ownership: the caller deletes the result.
 */
cJSON *agent_gemini_action_args(const char *name, const cJSON *args, const vision_view *view,
                                char *err, size_t errlen);

#endif
