/*
 * The server-sent-events parser: any bytes, split anywhere, give the same
 * events (and the same verdict) as the bytes fed whole; every event's data
 * is NUL-terminated at its stated length.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/llm/provider-internal.h"

struct seen {
	agent_buf log;
	size_t events;
};

static bool record(void *user, const char *event, const char *data, size_t len)
{
	struct seen *s = user;
	fuzz_check(data[len] == '\0', "data not terminated at %zu", len);
	fuzz_check(strlen(event) < 64, "event name of %zu bytes", strlen(event));
	s->events++;
	agent_buf_puts(&s->log, event);
	agent_buf_append(&s->log, "\0", 1);
	jb_long(&s->log, (long)len);
	agent_buf_append(&s->log, ":", 1);
	agent_buf_append(&s->log, data, len);
	/* Refusing an event must stop the stream the same way whatever the split. */
	return !(len == 4 && memcmp(data, "STOP", 4) == 0);
}

/* Feeds data in pieces ending at the given cut points; returns the verdict. */
static bool feed(const uint8_t *data, size_t size, const size_t *cuts, size_t ncuts,
                 struct seen *s)
{
	struct sse_parser p;
	sse_init(&p, record, s);
	p.max_event = 1024; /* small, so the fuzzer reaches the limit too */
	bool ok = true;
	size_t prev = 0;
	for (size_t i = 0; i <= ncuts && ok; i++) {
		size_t end = i < ncuts ? cuts[i] : size;
		ok = sse_feed(&p, (const char *)data + prev, end - prev);
		prev = end;
	}
	if (ok)
		ok = sse_finish(&p);
	sse_clear(&p);
	return ok;
}

static void same(const struct seen *a, const struct seen *b, bool va, bool vb, const char *how)
{
	fuzz_check(va == vb, "%s: verdict %d, whole %d", how, vb, va);
	fuzz_check(a->log.len == b->log.len &&
	           (a->log.len == 0 || memcmp(a->log.data, b->log.data, a->log.len) == 0),
	           "%s: %zu events differ from the %zu of the whole", how, b->events, a->events);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen whole = {0};
	bool verdict = feed(data, size, NULL, 0, &whole);
	/* Every single cut point for small inputs, a spread of them for big ones. */
	size_t step = size <= 512 ? 1 : size / 256;
	for (size_t cut = 0; cut <= size; cut += step) {
		struct seen s = {0};
		bool v = feed(data, size, &cut, 1, &s);
		same(&whole, &s, verdict, v, "one cut");
		agent_buf_finish(&s.log);
	}
	if (size <= 4096) {
		size_t *cuts = malloc((size ? size : 1) * sizeof(*cuts));
		for (size_t i = 0; i < size; i++)
			cuts[i] = i;
		struct seen s = {0};
		bool v = feed(data, size, cuts, size, &s);
		same(&whole, &s, verdict, v, "byte by byte");
		agent_buf_finish(&s.log);
		free(cuts);
	}
	agent_buf_finish(&whole.log);
	return 0;
}
