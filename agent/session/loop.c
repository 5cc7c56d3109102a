/*
 * agent/session/loop — `deskhand [OPTIONS] [MESSAGE]`: set-up, the turn loop, magic
 * commands, Ctrl-C. See loop.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/session/agent-internal.h"
#include "agent/session/bus.h"
#include "agent/session/loop.h"
#include "agent/session/prompt.h"
#include "agent/util/textutil.h"
#include "config.h"

volatile sig_atomic_t agent_cancel;
exec_sessions *volatile agent_exec_for_signals;
static volatile sig_atomic_t sigint_count;

static void on_sigint(int sig)
{
	(void)sig;
	agent_cancel = 1;
	if (agent_exec_for_signals != NULL)
		exec_sessions_interrupt(agent_exec_for_signals);
	if (++sigint_count >= 2) {
		static const char msg[] = "\ndeskhand: interrupted twice, quitting\n";
		ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
		(void)w;
		agent_term_tty_restore();
		_exit(130);
	}
}

/* Ends the way the signal would have, with the terminal as it was found. */
static void on_fatal(int sig)
{
	agent_term_tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking read at the prompt must see the interrupt. */
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A file-size limit (ulimit -f) then fails a write with EFBIG, which is
	 * reported and, for the audit log, ends the run, instead of killing
	 * deskhand in the middle of a record. Code sessions reset every signal. */
	signal(SIGXFSZ, SIG_IGN);
	sa.sa_handler = on_fatal;
	static const int fatal[] = {SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old;
		/* Ignored when started (nohup's SIGHUP) stays ignored: the user
		 * asked the agent to outlive it. */
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fatal[i], &sa, NULL);
	}
}

/* ---- set-up ------------------------------------------------------------ */

static const char *const languages[] = {"python", "shell", "javascript", "ruby", "r"};

