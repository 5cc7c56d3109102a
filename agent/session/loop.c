/*
 * agent/session/loop — `deskhand [OPTIONS] [MESSAGE]`: the turn loop,
 * the user's lines, Ctrl-C (see loop.h); what a session opens is
 * setup.c's, the magic commands magic.c's, the console console_link.c's.
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
#include "agent/session/loop.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "config.h"
#include "os/os.h"

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

void session_interrupt_clear(void)
{
	agent_cancel = 0;
	sigint_count = 0;
}

/* Ends the way the signal would have, with the terminal as it was found. */
static void on_fatal(int sig)
{
	agent_term_tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

void session_install_signals(void)
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
bool session_conv_digest(const char *path, char **real, char hex[AGENT_AUDIT_HASH_HEX + 1])
{
	size_t len;
	char *text = base_read_file(path, SIZE_MAX / 2, &len);
	if (text == NULL || (*real = realpath(path, NULL)) == NULL) {
		free(text);
		return false;
	}
	agent_audit_hash(text, len, hex);
	free(text);
	return true;
}

/*
 * The real path a file will have: its directory's real path and its name
 * (the file itself may not exist yet). Ownership: the caller frees it.
 */
static char *real_path_to_be(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash == NULL ? strdup(".") : strndup(path, (size_t)(slash - path + (slash == path)));
	char *rdir = dir != NULL ? realpath(dir, NULL) : NULL, *out = NULL;
	if (rdir != NULL && asprintf(&out, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir,
	                             slash == NULL ? path : slash + 1) < 0)
		out = NULL;
	free(rdir);
	free(dir);
	return out;
}

struct save_witness {
	agent_session *s;
	bool told;          /* the witness told the user why it refused */
};

/* conv_save's witness: the audit log vouches for the bytes before they land. */
static bool vouch_conversation(void *user, const char *path, const char *text, size_t len)
{
	struct save_witness *w = user;
	agent_session *s = w->s;
	char hex[AGENT_AUDIT_HASH_HEX + 1], *real = real_path_to_be(path);
	bool ok = false;
	if (real == NULL) {
		agent_term_error(s->term, "cannot save the conversation: %s: %s", path, strerror(errno));
	} else {
		agent_audit_hash(text, len, hex);
		ok = agent_audit_conversation(s->audit, real, hex);
		if (s->gate != NULL)
			/* Like every record: told once, and nothing more runs. */
			(void)agent_gate_logged(s->gate, ok);
		else if (!ok)
			agent_term_error(s->term, "audit log: %s", agent_audit_error());
	}
	free(real);
	w->told = !ok;
	return ok;
}

/*
 * The record first, then the file: an edit since shows on resume, and a
 * crash between the two leaves the file the record before vouched for.
 */
bool session_save(agent_session *s)
{
	struct save_witness w = {s, false};
	if (!conv_save_witnessed(s->conv, vouch_conversation, &w)) {
		if (!w.told)
			agent_term_error(s->term, "cannot save the conversation: %s", conv_error());
		s->status = 1;
		return false;
	}
	return true;
}

/* A call as agent/tools reads it: borrowed from its block. */
static agent_tool_call call_of(const struct conv_block *b)
{
	return (agent_tool_call){b->id, b->name, b->arguments, b->args, b->args_error, b->dialect,
	                         b->checks};
}

/* A result's screenshot stored beside the conversation; a failure is told
 * to the user (the result was shown before) and in the result's text. */
static void store_shot(agent_session *s, agent_tool_result *r, struct conv_image *img)
{
	memset(img, 0, sizeof(*img));
	if (r->shot.png == NULL ||
	    conv_store_png(s->conv, r->shot.png, r->shot.len, r->shot.width, r->shot.height, img))
		return;
	agent_term_warning(s->term, "the screenshot cannot be stored, the model gets none: %s",
	                   conv_error());
	agent_shot_missing(&r->text, conv_error());
}

/* The results, each with its screenshot, as the message after the calls. */
static bool add_results(agent_session *s, const agent_tool_call *calls, agent_tool_result *res,
                        size_t n)
{
	struct conv_message *tm = conv_add_message(s->conv, CONV_TOOL);
	bool ok = tm != NULL;
	for (size_t i = 0; i < n; i++) {
		struct conv_image img;
		store_shot(s, &res[i], &img);
		if (ok)
			ok = conv_msg_add_tool_result_ex(tm, calls[i].id, res[i].text ? res[i].text : "",
			                                 res[i].is_error, img.path ? &img : NULL,
			                                 res[i].ack);
		conv_image_clear(&img);
		agent_tool_result_finish(&res[i]);
	}
	return ok;
}

/* Runs the tool calls of the model's last message; adds their results. */
static bool run_tool_calls(agent_session *s, bool *any, agent_gate_outcome *out)
{
	struct conv_message *m = conv_last(s->conv);
	*any = false;
	*out = AGENT_GATE_GO_ON;
	if (m == NULL || m->role != CONV_ASSISTANT)
		return true;
	size_t n = 0;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			n++;
	if (n == 0)
		return true;
	*any = true;
	/* Results are collected first: the message's blocks must stay as they are. */
	agent_tool_result *res = calloc(n, sizeof(*res));
	agent_tool_call *calls = calloc(n, sizeof(*calls));
	if (res == NULL || calls == NULL) {
		free(res);
		free(calls);
		agent_term_error(s->term, "out of memory");
		return false;
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n_blocks; i++)
		if (m->blocks[i].type == CONV_TOOL_CALL)
			calls[k++] = call_of(&m->blocks[i]);
	*out = agent_gate_tool_calls(s->gate, calls, n, res);
	bool ok = add_results(s, calls, res, n);
	free(res);
	free(calls);
	if (!ok) {
		agent_term_error(s->term, "out of memory");
		return false;
	}
	return session_save(s);
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
	if (s->display == NULL || !(model_family_qwen(f) || f == MODEL_FAMILY_UITARS))
		return true;
	agent_shot shot;
	struct conv_image img = {0};
	if (!agent_tools_screenshot(s->tools, false, &shot)) {
		agent_term_warning(s->term, "no screenshot goes with the message: %s",
		                   agent_tools_error());
		return true;
	}
	bool stored = conv_store_png(s->conv, shot.png, shot.len, shot.width, shot.height, &img);
	agent_shot_clear(&shot);
	if (!stored) {
		agent_term_warning(s->term, "no screenshot goes with the message: %s", conv_error());
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
		return session_save(s);
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

/*
 * A display whose server went away ends the session: every later action
 * would fail. By then the failed action is in the audit log and its result
 * in the saved conversation, which a run on a live display resumes.
 */
static bool display_gone(agent_session *s)
{
	if (s->display == NULL || !os_display_lost(s->display))
		return false;
	agent_term_error(s->term, "the display %s is gone (its server ended or dropped the "
	                 "connection): the action is recorded as failed and the conversation "
	                 "is saved; go on with --conversation %s on a running display",
	                 os_display_name(s->display), s->conv->path);
	s->status = 1;
	return true;
}

/* After the tool calls: whether the run, the task or the turn ends here. */
static bool turn_ends(agent_session *s, agent_gate_outcome o)
{
	if (display_gone(s))
		return true;
	if (o == AGENT_GATE_END_RUN) {
		s->status = 1;
		return true;
	}
	if (o == AGENT_GATE_TASK_DONE)
		return true;
	if (o == AGENT_GATE_END_TURN) {
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
	if (!session_save(s))
		return;
	struct provider_request req = {
		.system = s->system_prompt,
		.tools = &s->declared,
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
		agent_gate_outcome o;
		if (!run_tool_calls(s, &any, &o)) {
			s->status = 1;
			return;
		}
		if (turn_ends(s, o))
			return;
		if (!any) {
			if (usage.stop == PROVIDER_STOP_MAX_TOKENS)
				agent_term_warning(s->term, "the answer was cut at --max-tokens %ld",
				                   s->opt->max_tokens);
			return;
		}
	}
}

/* A line the user typed: a magic command or a message for the model. */
static void handle_user_line(agent_session *s, const char *line)
{
	agent_policy_magic m;
	if (agent_policy_magic_parse(line, &m) != AGENT_MAGIC_NONE) {
		session_magic(s, &m);
		return;
	}
	const char *p = line + strspn(line, " \t");
	if (*p == '\0')
		return;
	if (!agent_utf8_valid(line, strlen(line))) {
		agent_term_warning(s->term, "the line is not valid UTF-8; it was not sent");
		return;
	}
	session_interrupt_clear();
	/* The line editor may have left its own SIGINT handler behind. */
	session_install_signals();
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

/*
 * What the options settle before any session exists: errors, --help,
 * --version, --list-conversations, a workspace that is no directory. The
 * exit status when one of them ends the run, -1 to go on.
 */
static int before_session(agent_options *opt, int argc, char **argv)
{
	if (!agent_options_load_config(opt, agent_options_config_arg(argc, argv)) ||
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
	os_display_prefer(opt->display_backend);
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
		if (agent_gate_ended(s->gate) || (s->display != NULL && os_display_lost(s->display)))
			break;
		/* Off a terminal, a failure ends the run with its status. */
		if (!tty && s->status != 0)
			break;
		if (tty && s->status != 0 && !agent_gate_ended(s->gate))
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
	session_install_signals();
	session_startup(&s, argc, argv);
	if (session_open(&s)) {
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
