/*
 * A streamed reply, as raw bytes off the network: the first byte picks the
 * wire format (even: OpenAI chat completions, odd: Anthropic messages), the
 * rest is the SSE body. The turn is assembled as the provider does, moved
 * into a conversation, and the next request is built from it in both
 * formats: whatever the server sent, nothing crashes, every tool call is
 * announced once with a name and an id, and the next request is valid JSON.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"

struct run {
	struct turn *t;
	const struct provider_format *format;
	size_t calls;
};

static bool on_event(void *user, const char *event, const char *data, size_t len)
{
	struct run *r = user;
	return r->format->event(r->t, event, data, len);
}

static void on_call(void *user, const struct conv_block *call)
{
	struct run *r = user;
	r->calls++;
	fuzz_check(call->type == CONV_TOOL_CALL, "block type %d", call->type);
	fuzz_check(call->id && *call->id && call->name && *call->name, "call without id or name");
	fuzz_check(call->arguments != NULL, "call without arguments");
	fuzz_check((call->args != NULL) == (call->args_error && !*call->args_error),
	           "args and args_error disagree");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct turn t;
	struct run r = {.t = &t, .format = data[0] & 1 ? &provider_format_anthropic
	                                                : &provider_format_openai};
	struct provider_events ev = {.user = &r, .tool_call = on_call};
	turn_init(&t, r.format->name, &ev);
	struct sse_parser p;
	sse_init(&p, on_event, &r);
	if (sse_feed(&p, (const char *)data + 1, size - 1))
		sse_finish(&p);
	sse_clear(&p);
	if (!t.failed && turn_finish_calls(&t)) {
		size_t announced = 0;
		for (size_t i = 0; t.msg && i < t.msg->n_blocks; i++)
			announced += t.msg->blocks[i].type == CONV_TOOL_CALL;
		fuzz_check(announced == r.calls, "%zu calls in the message, %zu announced",
		           announced, r.calls);
		struct conv *c = conv_create(NULL);
		if (c && conv_add_user_text(c, "task") && turn_append(&t, c))
			fuzz_build_requests(c);
		conv_destroy(c);
	}
	turn_clear(&t);
	return 0;
}