static bool build_prompt(agent_session *s)
{
	struct utsname u;
	char osdesc[256] = "Linux, X11";
	if (uname(&u) == 0)
		snprintf(osdesc, sizeof(osdesc), "%s %s %s, X11", u.sysname, u.release, u.machine);
	const char *avail[5];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(languages) / sizeof(languages[0]); i++) {
		exec_lang l;
		if (exec_lang_from_name(languages[i], &l) && exec_lang_installed(l))
			avail[n++] = languages[i];
	}
	char sandbox[160];
	snprintf(sandbox, sizeof(sandbox), "%s", s->opt->sandbox);
	if (strcmp(s->opt->sandbox, "strict") == 0)
		snprintf(sandbox, sizeof(sandbox),
		         "strict (no network; writes only in the workspace and a private /tmp)");
	else if (strcmp(s->opt->sandbox, "standard") == 0)
		snprintf(sandbox, sizeof(sandbox),
		         "standard (no display or session bus, no credentials in the environment)");
	struct prompt_env env = {
		.os = osdesc,
		.languages = avail,
		.n_languages = n,
		.sandbox = sandbox,
		.computer = s->gate.display != NULL,
		.screen_width = s->gate.view.model_w,
		.screen_height = s->gate.view.model_h,
		.coord_width = vision_coord_w(&s->gate.view),
		.coord_height = vision_coord_h(&s->gate.view),
		.family = provider_family(s->provider),
	};
	s->system_prompt = prompt_system(&env);
	if (s->system_prompt == NULL || !prompt_tools(&env, &s->tools)) {
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

static bool open_audit(agent_session *s)
{
	char *path = NULL;
	if (s->opt->audit != NULL) {
		path = strdup(s->opt->audit);
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
	s->gate.audit = agent_audit_open(path);
	if (s->gate.audit == NULL) {
		agent_term_error(s->term, "audit log %s: %s", path, agent_audit_error());
		free(path);
		return false;
	}
	free(path);
	/* Someone edited the history: say so every time, and never extend it. */
	if (agent_audit_set_aside(s->gate.audit) != NULL)
		agent_term_warning(s->term, "THE AUDIT LOG FAILS VERIFICATION: %s. It is kept as it is; "
		                   "this session logs to %s", agent_audit_set_aside(s->gate.audit),
		                   agent_audit_path(s->gate.audit));
	return true;
}

static bool open_desktop(agent_session *s)
{
	s->gate.display = os_display_open(NULL);
	if (s->gate.display == NULL) {
		agent_term_error(s->term, "%s (--os needs an X display)", os_error());
		return false;
	}
	char bus[1024];
	if (agent_session_bus(s->gate.display, bus, sizeof(bus)) != AGENT_BUS_FOUND)
		agent_term_notice(s->term, "%s", bus);
	/*
	 * The monitor is chosen once (--monitor, else the pointer's) and kept:
	 * the model's picture must not jump to another monitor because a click
	 * near an edge left the pointer there.
	 */
	os_rect mons[16];
	int n = os_monitors(s->gate.display, mons, 16);
	int px = 0, py = 0;
	os_pointer(s->gate.display, &px, &py);
	s->gate.monitor = vision_pick_monitor(mons, n < 16 ? n : 16, (int)s->opt->monitor, px, py);
	if (s->gate.monitor < 0) {
		agent_term_error(s->term, "--monitor %ld: there is no such monitor (this screen has %d)",
		                 s->opt->monitor, n);
		return false;
	}
	vision_shot_opts vo;
	agent_gate_shot_opts(&s->gate, &vo);
	if (!vision_view_for(&vo, &mons[s->gate.monitor], &s->gate.view)) {
		agent_term_error(s->term, "%s", vision_error());
		return false;
	}
	if (os_pointer(s->gate.display, &s->gate.last_px, &s->gate.last_py))
		s->gate.have_last_pointer = true;
	return true;
}

/* ---- one user message -------------------------------------------------- */

static void ev_text(void *user, const char *text, size_t len)
{
	agent_session *s = user;
	agent_term_text(s->term, text, len);
}

static void ev_thinking(void *user, const char *text, size_t len)
{
	agent_session *s = user;
	agent_term_thinking(s->term, text, len);
}

static void ev_notice(void *user, const char *text)
{
	agent_session *s = user;
	agent_term_notice(s->term, "%s", text);
}

static void ev_retry(void *user, int attempt, long delay_ms, const char *why)
{
	agent_session *s = user;
	agent_term_warning(s->term, "%s; retrying in %.1f s (attempt %d of 5)", why,
	                   (double)delay_ms / 1000.0, attempt + 1);
}

/*
 * The conversation file's SHA-256 as it is on disk, keyed by its real path
 * (*real, which the caller frees). False if it cannot be read.
 */
static bool conv_file_digest(const char *path, char **real, char hex[AGENT_AUDIT_HASH_HEX + 1])
{
	size_t len;
	char *text = agent_read_file(path, SIZE_MAX / 2, &len);
	if (text == NULL || (*real = realpath(path, NULL)) == NULL) {
		free(text);
		return false;
	}
	agent_audit_hash(text, len, hex);
	free(text);
	return true;
}

static bool save(agent_session *s)
{
	if (!conv_save(s->conv)) {
		agent_term_error(s->term, "cannot save the conversation: %s", conv_error());
		s->status = 1;
		return false;
	}
	/* The audit log vouches for the file as saved: an edit since shows on resume. */
	char hex[AGENT_AUDIT_HASH_HEX + 1], *real = NULL;
	bool ok = conv_file_digest(s->conv->path, &real, hex);
	if (!ok)
		agent_term_error(s->term, "cannot read back %s: %s", s->conv->path, strerror(errno));
	else if (!(ok = agent_audit_conversation(s->gate.audit, real, hex)))
		agent_term_error(s->term, "audit log: %s", agent_audit_error());
	free(real);
	if (!ok)
		s->status = 1;
	return ok;
}

/* A resumed conversation must be the file deskhand last saved. */
static void check_resumed(agent_session *s)
{
	char hex[AGENT_AUDIT_HASH_HEX + 1], *real = NULL;
	if (s->conv->n_messages == 0 || !conv_file_digest(s->conv->path, &real, hex))
		return;
	const char *want = agent_audit_conversation_digest(s->gate.audit, real);
	if (want != NULL && strcmp(want, hex) != 0)
		agent_term_warning(s->term, "THE CONVERSATION FILE %s WAS CHANGED since deskhand last "
		                   "saved it (its SHA-256 is not the one the audit log records): "
		                   "messages in it may be forged", s->conv->path);
	free(real);
}

/* Runs the tool calls of the model's last message; adds their results. */
static bool run_tool_calls(agent_session *s, bool *any)
{
	struct conv_message *m = conv_last(s->conv);
	*any = false;
	if (m == NULL || m->role != CONV_ASSISTANT)
		return true;
	size_t calls = 0;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			calls++;
	if (calls == 0)
		return true;
	*any = true;
	/* Results are collected first: the message pointer must stay valid. */
	agent_tool_result *res = calloc(calls, sizeof(*res));
	const struct conv_block **which = calloc(calls, sizeof(*which));
	if (res == NULL || which == NULL) {
		free(res);
		free(which);
		agent_term_error(s->term, "out of memory");
		return false;
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			which[k++] = &m->blocks[i];
	agent_gate_tool_calls(&s->gate, which, calls, res);
	struct conv_message *tm = conv_add_message(s->conv, CONV_TOOL);
	bool ok = tm != NULL;
	for (size_t i = 0; i < calls; i++) {
		if (ok)
			ok = conv_msg_add_tool_result_ex(tm, which[i]->id,
			                                 res[i].text ? res[i].text : "",
			                                 res[i].is_error,
			                                 res[i].image.path ? &res[i].image : NULL,
			                                 res[i].ack);
		agent_tool_result_finish(&res[i]);
	}
	free(res);
	free(which);
	if (!ok) {
		agent_term_error(s->term, "out of memory");
		return false;
	}
	return save(s);
}

/* A turn the model answered: its usage (%tokens), its text to the console's timeline. */
static void turn_answered(agent_session *s, const struct provider_usage *usage)
{
	s->last_usage = *usage;
	s->have_last_usage = true;
	struct conv_message *m = conv_last(s->conv);
	if (s->console == NULL || m == NULL || m->role != CONV_ASSISTANT)
		return;
	agent_buf b = {0};
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TEXT && m->blocks[i].text != NULL)
			agent_buf_puts(&b, m->blocks[i].text);
	agent_console_model_text(s->console, agent_buf_cstr(&b));
	agent_buf_finish(&b);
}

/*
 * Open models' computer functions have no screenshot action (Qwen's, and
 * UI-TARS's text actions): the screen goes with the user's message, as
 * their own harnesses do. Failing to take it is told, not fatal.
 */
static bool attach_screenshot(agent_session *s)
{
	enum model_family f = provider_family(s->provider);
	if (s->gate.display == NULL || !(model_family_qwen(f) || f == MODEL_FAMILY_UITARS))
		return true;
	struct conv_image img = {0};
	char err[256];
	if (!agent_gate_screenshot(&s->gate, false, &img, err, sizeof(err))) {
		agent_term_warning(s->term, "no screenshot goes with the message: %s", err);
		return true;
	}
	bool ok = conv_msg_add_image(conv_last(s->conv), &img);
	conv_image_clear(&img);
	return ok;
}

/* One model turn: true when an answer was added and saved (else s->status says how it ended). */
static bool model_turn(agent_session *s, const struct provider_request *req,
                       const struct provider_events *ev, struct provider_usage *usage)
{
	agent_term_spinner_start(s->term, "thinking");
	enum provider_status st = provider_turn(s->provider, s->conv, req, ev, usage);
	agent_term_spinner_stop(s->term);
	agent_term_text_end(s->term);
	switch (st) {
	case PROVIDER_OK:
		turn_answered(s, usage);
		return save(s);
	case PROVIDER_FAILED:
		agent_term_error(s->term, "%s", provider_error());
		s->status = 1;
		return false;
	case PROVIDER_CANCELLED:
		agent_term_notice(s->term, "cancelled");
		s->status = 130;
		return false;
	case PROVIDER_EXHAUSTED:
		agent_term_notice(s->term, "the script has no more turns");
		return false;
	}
	return false;
}

/* After the tool calls: whether the run, the task or the turn ends here. */
static bool turn_ends(agent_session *s)
{
	if (s->gate.end_run) {
		s->status = 1;
		return true;
	}
	if (s->gate.task_done)
		return true;
	if (s->gate.end_turn) {
		agent_term_notice(s->term, "a safety check was declined: the turn ends here "
		                  "(the model is told with your next message)");
		return true;
	}
	if (agent_cancel) {
		agent_term_notice(s->term, "interrupted");
		s->status = 130;
		return true;
	}
	return false;
}

static void run_user_message(agent_session *s, const char *text)
{
	agent_console_task(s->console, text);
	if (!conv_add_user_text(s->conv, text) || !attach_screenshot(s)) {
		agent_term_error(s->term, "out of memory");
		s->status = 1;
		return;
	}
	if (!save(s))
		return;
	struct provider_request req = {
		.system = s->system_prompt,
		.tools = &s->tools,
		.max_tokens = (int)s->opt->max_tokens,
		.keep_images = (int)s->opt->keep_images,
		.context_window = s->opt->context_window,
		.cancel = &agent_cancel,
		.prompt_cache = s->opt->prompt_cache,
	};
	struct provider_events ev = {
		.user = s,
		.text = ev_text,
		.retry = ev_retry,
		.notice = ev_notice,
		.thinking = ev_thinking,
	};
	for (long step = 0;; step++) {
		if (step >= s->opt->max_steps) {
			agent_term_warning(s->term, "stopped after %ld steps (--max-steps)",
			                   s->opt->max_steps);
			s->status = 1;
			return;
		}
		struct provider_usage usage;
		if (!model_turn(s, &req, &ev, &usage))
			return;
		bool any;
		if (!run_tool_calls(s, &any)) {
			s->status = 1;
			return;
		}
		if (turn_ends(s))
			return;
		if (!any) {
			if (usage.stop == PROVIDER_STOP_MAX_TOKENS)
				agent_term_warning(s->term, "the answer was cut at --max-tokens %ld",
				                   s->opt->max_tokens);
			return;
		}
	}
}

/* ---- magic commands ---------------------------------------------------- */

static const char magic_help[] =
	"%auto_run [true|false]   run ordinary code without asking (never OS actions)\n"
	"%safe_mode off|ask|auto  scan code before it runs\n"
	"%reset                   start the conversation afresh\n"
	"%undo                    forget the last message and its answer\n"
	"%verbose [true|false]    show more of what happens\n"
	"%tokens                  estimate the tokens the conversation takes\n"
	"%save_message [path]     save the conversation (default messages.json)\n"
	"%load_message [path]     load a saved conversation (default messages.json)\n"
	"%markdown [path]         export the conversation as Markdown (default conversation.md)\n"
	"%info                    settings, provider, files\n"
	"%help                    this list\n";

static char *arg_or(const agent_policy_magic *m, const char *def)
{
	if (m->arg_len == 0)
		return strdup(def);
	return strndup(m->arg, m->arg_len);
}

static void export_block(const struct conv_block *b, FILE *f)
{
	switch (b->type) {
	case CONV_TEXT:
		fprintf(f, "%s\n\n", b->text);
		break;
	case CONV_IMAGE:
		fprintf(f, "![image](%s)\n\n", b->image.path ? b->image.path : "");
		break;
	case CONV_TOOL_CALL:
		fprintf(f, "`%s` call `%s`:\n\n```json\n%s\n```\n\n", b->name, b->id,
		        b->arguments);
		break;
	case CONV_VENDOR:
		if (b->text != NULL && *b->text)
			fprintf(f, "*(%s)* %s\n\n", b->vendor, b->text);
		break;
	case CONV_TOOL_RESULT:
		fprintf(f, "%s`%s`:\n\n```\n%s\n```\n\n", b->is_error ? "Error from " : "Result of ",
		        b->call_id, b->text ? b->text : "");
		if (b->image.path != NULL)
			fprintf(f, "![screenshot](%s)\n\n", b->image.path);
		break;
	}
}

static void export_markdown(agent_session *s, FILE *f)
{
	for (size_t i = 0; i < s->conv->n_messages; i++) {
		const struct conv_message *m = s->conv->messages[i];
		const char *who = m->role == CONV_USER ? "User" :
		                  m->role == CONV_ASSISTANT ? "Assistant" : "Result";
		fprintf(f, "## %s\n\n", who);
		for (size_t j = 0; j < m->n_blocks; j++)
			export_block(&m->blocks[j], f);
	}
}

static void magic_info(agent_session *s)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "deskhand %s\n", DESKHAND_VERSION);
	agent_buf_printf(&b, "provider:      %s, model %s, %s\n",
	                 provider_kind_name(provider_kind_of(s->provider)),
	                 provider_model(s->provider), provider_endpoint(s->provider));
	agent_buf_printf(&b, "auto_run:      %s\n", s->gate.settings.auto_run ? "true" : "false");
	agent_buf_printf(&b, "safe_mode:     %s\n", agent_policy_safe_mode_name(s->gate.settings.safe_mode));
	agent_buf_printf(&b, "os:            %s%s\n", s->gate.display ? "on" : "off",
	                 s->gate.settings.os_auto_approve ? " (OS actions run WITHOUT asking)" : "");
	if (s->gate.display != NULL)
		agent_buf_printf(&b, "screen:        monitor %dx%d+%d+%d, model sees %dx%d\n",
		                 s->gate.view.screen_w, s->gate.view.screen_h, s->gate.view.screen_x,
		                 s->gate.view.screen_y, s->gate.view.model_w, s->gate.view.model_h);
	agent_buf_printf(&b, "sandbox:       %s\n", s->opt->sandbox);
	agent_buf_printf(&b, "conversation:  %s (%zu messages)\n", s->conv->path, s->conv->n_messages);
	agent_buf_printf(&b, "audit log:     %s\n", agent_audit_path(s->gate.audit));
	if (s->opt->config_path != NULL)
		agent_buf_printf(&b, "config:        %s\n", s->opt->config_path);
	char *text = agent_buf_steal(&b);
	agent_term_print(s->term, text);
	free(text);
}

