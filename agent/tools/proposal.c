/*
 * agent/tools/proposal — a tool call made into the one value the gate
 * decides on (see proposal.h): the call's dialect fills it (deskhand's
 * own, the first, is here), this file reads the facts and builds the
 * action's JSON and description once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/tools/tools-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

void agent_proposal_refuse(agent_proposal *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = agent_vformat(fmt, ap);
	va_end(ap);
	free(p->text);
	p->text = text != NULL ? text : strdup("out of memory");
	p->kind = AGENT_PROPOSAL_REFUSED;
}

bool agent_tools_computer_on(agent_tools *t, agent_proposal *p)
{
	if (t->display != NULL)
		return true;
	agent_proposal_refuse(p, "the computer tool is not enabled (deskhand was started without --os)");
	return false;
}

bool agent_tools_pointer_in_view(agent_tools *t, int xy[2])
{
	int sx, sy;
	return os_pointer(t->display, &sx, &sy) &&
	       vision_screen_to_model(&t->view, sx, sy, &xy[0], &xy[1]);
}

void agent_tools_parse_action(agent_tools *t, const char *name, const cJSON *args,
                              agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	char err[512];
	if (!agent_computer_parse_named(name, args, &t->view, &p->action, err, sizeof(err))) {
		agent_proposal_refuse(p, "%s", err);
		return;
	}
	p->kind = AGENT_PROPOSAL_ACTION;
}

void agent_tools_parse_translated(agent_tools *t, cJSON *args, const char *err,
                                  agent_proposal *p)
{
	if (args == NULL)
		agent_proposal_refuse(p, "%s", err);
	else
		agent_tools_parse_action(t, NULL, args, p);
	cJSON_Delete(args);
}

/* ---- deskhand's own tools ------------------------------------------------ */

static void propose_execute(agent_tools *t, const cJSON *args, agent_proposal *p)
{
	char languages[64];
	base_names_join(BASE_NAMES(exec_lang_names), ", ", " or ", languages, sizeof(languages));
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(args, "code");
	const cJSON *disp = cJSON_GetObjectItemCaseSensitive(args, "display");
	if (!cJSON_IsString(lang)) {
		agent_proposal_refuse(p, "execute needs \"language\" (%s)", languages);
		return;
	}
	if (!cJSON_IsString(code)) {
		agent_proposal_refuse(p, "execute needs \"code\" as a string");
		return;
	}
	if (disp != NULL && !cJSON_IsBool(disp) && !cJSON_IsNull(disp)) {
		agent_proposal_refuse(p, "\"display\" must be true or false");
		return;
	}
	if (!exec_lang_from_name(lang->valuestring, &p->code.lang)) {
		agent_proposal_refuse(p, "unknown language \"%.40s\" (%s)", lang->valuestring,
		                      languages);
		return;
	}
	p->code.display = cJSON_IsTrue(disp);
	/* On Wayland the kill switch watches through the stop key the session
	 * arms with --os; without it such a block could run unwatched. */
	if (p->code.display && t->display == NULL && os_session_is_wayland()) {
		agent_proposal_refuse(p, "no display is available to this code: on a Wayland "
		                      "session code reaches the display only with --os");
		return;
	}
	if (p->code.display && t->display == NULL && getenv("DISPLAY") == NULL) {
		agent_proposal_refuse(p, "no display is available to this code (no DISPLAY)");
		return;
	}
	p->code.code = strdup(code->valuestring);
	if (p->code.code == NULL) {
		agent_proposal_refuse(p, "out of memory");
		return;
	}
	p->kind = AGENT_PROPOSAL_CODE;
}

/* click_element {element, action}: a pointer action of the computer tool
 * with an element target (see session/prompt.c); element is required, so
 * it never clicks wherever the pointer happens to be. */
