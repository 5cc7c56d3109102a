/*
 * Ollama's /api/chat answers as raw bytes off the network: the first byte
 * picks the form (odd: a whole JSON body; even: a newline-delimited JSON
 * stream fed in pieces of (first byte / 2) + 1 bytes, so lines split
 * anywhere), the rest is the body. The turn is assembled as the provider
 * does, moved into a conversation, its calls answered and the next request
 * built in every format: nothing crashes, every call has an id and a name,
 * and each request is valid JSON.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"

static bool on_line(void *user, const char *line, size_t len)
{
	return provider_format_ollama.event(user, NULL, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct turn t;
	turn_init(&t, "ollama", NULL);
	t.family = data[0] & 2 ? MODEL_FAMILY_QWEN : MODEL_FAMILY_OTHER;
	const char *body = (const char *)data + 1;
	size_t n = size - 1;
	bool ok;
	if (data[0] & 1) {
		ok = provider_format_ollama.body(&t, body, n);
	} else {
		struct ndjson_parser p;
		size_t piece = (size_t)(data[0] >> 2) + 1;
		ndjson_init(&p, on_line, &t);
		ok = true;
		for (size_t at = 0; ok && at < n; at += piece)
			ok = ndjson_feed(&p, body + at, n - at < piece ? n - at : piece);
		ok = ok && ndjson_finish(&p) && t.done;
		ndjson_clear(&p);
	}
	if (ok && !t.failed && turn_finish_calls(&t) && turn_text_calls(&t, t.family)) {
		fuzz_next_request(&t, NULL);
	}
	turn_clear(&t);
	return 0;
}
