/*
 * agent/mcp/calls — the tools a host is offered (the table of
 * agent/tools/mcp_actions.h, with the hints it reads) and one tools/call:
 * made a tool call of the MCP dialect, passed through the gate like the
 * agent's model's calls, its result (text, the screenshot as an image and
 * the view it was taken in) put in MCP's terms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mcp/mcp-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"
#include "executors/exec.h"

/* A "language" argument (execute's) lists the interpreters installed here. */
static void add_languages(cJSON *schema)
{
	cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	cJSON *lang = cJSON_GetObjectItemCaseSensitive(props, "language");
	if (lang == NULL)
		return;
	cJSON *names = cJSON_AddArrayToObject(lang, "enum");
	for (int l = 0; l < EXEC_LANG_COUNT; l++)
		if (exec_lang_installed((exec_lang)l))
			cJSON_AddItemToArray(names, cJSON_CreateString(exec_lang_name((exec_lang)l)));
}

static cJSON *tool_json(const agent_mcp_tool *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "title", t->title);
	cJSON_AddStringToObject(o, "description", t->description);
	cJSON *in = cJSON_Parse(t->input_schema);
	add_languages(in);
	cJSON_AddItemToObject(o, "inputSchema", in != NULL ? in : cJSON_CreateObject());
	if (t->output_schema != NULL)
		cJSON_AddItemToObject(o, "outputSchema", cJSON_Parse(t->output_schema));
	cJSON *hints = cJSON_AddObjectToObject(o, "annotations");
	cJSON_AddStringToObject(hints, "title", t->title);
	cJSON_AddBoolToObject(hints, "readOnlyHint", t->read_only);
	if (!t->read_only)
		cJSON_AddTrueToObject(hints, "destructiveHint");
	cJSON_AddBoolToObject(hints, "openWorldHint", t->open_world);
	return o;
}

cJSON *mcp_tools_list(void)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < agent_mcp_tool_count; i++)
		cJSON_AddItemToArray(a, tool_json(&agent_mcp_tools[i]));
	return a;
}

void mcp_call_free(mcp_call *c)
{
	if (c == NULL)
		return;
	c->sink->release(c->sink);
	cJSON_Delete(c->id);
	cJSON_Delete(c->arguments);
	cJSON_Delete(c->progress);
	free(c);
}

/* The view the screenshot was taken in: how the host's coordinates map. */
static cJSON *view_json(const vision_view *v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "width", v->model_w);
	cJSON_AddNumberToObject(o, "height", v->model_h);
	cJSON_AddNumberToObject(o, "scale", v->model_w > 0 ? (double)v->screen_w / v->model_w : 1);
	cJSON *sc = cJSON_AddObjectToObject(o, "screen");
	cJSON_AddNumberToObject(sc, "x", v->screen_x);
	cJSON_AddNumberToObject(sc, "y", v->screen_y);
	cJSON_AddNumberToObject(sc, "width", v->screen_w);
	cJSON_AddNumberToObject(sc, "height", v->screen_h);
	return o;
}

/* What a refusal for want of a human adds: how to start a server someone can answer. */
static const char no_approver[] =
	"\n\ndeskhand asks a human before every desktop action and every code run (but code "
	"that does not reach the display, under -y), and this server has nobody to ask: it "
	"has no terminal and no console. Start it with --console 0 (the approver's link is "
	"printed on its standard error and kept in the 0600 file beside its audit log), or "
	"from a terminal. "
	"--os-auto-approve lets desktop actions run unasked (the kill switch still stops "
	"them), -y code that does not reach the display.";

static cJSON *result_json(mcp_server *s, const agent_mcp_tool *t, agent_tool_result *r,
                          bool host_answers)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(o, "content");
	bool nobody = !s->tty && !s->console && !host_answers;
	agent_buf text;
	agent_buf_init(&text);
	agent_buf_puts(&text, r->text != NULL ? r->text : "");
	/* Only where the refusal is for want of a human (not a bad argument). */
	const char *said = r->text != NULL ? r->text : "";
	if (r->is_error && !t->read_only && nobody &&
	    (strncmp(said, "Not run: nobody", 15) == 0 || strncmp(said, "not run:", 8) == 0))
		agent_buf_puts(&text, no_approver);
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text.data != NULL ? text.data : "");
	cJSON_AddItemToArray(content, item);
	agent_buf_finish(&text);
	char *b64 = r->shot.png != NULL ? agent_base64(r->shot.png, r->shot.len, NULL) : NULL;
	if (b64 != NULL) {
		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "type", "image");
		cJSON_AddStringToObject(item, "data", b64);
		cJSON_AddStringToObject(item, "mimeType", "image/png");
		cJSON_AddItemToArray(content, item);
		free(b64);
	}
	/* A tool with an output schema answers it whenever it succeeds. */
	bool is_error = r->is_error || (t->output_schema != NULL && r->shot.png == NULL);
	if (t->output_schema != NULL && !is_error)
		cJSON_AddItemToObject(o, "structuredContent",
		                      view_json(agent_tools_view(agent_hands_tools(s->hands))));
	cJSON_AddBoolToObject(o, "isError", is_error);
	return o;
}

cJSON *mcp_call_not_run(const char *why)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(o, "content");
	cJSON *item = cJSON_CreateObject();
	char text[300];
	snprintf(text, sizeof(text), "not run: %s", why);
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(content, item);
	cJSON_AddTrueToObject(o, "isError");
	return o;
}

cJSON *mcp_call_run(mcp_server *s, mcp_call *c)
{
	pthread_mutex_lock(&s->lock);
	bool withdrawn = c->withdrawn, stopped = c->stopped || s->stopping, ended = s->ended;
	unsigned long n = ++s->serial;
	char proposer[200];
	snprintf(proposer, sizeof(proposer), "mcp:%s", s->client[0] ? s->client : "unnamed client");
	pthread_mutex_unlock(&s->lock);
	if (withdrawn)
		return NULL;
	if (stopped || ended)
		return mcp_call_not_run(ended ? "the run was ended (the kill switch, or the audit "
		                        "log could not be written)" : "deskhand mcp was stopped");
	agent_hands_begin();
	/* A withdrawal or a stop between the two locks must not be lost. */
	pthread_mutex_lock(&s->lock);
	if (c->withdrawn || c->stopped)
		agent_hands_interrupt();
	pthread_mutex_unlock(&s->lock);

	char id[32];
	snprintf(id, sizeof(id), "mcp-%lu", n);
	char *raw = c->arguments != NULL ? cJSON_PrintUnformatted(c->arguments) : NULL;
	agent_tool_call call = {
		.id = id,
		.name = c->tool->name,
		.arguments = raw != NULL ? raw : "",
		.args = c->arguments,
		.args_error = c->arguments_bad ? "the arguments must be a JSON object" : NULL,
		.dialect = &agent_dialect_mcp,
	};
	if (c->arguments_bad)
		call.arguments = "(not an object)";
	agent_audit_set_proposer(agent_hands_audit(s->hands), proposer);
	bool host_answers = mcp_ask_host_answers(s, c);
	mcp_ask_attach(s, c);
	agent_tool_result res;
	agent_gate *g = agent_hands_gate(s->hands);
	agent_gate_outcome out = agent_gate_tool_calls(g, &call, 1, &res);
	cJSON *r = result_json(s, c->tool, &res, host_answers);
	agent_tool_result_finish(&res);
	free(raw);
	if (out == AGENT_GATE_END_RUN || agent_gate_ended(g)) {
		pthread_mutex_lock(&s->lock);
		s->ended = true;
		pthread_mutex_unlock(&s->lock);
	}
	return r;
}
