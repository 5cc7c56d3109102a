/*
 * agent/safety/gate — running an approved computer action through the
 * computer runner (agent/tools/computer-run.h, which only this file
 * includes), and the model's screenshots. gate_run_action is called by
 * agent_gate_tool_call alone (tests/safety/test_one_gate.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/safety/gate-internal.h"
#include "agent/tools/computer-run.h"
#include "agent/util/textutil.h"

void agent_gate_shot_opts(const agent_gate *g, vision_shot_opts *vo)
{
	vision_shot_opts_init(vo);
	vo->max_w = g->screen_max_w;
	vo->max_h = g->screen_max_h;
	vo->monitor = g->monitor;
	vo->grid = g->grid;
	vo->grounding = g->grounding;
	if (g->min_pixels > 0)
		vo->min_pixels = g->min_pixels;
	if (g->relative > 0)
		vo->relative = g->relative;
}

bool agent_gate_screenshot(agent_gate *g, bool settle, struct conv_image *img,
                      char *err, size_t errlen)
{
	if (settle) {
		vision_settle_opts so;
		vision_settle_opts_init(&so);
		so.cap_ms = g->settle_ms;
		vision_settle_result sr;
		/* The monitor the model sees: changes elsewhere do not delay it. */
		os_rect mon = {g->view.screen_x, g->view.screen_y, g->view.screen_w, g->view.screen_h};
		if (!vision_settle(g->display, &mon, &so, &sr)) {
			snprintf(err, errlen, "%s", vision_error());
			return false;
		}
	}
	vision_shot_opts vo;
	agent_gate_shot_opts(g, &vo);
	vision_view view;
	os_image *shot = vision_shot(g->display, &vo, &view);
	if (shot == NULL) {
		snprintf(err, errlen, "%s", vision_error());
		return false;
	}
	/* The IDs drawn are the list element: targets refer to from now on;
	 * the tree's note (no bus, no tree) is what the picture shows. */
	if (g->marks)
		free(agent_computer_marks(g->display, shot, &view));
	uint8_t *png = NULL;
	size_t len = 0;
	bool ok = os_png_encode(shot, &png, &len, NULL);
	os_image_destroy(shot);
	if (!ok) {
		snprintf(err, errlen, "%s", os_error());
		return false;
	}
	ok = conv_store_png(*g->conv, png, len, view.model_w, view.model_h, img);
	free(png);
	if (!ok) {
		snprintf(err, errlen, "%s", conv_error());
		return false;
	}
	/* From now on, the model's coordinates refer to this image. */
	g->view = view;
	return true;
}

void gate_attach_screenshot(agent_gate *g, bool settle, agent_tool_result *res)
{
	char err[256];
	if (agent_gate_screenshot(g, settle, &res->image, err, sizeof(err)))
		return;
	agent_buf b;
	agent_buf_init(&b);
	agent_buf_printf(&b, "%s\n[no screenshot: %s]", res->text ? res->text : "", err);
	free(res->text);
	res->text = agent_buf_steal(&b);
}

void gate_run_action(agent_gate *g, const proposal *p, agent_tool_result *res)
{
	agent_computer_ctx ctx = {
		.display = g->display,
		.view = &g->view,
		.max_w = g->screen_max_w,
		.max_h = g->screen_max_h,
		.cancel = g->cancel,
	};
	long long t0 = agent_now_ms();
	agent_computer_result r;
	agent_computer_run(&ctx, &p->action, &r);
	if (p->kind == AGENT_POLICY_OS_INPUT && r.pointer_x >= 0) {
		g->last_px = r.pointer_x;
		g->last_py = r.pointer_y;
		g->have_last_pointer = true;
	}
	free(res->text);
	res->text = r.text;
	r.text = NULL;
	res->is_error = r.is_error;
	if (r.image != NULL) {
		uint8_t *png = NULL;
		size_t len = 0;
		if (os_png_encode(r.image, &png, &len, NULL))
			conv_store_png(*g->conv, png, len, r.image->width, r.image->height, &res->image);
		free(png);
	} else if (r.want_screenshot) {
		bool own = p->action.kind == AGENT_ACTION_SCREENSHOT ||
		           p->action.kind == AGENT_ACTION_FIND_TEXT;
		if (!own && g->batch_more)
			res->screenshot_due = true;
		else
			gate_attach_screenshot(g, !own, res);
	}
	agent_gate_logged(g, agent_audit_executed(g->audit, p->id, p->kind, res->is_error ? 1 : 0,
	                                          (long)(agent_now_ms() - t0),
	                                          res->is_error ? res->text : NULL));
	agent_computer_result_finish(&r);
	/* What it typed or pasted into deskhand's own terminal is not the user's. */
	if (p->kind == AGENT_POLICY_OS_INPUT)
		agent_term_discard_action_input(g->term);
	/* find_text and zoom capture whole regions: keep no screenful around. */
	os_capture_trim(g->display, CAPTURE_KEEP_BYTES);
}