static void propose_click_element(agent_tools *t, const cJSON *args, agent_proposal *p)
{
	if (!agent_tools_computer_on(t, p))
		return;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(args, "element");
	if (e == NULL || cJSON_IsNull(e)) {
		agent_proposal_refuse(p, "click_element needs \"element\": an ID from the "
		                      "elements list");
		return;
	}
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, "action");
	const char *how = a == NULL || cJSON_IsNull(a) ? agent_element_click_actions[0]
	                  : cJSON_GetStringValue(a);
	for (const char *const *k = agent_element_click_actions; how != NULL && *k != NULL; k++)
		if (strcmp(how, *k) == 0) {
			agent_tools_parse_action(t, *k, args, p);
			return;
		}
	agent_proposal_refuse(p, "click_element: \"action\" must be left_click (the default), "
	                      "right_click, middle_click, double_click, triple_click or mouse_move");
}

static void propose_execute_call(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	propose_execute(t, call->args, p);
}

static void propose_computer(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	agent_tools_parse_action(t, NULL, call->args, p);
}

/* find_text and elements are also tools of their own (Anthropic's single
 * computer tool cannot take new actions): the same actions, named by the tool. */
static void propose_named(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	agent_tools_parse_action(t, call->name, call->args, p);
}

static void propose_click_element_call(agent_tools *t, const agent_tool_call *call,
                                       agent_proposal *p)
{
	propose_click_element(t, call->args, p);
}

/* deskhand's tools (session/prompt.c declares them); `computer`: one of the
 * computer's, whose refusal ends the batch as a failed action does. */
static const struct {
	const char *name;
	void (*propose)(agent_tools *t, const agent_tool_call *call, agent_proposal *p);
	bool computer;
} own_tools[] = {
	{"execute", propose_execute_call, false},
	{"computer", propose_computer, true},
	{"find_text", propose_named, true},
	{"elements", propose_named, true},
	{"click_element", propose_click_element_call, true},
};

bool tools_deskhand_computer_call(const char *name)
{
	for (size_t i = 0; i < sizeof(own_tools) / sizeof(own_tools[0]); i++)
		if (strcmp(name, own_tools[i].name) == 0)
			return own_tools[i].computer;
	return false;
}

static void propose_deskhand(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	for (size_t i = 0; i < sizeof(own_tools) / sizeof(own_tools[0]); i++)
		if (strcmp(call->name, own_tools[i].name) == 0) {
			own_tools[i].propose(t, call, p);
			return;
		}
	agent_proposal_refuse(p, "unknown tool \"%.60s\" (the tools are execute%s)", call->name,
	                      t->display ? ", computer, find_text, elements and click_element" : "");
}

const agent_dialect agent_dialect_deskhand = {
	.name = NULL,
	.propose = propose_deskhand,
};

static bool is_key_action(agent_action k)
{
	return k == AGENT_ACTION_KEY || k == AGENT_ACTION_TYPE || k == AGENT_ACTION_HOLD_KEY;
}

/*
 * Whether this input would reach deskhand's own terminal (the windows at
 * its points, or under the pointer for an action without one, and for
 * keys the window they go to): typed there, text reads as the user's
 * line. Only while a terminal is on standard input: a console, or a
 * multiplexer or ssh in between, has no terminal window among the
 * ancestors to find.
 */
static bool reaches_own_terminal(agent_tools *t, const agent_computer_action *a)
{
	if (!a->input || !isatty(STDIN_FILENO))
		return false;
	os_point pts[2];
	int n = agent_computer_points(a, pts);
	return os_input_reaches_ancestor(t->display, pts, (size_t)n, is_key_action(a->kind));
}

/* What an action proposal carries besides the action: read and built once. */
struct facts {
	bool own_terminal;
	cJSON *json;
	char *json_text, *description;
};

static bool action_facts(agent_tools *t, const agent_computer_action *a, struct facts *f)
{
	f->own_terminal = reaches_own_terminal(t, a);
	f->json = agent_computer_json(a);
	f->json_text = f->json != NULL ? cJSON_PrintUnformatted(f->json) : NULL;
	f->description = agent_computer_describe(a);
	if (f->json_text != NULL && f->description != NULL)
		return true;
	cJSON_Delete(f->json);
	free(f->json_text);
	free(f->description);
	return false;
}

