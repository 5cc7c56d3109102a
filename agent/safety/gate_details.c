/*
 * agent/safety/gate — what the user sees of a proposal: the proposal itself,
 * and on `d` its details (numbered code and findings; for an OS action
 * what agent/tools says of it: the window it aims at and a preview image
 * of the spot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"

/* The code numbered line by line, its findings, where it runs. */
static void code_details(agent_gate *g, const proposal *p)
{
	agent_buf b;
	agent_buf_init(&b);
	int line = 1;
	agent_buf_printf(&b, "%4d  ", line);
	char *code = agent_show_dup(p->p.code.code, AGENT_SHOW_LINES | AGENT_SHOW_STRICT);
	for (const char *c = code ? code : ""; *c; c++) {
		agent_buf_append(&b, c, 1);
		if (*c == '\n' && c[1] != '\0')
			agent_buf_printf(&b, "%4d  ", ++line);
	}
	free(code);
	if (p->scan != NULL && p->scan->count > 0) {
		char *f = gate_findings_text(p->scan);
		agent_buf_printf(&b, "\nscanner findings:\n%s", f);
		free(f);
	}
	agent_buf_printf(&b, "\nlanguage %s, sandbox %s%s", exec_lang_name(p->p.code.lang),
	                 sandbox_profile_name(g->sandbox),
	                 p->p.code.display ? ", WITH access to the display" : "");
	char *text = agent_buf_steal(&b);
	agent_term_details(g->term, p->id, text);
	free(text);
}

void gate_show_details(agent_gate *g, const proposal *p)
{
	if (!gate_is_action(p)) {
		code_details(g, p);
		return;
	}
	char *preview = NULL;
	char *text = agent_tools_details(g->tools, &p->p, g->preview_dir, &preview);
	agent_term_details(g->term, p->id, text);
	free(text);
	if (preview != NULL)
		agent_term_show_image(g->term, preview);
	free(preview);
}
