/*
 * agent/tools/desk — the tools' state and the model's screenshots (see
 * desk.h): one capture per step, the settled frame being the frame the
 * model sees.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/tools/tools-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

BASE_ERROR_TEXT(, tools_err, agent_tools_error, tools_fail)

agent_tools *agent_tools_create(const agent_tools_config *cfg)
{
	agent_tools *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		tools_fail("out of memory");
		return NULL;
	}
	t->display = cfg->display;
	t->shot = cfg->shot;
	t->settle_ms = cfg->settle_ms;
	t->marks = cfg->marks;
	t->cancel = cfg->cancel;
	if (t->display == NULL)
		return t;
	os_rect mons[16];
	int n = os_monitors(t->display, mons, 16);
	int px, py;
	vision_focus_point(t->display, &px, &py);
	int want = t->shot.monitor;
	t->shot.monitor = vision_pick_monitor(mons, n < 16 ? n : 16, want, px, py);
	if (t->shot.monitor < 0) {
		tools_fail("--monitor %d: there is no such monitor (this screen has %d)", want, n);
		goto fail;
	}
	if (!vision_view_for(&t->shot, &mons[t->shot.monitor], &t->view)) {
		tools_fail("%s", vision_error());
		goto fail;
	}
	return t;
fail:
	free(t);
	return NULL;
}

void agent_tools_destroy(agent_tools *t)
{
	free(t);
}

os_display *agent_tools_display(const agent_tools *t)
{
	return t->display;
}

const vision_view *agent_tools_view(const agent_tools *t)
{
	return &t->view;
}

void agent_shot_clear(agent_shot *s)
{
	if (s == NULL)
		return;
	free(s->png);
	memset(s, 0, sizeof(*s));
}

void agent_shot_missing(char **text, const char *why)
{
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "%s\n[no screenshot: %s]", *text ? *text : "", why);
	free(*text);
	*text = agent_buf_steal(&b);
}

void agent_tools_screenshot_for(agent_tools *t, bool settle, agent_shot *shot, char **text)
{
	if (!agent_tools_screenshot(t, settle, shot))
		agent_shot_missing(text, agent_tools_error());
}

bool agent_tools_screenshot(agent_tools *t, bool settle, agent_shot *out)
{
	memset(out, 0, sizeof(*out));
	vision_settle_opts so;
	vision_settle_opts_init(&so);
	so.cap_ms = t->settle_ms;
	vision_view view;
	os_image *shot = vision_settled_shot(t->display, &t->shot, settle ? &so : NULL, &view);
	if (shot == NULL)
		return tools_fail("%s", vision_error());
	/* The IDs drawn are the list element: targets refer to from now on;
	 * the tree's note (no bus, no tree) is what the picture shows. */
	if (t->marks)
		free(agent_computer_marks(t->display, shot, &view));
	/* Captured in strips, it kept no screenful to give back. */
	bool ok = os_png_encode(shot, &out->png, &out->len, NULL);
	os_image_destroy(shot);
	if (!ok)
		return tools_fail("%s", os_error());
	out->width = view.model_w;
	out->height = view.model_h;
	/* From now on, the model's coordinates refer to this image. */
	t->view = view;
	return true;
}
