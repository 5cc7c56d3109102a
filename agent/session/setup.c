/*
 * agent/session/setup — what one session opens, in order, and closes: the
 * provider, the conversation (resumed or new), the audit log, deskhand's
 * own files out of the code's reach, the desktop (display and session
 * bus) with the model's tools over it, the gate given all it needs once,
 * the console, and the prompt the model is told.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent/session/agent-internal.h"
#include "agent/session/bus.h"
#include "agent/session/prompt.h"
#include "agent/util/textutil.h"
#include "base/base.h"

/* What the model is told each profile keeps from its code, after its name. */
static const char *const sandbox_told[SANDBOX_PROFILE_COUNT] = {
	[SANDBOX_STANDARD] = " (no display or session bus, no credentials in the environment)",
	[SANDBOX_STRICT] = " (no network; writes only in the workspace and a private /tmp)",
};

static bool build_prompt(agent_session *s)
{
	struct utsname u;
	char desk[96] = ", X11";
	if (s->display != NULL)
		snprintf(desk, sizeof(desk), ", %s", os_display_session(s->display));
	char osdesc[256] = "Linux";
	if (uname(&u) == 0)
		snprintf(osdesc, sizeof(osdesc), "%s %s %s%s", u.sysname, u.release, u.machine, desk);
	const char *avail[EXEC_LANG_COUNT];
	size_t n = 0;
	for (int l = 0; l < EXEC_LANG_COUNT; l++)
		if (exec_lang_installed((exec_lang)l))
			avail[n++] = exec_lang_name((exec_lang)l);
	char sandbox[160];
	snprintf(sandbox, sizeof(sandbox), "%s%s", sandbox_profile_name(s->opt->sandbox),
	         base_name_of(BASE_NAMES(sandbox_told), (int)s->opt->sandbox, ""));
	const vision_view *view = agent_tools_view(s->tools);
	struct prompt_env env = {
		.os = osdesc,
		.languages = avail,
		.n_languages = n,
		.sandbox = sandbox,
		.computer = s->display != NULL,
		.screen_width = view->model_w,
		.screen_height = view->model_h,
		.coord_width = vision_coord_w(view),
		.coord_height = vision_coord_h(view),
		.family = provider_family(s->provider),
	};
	s->system_prompt = prompt_system(&env);
	if (s->system_prompt == NULL || !prompt_tools(&env, &s->declared)) {
		agent_term_error(s->term, "out of memory");
		return false;
	}
	return true;
}

static bool open_conversation(agent_session *s)
{
	const char *path = s->opt->conversation;
	char *owned = NULL;
	if (path != NULL && access(path, F_OK) == 0) {
		s->conv = conv_load(path);
		if (s->conv == NULL) {
			agent_term_error(s->term, "%s", conv_error());
			return false;
		}
		agent_term_notice(s->term, "resuming %s (%zu messages)", path, s->conv->n_messages);
		return true;
	}
	if (path == NULL) {
		char *dir = conv_default_dir();
		if (dir == NULL) {
			agent_term_error(s->term, "%s", conv_error());
			return false;
		}
		owned = conv_new_path(dir);
		free(dir);
		if (owned == NULL) {
			agent_term_error(s->term, "out of memory");
			return false;
		}
		path = owned;
	}
	s->conv = conv_create(path);
	free(owned);
	if (s->conv == NULL) {
		agent_term_error(s->term, "out of memory");
		return false;
	}
	return true;
}

