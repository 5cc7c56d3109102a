/*
 * A whole (non-streamed) reply body, and the pieces of an error reply: the
 * first byte picks the wire format (even: OpenAI, odd: Anthropic), the rest
 * is the body. Parsed as the provider does, moved into a conversation and
 * built into the next request; the server's error text is extracted into a
 * bounded buffer; a Retry-After value gives a delay or -1.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"

static void error_text(const char *body, size_t len)
{
	char out[64];
	memset(out, 'x', sizeof(out));
	provider_error_text(body, len, out, sizeof(out));
	size_t n = strnlen(out, sizeof(out));
	fuzz_check(n < sizeof(out), "error text not terminated");
	fuzz_check(agent_utf8_valid(out, n), "error text is not valid UTF-8");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	bool anthropic = data[0] & 1;
	const char *body = (const char *)data + 1;
	size_t len = size - 1;
	struct turn t;
	turn_init(&t, anthropic ? "anthropic" : "openai", NULL);
	const struct provider_format *f = anthropic ? &provider_format_anthropic
	                                            : &provider_format_openai;
	bool ok = f->body(&t, body, len);
	fuzz_check(ok != t.failed || !ok, "verdict and failed flag disagree");
	if (ok && turn_finish_calls(&t)) {
		struct conv *c = conv_create(NULL);
		if (c && conv_add_user_text(c, "task") && turn_append(&t, c))
			fuzz_build_requests(c);
		conv_destroy(c);
	}
	turn_clear(&t);
	error_text(body, len);
	char *value = fuzz_cstr(data + 1, len < 64 ? len : 64);
	long ms = provider_parse_retry_after(value, 1767225600); /* 2026-01-01 */
	fuzz_check(ms >= -1, "retry-after %ld", ms);
	free(value);
	return 0;
}