/* p takes the facts (and drops what it had). */
static void facts_take(agent_proposal *p, struct facts *f)
{
	cJSON_Delete(p->json);
	free(p->json_text);
	free(p->description);
	p->own_terminal = f->own_terminal;
	p->json = f->json;
	p->json_text = f->json_text;
	p->description = f->description;
}

/* Where the pointer is and the monitors, before anything of the proposal runs. */
static void desktop_facts(agent_tools *t, agent_proposal *p)
{
	if (t->display == NULL)
		return;
	p->have_pointer = os_pointer(t->display, &p->pointer.x, &p->pointer.y);
	int n = os_monitors(t->display, p->monitors, AGENT_PROPOSAL_MONITORS);
	p->n_monitors = n < AGENT_PROPOSAL_MONITORS ? n : AGENT_PROPOSAL_MONITORS;
}

void agent_tools_propose(agent_tools *t, const agent_tool_call *call, agent_proposal *p)
{
	memset(p, 0, sizeof(*p));
	p->call = call;
	p->kind = AGENT_PROPOSAL_REFUSED;
	const agent_dialect *d = call->dialect;
	/* A vendor's call, whatever goes wrong with it, is a computer action. */
	p->computer = d != &agent_dialect_deskhand || tools_deskhand_computer_call(call->name);
	if (call->args == NULL) {
		agent_proposal_refuse(p, "the arguments are not a JSON object: %s",
		                      call->args_error ? call->args_error : "unparsable");
		return;
	}
	char *said = NULL;
	if (d->final != NULL && d->final(call, &said)) {
		p->kind = AGENT_PROPOSAL_FINAL;
		p->text = said != NULL ? said : strdup("");
		return;
	}
	if (call->checks != NULL)
		p->checks = cJSON_Parse(call->checks);
	d->propose(t, call, p);
	struct facts f;
	if (p->kind == AGENT_PROPOSAL_ACTION && !action_facts(t, &p->action, &f))
		agent_proposal_refuse(p, "out of memory");
	else if (p->kind == AGENT_PROPOSAL_ACTION)
		facts_take(p, &f);
	if (p->kind == AGENT_PROPOSAL_ACTION || p->kind == AGENT_PROPOSAL_CODE)
		desktop_facts(t, p);
}

void agent_proposal_finish(agent_proposal *p)
{
	if (p == NULL)
		return;
	/* A parsed action refused afterwards (out of memory) still owns its text. */
	agent_computer_action_finish(&p->action);
	free(p->code.code);
	free(p->text);
	cJSON_Delete(p->json);
	free(p->json_text);
	free(p->description);
	cJSON_Delete(p->checks);
	memset(p, 0, sizeof(*p));
}

static bool edit_action(agent_tools *t, agent_proposal *p, const char *edited, char *why,
                        size_t whylen)
{
	cJSON *args = cJSON_Parse(edited);
	agent_computer_action a;
	char err[256];
	if (args == NULL || !agent_computer_parse(args, &t->view, &a, err, sizeof(err))) {
		snprintf(why, whylen, "%s", args == NULL ? "not JSON" : err);
		cJSON_Delete(args);
		return false;
	}
	cJSON_Delete(args);
	/* The edited action is a new proposal: its facts are read again. */
	struct facts f;
	if (!action_facts(t, &a, &f)) {
		agent_computer_action_finish(&a);
		snprintf(why, whylen, "out of memory");
		return false;
	}
	agent_computer_action_finish(&p->action);
	p->action = a;
	facts_take(p, &f);
	return true;
}

bool agent_tools_edit(agent_tools *t, agent_proposal *p, const char *edited, char *why,
                      size_t whylen)
{
	if (p->kind == AGENT_PROPOSAL_ACTION)
		return edit_action(t, p, edited, why, whylen);
	if (p->kind != AGENT_PROPOSAL_CODE) {
		snprintf(why, whylen, "nothing to edit");
		return false;
	}
	char *code = strdup(edited);
	if (code == NULL) {
		snprintf(why, whylen, "out of memory");
		return false;
	}
	free(p->code.code);
	p->code.code = code;
	return true;
}
