/* agent/session/options — defaults, config file and command line, in that order. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/session/options.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "os/os.h"

BASE_ERROR_TEXT(static, opt_err, agent_options_error, fail)

/*
 * Out of memory while copying a setting leaves the old value and is
 * reported by the next parse/validate call (set_str has many callers that
 * cannot all fail on their own).
 */
static bool opt_oom;

static void set_str(char **dst, const char *src)
{
	char *copy = src != NULL ? strdup(src) : NULL;
	if (src != NULL && copy == NULL) {
		opt_oom = true;
		return;
	}
	free(*dst);
	*dst = copy;
}

void agent_options_init(agent_options *o)
{
	memset(o, 0, sizeof(*o));
	o->provider = PROVIDER_OPENAI;
	o->api = PROVIDER_API_AUTO;
	o->safe_mode = AGENT_POLICY_SAFE_OFF;
	o->sandbox = SANDBOX_STANDARD;
	o->computer_tool = ANTHROPIC_TOOL_AUTO;
	o->think = PROVIDER_THINK_NONE;
	o->max_output = 2800;
	o->max_steps = 50;
	o->keep_images = 3;
	o->context_window = 128000;
	o->max_tokens = 4096;
	o->screen_max_w = 1280;
	o->screen_max_h = 800;
	o->monitor = -1;
	o->settle_ms = 2000;
	o->prompt_cache = true;
}

void agent_options_finish(agent_options *o)
{
	if (o == NULL)
		return;
	free(o->model);
	free(o->api_base);
	if (o->api_key != NULL) {
		/* The key should not linger in freed memory. */
		memset(o->api_key, 0, strlen(o->api_key));
		free(o->api_key);
	}
	free(o->script);
	free(o->conversation);
	free(o->audit);
	free(o->message);
	free(o->workspace);
	free(o->config_path);
	free(o->console);
	memset(o, 0, sizeof(*o));
}

/* The reason fail() left, after the config file's path when the value came
 * from one (path NULL: from the command line). Always false. */
static bool fail_in(const char *path)
{
	if (path == NULL)
		return false;
	char tmp[sizeof(opt_err.text)];
	snprintf(tmp, sizeof(tmp), "%.200s: %.300s", path, opt_err.text);
	return fail("%s", tmp);
}

static bool parse_long(const char *what, const char *s, long min, long max, long *out)
{
	char *end = NULL;
	if (s == NULL || *s == '\0' || !(*s == '-' || (*s >= '0' && *s <= '9')))
		return fail("%s: '%s' is not a whole number", what, s ? s : "");
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end != '\0')
		return fail("%s: '%s' is not a whole number", what, s);
	if (errno == ERANGE || v < min || v > max)
		return fail("%s: %s is out of range (%ld..%ld)", what, s, min, max);
	*out = v;
	return true;
}

static bool parse_size(const char *what, const char *s, long *w, long *h)
{
	const char *x = strchr(s, 'x');
	if (x == NULL)
		return fail("%s: '%s' is not WIDTHxHEIGHT", what, s);
	char wbuf[32];
	size_t n = (size_t)(x - s);
	if (n == 0 || n >= sizeof(wbuf))
		return fail("%s: '%s' is not WIDTHxHEIGHT", what, s);
	memcpy(wbuf, s, n);
	wbuf[n] = '\0';
	return parse_long(what, wbuf, 64, 8192, w) && parse_long(what, x + 1, 64, 8192, h);
}

/* The options of the command line (getopt_long's values); the settings with
 * names are parsed by the same code from a flag or the config file. */
enum {
	OPT_PROVIDER = 1000, OPT_MODEL, OPT_API_BASE, OPT_API_KEY, OPT_SCRIPT,
	OPT_SAFE_MODE, OPT_OS, OPT_OS_AUTO_APPROVE, OPT_SANDBOX, OPT_CONVERSATION,
	OPT_CONVERSATIONS, OPT_AUDIT, OPT_MAX_OUTPUT, OPT_MAX_STEPS, OPT_KEEP_IMAGES,
	OPT_CONTEXT_WINDOW, OPT_MAX_TOKENS, OPT_JSON, OPT_VERSION, OPT_WORKSPACE,
	OPT_SCREEN_MAX, OPT_MONITOR, OPT_GRID, OPT_MARKS, OPT_SETTLE_MS, OPT_CONFIG,
	OPT_NO_PROMPT_CACHE, OPT_API, OPT_STORE, OPT_COMPUTER_TOOL, OPT_GROUNDING, OPT_THINK,
	OPT_CONSOLE, OPT_CONSOLE_ALLOW_REMOTE, OPT_DISPLAY_BACKEND, OPT_MODEL_TIMEOUT,
};

