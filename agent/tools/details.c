/*
 * agent/tools/details — what the human sees of an action on `d`: the
 * action, the screen point it aims at, the window there, and a preview of
 * the spot, stored beside the conversation (desk.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/tools-internal.h"
#include "agent/util/textutil.h"

/* The window under a screen point. */
static void window_at(agent_tools *t, int x, int y, char *out, size_t len)
{
	size_t n = 0;
	os_window *w = os_windows_list(t->display, &n);
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
 * Where the preview of call `id` goes: in `dir`, beside the conversation,
 * so it is kept with what it explains. The id is the model's text: only
 * plain characters reach the file name (turn.c already renames odd ids).
 */
static char *preview_path(const char *dir, const char *id)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	char name[65];
	size_t k = 0;
	for (const char *c = id; *c && k < sizeof(name) - 1; c++)
		name[k++] = strchr(plain, *c) != NULL ? *c : '_';
	name[k] = '\0';
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "%s/preview-%s.png", dir != NULL ? dir : ".", name);
	return agent_buf_steal(&b);
}

/* The preview of the points, stored; its path, or NULL with why in `note`. */
static char *store_preview(agent_tools *t, const agent_proposal *p, const os_point *pts,
                           int n, const char *dir, char *note, size_t notelen)
{
	const char *desc = p->description;
	/* A label of one short line; the text itself is in the details. */
	const char *label = desc != NULL && strlen(desc) < 100 && !strchr(desc, '\n')
	                    ? desc : p->action.name;
	os_image *img = vision_preview_capture(t->display, pts, n, label, 480, 320);
	if (img == NULL) {
		snprintf(note, notelen, "(no preview: %s)", vision_error());
		return NULL;
	}
	char *path = preview_path(dir, p->call->id);
	if (path != NULL && !os_png_write_file(img, path, NULL)) {
		snprintf(note, notelen, "(could not save: %s)", os_error());
		free(path);
		path = NULL;
	}
	os_image_destroy(img);
	return path;
}

char *agent_tools_details(agent_tools *t, const agent_proposal *p, const char *dir,
                          char **preview)
{
	*preview = NULL;
	const agent_computer_action *a = &p->action;
	os_point pts[2];
	int n = agent_computer_points(a, pts);
	int x, y;
	if (n == 0 && os_pointer(t->display, &x, &y))
		pts[n++] = (os_point){x, y};
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "action:  %s\n", p->description ? p->description : a->name);
	if (n > 0) {
		char win[256] = "", note[512] = "";
		window_at(t, pts[n - 1].x, pts[n - 1].y, win, sizeof(win));
		*preview = store_preview(t, p, pts, n, dir, note, sizeof(note));
		agent_buf_printf(&b, "target:  screen %d,%d\nwindow:  %s\npreview: %s",
		                 pts[n - 1].x, pts[n - 1].y, win, *preview ? *preview : note);
	}
	os_capture_trim(t->display, TOOLS_CAPTURE_KEEP_BYTES);
	return agent_buf_steal(&b);
}
