/*
 * agent/safety/gate — what is proposed (agent/tools made the call a
 * proposal): scanned, recorded as proposed, and edited by the user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

/*
 * Scans the code, or the text a `type` action would type: typed into a
 * terminal it runs as a shell command, so it is read as one.
 */
/* The scanner's rules for a language: shell, Python and JavaScript have theirs. */
static bool scan_lang(exec_lang l, agent_scan_lang *out)
{
	switch (l) {
	case EXEC_SHELL: *out = AGENT_SCAN_SHELL; return true;
	case EXEC_PYTHON: *out = AGENT_SCAN_PYTHON; return true;
	case EXEC_JAVASCRIPT: *out = AGENT_SCAN_JAVASCRIPT; return true;
	default: return false;
	}
}

bool gate_scan(agent_gate *g, proposal *p)
{
	agent_scan_lang lang = AGENT_SCAN_SHELL;
	bool action = gate_is_action(p);
	const char *text = action ? p->p.action.text : p->p.code.code;
	p->scanned = true;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	if (text == NULL || (!action && !scan_lang(p->p.code.lang, &lang))) {
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
	bool ok = base_write_all(fd, text, len);
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
	result = base_read_file(path, 16u << 20, NULL);
	if (result == NULL)
		agent_term_warning(g->term, "cannot read the edited file: %s", strerror(errno));
out:
	unlink(path);
	return result;
}

/* p replaced by its edit (consumed); false, told why, when the edit is not valid. */
static bool replace(agent_gate *g, proposal *p, char *edited)
{
	char why[256];
	bool ok = agent_tools_edit(g->tools, &p->p, edited, why, sizeof(why));
	free(edited);
	if (!ok) {
		agent_term_warning(g->term, "the edited %s is not valid: %s",
		                   gate_is_action(p) ? "action" : "code", why);
		return false;
	}
	p->kind = gate_kind(&p->p);
	return true;
}

bool gate_edit_proposal(agent_gate *g, proposal *p, char *given)
{
	/* Edited in the console: the same checks as an edit in the editor. */
	char *edited = given;
	if (edited == NULL) {
		const char *ed = getenv("VISUAL");
		if (ed == NULL || ed[0] == '\0')
			ed = getenv("EDITOR");
		setenv("DESKHAND_EDITOR", ed != NULL && ed[0] != '\0' ? ed : "vi", 1);
		edited = edit_text(g, gate_is_action(p) ? p->p.json_text : p->p.code.code);
		if (edited == NULL)
			return false;
	}
	if (!replace(g, p, edited))
		return false;
	/* What the user edited is a new proposal: record it, scan it anew. */
	p->scanned = false;
	agent_scan_result_destroy(p->scan);
	p->scan = NULL;
	gate_audit_proposed(g, p);
	return true;
}