/* v is none of the names (an owner's table): why, listing them. Always false. */
static bool not_one_of(const char *path, const char *what, const char *v,
                       const char *const *names, size_t n)
{
	char list[128];
	base_names_join(names, n, "|", NULL, list, sizeof(list));
	fail("%s: '%s' is not one of %s", what, v, list);
	return fail_in(path);
}

/*
 * A setting with names (c: its option), parsed once by the owner of its
 * enum into o. `what` names it in a refusal ("--sandbox", "sandbox"), path
 * is the config file it came from (NULL: the command line). False: refused,
 * fail() said why.
 */
static bool apply_choice(agent_options *o, int c, const char *what, const char *v,
                         const char *path)
{
	sandbox_profile sandbox;
	switch (c) {
	case OPT_PROVIDER:
		if (!provider_kind_parse(v, &o->provider))
			return not_one_of(path, what, v, BASE_NAMES(provider_kind_names));
		return true;
	case OPT_API:
		if (!provider_api_parse(v, &o->api))
			return not_one_of(path, what, v, BASE_NAMES(provider_api_names));
		return true;
	case OPT_SAFE_MODE:
		if (!agent_policy_safe_mode_parse(v, &o->safe_mode))
			return not_one_of(path, what, v, BASE_NAMES(agent_policy_safe_mode_names));
		if (path == NULL)
			o->safe_mode_from_flag = true;
		return true;
	case OPT_SANDBOX:
		if (!sandbox_profile_from_name(v, &sandbox))
			return not_one_of(path, what, v, BASE_NAMES(sandbox_profile_names));
		if (path != NULL && sandbox == SANDBOX_OFF) /* see config_item_allowed */
			return fail("%s: \"sandbox\": \"off\" is not read from a file; only "
			            "--sandbox off on the command line switches the sandbox off", path);
		o->sandbox = sandbox;
		return true;
	case OPT_COMPUTER_TOOL:
		if (!anthropic_tool_parse(v, &o->computer_tool))
			return not_one_of(path, what, v, BASE_NAMES(anthropic_tool_names));
		return true;
	case OPT_GROUNDING:
		if (!vision_grounding_parse(v, &o->grounding))
			return not_one_of(path, what, v, BASE_NAMES(vision_grounding_names));
		o->grounding_given = true;
		return true;
	case OPT_THINK:
		if (!provider_think_parse(v, &o->think))
			return not_one_of(path, what, v, BASE_NAMES(provider_think_names));
		return true;
	case OPT_DISPLAY_BACKEND:
		if (!os_backend_parse(v, &o->display_backend))
			return not_one_of(path, what, v, BASE_NAMES(os_backend_names));
		return true;
	default:
		return fail("%s: not a setting with names", what);
	}
}

/* ---- config file --------------------------------------------------- */

struct cfg_num {
	const char *key;
	size_t offset;
	long min, max;
};

#define NUM(k, f, lo, hi) {k, offsetof(agent_options, f), lo, hi}
static const struct cfg_num cfg_nums[] = {
	NUM("max_output", max_output, 100, 10000000),
	NUM("max_steps", max_steps, 1, 100000),
	NUM("keep_images", keep_images, 0, 100),
	NUM("context_window", context_window, 1000, 100000000),
	NUM("max_tokens", max_tokens, 1, 1000000),
	NUM("monitor", monitor, -1, 64),
	NUM("settle_ms", settle_ms, 0, 60000),
	NUM("model_timeout", model_timeout, 1, 86400),
};

struct cfg_str {
	const char *key;
	size_t offset;
};

#define STR(k, f) {k, offsetof(agent_options, f)}
static const struct cfg_str cfg_strs[] = {
	STR("model", model),
	STR("api_base", api_base),
	STR("api_key", api_key),
	STR("script", script),
	STR("audit", audit),
	STR("workspace", workspace),
};

