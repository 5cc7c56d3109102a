/*
 * agent/tools/uitars — UI-TARS's actions, which the model writes as text
 * ("Action: click(start_box='(120,340)')"), parsed strictly and put in
 * deskhand's terms: each becomes the arguments of one action of the one
 * table (actions.h), which agent_computer_parse then checks against the
 * view like any other. Coordinates are passed on as written: the view the
 * model was sent (smart-resize pixels) gives them meaning.
 *
 * Pure: no I/O, no X. Called by the gate's proposal parser for calls of
 * toolset "uitars" (one call per action; agent/llm cuts the reply's text
 * into them); nothing here runs anything.
 *
 * The grammar: NAME(KEY=VALUE, ...) with VALUE a Python string literal in
 * single or double quotes (escapes \\ \' \" \n \t \r; other backslashes
 * kept as written) or a number; nothing after the closing parenthesis.
 * A point (start_box, end_box, point, start_point, end_point) is "(x,y)",
 * "(x1,y1,x2,y2)" (its centre), "<point>x y</point>" or
 * "<bbox>x1 y1 x2 y2</bbox>", optionally inside <|box_start|>...<|box_end|>.
 * Anything else is refused with a message for the model, never guessed.
 *
 * The mapping:
 *   click, left_single (start_box|point)   left_click
 *   left_double                            double_click
 *   right_single                           right_click
 *   hover                                  mouse_move
 *   drag, select (start_box|start_point, end_box|end_point)
 *                                          left_click_drag
 *   hotkey(key|hotkey='ctrl c')            key "ctrl+c" (names as xdotool's)
 *   press(key|press='enter')               key (one press and release)
 *   type(content='...')                    type (a trailing \n is Enter)
 *   scroll(start_box|point?, direction)    scroll AGENT_UITARS_SCROLL_CLICKS
 *   wait()                                 wait AGENT_UITARS_WAIT_S seconds
 *   finished(content?), call_user()        not actions: the task ends
 *                                          (agent_uitars_final)
 *   keydown, keyup                         refused: deskhand holds keys
 *                                          only within one action
 */
#ifndef DESKHAND_AGENT_UITARS_H
#define DESKHAND_AGENT_UITARS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The reference harness scrolls 5 wheel clicks and waits 5 s. */
#define AGENT_UITARS_SCROLL_CLICKS 5
#define AGENT_UITARS_WAIT_S 5

/*
 * One action's text ("click(start_box='(1,2)')") -> the arguments of a
 * deskhand computer action. finished and call_user are refused here (ask
 * agent_uitars_final first). On failure returns NULL and writes a message
 * for the model into err. The caller deletes the result.
 */
cJSON *agent_uitars_action_args(const char *action, char *err, size_t errlen);

/*
 * Whether the action ends the task: finished(content=...) (the content is
 * *text) or call_user() (*text says the model needs the user). *text is
 * malloc'd, owned by the caller. False for anything else, unparsable too.
 */
bool agent_uitars_final(const char *action, char **text);

#endif
