/*
 * agent/session/options — the agent's settings: built-in defaults, then
 * $XDG_CONFIG_HOME/deskhand/config.json, then the command line (flags win).
 *
 * Parsing is strict: an unknown option, a malformed number, a bad enum value
 * or a malformed config file is an error with a message, never a guess.
 * A setting with names becomes its owner's enum here, once, by the owner's
 * parse (the names and the lists in messages are the owner's table).
 * Nothing here touches the network, the display or the terminal.
 */
#ifndef DESKHAND_AGENT_OPTIONS_H
#define DESKHAND_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/llm/llm.h"
#include "agent/safety/safety.h"
#include "executors/exec.h"
#include "os/os.h"
#include "vision/vision.h"

typedef struct agent_options {
	enum provider_kind provider;
	char *model;
	char *api_base;
	char *api_key;          /* held in memory only; never written anywhere */
	char *script;           /* script provider's file */
	enum provider_api api;  /* OpenAI's API; PROVIDER_API_AUTO: by the endpoint */
	bool store;             /* Responses: keep responses at OpenAI (previous_response_id) */
	bool auto_run;
	agent_policy_safe_mode safe_mode;
	bool os;
	bool os_auto_approve;
	os_backend_choice display_backend; /* --display-backend; AUTO by default */
	sandbox_profile sandbox;
	enum anthropic_tool computer_tool; /* Anthropic's; ANTHROPIC_TOOL_AUTO: from the model */
	vision_grounding grounding;        /* how the model points, when grounding_given */
	bool grounding_given;              /* false: from the model's name (session/setup.c) */
	enum provider_think think;         /* Ollama's; PROVIDER_THINK_NONE: not sent */
	char *conversation;     /* path to resume or create */
	bool list_conversations;
	char *audit;            /* audit log path */
	long max_output;
	long max_steps;
	long keep_images;
	long context_window;
	long max_tokens;
	bool json;
	bool version;
	bool help;
	char *message;          /* -m/--message or the positional MESSAGE */
	char *workspace;        /* working directory for code; default cwd */
	long screen_max_w, screen_max_h;
	long monitor;           /* -1: the monitor with the pointer */
	bool grid;
	bool marks;             /* set-of-marks: element IDs on the screenshots */
	long settle_ms;         /* cap for settle detection */
	long model_timeout;     /* s of silence from the model server; 0: the provider's default */
	bool prompt_cache;      /* Anthropic cache breakpoints (default on) */
	char *config_path;      /* the config file that was read, if any */
	char *console;          /* --console [ADDR:]PORT; NULL: no console */
	bool console_allow_remote;
	/* Which of the above came from the command line (for notices). */
	bool auto_run_from_flag;
	bool safe_mode_from_flag;
	bool api_key_from_flag;   /* visible to local users while deskhand starts */
} agent_options;

/* Fills the built-in defaults. Ownership: free with agent_options_finish. */
void agent_options_init(agent_options *o);
void agent_options_finish(agent_options *o);

/*
 * Reads the config file (`path`, or $XDG_CONFIG_HOME/deskhand/config.json
 * when NULL; a missing default file is not an error) into `o`.
 * Returns false with agent_options_error() set on a malformed file.
 */
bool agent_options_load_config(agent_options *o, const char *path);
/* The FILE of a --config FILE among the leading options of argv, or NULL:
 * the file to read before the flags are parsed. Borrowed from argv. */
const char *agent_options_config_arg(int argc, char **argv);
/* Applies a config file's text (NUL-terminated), named `path` in messages. */
bool agent_options_apply_config(agent_options *o, const char *path, const char *text);

/*
 * Parses the agent's command line (argv[0] is the program). Flags override
 * what is already in `o`. Returns false with agent_options_error() set on a
 * usage error; the caller exits with status 2.
 */
bool agent_options_parse(agent_options *o, int argc, char **argv);

/* Checks cross-field rules (script provider needs --script, ...). */
bool agent_options_validate(const agent_options *o);

const char *agent_options_error(void);

/* The usage text of the agent (deskhand --help). */
const char *agent_options_usage(void);

#endif
