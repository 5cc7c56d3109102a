/*
 * agent/safety/gate — what is proposed: a tool call parsed into a proposal,
 * scanned, recorded as proposed, and edited by the user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"

void gate_proposal_finish(proposal *p)
{
	free(p->language);
	free(p->code);
	if (p->has_action)
		agent_computer_action_finish(&p->action);
	agent_scan_result_destroy(p->scan);
}

static bool parse_execute(agent_gate *g, const cJSON *args, proposal *p,
                          char *err, size_t errlen)
{
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(args, "language");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(args, "code");
	const cJSON *disp = cJSON_GetObjectItemCaseSensitive(args, "display");
	if (!cJSON_IsString(lang)) {
		snprintf(err, errlen, "execute needs \"language\" (python, shell, javascript, ruby or r)");
		return false;
	}
	if (!cJSON_IsString(code)) {
		snprintf(err, errlen, "execute needs \"code\" as a string");
		return false;
	}
	if (disp != NULL && !cJSON_IsBool(disp) && !cJSON_IsNull(disp)) {
		snprintf(err, errlen, "\"display\" must be true or false");
		return false;
	}
	exec_lang el;
	if (!exec_lang_from_name(lang->valuestring, &el)) {
		snprintf(err, errlen, "unknown language \"%.40s\" (python, shell, javascript, ruby or r)",
		         lang->valuestring);
		return false;
	}
	p->language = strdup(lang->valuestring);
	p->code = strdup(code->valuestring);
	p->display = cJSON_IsTrue(disp);
	if (p->display && g->display == NULL && getenv("DISPLAY") == NULL) {
		snprintf(err, errlen, "no display is available to this code (no DISPLAY)");
		return false;
	}
	p->kind = p->display ? AGENT_POLICY_CODE_DISPLAY : AGENT_POLICY_CODE;
	return p->language != NULL && p->code != NULL;
}

/* A vendor's action translated into deskhand's (args, NULL: err says why), parsed like any. */
static bool parse_translated(agent_gate *g, cJSON *args, proposal *p, char *err, size_t errlen)
{
	if (args == NULL)
		return false;
	bool ok = agent_computer_parse(args, &g->view, &p->action, err, errlen);
	cJSON_Delete(args);
	if (!ok)
		return false;
	p->has_action = true;
	p->kind = agent_policy_action_kind(p->action.kind);
	return true;
}

/* A computer action; `action` (when not NULL) names it instead of args.action. */
static bool parse_action(agent_gate *g, const struct conv_block *call, const char *action,
                         proposal *p, char *err, size_t errlen)
{
	if (g->display == NULL) {
		snprintf(err, errlen, "the computer tool is not enabled (deskhand was started without --os)");
		return false;
	}
	cJSON *args = cJSON_Duplicate(call->args, 1);
	if (args == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	if (action != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(args, "action");
		cJSON_AddStringToObject(args, "action", action);
	}
	return parse_translated(g, args, p, err, errlen);
}

/* click_element {element, action}: a pointer action of the computer tool
 * with an element target (see session/prompt.c); element is required, so
 * it never clicks wherever the pointer happens to be. */
static bool parse_click_element(agent_gate *g, const struct conv_block *call, proposal *p,
                                char *err, size_t errlen)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(call->args, "element");
	if (e == NULL || cJSON_IsNull(e)) {
		snprintf(err, errlen, "click_element needs \"element\": an ID from the elements list");
		return false;
	}
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(call->args, "action");
	const char *how = a == NULL || cJSON_IsNull(a) ? agent_element_click_actions[0]
	                  : cJSON_GetStringValue(a);
	for (const char *const *k = agent_element_click_actions; how != NULL && *k != NULL; k++)
		if (strcmp(how, *k) == 0)
			return parse_action(g, call, *k, p, err, errlen);
	snprintf(err, errlen, "click_element: \"action\" must be left_click (the default), "
	         "right_click, middle_click, double_click, triple_click or mouse_move");
	return false;
}

/* Where the pointer is in the model's coordinates (Qwen's drag starts
 * there); false when it is not on the screen the model sees. */
static bool pointer_in_view(agent_gate *g, int xy[2])
{
	int sx, sy;
	return os_pointer(g->display, &sx, &sy) &&
	       vision_screen_to_model(&g->view, sx, sy, &xy[0], &xy[1]);
}