/* The settings with names: a string, parsed as its option's value is. */
static const struct cfg_choice {
	const char *key;
	int opt;
} cfg_choices[] = {
	{"provider", OPT_PROVIDER},
	{"api", OPT_API},
	{"safe_mode", OPT_SAFE_MODE},
	{"sandbox", OPT_SANDBOX},
	{"computer_tool", OPT_COMPUTER_TOOL},
	{"grounding", OPT_GROUNDING},
	{"think", OPT_THINK},
	{"display_backend", OPT_DISPLAY_BACKEND},
};

struct cfg_bool {
	const char *key;
	size_t offset;
};

#define BOOL(k, f) {k, offsetof(agent_options, f)}
static const struct cfg_bool cfg_bools[] = {
	BOOL("auto_run", auto_run),
	BOOL("os", os),
	BOOL("json", json),
	BOOL("grid", grid),
	BOOL("marks", marks),
	BOOL("prompt_cache", prompt_cache),
	BOOL("store", store),
};

/* What waives the human's confirmation or the sandbox comes from the person
 * at start, never from a file: code that can write the file (a block run
 * under -y, a planted dotfile) must not be able to switch it on for the
 * next session. (The sandbox: apply_choice refuses the parsed profile off
 * from a file.) */
static bool config_item_allowed(const char *path, const cJSON *it)
{
	if (strcmp(it->string, "os_auto_approve") == 0)
		return fail("%s: \"os_auto_approve\" is not read from a file; only "
		            "--os-auto-approve on the command line waives the confirmation "
		            "of OS actions", path);
	return true;
}

static bool apply_config_item(agent_options *o, const char *path, const cJSON *it)
{
	const char *k = it->string;
	if (!config_item_allowed(path, it))
		return false;
	for (size_t i = 0; i < sizeof(cfg_nums) / sizeof(cfg_nums[0]); i++) {
		if (strcmp(k, cfg_nums[i].key) != 0)
			continue;
		double d = it->valuedouble;
		if (!cJSON_IsNumber(it) || d != floor(d))
			return fail("%s: \"%s\" must be a whole number", path, k);
		/* Compared as doubles: converting 1e300 to long first is undefined. */
		if (d < (double)cfg_nums[i].min || d > (double)cfg_nums[i].max)
			return fail("%s: \"%s\" is out of range (%ld..%ld)", path, k,
			            cfg_nums[i].min, cfg_nums[i].max);
		*(long *)((char *)o + cfg_nums[i].offset) = (long)d;
		return true;
	}
	for (size_t i = 0; i < sizeof(cfg_strs) / sizeof(cfg_strs[0]); i++) {
		if (strcmp(k, cfg_strs[i].key) != 0)
			continue;
		if (!cJSON_IsString(it))
			return fail("%s: \"%s\" must be a string", path, k);
		set_str((char **)((char *)o + cfg_strs[i].offset), it->valuestring);
		return true;
	}
	for (size_t i = 0; i < sizeof(cfg_choices) / sizeof(cfg_choices[0]); i++) {
		if (strcmp(k, cfg_choices[i].key) != 0)
			continue;
		if (!cJSON_IsString(it))
			return fail("%s: \"%s\" must be a string", path, k);
		return apply_choice(o, cfg_choices[i].opt, k, it->valuestring, path);
	}
	for (size_t i = 0; i < sizeof(cfg_bools) / sizeof(cfg_bools[0]); i++) {
		if (strcmp(k, cfg_bools[i].key) != 0)
			continue;
		if (!cJSON_IsBool(it))
			return fail("%s: \"%s\" must be true or false", path, k);
		*(bool *)((char *)o + cfg_bools[i].offset) = cJSON_IsTrue(it);
		return true;
	}
	if (strcmp(k, "screen_max") == 0) {
		if (!cJSON_IsString(it))
			return fail("%s: \"screen_max\" must be a string like \"1280x800\"", path);
		if (!parse_size("screen_max", it->valuestring, &o->screen_max_w, &o->screen_max_h))
			return fail_in(path);
		return true;
	}
	return fail("%s: unknown setting \"%s\"", path, k);
}

