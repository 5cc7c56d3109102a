/* Helpers every fuzz target links, whichever driver runs it. */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"

char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s == NULL)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_build_requests(const struct conv *c)
{
	struct conv_view v;
	if (!conv_view_plan(c, 2000, 2, &v))
		return; /* out of memory */
	static const struct provider_format *const formats[] = {
		&provider_format_openai, &provider_format_anthropic, &provider_format_responses,
		&provider_format_ollama, &provider_format_gemini,
	};
	for (size_t f_i = 0; f_i < sizeof(formats) / sizeof(formats[0]); f_i++) {
		int anthropic = f_i == 1;
		struct provider_request r = {.system = "system", .max_tokens = 100,
		                             .keep_images = 2, .prompt_cache = anthropic};
		struct request_ctx rc = {.conv = c, .view = &v, .req = &r, .model = "m",
		                         .stream = true, .think = PROVIDER_THINK_LOW};
		agent_buf b = {0};
		const struct provider_format *f = formats[f_i];
		if (f->build(&rc, &b) && !b.oom) {
			cJSON *j = cJSON_ParseWithLength(b.data, b.len);
			fuzz_check(j != NULL, "request body is not JSON: %.*s",
			           (int)(b.len < 300 ? b.len : 300), b.data);
			cJSON_Delete(j);
		}
		agent_buf_finish(&b);
	}
	conv_view_clear(&v);
}

static void check_kept(const struct conv_block *b)
{
	if (b->type == CONV_VENDOR || (b->type == CONV_TOOL_CALL && b->raw)) {
		cJSON *j = cJSON_Parse(b->raw);
		fuzz_check(j != NULL, "a kept item is not JSON: %.80s", b->raw);
		cJSON_Delete(j);
	}
}

static bool answer_calls(struct conv *c, const struct conv_message *m,
                         void (*each)(const struct conv_block *call))
{
	struct conv_message *res = NULL;
	size_t k = 0;
	for (size_t i = 0; i < m->n_blocks; i++) {
		const struct conv_block *b = &m->blocks[i];
		check_kept(b);
		if (b->type != CONV_TOOL_CALL)
			continue;
		fuzz_check(b->id && *b->id && b->name && *b->name, "call without id or name");
		if (each != NULL)
			each(b);
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

void fuzz_next_request(struct turn *t, void (*each)(const struct conv_block *call))
{
	struct conv *c = conv_create(NULL);
	if (c && conv_add_user_text(c, "task") && turn_append(t, c) &&
	    (c->n_messages < 2 || answer_calls(c, c->messages[1], each)) &&
	    conv_add_user_text(c, "next"))
		fuzz_build_requests(c);
	conv_destroy(c);
}

struct format_run {
	const struct provider_format *f;
	struct turn *t;
	size_t calls;
};

static bool on_event(void *user, const char *event, const char *data, size_t len)
{
	struct format_run *r = user;
	return r->f->event(r->t, event, data, len);
}

static void on_call(void *user, const struct conv_block *call)
{
	struct format_run *r = user;
	r->calls++;
	fuzz_check(call->id && *call->id && call->name && *call->name, "call without id or name");
}

int fuzz_format_answer(const struct provider_format *f, const char *who,
                       const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct turn t;
	struct format_run r = {.f = f, .t = &t};
	struct provider_events ev = {.user = &r, .tool_call = on_call};
	turn_init(&t, who, &ev);
	bool ok;
	if (data[0] & 1) {
		ok = f->body(&t, (const char *)data + 1, size - 1);
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
		fuzz_next_request(&t, NULL);
	}
	turn_clear(&t);
	return 0;
}
