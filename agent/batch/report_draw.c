/*
 * agent/batch/report_draw — one computer action drawn over the screenshot
 * it was aimed at, as an SVG element laid over the <img> (its viewBox is
 * the image's pixels, so the drawing scales with the image): a circle at a
 * click, a line and an arrowhead for a drag or a path, an arrow for a
 * scroll, a frame for a zoom, and a label naming the action and, for type
 * and key, the text. See report.h.
 *
 * Coordinates come from the audit log, written by deskhand but carrying
 * the model's numbers: each is checked to be a finite number and held to
 * the image, so no drawing leaves its picture.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch/report.h"

/* A label's text: the start of a long typed text is enough to know it. */
#define LABEL_MAX 60

typedef struct pen {
	agent_buf *out;
	double w, h;    /* the image's size */
	double unit;    /* a stroke's width: the drawing reads alike at any size */
} pen;

static const cJSON *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = field(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool number(const cJSON *v, double *d)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 1e7)
		return false;
	*d = v->valuedouble;
	return true;
}

static double clamp(double v, double hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

/* An [x, y] array, held to the image. */
static bool point(const pen *p, const cJSON *v, double *x, double *y)
{
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2 ||
	    !number(cJSON_GetArrayItem(v, 0), x) || !number(cJSON_GetArrayItem(v, 1), y))
		return false;
	*x = clamp(*x, p->w);
	*y = clamp(*y, p->h);
	return true;
}

/* Where the action points, in the image's pixels: the screen's point
 * scaled to the image when the screen's size is known, else the model's. */
static bool where(const pen *p, const cJSON *a, int sw, int sh, double *x, double *y)
{
	double sx, sy;
	const cJSON *s = field(a, "screen_coordinate");
	if (sw > 0 && sh > 0 && cJSON_IsArray(s) && cJSON_GetArraySize(s) >= 2 &&
	    number(cJSON_GetArrayItem(s, 0), &sx) && number(cJSON_GetArrayItem(s, 1), &sy)) {
		*x = clamp(sx * p->w / sw, p->w);
		*y = clamp(sy * p->h / sh, p->h);
		return true;
	}
	return point(p, field(a, "coordinate"), x, y);
}

static void mark(const pen *p, double x, double y, bool dashed)
{
	agent_buf_printf(p->out, "<circle class=\"click\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
	                 "fill=\"none\" stroke=\"#e00\" stroke-width=\"%.1f\"%s/>"
	                 "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#e00\"/>",
	                 x, y, 7 * p->unit, p->unit, dashed ? " stroke-dasharray=\"4 3\"" : "",
	                 x, y, 1.2 * p->unit);
}

/* The head of an arrow ending at (x1, y1), coming from (x0, y0). */
static void head(const pen *p, double x0, double y0, double x1, double y1)
{
	double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
	if (len < 1e-6)
		return;
	double ux = dx / len, uy = dy / len, s = 6 * p->unit;
	agent_buf_printf(p->out, "<polygon class=\"arrow\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" "
	                 "fill=\"#e00\"/>", x1, y1,
	                 x1 - s * ux + s * 0.6 * uy, y1 - s * uy - s * 0.6 * ux,
	                 x1 - s * ux - s * 0.6 * uy, y1 - s * uy + s * 0.6 * ux);
}

static void line(const pen *p, const char *cls, double x0, double y0, double x1, double y1)
{
	agent_buf_printf(p->out, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	                 "stroke=\"#e00\" stroke-width=\"%.1f\"/>", cls, x0, y0, x1, y1, p->unit);
	head(p, x0, y0, x1, y1);
}

/* The label beside the point, turned to the left near the right edge; a
 * label without a point sits at the bottom left. */
static void label(const pen *p, bool at, double x, double y, const char *text)
{
	double size = 7 * p->unit;
	bool left = at && x > p->w * 0.6;
	if (!at) {
		x = 3 * p->unit;
		y = p->h - 3 * p->unit;
	} else {
		x += left ? -10 * p->unit : 10 * p->unit;
		y = y < size * 1.5 ? y + size * 1.5 : y - size * 0.5;
	}
	agent_buf_printf(p->out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" "
	                 "font-family=\"sans-serif\" fill=\"#e00\" stroke=\"#fff\" "
	                 "stroke-width=\"%.1f\" paint-order=\"stroke\"%s>", x, y, size,
	                 p->unit * 1.5, left ? " text-anchor=\"end\"" : "");
	batch_html_text(p->out, text);
	agent_buf_puts(p->out, "</text>");
}

/* "type: “hello…”": the action, and the start of its text. Ownership: the
 * caller frees; NULL when out of memory. */