static char *read_small_file(const char *path, bool *missing)
{
	char *text = base_read_file(path, 1u << 20, NULL);
	*missing = text == NULL && errno == ENOENT;
	if (text == NULL && !*missing)
		fail("%s: %s", path, errno == EFBIG ? "larger than 1 MiB, not a config file"
		                                    : strerror(errno));
	return text;
}

bool agent_options_load_config(agent_options *o, const char *path)
{
	char defpath[PATH_MAX];
	bool explicit_path = path != NULL;
	if (path == NULL) {
		char dir[PATH_MAX - 16];
		if (!agent_own_dir(AGENT_DIR_CONFIG, dir, sizeof(dir)))
			return true;
		snprintf(defpath, sizeof(defpath), "%s/config.json", dir);
		path = defpath;
	}
	bool missing;
	char *text = read_small_file(path, &missing);
	if (text == NULL)
		return missing && !explicit_path ? true
		       : (missing ? fail("%s: no such file", path) : false);
	bool ok = agent_options_apply_config(o, path, text);
	free(text);
	return ok;
}

bool agent_options_apply_config(agent_options *o, const char *path, const char *text)
{
	cJSON *root = cJSON_ParseWithOpts(text, NULL, 1);
	if (root == NULL)
		return fail("%s: not valid JSON", path);
	bool ok = true;
	if (!cJSON_IsObject(root)) {
		ok = fail("%s: must hold a JSON object", path);
		goto out;
	}
	for (const cJSON *it = root->child; it != NULL && ok; it = it->next)
		ok = apply_config_item(o, path, it);
	if (ok)
		set_str(&o->config_path, path);
out:
	cJSON_Delete(root);
	return ok;
}

/* ---- command line -------------------------------------------------- */

static const struct option long_opts[] = {
	{"provider", required_argument, NULL, OPT_PROVIDER},
	{"model", required_argument, NULL, OPT_MODEL},
	{"api-base", required_argument, NULL, OPT_API_BASE},
	{"api_base", required_argument, NULL, OPT_API_BASE},
	{"api-key", required_argument, NULL, OPT_API_KEY},
	{"api_key", required_argument, NULL, OPT_API_KEY},
	{"script", required_argument, NULL, OPT_SCRIPT},
	{"auto-run", no_argument, NULL, 'y'},
	{"auto_run", no_argument, NULL, 'y'},
	{"safe-mode", required_argument, NULL, OPT_SAFE_MODE},
	{"safe_mode", required_argument, NULL, OPT_SAFE_MODE},
	{"os", no_argument, NULL, OPT_OS},
	{"os-auto-approve", no_argument, NULL, OPT_OS_AUTO_APPROVE},
	{"os_auto_approve", no_argument, NULL, OPT_OS_AUTO_APPROVE},
	{"sandbox", required_argument, NULL, OPT_SANDBOX},
	{"computer-tool", required_argument, NULL, OPT_COMPUTER_TOOL},
	{"computer_tool", required_argument, NULL, OPT_COMPUTER_TOOL},
	{"conversation", required_argument, NULL, OPT_CONVERSATION},
	{"conversations", no_argument, NULL, OPT_CONVERSATIONS},
	{"audit", required_argument, NULL, OPT_AUDIT},
	{"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
	{"max_output", required_argument, NULL, OPT_MAX_OUTPUT},
	{"max-steps", required_argument, NULL, OPT_MAX_STEPS},
	{"max_steps", required_argument, NULL, OPT_MAX_STEPS},
	{"keep-images", required_argument, NULL, OPT_KEEP_IMAGES},
	{"context-window", required_argument, NULL, OPT_CONTEXT_WINDOW},
	{"context_window", required_argument, NULL, OPT_CONTEXT_WINDOW},
	{"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
	{"max_tokens", required_argument, NULL, OPT_MAX_TOKENS},
	{"json", no_argument, NULL, OPT_JSON},
	{"version", no_argument, NULL, OPT_VERSION},
	{"help", no_argument, NULL, 'h'},
	{"message", required_argument, NULL, 'm'},
	{"workspace", required_argument, NULL, OPT_WORKSPACE},
	{"screen-max", required_argument, NULL, OPT_SCREEN_MAX},
	{"monitor", required_argument, NULL, OPT_MONITOR},
	{"grid", no_argument, NULL, OPT_GRID},
	{"marks", no_argument, NULL, OPT_MARKS},
	{"settle-ms", required_argument, NULL, OPT_SETTLE_MS},
	{"model-timeout", required_argument, NULL, OPT_MODEL_TIMEOUT},
	{"model_timeout", required_argument, NULL, OPT_MODEL_TIMEOUT},
	{"config", required_argument, NULL, OPT_CONFIG},
	{"no-prompt-cache", no_argument, NULL, OPT_NO_PROMPT_CACHE},
	{"no_prompt_cache", no_argument, NULL, OPT_NO_PROMPT_CACHE},
	{"api", required_argument, NULL, OPT_API},
	{"store", no_argument, NULL, OPT_STORE},
	{"grounding", required_argument, NULL, OPT_GROUNDING},
	{"think", required_argument, NULL, OPT_THINK},
	{"console", required_argument, NULL, OPT_CONSOLE},
	{"console-allow-remote", no_argument, NULL, OPT_CONSOLE_ALLOW_REMOTE},
	{"display-backend", required_argument, NULL, OPT_DISPLAY_BACKEND},
	{"display_backend", required_argument, NULL, OPT_DISPLAY_BACKEND},
	{NULL, 0, NULL, 0},
};

/* Whether option argument `a` (before any "--") takes the next argument
 * as its value, as getopt_long reads the command line below. */
static bool takes_next(const char *a)
{
	if (a[1] != '-') {
		/* A cluster of short options: -m's value is the rest, or the next. */
		const char *m = strchr(a + 1, 'm');
		return m != NULL && m[1] == '\0';
	}
	if (strchr(a, '=') != NULL)
		return false;
	for (size_t i = 0; long_opts[i].name != NULL; i++)
		if (strcmp(a + 2, long_opts[i].name) == 0)
			return long_opts[i].has_arg == required_argument;
	return false;
}

const char *agent_options_config_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0)
			break; /* the options end where the message begins */
		if (strcmp(a, "--config") == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (strncmp(a, "--config=", 9) == 0)
			return a + 9;
		if (takes_next(a))
			i++; /* its value, whatever it looks like */
	}
	return NULL;
}