/* Handles a user line that is a magic command. */
/* What the server counted for the last turn, its prompt cache included. */
static void usage_line(agent_session *s, const struct provider_usage *u)
{
	if (u->input_tokens < 0 && u->output_tokens < 0)
		return;
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "last turn, as the server counted: %ld input tokens",
	                  u->input_tokens < 0 ? 0 : u->input_tokens);
	if (u->cache_read_tokens >= 0 || u->cache_write_tokens >= 0)
		agent_buf_printf(&b, " (and %ld read from the prompt cache, %ld written to it)",
		                  u->cache_read_tokens < 0 ? 0 : u->cache_read_tokens,
		                  u->cache_write_tokens < 0 ? 0 : u->cache_write_tokens);
	agent_buf_printf(&b, ", %ld output tokens", u->output_tokens < 0 ? 0 : u->output_tokens);
	char *text = agent_buf_steal(&b);
	if (text != NULL)
		agent_term_print(s->term, text);
	free(text);
}

/* %auto_run, %safe_mode, %os_auto_approve: a change is recorded. */
static void magic_setting(agent_session *s, const agent_policy_magic *m)
{
	char msg[256];
	agent_policy_change ch = agent_policy_magic_apply(&s->gate.settings, m, msg, sizeof(msg));
	if (ch == AGENT_POLICY_CHANGED)
		agent_gate_logged(&s->gate, agent_audit_setting(s->gate.audit, &s->gate.settings,
		                                                agent_policy_magic_name(m->cmd)));
	if (ch == AGENT_POLICY_INVALID || ch == AGENT_POLICY_REFUSED)
		agent_term_warning(s->term, "%s", msg);
	else
		agent_term_notice(s->term, "%s", msg);
}

