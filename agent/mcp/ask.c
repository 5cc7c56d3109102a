/*
 * agent/mcp/ask — the host's place beside deskhand's terminal, for the
 * questions a call raises (agent_term_remote): a withdrawal (the client
 * cancelled the call) ends the question unanswered, which is a denial; a
 * client that can elicit is told of the question (form elicitation), and
 * its answer counts only when the user started the server with
 * --trust-host-approvals. Otherwise the place is only told: the terminal
 * never counts it as someone who can answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/mcp/mcp-internal.h"

static void drain(int fd)
{
	char buf[64];
	while (read(fd, buf, sizeof(buf)) > 0) {
	}
}

void mcp_ask_poke(mcp_server *s)
{
	ssize_t w = write(s->wake_pipe[1], "!", 1);
	(void)w; /* full: a wake-up is already pending */
}

/* The elicitation that announces a question (the 2025-11-25 era's form). */
static cJSON *announcement(const mcp_server *s, const char *question,
                           const agent_term_ask_info *info)
{
	char msg[1200];
	const char *what = info != NULL && info->edit_text != NULL ? info->edit_text : "";
	snprintf(msg, sizeof(msg), "deskhand asks: %s %.900s%s", question, what,
	         s->trust_host ? "" : " — answer in deskhand's own terminal or console; an "
	         "answer here does not count");
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "mode", "form");
	cJSON_AddStringToObject(p, "message", msg);
	cJSON *schema = cJSON_AddObjectToObject(p, "requestedSchema");
	cJSON_AddStringToObject(schema, "type", "object");
	cJSON *props = cJSON_AddObjectToObject(schema, "properties");
	cJSON *approve = cJSON_AddObjectToObject(props, "approve");
	cJSON_AddStringToObject(approve, "type", "boolean");
	cJSON_AddStringToObject(approve, "title", "Approve");
	cJSON_AddStringToObject(approve, "description", "true: run it; false: deny it");
	cJSON *req = cJSON_AddArrayToObject(schema, "required");
	cJSON_AddItemToArray(req, cJSON_CreateString("approve"));
	return p;
}

static void ask_open(void *ctx, const char *id, const char *question, const char *choices,
                     const agent_term_ask_info *info)
{
	(void)id;
	(void)choices;
	mcp_server *s = ctx;
	pthread_mutex_lock(&s->lock);
	drain(s->wake_pipe[0]);
	s->question_open = true;
	s->ask_answer = -1;
	s->ask_id[0] = '\0';
	mcp_call *c = s->running;
	if (c != NULL && (c->withdrawn || c->stopped))
		mcp_ask_poke(s);
	if (c != NULL && s->can_elicit && !c->stateless) {
		snprintf(s->ask_id, sizeof(s->ask_id), "deskhand-ask-%lu", ++s->ask_serial);
		mcp_send(c->sink, mcp_line_request(s->ask_id, "elicitation/create",
		                                   announcement(s, question, info)));
	}
	pthread_mutex_unlock(&s->lock);
}

void mcp_ask_response(mcp_server *s, const mcp_msg *m)
{
	if (s->ask_id[0] == '\0' || !cJSON_IsString(m->id) ||
	    strcmp(m->id->valuestring, s->ask_id) != 0)
		return;
	const cJSON *action = cJSON_GetObjectItemCaseSensitive(m->result, "action");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(m->result, "content");
	bool yes = cJSON_IsString(action) && strcmp(action->valuestring, "accept") == 0 &&
	           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(content, "approve"));
	s->ask_id[0] = '\0';
	if (!s->trust_host) {
		fprintf(stderr, "deskhand mcp: the host answered a question (%s); its answer does "
		        "not count: answer in deskhand's terminal or console (--trust-host-approvals "
		        "lets the host relay its human)\n", yes ? "yes" : "no");
		return;
	}
	s->ask_answer = yes ? 1 : 0;
	mcp_ask_poke(s);
}

static bool ask_settle(void *ctx, agent_term_answer *a, char **edit, char *who, size_t wholen)
{
	mcp_server *s = ctx;
	*edit = NULL;
	pthread_mutex_lock(&s->lock);
	drain(s->wake_pipe[0]);
	s->question_open = false;
	mcp_call *c = s->running;
	bool mine = false;
	if (c != NULL && (c->withdrawn || c->stopped)) {
		*a = AGENT_ANSWER_NONE;
		snprintf(who, wholen, "%s", c->withdrawn ? "MCP client, which withdrew the call"
		                                         : "deskhand mcp, which was stopped");
		mine = true;
	} else if (s->ask_answer >= 0 && s->trust_host) {
		*a = s->ask_answer ? AGENT_ANSWER_YES : AGENT_ANSWER_NO;
		snprintf(who, wholen, "MCP host (trusted at start)");
		mine = true;
	}
	/* Answered elsewhere: the host's form is withdrawn in turn. */
	if (s->ask_id[0] != '\0' && c != NULL) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "requestId", s->ask_id);
		cJSON_AddStringToObject(p, "reason", "answered in deskhand");
		mcp_send(c->sink, mcp_line_notification("notifications/cancelled", p));
		s->ask_id[0] = '\0';
	}
	s->ask_answer = -1;
	pthread_mutex_unlock(&s->lock);
	return mine;
}

bool mcp_ask_host_answers(mcp_server *s, const mcp_call *c)
{
	pthread_mutex_lock(&s->lock);
	bool can = s->trust_host && s->can_elicit && (c == NULL || !c->stateless);
	pthread_mutex_unlock(&s->lock);
	return can;
}

void mcp_ask_attach(mcp_server *s, const mcp_call *c)
{
	/* The host counts as someone who can answer only when it is trusted and
	 * can be asked this call's questions (an elicitation-capable client of
	 * the handshake's era): otherwise a question would wait on it for ever. */
	agent_term_remote r = {
		.ctx = s,
		.fd = s->wake_pipe[0],
		.cancel = agent_hands_cancel_flag(),
		.told_only = !mcp_ask_host_answers(s, c),
		.open = ask_open,
		.settle = ask_settle,
	};
	agent_term_set_remote(s->term, AGENT_TERM_HOST, &r);
}

void mcp_ask_detach(mcp_server *s)
{
	agent_term_set_remote(s->term, AGENT_TERM_HOST, NULL);
}