/* What is left after the text, string and switch options: a command-line
 * option not known, or one missing its value. Always false. */
static bool refuse_option(int c, char **argv)
{
	if (c == ':')
		return fail("option %s needs a value", argv[optind - 1]);
	if (optopt != 0)
		return fail("unknown option -%c", optopt);
	return fail("unknown option %s", argv[optind - 1]);
}

/* The options with a number (or size) in a range, then refuse_option(). */
static bool apply_number_option(agent_options *o, int c, char **argv)
{
	switch (c) {
	case OPT_MAX_OUTPUT:
		return parse_long("--max-output", optarg, 100, 10000000, &o->max_output);
	case OPT_MAX_STEPS:
		return parse_long("--max-steps", optarg, 1, 100000, &o->max_steps);
	case OPT_KEEP_IMAGES:
		return parse_long("--keep-images", optarg, 0, 100, &o->keep_images);
	case OPT_CONTEXT_WINDOW:
		return parse_long("--context-window", optarg, 1000, 100000000, &o->context_window);
	case OPT_MAX_TOKENS:
		return parse_long("--max-tokens", optarg, 1, 1000000, &o->max_tokens);
	case OPT_SCREEN_MAX:
		return parse_size("--screen-max", optarg, &o->screen_max_w, &o->screen_max_h);
	case OPT_MONITOR:
		return parse_long("--monitor", optarg, 0, 64, &o->monitor);
	case OPT_SETTLE_MS:
		return parse_long("--settle-ms", optarg, 0, 60000, &o->settle_ms);
	case OPT_MODEL_TIMEOUT:
		return parse_long("--model-timeout", optarg, 1, 86400, &o->model_timeout);
	default:
		return refuse_option(c, argv);
	}
}

/* One option (c from getopt_long, its value in optarg): the text and
 * switch options here, the rest in apply_number_option(). False: refused,
 * fail() said why. */