static void magic_undo(agent_session *s)
{
	size_t n = conv_undo(s->conv);
	if (n == 0)
		agent_term_notice(s->term, "nothing to undo");
	else if (save(s))
		agent_term_notice(s->term, "removed the last message and its %zu answer%s", n - 1,
		                  n - 1 == 1 ? "" : "s");
}

static void magic_tokens(agent_session *s)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "about %ld tokens in %zu messages (context window %ld)",
	         conv_tokens(s->conv), s->conv->n_messages, s->opt->context_window);
	agent_term_print(s->term, msg);
	if (s->have_last_usage)
		usage_line(s, &s->last_usage);
}

/* %save_message: the conversation to another file; the session keeps its own. */
static void magic_save_message(agent_session *s, const agent_policy_magic *m)
{
	char *path = arg_or(m, "messages.json");
	char *orig = s->conv->path;
	s->conv->path = path;
	bool ok = conv_save(s->conv);
	s->conv->path = orig;
	if (ok)
		agent_term_notice(s->term, "saved to %s", path);
	else
		agent_term_warning(s->term, "%s", conv_error());
	free(path);
}

static void magic_load_message(agent_session *s, const agent_policy_magic *m)
{
	char *path = arg_or(m, "messages.json");
	struct conv *c = conv_load(path);
	if (c == NULL) {
		agent_term_warning(s->term, "%s", conv_error());
	} else {
		/* Keep writing to this session's own file. */
		free(c->path);
		c->path = strdup(s->conv->path);
		conv_destroy(s->conv);
		s->conv = c;
		if (save(s))
			agent_term_notice(s->term, "loaded %zu messages from %s", c->n_messages, path);
	}
	free(path);
}