bool session_open_audit(agent_session *s)
{
	char *path = NULL;
	if (s->opt->audit != NULL) {
		path = strdup(s->opt->audit);
	} else if (s->conv == NULL) {
		/* A session without a conversation (an MCP server): one log per run. */
		char id[96];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(id, sizeof(id), "mcp-%Y%m%d-%H%M%S", &tm);
		snprintf(id + strlen(id), sizeof(id) - strlen(id), "-%ld", (long)getpid());
		path = agent_audit_default_path(id);
	} else {
		/* One audit log per conversation, named after its file. */
		const char *base = strrchr(s->conv->path, '/');
		base = base != NULL ? base + 1 : s->conv->path;
		char id[256];
		snprintf(id, sizeof(id), "%s", base);
		char *dot = strrchr(id, '.');
		if (dot != NULL)
			*dot = '\0';
		path = agent_audit_default_path(id);
	}
	if (path == NULL) {
		agent_term_error(s->term, "audit log: %s", agent_audit_error());
		return false;
	}
	s->audit = agent_audit_open(path);
	if (s->audit == NULL) {
		agent_term_error(s->term, "audit log %s: %s", path, agent_audit_error());
		free(path);
		return false;
	}
	free(path);
	/* A crash's unconfirmed last line is evidence too, but no sign of an edit. */
	if (agent_audit_set_aside_crashed(s->audit))
		agent_term_warning(s->term, "the audit log ends where deskhand was stopped (a crash "
		                   "or kill): %s. It is kept as it is; this session logs to %s",
		                   agent_audit_set_aside(s->audit), agent_audit_path(s->audit));
	/* Someone edited the history: say so every time, and never extend it. */
	else if (agent_audit_set_aside(s->audit) != NULL)
		agent_term_warning(s->term, "THE AUDIT LOG FAILS VERIFICATION: %s. It is kept as it is; "
		                   "this session logs to %s", agent_audit_set_aside(s->audit),
		                   agent_audit_path(s->audit));
	return true;
}

/*
 * The kill switch watches the pointer; where the display cannot tell where
 * it is, the compositor binds a stop key for it. Where neither can be had,
 * a run whose actions are not asked does not start unless someone can stop
 * it otherwise: Ctrl-C in this terminal, or the console's Stop.
 */
static bool arm_stop(agent_session *s)
{
	const char *why = NULL;
	if (os_feature_how(s->display, OS_FEATURE_POINTER_POSITION, &why) != NULL)
		return true;
	/* The override's banner tells of the corner and the mouse: not here. */
	const char *not_corner = s->opt->os_auto_approve
		? " (the screen corner and moving the mouse do NOT stop it here)" : "";
	char key[160];
	if (os_stop_key_arm(s->display, key, sizeof(key))) {
		agent_term_notice(s->term, "the kill switch cannot watch the pointer here (%s): "
		                  "press %s to stop a run, or Ctrl-C%s", why, key, not_corner);
		return true;
	}
	char nokey[256];
	snprintf(nokey, sizeof(nokey), "%s", os_error());
	if (!s->opt->os_auto_approve || agent_term_interactive(s->term) || s->opt->console) {
		agent_term_notice(s->term, "the kill switch cannot watch the pointer here (%s) and "
		                  "no stop key can be bound (%s): stop a run with Ctrl-C%s%s", why,
		                  nokey, s->opt->console ? " or the console's Stop" : "", not_corner);
		return true;
	}
	agent_term_error(s->term, "--os-auto-approve: nothing could stop this run: the kill switch "
	                 "cannot watch the pointer here (%s), no stop key can be bound (%s), and "
	                 "there is no terminal for Ctrl-C; run it from a terminal or with --console "
	                 "(its Stop button)", why, nokey);
	s->status = 2;
	return false;
}

bool session_open_desktop(agent_session *s)
{
	bool unsupported = false;
	s->display = os_display_connect(NULL, &unsupported);
	if (s->display == NULL) {
		agent_term_error(s->term, "%s (--os needs a desktop deskhand can drive; "
		                 "deskhand doctor tells what works here)", os_error());
		/* A desktop deskhand does not drive is refused like a bad option. */
		if (unsupported)
			s->status = 2;
		return false;
	}
	if (os_display_warning(s->display) != NULL)
		agent_term_warning(s->term, "%s", os_display_warning(s->display));
	if (!arm_stop(s))
		return false;
	char bus[1024];
	if (agent_session_bus(s->display, bus, sizeof(bus)) != AGENT_BUS_FOUND)
		agent_term_notice(s->term, "%s", bus);
	return true;
}

static bool start_provider(agent_session *s)
{
	struct provider_settings ps = {
		.kind = s->opt->provider,
		.model = s->opt->model,
		.base_url = s->opt->api_base,
		.api_key = s->opt->api_key,
		.script = s->opt->script,
		.store = s->opt->store,
		.api = s->opt->api,
		.computer_tool = s->opt->computer_tool,
		.think = s->opt->think,
		.idle_timeout_s = s->opt->model_timeout,
	};
	s->provider = provider_create(&ps);
	if (s->provider == NULL) {
		agent_term_error(s->term, "%s", provider_error());
		return false;
	}
	return true;
}