static bool apply_option(agent_options *o, int c, char **argv)
{
	switch (c) {
	case OPT_PROVIDER: return apply_choice(o, c, "--provider", optarg, NULL);
	case OPT_API: return apply_choice(o, c, "--api", optarg, NULL);
	case OPT_SAFE_MODE: return apply_choice(o, c, "--safe-mode", optarg, NULL);
	case OPT_SANDBOX: return apply_choice(o, c, "--sandbox", optarg, NULL);
	case OPT_COMPUTER_TOOL: return apply_choice(o, c, "--computer-tool", optarg, NULL);
	case OPT_GROUNDING: return apply_choice(o, c, "--grounding", optarg, NULL);
	case OPT_THINK: return apply_choice(o, c, "--think", optarg, NULL);
	case OPT_DISPLAY_BACKEND: return apply_choice(o, c, "--display-backend", optarg, NULL);
	case OPT_MODEL: set_str(&o->model, optarg); break;
	case OPT_API_BASE: set_str(&o->api_base, optarg); break;
	case OPT_API_KEY:
		set_str(&o->api_key, optarg);
		o->api_key_from_flag = true;
		break;
	case OPT_SCRIPT: set_str(&o->script, optarg); break;
	case 'y':
		o->auto_run = true;
		o->auto_run_from_flag = true;
		break;
	case OPT_OS: o->os = true; break;
	case OPT_OS_AUTO_APPROVE: o->os_auto_approve = true; break;
	case OPT_CONVERSATION: set_str(&o->conversation, optarg); break;
	case OPT_CONVERSATIONS: o->list_conversations = true; break;
	case OPT_AUDIT: set_str(&o->audit, optarg); break;
	case OPT_JSON: o->json = true; break;
	case OPT_VERSION: o->version = true; break;
	case 'h': o->help = true; break;
	case 'm': set_str(&o->message, optarg); break;
	case OPT_WORKSPACE: set_str(&o->workspace, optarg); break;
	case OPT_GRID: o->grid = true; break;
	case OPT_MARKS: o->marks = true; break;
	case OPT_CONFIG: break; /* read before parsing; see agent_main */
	case OPT_NO_PROMPT_CACHE: o->prompt_cache = false; break;
	case OPT_STORE: o->store = true; break;
	case OPT_CONSOLE: set_str(&o->console, optarg); break;
	case OPT_CONSOLE_ALLOW_REMOTE: o->console_allow_remote = true; break;
	default:
		return apply_number_option(o, c, argv);
	}
	return true;
}

/* The arguments after the options, joined with spaces, are the message. */
static bool message_from_arguments(agent_options *o, int first, int argc, char **argv)
{
	if (o->message != NULL)
		return fail("give the message either with -m or as an argument, not both");
	size_t total = 0;
	for (int i = first; i < argc; i++)
		total += strlen(argv[i]) + 1;
	char *msg = malloc(total);
	if (msg == NULL)
		return fail("out of memory");
	msg[0] = '\0';
	for (int i = first; i < argc; i++) {
		if (i > first)
			strcat(msg, " ");
		strcat(msg, argv[i]);
	}
	free(o->message);
	o->message = msg;   /* o owns it: agent_options_finish() */
	return true;
}

bool agent_options_parse(agent_options *o, int argc, char **argv)
{
	optind = 1;
	opterr = 0;
	int c;
	/* "+" stops at the first positional so the message can hold dashes. */
	while ((c = getopt_long(argc, argv, "+:yhm:", long_opts, NULL)) != -1)
		if (!apply_option(o, c, argv))
			return false;
	return optind >= argc || message_from_arguments(o, optind, argc, argv);
}

bool agent_options_validate(const agent_options *o)
{
	if (opt_oom)
		return fail("out of memory");
	if (o->provider == PROVIDER_SCRIPT && o->script == NULL)
		return fail("--provider script needs --script FILE");
	if (o->script != NULL && o->provider != PROVIDER_SCRIPT)
		return fail("--script is only for --provider script");
	if (o->message != NULL && o->message[0] == '\0')
		return fail("the message is empty");
	/* Google serves this model the browser environment only: no desktop to drive. */
	if (o->os && o->provider == PROVIDER_GEMINI && o->model != NULL &&
	    strncmp(o->model, "gemini-2.5-computer-use-preview", 31) == 0)
		return fail("--os: %s is browser-only (Google's API gives it ENVIRONMENT_BROWSER, not "
		            "the desktop); use a desktop model such as gemini-3.5-flash", o->model);
	return true;
}