static void magic_markdown(agent_session *s, const agent_policy_magic *m)
{
	char *path = arg_or(m, "conversation.md");
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		agent_term_warning(s->term, "%s: %s", path, strerror(errno));
	} else {
		export_markdown(s, f);
		if (fclose(f) != 0)
			agent_term_warning(s->term, "%s: %s", path, strerror(errno));
		else
			agent_term_notice(s->term, "exported to %s", path);
	}
	free(path);
}

static void run_magic(agent_session *s, const agent_policy_magic *m)
{
	switch (m->cmd) {
	case AGENT_MAGIC_AUTO_RUN:
	case AGENT_MAGIC_SAFE_MODE:
	case AGENT_MAGIC_OS_AUTO_APPROVE:
		magic_setting(s, m);
		break;
	case AGENT_MAGIC_RESET:
		conv_reset(s->conv);
		if (save(s))
			agent_term_notice(s->term, "the conversation starts afresh");
		break;
	case AGENT_MAGIC_UNDO:
		magic_undo(s);
		break;
	case AGENT_MAGIC_VERBOSE:
		s->gate.verbose = !(m->arg_len == 5 && strncmp(m->arg, "false", 5) == 0);
		agent_term_notice(s->term, "verbose %s", s->gate.verbose ? "on" : "off");
		break;
	case AGENT_MAGIC_TOKENS:
		magic_tokens(s);
		break;
	case AGENT_MAGIC_SAVE_MESSAGE:
		magic_save_message(s, m);
		break;
	case AGENT_MAGIC_LOAD_MESSAGE:
		magic_load_message(s, m);
		break;
	case AGENT_MAGIC_MARKDOWN:
		magic_markdown(s, m);
		break;
	case AGENT_MAGIC_INFO:
		magic_info(s);
		break;
	case AGENT_MAGIC_HELP:
		agent_term_print(s->term, magic_help);
		break;
	case AGENT_MAGIC_UNKNOWN:
		agent_term_warning(s->term, "unknown command %%%.*s (%%help lists them)",
		                   (int)m->arg_len, m->arg);
		break;
	case AGENT_MAGIC_NONE:
		break;
	}
}

