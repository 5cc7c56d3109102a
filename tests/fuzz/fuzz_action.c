/*
 * The computer tool's arguments as the model sends them. The first byte
 * picks the view of the last screenshot (scaled or not, with a monitor
 * origin, odd sizes); the rest is the JSON. A parsed action has its
 * coordinates inside that screenshot and on the screen, its key names
 * format canonically, and survives the round trip through its JSON form
 * (what the audit log records and what `e` lets the human edit) unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "agent/tools/computer.h"
#include "agent/util/textutil.h"

static const vision_view views[] = {
	{0, 0, 1920, 1080, 1280, 720},
	{0, 0, 1366, 768, 1366, 768},
	{1920, 0, 2560, 1440, 1280, 720},
	{0, 0, 1023, 767, 997, 747},
};

static bool point_ok(const vision_view *v, int mx, int my, int sx, int sy)
{
	return mx >= 0 && my >= 0 && mx < v->model_w && my < v->model_h &&
	       sx >= v->screen_x && sy >= v->screen_y &&
	       sx < v->screen_x + v->screen_w && sy < v->screen_y + v->screen_h;
}

static void check_action(const agent_computer_action *a, const vision_view *v)
{
	fuzz_check(a->kind >= 0 && a->kind < AGENT_ACTION_COUNT && a->name, "kind %d", a->kind);
	if (a->has_point)
		fuzz_check(point_ok(v, a->mx, a->my, a->sx, a->sy), "point %d,%d -> %d,%d",
		           a->mx, a->my, a->sx, a->sy);
	if (a->has_start)
		fuzz_check(point_ok(v, a->start_mx, a->start_my, a->start_sx, a->start_sy),
		           "start %d,%d", a->start_mx, a->start_my);
	fuzz_check(a->n_combos >= 0 && a->n_combos <= AC_MAX_COMBOS, "%d combos", a->n_combos);
	for (int i = 0; i < a->n_combos; i++) {
		char name[512];
		os_combo again;
		fuzz_check(os_key_format(&a->combos[i], name, sizeof(name)), "combo %d unformattable", i);
		fuzz_check(os_key_parse(name, &again) && again.count == a->combos[i].count &&
		           memcmp(again.keysyms, a->combos[i].keysyms,
		                  sizeof(uint32_t) * (size_t)again.count) == 0,
		           "combo '%s' does not read back", name);
	}
}

static void same_action(const agent_computer_action *a, const agent_computer_action *b)
{
	fuzz_check(a->kind == b->kind, "kind %s became %s", a->name, b->name);
	fuzz_check(a->has_point == b->has_point && a->mx == b->mx && a->my == b->my &&
	           a->sx == b->sx && a->sy == b->sy, "%s: point changed", a->name);
	fuzz_check(a->has_start == b->has_start && a->start_sx == b->start_sx &&
	           a->start_sy == b->start_sy, "%s: start changed", a->name);
	fuzz_check((a->text == NULL) == (b->text == NULL) &&
	           (a->text == NULL || strcmp(a->text, b->text) == 0), "%s: text changed", a->name);
	fuzz_check(a->n_combos == b->n_combos &&
	           memcmp(a->combos, b->combos, sizeof(os_combo) * (size_t)a->n_combos) == 0,
	           "%s: keys changed", a->name);
	fuzz_check(a->direction == b->direction && a->amount == b->amount &&
	           a->duration_ms == b->duration_ms &&
	           memcmp(a->region, b->region, sizeof(a->region)) == 0, "%s: fields changed",
	           a->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const vision_view *v = &views[data[0] % (sizeof(views) / sizeof(views[0]))];
	char *text = fuzz_cstr(data + 1, size - 1);
	cJSON *args = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsObject(args)) {
		cJSON_Delete(args);
		return 0;
	}
	agent_computer_action a;
	char err[256];
	if (agent_computer_parse(args, v, &a, err, sizeof(err))) {
		check_action(&a, v);
		char *line = agent_computer_describe(&a);
		fuzz_check(line != NULL, "no description");
		fuzz_check(agent_utf8_valid(line, strlen(line)), "description not UTF-8: %s", line);
		for (const char *c = line; *c; c++)
			fuzz_check(*c == '\n' || ((unsigned char)*c >= 0x20 && *c != 0x7f),
			           "a control character in the description: %s", line);
		free(line);
		char *json = agent_computer_to_json(&a);
		fuzz_check(json != NULL, "no JSON form");
		cJSON *back = cJSON_Parse(json);
		fuzz_check(back != NULL, "JSON form does not parse: %s", json);
		agent_computer_action b;
		fuzz_check(agent_computer_parse(back, v, &b, err, sizeof(err)),
		           "JSON form %s is refused: %s", json, err);
		same_action(&a, &b);
		agent_computer_action_finish(&b);
		cJSON_Delete(back);
		free(json);
		agent_computer_action_finish(&a);
	} else {
		fuzz_check(strnlen(err, sizeof(err)) > 0 && strnlen(err, sizeof(err)) < sizeof(err),
		           "a refusal without a message");
	}
	cJSON_Delete(args);
	return 0;
}