/*
 * What deskhand reads at its next start or keeps as evidence — its
 * configuration and scanner rules, its data (conversations, audit logs,
 * history), the files named on the command line — is hidden from the code
 * (executors/sandbox.h: sandbox_plan_hide). The two directories are created
 * now if missing, so that code cannot create them first and plant a
 * config.json for the next run.
 */
void session_own_files(agent_session *s)
{
	char dir[4096];
	int n = 0;
	static const agent_dir_kind kinds[] = {AGENT_DIR_CONFIG, AGENT_DIR_DATA};
	for (size_t k = 0; k < 2; k++) {
		if (!agent_own_dir(kinds[k], dir, sizeof(dir)) || !agent_make_dirs(dir)) {
			agent_term_warning(s->term, "cannot create deskhand's %s directory (%s): "
			                   "code may be able to plant files there",
			                   kinds[k] == AGENT_DIR_CONFIG ? "configuration" : "data",
			                   strerror(errno));
			continue;
		}
		s->hidden[n++] = strdup(dir);
	}
	const char *files[] = {
		s->opt->config_path, agent_audit_path(s->audit),
		agent_audit_head_path(s->audit), s->conv != NULL ? s->conv->path : NULL,
		s->opt->script,
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i] != NULL && n < AGENT_HIDDEN_MAX)
			s->hidden[n++] = strdup(files[i]);
	s->hidden[n] = NULL;
	/* Previews of `d` go beside the conversation, which keeps this path
	 * (without one, beside the audit log). */
	if (s->conv != NULL) {
		s->conv_dir = conv_dir(s->conv);
	} else {
		s->conv_dir = strdup(agent_audit_path(s->audit));
		char *slash = s->conv_dir != NULL ? strrchr(s->conv_dir, '/') : NULL;
		if (slash != NULL)
			*slash = '\0';
	}
}

/* The key given with --api-key: out of deskhand's own /proc/PID/cmdline
 * once read (it was visible to every local user until now). */
static void wipe_api_key(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *key = NULL;
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--api-key") == 0 || strcmp(a, "--api_key") == 0)
			key = i + 1 < argc ? argv[++i] : NULL;
		else if (strncmp(a, "--api-key=", 10) == 0 || strncmp(a, "--api_key=", 10) == 0)
			key = a + 10;
		if (key != NULL)
			memset(key, 'x', strlen(key));
	}
}

/*
 * How the model points (--grounding, else its family's own convention by
 * name): Qwen2.5-VL and UI-TARS answer in pixels of an image sized by
 * smart_resize (their smallest areas 3136 and 100*28*28), Qwen3-VL on a
 * 0..999 grid, the rest in the pixels of the fitted image.
 */
static void grounding_setup(agent_session *s, vision_shot_opts *vo)
{
	vo->min_pixels = 3136;
	vo->relative = 1000;
	if (s->provider == NULL) {
		/* No model of deskhand's (an MCP host's): the image's own pixels. */
		vo->grounding = s->opt->grounding_given ? s->opt->grounding : VISION_GROUND_PIXELS;
		return;
	}
	enum model_family f = model_family_of(provider_model(s->provider));
	if (provider_kind_of(s->provider) == PROVIDER_GEMINI)
		vo->grounding = VISION_GROUND_RELATIVE; /* 0..999 whatever the image size */
	else if (s->opt->grounding_given)
		vo->grounding = s->opt->grounding;
	else if (f == MODEL_FAMILY_QWEN25_VL || f == MODEL_FAMILY_UITARS)
		vo->grounding = VISION_GROUND_SMART_RESIZE;
	else if (f == MODEL_FAMILY_QWEN3_VL)
		vo->grounding = VISION_GROUND_RELATIVE;
	else
		vo->grounding = VISION_GROUND_PIXELS;
	vo->min_pixels = f == MODEL_FAMILY_UITARS ? 100L * 28 * 28 : 3136;
	vo->relative = 1000;
}

/*
 * The model's tools over the desktop. The monitor is chosen once
 * (--monitor, else the pointer's) and kept: the model's picture must not
 * jump to another monitor because a click near an edge left the pointer
 * there.
 */