/* A line the user typed: a magic command or a message for the model. */
static void handle_user_line(agent_session *s, const char *line)
{
	agent_policy_magic m;
	if (agent_policy_magic_parse(line, &m) != AGENT_MAGIC_NONE) {
		run_magic(s, &m);
		return;
	}
	const char *p = line + strspn(line, " \t");
	if (*p == '\0')
		return;
	if (!agent_utf8_valid(line, strlen(line))) {
		agent_term_warning(s->term, "the line is not valid UTF-8; it was not sent");
		return;
	}
	agent_cancel = 0;
	sigint_count = 0;
	/* The line editor may have left its own SIGINT handler behind. */
	install_signals();
	run_user_message(s, line);
}

/* ---- main -------------------------------------------------------------- */

static int list_conversations(void)
{
	char *dir = conv_default_dir();
	if (dir == NULL) {
		fprintf(stderr, "deskhand: %s\n", conv_error());
		return 1;
	}
	struct conv_summary *list = NULL;
	size_t n = 0;
	if (!conv_list(dir, &list, &n)) {
		fprintf(stderr, "deskhand: %s\n", conv_error());
		free(dir);
		return 1;
	}
	if (n == 0)
		printf("no conversations in %s\n", dir);
	for (size_t i = 0; i < n; i++) {
		char when[32];
		struct tm tm;
		localtime_r(&list[i].updated, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		/* A conversation file's text is not deskhand's: shown, on one line. */
		char *path = agent_show_dup(list[i].path, 0);
		char *first = agent_show_dup(list[i].first_user ? list[i].first_user : "", 0);
		printf("%s  %3zu messages  %s\n    %s\n", when, list[i].n_messages,
		       path ? path : "?", first ? first : "");
		free(path);
		free(first);
	}
	conv_summaries_free(list, n);
	free(dir);
	return 0;
}

static const char *config_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--config=", 9) == 0)
			return argv[i] + 9;
		if (argv[i][0] != '-')
			break;
	}
	return NULL;
}

static bool start_provider(agent_session *s)
{
	struct provider_settings ps = {
		.model = s->opt->model,
		.base_url = s->opt->api_base,
		.api_key = s->opt->api_key,
		.script = s->opt->script,
		.store = s->opt->store,
		.api = s->opt->api == NULL ? PROVIDER_API_AUTO
		       : strcmp(s->opt->api, "chat") == 0 ? PROVIDER_API_CHAT : PROVIDER_API_RESPONSES,
		.computer_tool = s->opt->computer_tool,
		.think = s->opt->think,
	};
	if (!provider_kind_parse(s->opt->provider, &ps.kind)) {
		agent_term_error(s->term, "unknown provider %s", s->opt->provider);
		return false;
	}
	s->provider = provider_create(&ps);
	if (s->provider == NULL) {
		agent_term_error(s->term, "%s", provider_error());
		return false;
	}
	return true;
}

/* What the gate needs of the session, handed over once (agent/gate.h). */
/*
 * What deskhand reads at its next start or keeps as evidence — its
 * configuration and scanner rules, its data (conversations, audit logs,
 * history), the files named on the command line — is hidden from the code
 * (executors/sandbox.h: sandbox_plan_hide). The two directories are created
 * now if missing, so that code cannot create them first and plant a
 * config.json for the next run.
 */
static void own_files_setup(agent_session *s)
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
		s->opt->config_path, agent_audit_path(s->gate.audit),
		agent_audit_head_path(s->gate.audit), s->conv->path,
		s->opt->script,
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i] != NULL && n < AGENT_HIDDEN_MAX)
			s->hidden[n++] = strdup(files[i]);
	s->hidden[n] = NULL;
	s->gate.hidden = (const char *const *)s->hidden;
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
static void grounding_setup(agent_session *s)
{
	agent_gate *g = &s->gate;
	enum model_family f = model_family_of(provider_model(s->provider));
	const char *gr = s->opt->grounding;
	/* Gemini points on a 0..999 grid whatever the image size. */
	if (provider_kind_of(s->provider) == PROVIDER_GEMINI)
		gr = "relative-1000";
	if (gr == NULL)
		gr = f == MODEL_FAMILY_QWEN25_VL || f == MODEL_FAMILY_UITARS ? "smart-resize"
		     : f == MODEL_FAMILY_QWEN3_VL ? "relative-1000" : "pixels";
	g->grounding = strcmp(gr, "smart-resize") == 0 ? VISION_GROUND_SMART_RESIZE
	               : strcmp(gr, "relative-1000") == 0 ? VISION_GROUND_RELATIVE
	               : VISION_GROUND_PIXELS;
	g->min_pixels = f == MODEL_FAMILY_UITARS ? 100L * 28 * 28 : 3136;
	g->relative = 1000;
}