/*
 * A call in a vendor's or a model family's own vocabulary, by its toolset:
 * one action of an OpenAI computer_call ("openai", openai_actions.h), one
 * of Gemini's computer-use functions ("gemini", gemini_actions.h, in the
 * view's 0..999 grid), Qwen's computer_use ("qwen", qwen_actions.h) or a
 * UI-TARS text action ("uitars", uitars.h): translated into deskhand's
 * action, then parsed like any. False (err set) for another toolset.
 */
static bool parse_vendor(agent_gate *g, const struct conv_block *call, proposal *p,
                         char *err, size_t errlen)
{
	if (g->display == NULL) {
		snprintf(err, errlen, "the computer tool is not enabled (deskhand was started without --os)");
		return false;
	}
	const char *ts = call->toolset;
	cJSON *args = NULL;
	int ptr[2];
	if (strcmp(ts, "openai") == 0)
		args = agent_openai_action_args(call->args, err, errlen);
	else if (strcmp(ts, "gemini") == 0)
		args = agent_gemini_action_args(call->name, call->args, &g->view, err, errlen);
	else if (strcmp(ts, "qwen") == 0)
		args = agent_qwen_action_args(call->args, pointer_in_view(g, ptr) ? ptr : NULL,
		                              err, errlen);
	else if (strcmp(ts, "uitars") == 0)
		args = agent_uitars_action_args(cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(call->args, "action")), err, errlen);
	else
		snprintf(err, errlen, "unknown toolset \"%.40s\"", ts);
	return parse_translated(g, args, p, err, errlen);
}

bool gate_proposal_parse(agent_gate *g, const struct conv_block *call, proposal *p,
                       char *err, size_t errlen)
{
	if (call->args == NULL) {
		snprintf(err, errlen, "the arguments are not a JSON object: %s",
		         call->args_error ? call->args_error : "unparsable");
		return false;
	}
	if (strcmp(call->name, "execute") == 0)
		return parse_execute(g, call->args, p, err, errlen);
	/*
	 * find_text is also a tool of its own (Anthropic's single computer tool
	 * cannot take new actions), and a toolset names each action as a tool:
	 * the same actions underneath.
	 */
	if (call->toolset != NULL && strcmp(call->toolset, "computer") == 0)
		return parse_action(g, call, call->name, p, err, errlen);
	if (call->toolset != NULL)
		return parse_vendor(g, call, p, err, errlen);
	if (strcmp(call->name, "find_text") == 0 || strcmp(call->name, "elements") == 0)
		return parse_action(g, call, call->name, p, err, errlen);
	if (strcmp(call->name, "click_element") == 0)
		return parse_click_element(g, call, p, err, errlen);
	if (strcmp(call->name, "computer") == 0)
		return parse_action(g, call, NULL, p, err, errlen);
	snprintf(err, errlen, "unknown tool \"%.60s\" (the tools are execute%s)", call->name,
	         g->display ? ", computer, find_text, elements and click_element" : "");
	return false;
}

/*
 * Scans the code, or the text a `type` action would type: typed into a
 * terminal it runs as a shell command, so it is read as one.
 */
bool gate_scan(agent_gate *g, proposal *p)
{
	agent_scan_lang lang = AGENT_SCAN_SHELL;
	const char *text = p->has_action ? p->action.text : p->code;
	p->scanned = true;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	if (text == NULL || (!p->has_action && !agent_scan_lang_parse(p->language, &lang))) {
		/* No rules for this language: scanned, nothing found. */
		agent_gate_logged(g, agent_audit_scanned(g->audit, p->id, p->kind, NULL));
		return true;
	}
	if (g->rules == NULL) {
		g->rules = agent_scan_rules_load(NULL, true);
		if (g->rules == NULL) {
			agent_term_error(g->term, "scanner: %s", agent_scan_error());
			return false;
		}
	}
	p->scan = agent_scan(g->rules, lang, text, strlen(text));
	if (p->scan == NULL) {
		agent_term_error(g->term, "scanner: %s", agent_scan_error());
		return false;
	}
	agent_gate_logged(g, agent_audit_scanned(g->audit, p->id, p->kind, p->scan));
	return true;
}