static char *label_text(const cJSON *a)
{
	const char *name = str(a, "action"), *text = str(a, "text");
	const char *dir = str(a, "scroll_direction");
	double amount = 0;
	agent_buf b = {0};
	agent_buf_puts(&b, name);
	if (text != NULL) {
		size_t n = strlen(text), cut = n > LABEL_MAX ? LABEL_MAX : n;
		while (cut > 0 && cut < n && ((unsigned char)text[cut] & 0xC0) == 0x80)
			cut--;
		agent_buf_puts(&b, strcmp(name, "type") == 0 ? ": “" : ": ");
		agent_buf_append(&b, text, cut);
		agent_buf_puts(&b, cut < n ? "…" : "");
		agent_buf_puts(&b, strcmp(name, "type") == 0 ? "”" : "");
	}
	if (dir != NULL) {
		agent_buf_printf(&b, " %s", dir);
		if (number(field(a, "scroll_amount"), &amount))
			agent_buf_printf(&b, " ×%.0f", amount);
	}
	return agent_buf_steal(&b);
}

static bool named(const char *name, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

/* The actions that say what to press or type: drawn as their label alone
 * when they have no point. */
static const char *const text_actions[] = {"type", "key", "hold_key", "key_down", "key_up", NULL};

bool batch_action_draws(const cJSON *a)
{
	const char *name = str(a, "action");
	if (name == NULL)
		return false;
	return named(name, text_actions) || cJSON_IsArray(field(a, "coordinate")) ||
	       cJSON_IsArray(field(a, "screen_coordinate")) || cJSON_IsArray(field(a, "path")) ||
	       cJSON_IsArray(field(a, "start_coordinate")) || cJSON_IsArray(field(a, "region"));
}

/* A drag's line (start_coordinate to the point), or a path's. */
static void draw_drag(const pen *p, const cJSON *a, bool at, double x, double y)
{
	double x0 = 0, y0 = 0, px, py, lx = 0, ly = 0;
	const cJSON *path = field(a, "path"), *v;
	int n = 0;
	if (cJSON_IsArray(path)) {
		agent_buf_puts(p->out, "<polyline class=\"drag\" fill=\"none\" stroke=\"#e00\" points=\"");
		cJSON_ArrayForEach(v, path) {
			if (!point(p, v, &px, &py))
				continue;
			agent_buf_printf(p->out, "%s%.1f,%.1f", n > 0 ? " " : "", px, py);
			x0 = lx, y0 = ly, lx = px, ly = py;
			n++;
		}
		agent_buf_printf(p->out, "\" stroke-width=\"%.1f\"/>", p->unit);
		if (n >= 2)
			head(p, x0, y0, lx, ly);
	} else if (at && point(p, field(a, "start_coordinate"), &x0, &y0)) {
		mark(p, x0, y0, true);
		line(p, "drag", x0, y0, x, y);
	}
}

static void draw_scroll(const pen *p, const cJSON *a, double x, double y)
{
	const char *dir = str(a, "scroll_direction");
	double len = 25 * p->unit, dx = 0, dy = 0;
	if (dir == NULL)
		return;
	if (strcmp(dir, "up") == 0)
		dy = -len;
	else if (strcmp(dir, "down") == 0)
		dy = len;
	else if (strcmp(dir, "left") == 0)
		dx = -len;
	else if (strcmp(dir, "right") == 0)
		dx = len;
	else
		return;
	line(p, "scroll", x, y, clamp(x + dx, p->w), clamp(y + dy, p->h));
}

static void draw_region(const pen *p, const cJSON *r)
{
	double v[4];
	if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 4)
		return;
	for (int i = 0; i < 4; i++)
		if (!number(cJSON_GetArrayItem(r, i), &v[i]))
			return;
	double x0 = clamp(fmin(v[0], v[2]), p->w), x1 = clamp(fmax(v[0], v[2]), p->w);
	double y0 = clamp(fmin(v[1], v[3]), p->h), y1 = clamp(fmax(v[1], v[3]), p->h);
	agent_buf_printf(p->out, "<rect class=\"zoom\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	                 "height=\"%.1f\" fill=\"none\" stroke=\"#e00\" stroke-width=\"%.1f\" "
	                 "stroke-dasharray=\"6 4\"/>", x0, y0, x1 - x0, y1 - y0, p->unit);
}

void batch_html_overlay(agent_buf *out, const cJSON *a, int w, int h, int screen_w, int screen_h)
{
	const char *name = str(a, "action");
	if (name == NULL || w <= 0 || h <= 0)
		return;
	pen p = {out, w, h, fmax(1.0, w / 400.0)};
	double x = 0, y = 0;
	bool at = where(&p, a, screen_w, screen_h, &x, &y);
	agent_buf_printf(out, "<svg class=\"overlay\" viewBox=\"0 0 %d %d\" preserveAspectRatio=\"none\" "
	                 "aria-hidden=\"true\" data-action=\"", w, h);
	batch_html_text(out, name);
	agent_buf_puts(out, at ? "\" data-x=\"" : "\"");
	if (at)
		agent_buf_printf(out, "%.1f\" data-y=\"%.1f\"", x, y);
	agent_buf_puts(out, ">");
	draw_region(&p, field(a, "region"));
	if (at && strcmp(name, "scroll") == 0)
		draw_scroll(&p, a, x, y);
	draw_drag(&p, a, at, x, y);
	if (at)
		mark(&p, x, y, strcmp(name, "mouse_move") == 0);
	char *text = label_text(a);
	if (text == NULL)
		out->oom = true;
	label(&p, at, x, y, text != NULL ? text : name);
	free(text);
	agent_buf_puts(out, "</svg>");
}