static void gate_setup(agent_session *s)
{
	agent_gate *g = &s->gate;
	g->term = s->term;
	g->conv = &s->conv;
	g->cancel = &agent_cancel;
	g->exec_for_signals = &agent_exec_for_signals;
	g->sandbox_name = s->opt->sandbox;
	g->workspace = s->opt->workspace;
	g->max_output = (size_t)s->opt->max_output;
	g->settle_ms = (int)s->opt->settle_ms;
	g->screen_max_w = (int)s->opt->screen_max_w;
	g->screen_max_h = (int)s->opt->screen_max_h;
	g->grid = s->opt->grid;
	g->marks = s->opt->marks;
	grounding_setup(s);
	own_files_setup(s);
}

/* ---- the console --------------------------------------------------------- */

static agent_gate_hold console_hold(void *ctx)
{
	switch (agent_console_hold_here(ctx)) {
	case AGENT_CONSOLE_TOOK_OVER: return AGENT_GATE_TOOK_OVER;
	case AGENT_CONSOLE_STOP: return AGENT_GATE_STOP;
	default: return AGENT_GATE_GO;
	}
}

/* The links go to the terminal and to a 0600 file beside the audit log, nowhere else. */
static void console_links(agent_session *s)
{
	agent_console *c = s->console;
	if (agent_console_is_remote(c))
		agent_term_warning(s->term, "the console listens on a non-loopback address: anyone "
		                   "who can reach it may try it; put it behind TLS you provide "
		                   "(plain HTTP shows the links and cookies to the network)");
	agent_term_notice(s->term, "console (approver, one use): %s", agent_console_url(c, true));
	agent_term_notice(s->term, "console (observer, read-only, one use): %s",
	                  agent_console_url(c, false));
	const char *log = agent_audit_path(s->gate.audit);
	s->console_file = malloc(strlen(log) + sizeof(".console"));
	if (s->console_file == NULL)
		return;
	sprintf(s->console_file, "%s.console", log);
	unlink(s->console_file);
	int fd = open(s->console_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		agent_term_warning(s->term, "cannot write %s: %s", s->console_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "{\"approver\":\"%s\",\"observer\":\"%s\",\"port\":%d}\n",
	        agent_console_url(c, true), agent_console_url(c, false), agent_console_port(c));
	fclose(f);
}

/* --console: serve the page, and let it answer and hold the agent. */
static bool open_console(agent_session *s)
{
	agent_console_config cfg = {
		.listen = s->opt->console,
		.allow_remote = s->opt->console_allow_remote,
		.display = s->gate.display != NULL ? os_display_name(s->gate.display) : NULL,
		.cancel = &agent_cancel,
	};
	s->console = agent_console_start(&cfg);
	if (s->console == NULL) {
		agent_term_error(s->term, "%s", agent_console_error());
		return false;
	}
	agent_audit_set_listener(s->gate.audit, agent_console_audit_line, s->console);
	agent_term_set_remote(s->term, agent_console_remote(s->console));
	s->gate.hold = console_hold;
	s->gate.hold_ctx = s->console;
	console_links(s);
	return true;
}

static void close_console(agent_session *s)
{
	if (s->console == NULL)
		return;
	agent_term_set_remote(s->term, NULL);
	if (s->gate.audit != NULL)
		agent_audit_set_listener(s->gate.audit, NULL, NULL);
	s->gate.hold = NULL;
	agent_console_destroy(s->console);
	s->console = NULL;
	if (s->console_file != NULL)
		unlink(s->console_file);
	free(s->console_file);
	s->console_file = NULL;
}

static void session_finish(agent_session *s)
{
	close_console(s);
	provider_destroy(s->provider);
	conv_destroy(s->conv);
	provider_tools_clear(&s->tools);
	free(s->system_prompt);
	agent_gate_finish(&s->gate);
	agent_audit_close(s->gate.audit);
	os_display_close(s->gate.display);
	for (size_t i = 0; s->hidden[i] != NULL; i++)
		free(s->hidden[i]);
}

/*
 * What the options settle before any session exists: errors, --help,
 * --version, --list-conversations, a workspace that is no directory. The
 * exit status when one of them ends the run, -1 to go on.
 */
static int before_session(agent_options *opt, int argc, char **argv)
{
	if (!agent_options_load_config(opt, config_arg(argc, argv)) ||
	    !agent_options_parse(opt, argc, argv) || !agent_options_validate(opt)) {
		fprintf(stderr, "deskhand: %s\n", agent_options_error());
		fprintf(stderr, "%s", "usage: deskhand [OPTIONS] [MESSAGE] (deskhand --help)\n");
		return 2;
	}
	if (opt->help) {
		fputs(agent_options_usage(), stdout);
		return 0;
	}
	if (opt->version) {
		printf("deskhand %s\n", DESKHAND_VERSION);
		return 0;
	}
	if (opt->list_conversations)
		return list_conversations();
	/* The workspace is where code runs; deskhand's own files stay relative to here. */
	struct stat ws;
	if (opt->workspace != NULL && stat(opt->workspace, &ws) != 0) {
		fprintf(stderr, "deskhand: --workspace %s: %s\n", opt->workspace, strerror(errno));
		return 2;
	}
	if (opt->workspace != NULL && !S_ISDIR(ws.st_mode)) {
		fprintf(stderr, "deskhand: --workspace %s: not a directory\n", opt->workspace);
		return 2;
	}
	return -1;
}

/* The settings the session starts with, and what the user is told of them. */
static void startup_settings(agent_session *s, int argc, char **argv)
{
	const agent_options *opt = s->opt;
	agent_policy_settings requested = {
		.auto_run = opt->auto_run,
		.os_auto_approve = opt->os_auto_approve,
	};
	if (!agent_policy_safe_mode_parse(opt->safe_mode, &requested.safe_mode))
		requested.safe_mode = AGENT_POLICY_SAFE_ASK;
	agent_policy_startup start = agent_policy_settings_startup(&requested);
	s->gate.settings = start.settings;
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

/* Provider, conversation, audit log, gate, desktop and prompt; false (told
 * why) when one of them cannot be had. */
static bool open_session(agent_session *s)
{
	if (!sandbox_profile_from_name(s->opt->sandbox, &s->gate.sandbox)) {
		agent_term_error(s->term, "unknown sandbox profile %s", s->opt->sandbox);
		return false;
	}
	if (!start_provider(s) || !open_conversation(s) || !open_audit(s))
		return false;
	gate_setup(s);
	if (!agent_audit_session(s->gate.audit, s->conv->path, &s->gate.settings)) {
		agent_term_error(s->term, "audit log %s: %s", agent_audit_path(s->gate.audit),
		                 agent_audit_error());
		return false;
	}
	check_resumed(s);
	if (s->opt->os && !open_desktop(s))
		return false;
	if (s->opt->console != NULL && !open_console(s))
		return false;
	return build_prompt(s);
}

/* Lines from the user until the end of input or the end of the run. */
static void read_user_lines(agent_session *s)
{
	bool tty = agent_term_interactive(s->term);
	if (tty && !s->opt->json)
		agent_term_notice(s->term, "deskhand %s — %s. Type a task, %%help for commands, "
		                  "Ctrl-D to quit.", DESKHAND_VERSION, s->conv->path);
	for (;;) {
		agent_cancel = 0;
		char *line = agent_term_read_line(s->term, "> ");
		if (line == NULL) {
			if (agent_cancel)
				s->status = 130;
			break;
		}
		handle_user_line(s, line);
		free(line);
		if (s->gate.end_run)
			break;
		/* Off a terminal, a failure ends the run with its status. */
		if (!tty && s->status != 0)
			break;
		if (tty && s->status != 0 && !s->gate.end_run)
			s->status = 0;
	}
}

int agent_main(int argc, char **argv)
{
	agent_options opt;
	agent_options_init(&opt);
	int status = before_session(&opt, argc, argv);
	if (status >= 0)
		goto out_opt;

	agent_session s;
	memset(&s, 0, sizeof(s));
	s.opt = &opt;
	s.status = 1;
	s.term = agent_term_create(opt.json);
	if (s.term == NULL) {
		fprintf(stderr, "deskhand: out of memory\n");
		status = 1;
		goto out_opt;
	}
	install_signals();
	startup_settings(&s, argc, argv);
	if (open_session(&s)) {
		s.status = 0;
		if (opt.message != NULL) {
			agent_cancel = 0;
			run_user_message(&s, opt.message);
		} else {
			read_user_lines(&s);
		}
	}
	status = s.status;
	session_finish(&s);
	agent_term_destroy(s.term);
out_opt:
	agent_options_finish(&opt);
	return status;
}
