/*
 * Assembly of streamed tool-call arguments. The input is a header (format,
 * how many calls, where to cut) and then the arguments text S. S is sent as
 * a real server would: JSON-string fragments cut at character boundaries,
 * for OpenAI possibly two calls whose fragments interleave by index, for
 * Anthropic input_json_delta events in one tool_use block each. Whatever S
 * and the cuts, each call's assembled arguments are exactly S (made valid
 * UTF-8), it is announced once, and its parsed form agrees with S.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"

#define HEADER 6
#define MAX_CUTS 4

struct frag {
	size_t start, end;
};

struct got {
	size_t calls;
};

static void on_call(void *user, const struct conv_block *call)
{
	((struct got *)user)->calls++;
	(void)call;
}

static bool event(struct turn *t, bool anthropic, const char *name, agent_buf *e)
{
	const struct provider_format *f = anthropic ? &provider_format_anthropic
	                                            : &provider_format_openai;
	bool ok = !e->oom && f->event(t, name, e->data, e->len);
	agent_buf_reset(e);
	return ok;
}

static bool send_fragment(struct turn *t, bool anthropic, int index, const char *s,
                          size_t n, agent_buf *e)
{
	if (anthropic) {
		agent_buf_puts(e, "{\"type\":\"content_block_delta\",\"index\":");
		jb_long(e, index);
		agent_buf_puts(e, ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":");
		jb_strn(e, s, n);
		agent_buf_puts(e, "}}");
		return event(t, true, "content_block_delta", e);
	}
	agent_buf_puts(e, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":");
	jb_long(e, index);
	agent_buf_puts(e, ",\"function\":{\"arguments\":");
	jb_strn(e, s, n);
	agent_buf_puts(e, "}}]}}]}");
	return event(t, false, NULL, e);
}

static bool start_call(struct turn *t, bool anthropic, int index, agent_buf *e)
{
	if (anthropic) {
		agent_buf_puts(e, "{\"type\":\"content_block_start\",\"index\":");
		jb_long(e, index);
		agent_buf_puts(e, ",\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_");
		jb_long(e, index);
		agent_buf_puts(e, "\",\"name\":\"execute\",\"input\":{}}}");
		return event(t, true, "content_block_start", e);
	}
	agent_buf_puts(e, "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":");
	jb_long(e, index);
	agent_buf_puts(e, ",\"id\":\"call_");
	jb_long(e, index);
	agent_buf_puts(e, "\",\"type\":\"function\",\"function\":{\"name\":\"execute\",\"arguments\":\"\"}}]}}]}");
	return event(t, false, NULL, e);
}

static bool end_turn(struct turn *t, bool anthropic, agent_buf *e)
{
	if (anthropic) {
		agent_buf_puts(e, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
		           "\"usage\":{\"output_tokens\":1}}");
		if (!event(t, true, "message_delta", e))
			return false;
		agent_buf_puts(e, "{\"type\":\"message_stop\"}");
		return event(t, true, "message_stop", e);
	}
	agent_buf_puts(e, "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}");
	if (!event(t, false, NULL, e))
		return false;
	agent_buf_puts(e, "[DONE]");
	return event(t, false, NULL, e);
}

static bool stop_block(struct turn *t, int index, agent_buf *e)
{
	agent_buf_puts(e, "{\"type\":\"content_block_stop\",\"index\":");
	jb_long(e, index);
	agent_buf_puts(e, "}");
	return event(t, true, "content_block_stop", e);
}

/* Cuts s[0..n) (valid UTF-8) into at most MAX_CUTS+1 pieces at character starts. */
static size_t cut(const uint8_t *hdr, const char *s, size_t n, struct frag *out)
{
	size_t cuts[MAX_CUTS], k = 0;
	for (int i = 0; i < MAX_CUTS && n > 0; i++) {
		size_t at = hdr[i] % (n + 1);
		while (at < n && (s[at] & 0xC0) == 0x80)
			at++;
		size_t j = k;
		while (j > 0 && cuts[j - 1] > at) {
			cuts[j] = cuts[j - 1];
			j--;
		}
		cuts[j] = at;
		k++;
	}
	size_t nf = 0, prev = 0;
	for (size_t i = 0; i <= k; i++) {
		size_t end = i < k ? cuts[i] : n;
		if (end > prev || (i == k && nf == 0))
			out[nf++] = (struct frag){prev, end};
		prev = end;
	}
	return nf;
}

static bool expect_parsed(const char *s)
{
	if (s[strspn(s, " \t\r\n")] == '\0')
		return true;
	cJSON *j = cJSON_ParseWithOpts(s, NULL, true);
	bool obj = cJSON_IsObject(j);
	cJSON_Delete(j);
	return obj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	bool anthropic = data[0] & 1;
	int ncalls = 1 + ((data[0] >> 1) & 1);
	size_t slen;
	/* NUL bytes cannot travel in a JSON string that cJSON hands back. */
	char *s = agent_utf8_sanitize((const char *)data + HEADER, size - HEADER, &slen);
	if (s == NULL)
		return 0;
	struct frag frags[MAX_CUTS + 1];
	size_t nf = cut(data + 1, s, slen, frags);

	struct got g = {0};
	struct provider_events ev = {.user = &g, .tool_call = on_call};
	struct turn t;
	agent_buf e = {0};
	turn_init(&t, anthropic ? "anthropic" : "openai", &ev);
	bool ok = true;
	if (!anthropic && ncalls == 2 && (data[5] & 1)) {
		/* Two OpenAI calls whose fragments interleave by index. */
		ok = start_call(&t, false, 0, &e) && start_call(&t, false, 1, &e);
		for (size_t i = 0; i < nf && ok; i++)
			for (int c = 0; c < 2 && ok; c++)
				ok = send_fragment(&t, false, c, s + frags[i].start,
				                   frags[i].end - frags[i].start, &e);
	} else {
		for (int c = 0; c < ncalls && ok; c++) {
			ok = start_call(&t, anthropic, c, &e);
			for (size_t i = 0; i < nf && ok; i++)
				ok = send_fragment(&t, anthropic, c, s + frags[i].start,
				                   frags[i].end - frags[i].start, &e);
			if (ok && anthropic)
				ok = stop_block(&t, c, &e);
		}
	}
	ok = ok && end_turn(&t, anthropic, &e) && turn_finish_calls(&t);
	fuzz_check(ok && t.done, "the turn failed: %s", t.error);
	fuzz_check(g.calls == (size_t)ncalls, "%zu calls announced, %d sent", g.calls, ncalls);
	fuzz_check(t.msg && t.msg->n_blocks == (size_t)ncalls, "blocks in the message");
	for (int c = 0; c < ncalls; c++) {
		const struct conv_block *b = &t.msg->blocks[c];
		fuzz_check(strcmp(b->arguments, s) == 0, "call %d arguments differ", c);
		fuzz_check((b->args != NULL) == expect_parsed(s), "call %d parsed: %s", c,
		           b->args_error);
	}
	turn_clear(&t);
	agent_buf_finish(&e);
	free(s);
	return 0;
}