char *gate_findings_text(const agent_scan_result *r)
{
	agent_buf b;
	agent_buf_init(&b);
	for (size_t i = 0; r != NULL && i < r->count; i++)
		agent_buf_printf(&b, "%sline %d: %s [%s, %s]", i ? "\n" : "", r->findings[i].line,
		                 r->findings[i].message, r->findings[i].rule_id,
		                 agent_scan_severity_name(r->findings[i].severity));
	return agent_buf_steal(&b);
}

/* Records the proposal (again, after an edit: the newest one counts). */
void gate_audit_proposed(agent_gate *g, const proposal *p)
{
	if (!p->has_action) {
		agent_gate_logged(g, agent_audit_proposed_code(g->audit, p->id, p->kind, p->language,
		                                               p->code, strlen(p->code)));
		return;
	}
	char *json = agent_computer_to_json(&p->action);
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	agent_gate_logged(g, agent_audit_proposed_action(g->audit, p->id, p->kind, o));
	cJSON_Delete(o);
	free(json);
}

/*
 * Opens `text` in the user's editor and returns what was saved. The editor
 * ($VISUAL, $EDITOR, else vi) is the user's own setting and may carry
 * arguments ("code -w"), so it is word-split by /bin/sh from the
 * environment; the file name travels as a separate argument, and nothing of
 * the model's text is ever part of the command.
 */
static char *edit_text(agent_gate *g, const char *text)
{
	char path[] = "/tmp/deskhand-edit-XXXXXX.txt";
	int fd = mkstemps(path, 4);
	if (fd < 0) {
		agent_term_warning(g->term, "cannot create a file to edit: %s", strerror(errno));
		return NULL;
	}
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	char *result = NULL;
	if (!ok)
		goto out;
	agent_term_tty_release(g->term);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exec $DESKHAND_EDITOR \"$1\"", "sh", path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	agent_term_tty_reclaim(g->term);
	if (pid < 0)
		goto out;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		agent_term_warning(g->term, "the editor failed; nothing was changed");
		goto out;
	}
	result = agent_read_file(path, 16u << 20, NULL);
	if (result == NULL)
		agent_term_warning(g->term, "cannot read the edited file: %s", strerror(errno));
out:
	unlink(path);
	return result;
}

/* Lets the user edit the proposal; true when it changed and parsed. */
/* The action replaced by its edited JSON (consumed); false, told why, when it is not valid. */
static bool replace_action(agent_gate *g, proposal *p, char *edited)
{
	cJSON *args = cJSON_Parse(edited);
	free(edited);
	agent_computer_action a;
	char err[256];
	if (args == NULL || !agent_computer_parse(args, &g->view, &a, err, sizeof(err))) {
		agent_term_warning(g->term, "the edited action is not valid: %s",
		                   args == NULL ? "not JSON" : err);
		cJSON_Delete(args);
		return false;
	}
	cJSON_Delete(args);
	agent_computer_action_finish(&p->action);
	p->action = a;
	p->kind = agent_policy_action_kind(a.kind);
	return true;
}

bool gate_edit_proposal(agent_gate *g, proposal *p, char *given)
{
	if (given != NULL) {
		/* Edited in the console: the same checks as an edit in the editor. */
		if (!p->has_action) {
			free(p->code);
			p->code = given;
		} else if (!replace_action(g, p, given)) {
			return false;
		}
		goto recorded;
	}
	const char *ed = getenv("VISUAL");
	if (ed == NULL || ed[0] == '\0')
		ed = getenv("EDITOR");
	setenv("DESKHAND_EDITOR", ed != NULL && ed[0] != '\0' ? ed : "vi", 1);
	if (!p->has_action) {
		char *code = edit_text(g, p->code);
		if (code == NULL)
			return false;
		free(p->code);
		p->code = code;
	} else {
		char *json = agent_computer_to_json(&p->action);
		char *edited = json ? edit_text(g, json) : NULL;
		free(json);
		if (edited == NULL || !replace_action(g, p, edited))
			return false;
	}
recorded:
	/* What the user edited is a new proposal: record it, scan it anew. */
	p->scanned = false;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	gate_audit_proposed(g, p);
	return true;
}
