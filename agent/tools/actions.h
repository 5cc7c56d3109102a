/*
 * agent/tools/actions — the computer tool's actions, in one table.
 *
 * Every list of actions in deskhand comes from AGENT_ACTIONS: the enum
 * (below), the policy's input/observation classification and the name
 * lookup the parser uses (safety/policy.c), the descriptions in the tool
 * schema and prompt (session/prompt.c), and the list in the parser's error
 * messages (tools/computer.c). Adding an action is one line here plus its case in
 * computer.c's parser and runner; a kind without a runner is refused there.
 *
 * X(ID, "name", CLASS, "description for the model"): CLASS is INPUT (it
 * changes the desktop, so a human says yes) or OBSERVE (it only looks).
 * Anthropic's names, used for every provider.
 *
 * AGENT_ACTIONS_EXTRA lets a test build add an action with one line (see
 * tests/tools/meson.build); it is empty in the product.
 */
#ifndef DESKHAND_AGENT_ACTIONS_H
#define DESKHAND_AGENT_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#ifndef AGENT_ACTIONS_EXTRA
#define AGENT_ACTIONS_EXTRA(X)
#endif

#define AGENT_ACTIONS(X)                                                                   \
	X(KEY, "key", INPUT,                                                               \
	  "press a key or combination given in text, xdotool names (\"Return\", \"ctrl+s\"); " \
	  "repeat (1-100) presses it that many times")                                     \
	X(TYPE, "type", INPUT,                                                             \
	  "type the text given in text (at coordinate: clicked first; clear: true empties " \
	  "the field with ctrl+a, BackSpace first)")                                        \
	X(MOUSE_MOVE, "mouse_move", INPUT, "move the pointer to coordinate")              \
	X(LEFT_CLICK, "left_click", INPUT,                                                 \
	  "click at coordinate (or where the pointer is); text may hold modifier keys")     \
	X(RIGHT_CLICK, "right_click", INPUT, "right-click at coordinate")                 \
	X(MIDDLE_CLICK, "middle_click", INPUT, "middle-click at coordinate")              \
	X(BACK_CLICK, "back_click", INPUT, "click the side 'back' button (X button 8) at coordinate") \
	X(FORWARD_CLICK, "forward_click", INPUT,                                           \
	  "click the side 'forward' button (X button 9) at coordinate")                     \
	X(DOUBLE_CLICK, "double_click", INPUT, "double-click at coordinate")              \
	X(TRIPLE_CLICK, "triple_click", INPUT, "triple-click at coordinate")              \
	X(LEFT_CLICK_DRAG, "left_click_drag", INPUT,                                       \
	  "drag from start_coordinate to coordinate, or along path [[x, y], ...]")          \
	X(LEFT_MOUSE_DOWN, "left_mouse_down", INPUT, "press the left button")             \
	X(LEFT_MOUSE_UP, "left_mouse_up", INPUT, "release the left button")               \
	X(SCROLL, "scroll", INPUT, "scroll scroll_amount steps in scroll_direction at coordinate") \
	X(HOLD_KEY, "hold_key", INPUT, "hold the key in text for duration seconds")       \
	X(KEY_DOWN, "key_down", INPUT, "press the key in text and keep it down (key_up releases it)") \
	X(KEY_UP, "key_up", INPUT, "release the key in text (pressed with key_down)")     \
	X(WAIT, "wait", OBSERVE, "wait duration seconds")                                 \
	X(SCREENSHOT, "screenshot", OBSERVE, "take a screenshot")                         \
	X(CURSOR_POSITION, "cursor_position", OBSERVE, "report the pointer position")     \
	X(ZOOM, "zoom", OBSERVE, "a screenshot of region [x0, y0, x1, y1] at full resolution") \
	X(FIND_TEXT, "find_text", OBSERVE,                                                 \
	  "find the text given in text on the screen (local OCR); answers the centre "      \
	  "of each match in screenshot pixels")                                             \
	X(ELEMENTS, "elements", OBSERVE,                                                   \
	  "list the active window's controls from the accessibility tree: ID role "         \
	  "\"name\" states x y w h in screenshot coordinates; the pointer actions take "   \
	  "element: ID instead of coordinate (the centre of its box)")                      \
	X(WINDOWS, "windows", OBSERVE,                                                     \
	  "list the top-level windows: app, title, the active one, boxes in screenshot "    \
	  "coordinates")                                                                    \
	AGENT_ACTIONS_EXTRA(X)

#define AGENT_ACTION_ENUM_(id, name, cls, desc) AGENT_ACTION_##id,
typedef enum agent_action {
	AGENT_ACTIONS(AGENT_ACTION_ENUM_)
	AGENT_ACTION_COUNT
} agent_action;

/* The action named exactly `name` ("left_click"); false (nothing stored) for any other. */
bool agent_action_lookup(const char *name, agent_action *out);
/* Its name; "unknown" when out of range. */
const char *agent_action_name(agent_action a);
/* Whether it changes the desktop (class INPUT: a human says yes) rather than looks. */
bool agent_action_is_input(agent_action a);
/* "key, type, mouse_move, ...": every name, for messages to the model. */
const char *agent_action_list(void);
/* The actions the click_element tool may name (NULL-terminated; the first
 * is its default): pointer actions that take an element target. */
extern const char *const agent_element_click_actions[];

/*
 * The room's one way to say why an action was refused: the message goes
 * into err (len bytes). agent_action_refuse returns false; agent_action_drop
 * deletes o (may be NULL) and returns NULL, for the translators building
 * deskhand's arguments from a vendor's.
 */
/* v as a whole number within [min, max] (a JSON number with no fraction); false otherwise. */
bool agent_action_int(const cJSON *v, long min, long max, long *out);

/*
 * Vendors that scroll by screen pixels (OpenAI, Gemini, Qwen) get X wheel
 * clicks: one per AGENT_ACTION_SCROLL_PX pixels, rounded half away from
 * zero, at least one for any movement and at most 100 (the scroll action's
 * limit). A wheel click scrolls three lines in GTK and Qt and about
 * 50-120 px in browsers, and the vendors' reference harnesses scroll browser
 * pages by pixels: 100 px per click keeps "scroll 300 px" close to 300 px.
 */
#define AGENT_ACTION_SCROLL_PX 100
long agent_action_wheel_clicks(double px);

bool agent_action_refuse(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
cJSON *agent_action_drop(char *err, size_t len, cJSON *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