const char *agent_options_usage(void)
{
	return
	"usage: deskhand [OPTIONS] [MESSAGE]\n"
	"       deskhand COMMAND [ARGS...]   (deskhand --help lists the commands)\n"
	"\n"
	"The agent: sends MESSAGE (or -m TEXT, or lines read from standard input)\n"
	"to the model, runs the code and desktop actions it answers with — each\n"
	"through the safety gate — and feeds the results back until it is done.\n"
	"\n"
	"  --provider P          openai | anthropic | gemini | ollama | script (default openai;\n"
	"                        ollama speaks its native /api/chat)\n"
	"  --model NAME          model name sent to the provider\n"
	"  --api-base URL        endpoint base (OPENAI_BASE_URL for openai,\n"
	"                        GOOGLE_GEMINI_BASE_URL for gemini)\n"
	"  --api-key KEY         key (default: OPENAI_API_KEY / ANTHROPIC_API_KEY /\n"
	"                        GOOGLE_API_KEY, else GEMINI_API_KEY)\n"
	"  --api A               responses | chat: OpenAI's API (default: responses at\n"
	"                        api.openai.com, chat at any other --api-base)\n"
	"  --store               Responses: keep responses at OpenAI (previous_response_id)\n"
	"  --script FILE         recorded assistant turns (script provider)\n"
	"  -m, --message TEXT    the task; the run ends when the model is done\n"
	"  -y, --auto-run        run ordinary code without asking (never OS actions)\n"
	"  --safe-mode M         off | ask | auto: scan code before it runs\n"
	"  --os                  give the model the desktop (screenshots, mouse, keys)\n"
	"  --os-auto-approve     DANGER: run OS actions without asking each time\n"
	"  --sandbox P           off | standard | strict (default standard)\n"
	"  --computer-tool V     Anthropic: toolset | 20251124 | 20250124 (default: from\n"
	"                        the model; see docs/models.md)\n"
	"  --grounding G         pixels | smart-resize | relative-1000: how the model\n"
	"                        points (default: from the model name: qwen2.5-vl*,\n"
	"                        ui-tars* smart-resize; qwen3-vl* relative-1000)\n"
	"  --think T             Ollama: true | false | low | medium | high\n"
	"  --display-backend B   auto | x11 | wlroots | gnome: drives the desktop (default auto:\n"
	"                        a Wayland session its compositor's backend, else X11)\n"
	"  --workspace DIR       directory the code works in (default: current)\n"
	"  --conversation PATH   conversation file to resume or create\n"
	"  --conversations       list saved conversations\n"
	"  --audit PATH          audit log (default: beside the conversations)\n"
	"  --max-output N        characters of output kept for the model (2800)\n"
	"  --max-steps N         model turns before stopping (50)\n"
	"  --keep-images N       screenshots kept in requests (3)\n"
	"  --context-window N    tokens the model accepts (128000)\n"
	"  --max-tokens N        tokens per answer (4096)\n"
	"  --model-timeout N     seconds the model server may send nothing before the\n"
	"                        answer is given up (300; DESKHAND_HTTP_IDLE_TIMEOUT)\n"
	"  --screen-max WxH      largest screenshot sent to the model (1280x800)\n"
	"  --monitor N           the monitor the model sees (default: the pointer's)\n"
	"  --grid                draw a labelled grid on screenshots\n"
	"  --marks               outline the active window's controls on screenshots, with\n"
	"                        their element IDs (set-of-marks)\n"
	"  --settle-ms N         longest wait for the screen to settle (2000)\n"
	"  --no-prompt-cache     no cache breakpoints in Anthropic requests\n"
	"  --config FILE         settings file (default $XDG_CONFIG_HOME/deskhand/config.json;\n"
	"                        os_auto_approve and sandbox \"off\" only on the command line)\n"
	"  --console [ADDR:]PORT serve a live, authenticated control page (127.0.0.1;\n"
	"                        PORT 0 picks a free one); see docs/console.md\n"
	"  --console-allow-remote  let --console bind a non-loopback address\n"
	"  --json                print every event as a JSON line\n"
	"  -h, --help            this text (deskhand COMMAND --help: a command's)\n"
	"  --version             the version\n"
	"  (--auto_run, --safe_mode and other underscore spellings are accepted)\n";
}
