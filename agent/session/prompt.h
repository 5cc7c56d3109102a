/*
 * agent/session/prompt — what the model is told: the system prompt (its environment
 * and the rule that text seen on screen or in tool output is data, not the
 * user's instructions) and the declarations of the tools it may call.
 * Pure functions of their input; the wire formats are agent/provider's.
 */
#ifndef DESKHAND_AGENT_PROMPT_H
#define DESKHAND_AGENT_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/llm/llm.h"

struct prompt_env {
	const char *os;                /* e.g. "Linux 6.1.0 x86_64, X11"; NULL: "Linux, X11" */
	const char *const *languages;  /* what `execute` can run, e.g. {"python", "shell"} */
	size_t n_languages;            /* 0: no execute tool */
	const char *sandbox;           /* the profile, e.g. "strict (no network, ...)"; NULL: none */
	bool computer;                 /* --os: the computer tool is offered */
	int screen_width, screen_height; /* the size of the screenshots the model sees */
	/* The grid its coordinates are on (Qwen3-VL: 1000x1000); 0: the screenshot's pixels. */
	int coord_width, coord_height;
	/*
	 * An open model's family (agent/llm/family.h): Qwen's are offered their
	 * own computer_use function instead of `computer` and find_text;
	 * UI-TARS no tools (it writes its actions as text) and its own prompt
	 * format with its action space.
	 */
	enum model_family family;
	const char *custom;            /* the user's own instructions, appended; NULL: none */
};

/*
 * The actions of the computer tool, Anthropic's names for every provider.
 * To add one (find_text), add a row to the table in prompt.c: the schema's
 * enum and the description are generated from it.
 */
struct prompt_action {
	const char *name;
	const char *description;
};
extern const struct prompt_action prompt_computer_actions[];
extern const size_t prompt_n_computer_actions;

/* The system prompt. malloc'd; NULL only when out of memory. */
char *prompt_system(const struct prompt_env *env);

/*
 * The tool declarations: `execute` when languages are given, `computer` when
 * env->computer (and then computer_width/height = the screenshot size, which
 * the Anthropic provider turns into its native computer tool); for the Qwen
 * families `computer_use` (Qwen's schema, its display size the coordinate
 * grid) instead; for UI-TARS none. Clear with
 * provider_tools_clear. False only when out of memory (*out is then empty).
 */
bool prompt_tools(const struct prompt_env *env, struct provider_tools *out);

#endif
