/*
 * Google Gemini answers as raw bytes off the network: the first byte picks
 * the form (even: a server-sent event stream of GenerateContentResponse
 * chunks, odd: a whole JSON body), the rest is the body. The turn is
 * assembled as the provider does (the model's content kept byte for byte,
 * function calls with their safety decisions as checks), moved into a
 * conversation, every call answered (every other one acknowledged, so
 * declined ones are left out), and the next request built in every format:
 * whatever the server sent, nothing crashes, every call has an id and a
 * name, every kept content is valid JSON text, and each request is valid
 * JSON.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"

struct run {
	struct turn *t;
	size_t calls;
};

static bool on_event(void *user, const char *event, const char *data, size_t len)
{
	struct run *r = user;
	return provider_format_gemini.event(r->t, event, data, len);
}

static void on_call(void *user, const struct conv_block *call)
{
	struct run *r = user;
	r->calls++;
	fuzz_check(call->id && *call->id && call->name && *call->name, "call without id or name");
}

/* Every call answered; every other one with its safety checks acknowledged. */
static bool answer(struct conv *c, const struct conv_message *m)
{
	struct conv_message *res = NULL;
	size_t k = 0;
	for (size_t i = 0; i < m->n_blocks; i++) {
		const struct conv_block *b = &m->blocks[i];
		if (b->type == CONV_VENDOR || (b->type == CONV_TOOL_CALL && b->raw)) {
			cJSON *j = cJSON_Parse(b->raw);
			fuzz_check(j != NULL, "a kept item is not JSON: %.80s", b->raw);
			cJSON_Delete(j);
		}
		if (b->type != CONV_TOOL_CALL)
			continue;
		if (!res && !(res = conv_add_message(c, CONV_TOOL)))
			return false;
		const char *ack = b->checks && k % 2 == 0 ? b->checks : NULL;
		if (!conv_msg_add_tool_result_ex(res, b->id, k % 3 ? "done" : "failed", k % 3 == 0,
		                                 NULL, ack))
			return false;
		k++;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct turn t;
	struct run r = {.t = &t};
	struct provider_events ev = {.user = &r, .tool_call = on_call};
	turn_init(&t, "gemini", &ev);
	bool ok;
	if (data[0] & 1) {
		ok = provider_format_gemini.body(&t, (const char *)data + 1, size - 1);
	} else {
		struct sse_parser p;
		sse_init(&p, on_event, &r);
		if (sse_feed(&p, (const char *)data + 1, size - 1))
			sse_finish(&p);
		sse_clear(&p);
		ok = !t.failed;
	}
	if (ok && !t.failed && turn_finish_calls(&t)) {
		size_t announced = 0;
		for (size_t i = 0; t.msg && i < t.msg->n_blocks; i++)
			announced += t.msg->blocks[i].type == CONV_TOOL_CALL;
		fuzz_check(announced == r.calls, "%zu calls in the message, %zu announced",
		           announced, r.calls);
		struct conv *c = conv_create(NULL);
		if (c && conv_add_user_text(c, "task") && turn_append(&t, c) &&
		    (c->n_messages < 2 || answer(c, c->messages[1])) && conv_add_user_text(c, "next"))
			fuzz_build_requests(c);
		conv_destroy(c);
	}
	turn_clear(&t);
	return 0;
}
