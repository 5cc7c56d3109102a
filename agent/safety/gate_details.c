/*
 * agent/safety/gate — what the user sees of a proposal: the proposal itself,
 * and on `d` its details (numbered code and findings; for an OS action the
 * window it aims at and a preview image of the spot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/safety/gate-internal.h"
#include "agent/util/textutil.h"

void gate_show_proposal(agent_gate *g, const proposal *p)
{
	if (p->has_action) {
		char *desc = agent_computer_describe(&p->action);
		char *json = agent_computer_to_json(&p->action);
		agent_term_show_action(g->term, p->id, desc ? desc : p->action.name,
		                       json ? json : "{}");
		free(desc);
		free(json);
	} else {
		/* Without a sandbox every block reaches the display (policy rule 11). */
		agent_term_show_code(g->term, p->id, p->language, p->code,
		                     p->display || g->sandbox == SANDBOX_OFF);
	}
}

/* The window under a screen point, for the details of an OS action. */
static void window_at(agent_gate *g, int x, int y, char *out, size_t len)
{
	size_t n = 0;
	os_window *w = os_windows_list(g->display, &n);
	snprintf(out, len, "(none: the root window)");
	/* The list is bottom to top: the last hit is the one on top. */
	for (size_t i = 0; w != NULL && i < n; i++) {
		os_rect r = w[i].geometry;
		if (x >= r.x && y >= r.y && x < r.x + r.width && y < r.y + r.height) {
			/* Any program names its window: one line, shown as it is. */
			char *title = agent_show_dup(w[i].title, 0);
			char *klass = agent_show_dup(w[i].klass, 0);
			snprintf(out, len, "0x%x \"%s\" (%s, pid %d)", w[i].id, title ? title : "?",
			         klass ? klass : "?", w[i].pid);
			free(title);
			free(klass);
		}
	}
	os_windows_free(w, n);
}

/*
 * Where the preview of call `id` goes: beside the conversation, so it is
 * kept with what it explains. The id is the model's text: only plain
 * characters reach the file name (turn.c already renames odd ids).
 */
static void preview_path(agent_gate *g, const char *id, char *out, size_t size)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	char name[65];
	size_t k = 0;
	for (const char *c = id; *c && k < sizeof(name) - 1; c++)
		name[k++] = strchr(plain, *c) != NULL ? *c : '_';
	name[k] = '\0';
	char *dir = strdup((*g->conv)->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash != NULL)
		*slash = '\0';
	snprintf(out, size, "%s/preview-%s.png", slash != NULL ? dir : ".", name);
	free(dir);
}

void gate_show_details(agent_gate *g, const proposal *p)
{
	if (!p->has_action) {
		agent_buf b;
		agent_buf_init(&b);
		int line = 1;
		agent_buf_printf(&b, "%4d  ", line);
		char *code = agent_show_dup(p->code, AGENT_SHOW_LINES | AGENT_SHOW_STRICT);
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
		agent_buf_printf(&b, "\nlanguage %s, sandbox %s%s", p->language, g->sandbox_name,
		                 p->display ? ", WITH access to the display" : "");
		char *text = agent_buf_steal(&b);
		agent_term_details(g->term, p->id, text);
		free(text);
		return;
	}
	const agent_computer_action *a = &p->action;
	char win[256] = "", shot[512] = "";
	char *desc = agent_computer_describe(a);
	vision_point pts[2];
	int n = 0;
	if (a->has_start)
		pts[n++] = (vision_point){a->start_sx, a->start_sy};
	if (a->has_point)
		pts[n++] = (vision_point){a->sx, a->sy};
	if (n == 0) {
		int x, y;
		if (os_pointer(g->display, &x, &y))
			pts[n++] = (vision_point){x, y};
	}
	if (n > 0) {
		window_at(g, pts[n - 1].x, pts[n - 1].y, win, sizeof(win));
		/* A label of one short line; the text itself is in the details. */
		const char *label = desc != NULL && strlen(desc) < 100 && !strchr(desc, '\n')
		                    ? desc : a->name;
		os_image *img = vision_preview_capture(g->display, pts, n, label, 480, 320);
		if (img != NULL) {
			preview_path(g, p->id, shot, sizeof(shot));
			if (!os_png_write_file(img, shot, NULL))
				snprintf(shot, sizeof(shot), "(could not save: %s)", os_error());
			os_image_destroy(img);
		} else {
			snprintf(shot, sizeof(shot), "(no preview: %s)", vision_error());
		}
	}
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "action:  %s\n", desc ? desc : a->name);
	free(desc);
	if (n > 0)
		agent_buf_printf(&b, "target:  screen %d,%d\nwindow:  %s\npreview: %s",
		                 pts[n - 1].x, pts[n - 1].y, win, shot);
	char *text = agent_buf_steal(&b);
	agent_term_details(g->term, p->id, text);
	free(text);
	os_capture_trim(g->display, CAPTURE_KEEP_BYTES);
	if (shot[0] == '/' || shot[0] == '.')
		agent_term_show_image(g->term, shot);
}
