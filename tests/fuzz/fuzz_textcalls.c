/*
 * What an open model writes as its answer's text: the first byte picks the
 * family (even: Qwen, whose <tool_call> blocks become calls; odd: UI-TARS,
 * whose "Action:" lines do), the rest is the text. The answer is assembled
 * as the provider does (turn_text_calls), every call it made is run
 * through its family's strict translator (agent/tools/qwen_actions.h,
 * uitars.h) and the computer tool's parser against a view, the calls are
 * answered and the next request built in every format. Whatever the text:
 * nothing crashes, every call has an id, a name and its toolset, a refused
 * action says why, a parsed one is on the screen, and every request is JSON.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"
#include "agent/tools/tools.h"

static const vision_view view = {0, 0, 1366, 771, 1344, 756, 0, 0};

static void translate(const struct conv_block *b)
{
	char err[512] = "";
	char *final = NULL;
	cJSON *args = NULL;
	bool qwen = b->dialect == &agent_dialect_qwen;
	const char *action = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b->args, "action"));
	if (qwen ? agent_qwen_final(b->args, &final) : agent_uitars_final(action, &final)) {
		fuzz_check(final != NULL, "a final call without its text");
		free(final);
		return;
	}
	int ptr[2] = {10, 20};
	args = qwen ? agent_qwen_action_args(b->args, ptr, err, sizeof(err))
	            : agent_uitars_action_args(action, err, sizeof(err));
	if (args == NULL) {
		fuzz_check(err[0] != '\0', "refused without a reason");
		return;
	}
	agent_computer_action a;
	if (agent_computer_parse(args, &view, &a, err, sizeof(err))) {
		fuzz_check(!a.has_point || (a.mx >= 0 && a.mx < view.model_w && a.sx >= 0 &&
		                            a.sx < view.screen_w && a.sy < view.screen_h),
		           "point %d,%d off the screen", a.mx, a.my);
		agent_computer_action_finish(&a);
	} else {
		fuzz_check(err[0] != '\0', "unparsed without a reason");
	}
	cJSON_Delete(args);
}

/* Every call made in text is translated as the gate would. */
static void translate_call(const struct conv_block *b)
{
	if (b->dialect != &agent_dialect_deskhand && b->args != NULL)
		translate(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	enum model_family f = data[0] & 1 ? MODEL_FAMILY_UITARS : MODEL_FAMILY_QWEN25_VL;
	struct turn t;
	turn_init(&t, "openai", NULL);
	t.family = f;
	char *text = fuzz_cstr(data + 1, size - 1);
	if (strlen(text) == size - 1 && agent_utf8_valid(text, size - 1))
		turn_text(&t, text, size - 1);
	free(text);
	if (turn_finish_calls(&t) && turn_text_calls(&t, f)) {
		for (size_t i = 0; t.msg && i < t.msg->n_blocks; i++) {
			const struct conv_block *b = &t.msg->blocks[i];
			if (b->type == CONV_TOOL_CALL && f == MODEL_FAMILY_UITARS)
				fuzz_check(b->dialect == &agent_dialect_uitars, "toolset");
			if (b->type == CONV_TOOL_CALL && strcmp(b->name, "computer_use") == 0)
				fuzz_check(f == MODEL_FAMILY_UITARS || b->dialect == &agent_dialect_qwen,
				           "computer_use without qwen");
		}
		fuzz_next_request(&t, translate_call);
	}
	turn_clear(&t);
	return 0;
}
