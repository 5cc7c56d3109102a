/*
 * agent/session/magic — the magic commands (%help lists them): settings
 * through the gate, the conversation's undo, reset, save, load and
 * export, and what the session is (%info, %tokens).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/session/agent-internal.h"
#include "agent/util/textutil.h"
#include "config.h"

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
	const agent_policy_settings *set = agent_gate_settings(s->gate);
	agent_buf_printf(&b, "auto_run:      %s\n", set->auto_run ? "true" : "false");
	agent_buf_printf(&b, "safe_mode:     %s\n", agent_policy_safe_mode_name(set->safe_mode));
	agent_buf_printf(&b, "os:            %s%s\n", s->display ? "on" : "off",
	                 set->os_auto_approve ? " (OS actions run WITHOUT asking)" : "");
	const vision_view *v = agent_tools_view(s->tools);
	if (s->display != NULL)
		agent_buf_printf(&b, "screen:        monitor %dx%d+%d+%d, model sees %dx%d\n",
		                 v->screen_w, v->screen_h, v->screen_x, v->screen_y, v->model_w,
		                 v->model_h);
	agent_buf_printf(&b, "sandbox:       %s\n", sandbox_profile_name(s->opt->sandbox));
	agent_buf_printf(&b, "conversation:  %s (%zu messages)\n", s->conv->path, s->conv->n_messages);
	agent_buf_printf(&b, "audit log:     %s\n", agent_audit_path(s->audit));
	if (s->opt->config_path != NULL)
		agent_buf_printf(&b, "config:        %s\n", s->opt->config_path);
	char *text = agent_buf_steal(&b);
	agent_term_print(s->term, text);
	free(text);
}

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
	agent_policy_change ch = agent_gate_magic(s->gate, m, msg, sizeof(msg));
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
	else if (session_save(s))
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
		if (session_save(s))
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

void session_magic(agent_session *s, const agent_policy_magic *m)
{
	switch (m->cmd) {
	case AGENT_MAGIC_AUTO_RUN:
	case AGENT_MAGIC_SAFE_MODE:
	case AGENT_MAGIC_OS_AUTO_APPROVE:
		magic_setting(s, m);
		break;
	case AGENT_MAGIC_RESET:
		conv_reset(s->conv);
		if (session_save(s))
			agent_term_notice(s->term, "the conversation starts afresh");
		break;
	case AGENT_MAGIC_UNDO:
		magic_undo(s);
		break;
	case AGENT_MAGIC_VERBOSE:
		s->verbose = !(m->arg_len == 5 && strncmp(m->arg, "false", 5) == 0);
		agent_gate_set_verbose(s->gate, s->verbose);
		agent_term_notice(s->term, "verbose %s", s->verbose ? "on" : "off");
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