bool session_open_tools(agent_session *s)
{
	agent_tools_config cfg = {
		.display = s->display,
		.settle_ms = (int)s->opt->settle_ms,
		.marks = s->opt->marks,
		.cancel = &agent_cancel,
	};
	vision_shot_opts_init(&cfg.shot);
	cfg.shot.max_w = (int)s->opt->screen_max_w;
	cfg.shot.max_h = (int)s->opt->screen_max_h;
	cfg.shot.monitor = (int)s->opt->monitor;
	cfg.shot.grid = s->opt->grid;
	grounding_setup(s, &cfg.shot);
	s->tools = agent_tools_create(&cfg);
	if (s->tools == NULL)
		agent_term_error(s->term, "%s", agent_tools_error());
	return s->tools != NULL;
}

/* What the gate needs of the session, handed over once (agent/safety/gate.h). */
bool session_open_gate(agent_session *s)
{
	agent_gate_config cfg = {
		.term = s->term,
		.audit = s->audit,
		.tools = s->tools,
		.preview_dir = s->conv_dir,
		.cancel = &agent_cancel,
		.exec_for_signals = &agent_exec_for_signals,
		.workspace = s->opt->workspace,
		.hidden = (const char *const *)s->hidden,
		.max_output = (size_t)s->opt->max_output,
		.settings = s->settings,
		.sandbox = s->opt->sandbox,
	};
	s->gate = agent_gate_create(&cfg);
	if (s->gate == NULL)
		agent_term_error(s->term, "out of memory");
	return s->gate != NULL;
}

void session_startup(agent_session *s, int argc, char **argv)
{
	const agent_options *opt = s->opt;
	agent_policy_settings requested = {
		.auto_run = opt->auto_run,
		.safe_mode = opt->safe_mode,
		.os_auto_approve = opt->os_auto_approve,
	};
	agent_policy_startup start = agent_policy_settings_startup(&requested);
	s->settings = start.settings;
	if (start.banner != NULL)
		agent_term_warning(s->term, "%s", start.banner);
	if (opt->api_key_from_flag) {
		wipe_api_key(argc, argv);
		agent_term_warning(s->term, "--api-key on a command line is visible to other "
		                   "local users (ps) while deskhand starts: prefer the provider's "
		                   "environment variable or \"api_key\" in the config file");
	}
	for (size_t i = 0; i < start.n_notices; i++)
		agent_term_notice(s->term, "%s", start.notices[i]);
}

/* A resumed conversation must be the file deskhand last saved. */
static void check_resumed(agent_session *s)
{
	char hex[AGENT_AUDIT_HASH_HEX + 1], *real = NULL;
	if (s->conv->n_messages == 0 || !session_conv_digest(s->conv->path, &real, hex))
		return;
	agent_audit_conv seen = agent_audit_conversation_check(s->audit, real, hex);
	if (seen == AGENT_AUDIT_CONV_CHANGED)
		agent_term_warning(s->term, "THE CONVERSATION FILE %s WAS CHANGED since deskhand last "
		                   "saved it (its SHA-256 is not the one the audit log records): "
		                   "messages in it may be forged", s->conv->path);
	else if (seen == AGENT_AUDIT_CONV_UNSAVED)
		agent_term_notice(s->term, "%s is the conversation as saved before its last save, "
		                  "which deskhand was stopped in (the audit log's last record): "
		                  "the newest messages were not kept", s->conv->path);
	free(real);
}

bool session_open(agent_session *s)
{
	if (!start_provider(s) || !open_conversation(s) || !session_open_audit(s))
		return false;
	session_own_files(s);
	if (!agent_audit_session(s->audit, s->conv->path, &s->settings)) {
		agent_term_error(s->term, "audit log %s: %s", agent_audit_path(s->audit),
		                 agent_audit_error());
		return false;
	}
	check_resumed(s);
	if (s->opt->os && !session_open_desktop(s))
		return false;
	if (!session_open_tools(s) || !session_open_gate(s))
		return false;
	if (s->opt->console != NULL && !session_console_open(s))
		return false;
	return build_prompt(s);
}

void session_finish(agent_session *s)
{
	session_console_close(s);
	provider_destroy(s->provider);
	conv_destroy(s->conv);
	provider_tools_clear(&s->declared);
	free(s->system_prompt);
	agent_gate_destroy(s->gate);
	agent_tools_destroy(s->tools);
	agent_audit_close(s->audit);
	os_display_close(s->display);
	for (size_t i = 0; s->hidden[i] != NULL; i++)
		free(s->hidden[i]);
	free(s->conv_dir);
}
