/*
 * The server-sent-events parser: the same stream fed whole, byte by byte and
 * in random splits yields the same events; line endings, comments,
 * multi-line data, a BOM, the last event without its blank line, a flood.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/llm/provider-internal.h"

struct seen {
	char log[4096];
	size_t len;
	int count;
	int stop_at; /* refuse the n-th event (0: never) */
};

static bool record(void *user, const char *event, const char *data, size_t len)
{
	struct seen *s = user;
	s->count++;
	assert_int_equal(strlen(data), len); /* NUL-terminated, no embedded NUL here */
	s->len += (size_t)snprintf(s->log + s->len, sizeof(s->log) - s->len, "[%s|%s]", event, data);
	return s->stop_at == 0 || s->count < s->stop_at;
}

static const char stream[] =
	"\xEF\xBB\xBF"
	": a comment\r\n"
	"event: message_start\r\n"
	"data: {\"type\":\"message_start\"}\r\n"
	"\r\n"
	"data: line one\n"
	"data: line two\n"
	"\n"
	"id: 7\rretry: 100\revent: ping\rdata:no-space\r\r"
	"data: caf\xC3\xA9 \xE2\x9C\x93\n"
	"\n"
	"event: lonely\n"
	"\n"
	"data\n"
	"\n"
	"data: [DONE]\n\n";

static const char expected[] =
	"[message_start|{\"type\":\"message_start\"}]"
	"[message|line one\nline two]"
	"[ping|no-space]"
	"[message|caf\xC3\xA9 \xE2\x9C\x93]"
	"[message|]"
	"[message|[DONE]]";

static void feed_split(const size_t *cuts, size_t ncuts, struct seen *s)
{
	struct sse_parser p;
	sse_init(&p, record, s);
	size_t prev = 0, n = sizeof(stream) - 1;
	for (size_t i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n;
		assert_true(sse_feed(&p, stream + prev, end - prev));
		prev = end;
	}
	assert_true(sse_finish(&p));
	sse_clear(&p);
}

static void test_whole(void **state)
{
	struct seen s = {0};
	feed_split(NULL, 0, &s);
	assert_string_equal(s.log, expected);
}

static void test_byte_by_byte(void **state)
{
	size_t n = sizeof(stream) - 1;
	size_t *cuts = calloc(n, sizeof(size_t));
	for (size_t i = 0; i + 1 < n; i++)
		cuts[i] = i + 1;
	struct seen s = {0};
	feed_split(cuts, n - 1, &s);
	assert_string_equal(s.log, expected);
	free(cuts);
}

static void test_random_splits(void **state)
{
	uint32_t seed = 12345;
	size_t n = sizeof(stream) - 1;
	for (int round = 0; round < 500; round++) {
		size_t cuts[16], k = 0, at = 0;
		while (k < 16) {
			seed = seed * 1103515245u + 12345u;
			at += 1 + (seed >> 16) % 12;
			if (at >= n)
				break;
			cuts[k++] = at;
		}
		struct seen s = {0};
		feed_split(cuts, k, &s);
		assert_string_equal(s.log, expected);
	}
}

static void test_cr_lf_across_chunks(void **state)
{
	/* A CR ends the line; the LF in the next chunk must not end another. */
	struct seen s = {0};
	struct sse_parser p;
	sse_init(&p, record, &s);
	assert_true(sse_feed(&p, "data: a\r", 8));
	assert_true(sse_feed(&p, "\n\r", 2));
	assert_true(sse_feed(&p, "\ndata: b\r\n\r\n", 12));
	sse_clear(&p);
	assert_string_equal(s.log, "[message|a][message|b]");
}

static void test_last_event_without_blank_line(void **state)
{
	struct seen s = {0};
	struct sse_parser p;
	sse_init(&p, record, &s);
	assert_true(sse_feed(&p, "data: x\n\ndata: [DONE]", 21));
	assert_int_equal(s.count, 1);
	assert_true(sse_finish(&p));
	sse_clear(&p);
	assert_string_equal(s.log, "[message|x][message|[DONE]]");
}

static void test_refusal_stops_stream(void **state)
{
	struct seen s = {.stop_at = 1};
	struct sse_parser p;
	sse_init(&p, record, &s);
	assert_false(sse_feed(&p, "data: 1\n\ndata: 2\n\n", 18));
	assert_false(sse_feed(&p, "data: 3\n\n", 9));
	sse_clear(&p);
	assert_int_equal(s.count, 1);
}

static void test_flood_is_refused(void **state)
{
	struct seen s = {0};
	struct sse_parser p;
	sse_init(&p, record, &s);
	p.max_event = 1000;
	char junk[600];
	memset(junk, 'x', sizeof(junk));
	assert_true(sse_feed(&p, "data: ", 6));
	assert_true(sse_feed(&p, junk, sizeof(junk)));
	assert_false(sse_feed(&p, junk, sizeof(junk)));
	sse_clear(&p);
	assert_int_equal(s.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_random_splits),
		cmocka_unit_test(test_cr_lf_across_chunks),
		cmocka_unit_test(test_last_event_without_blank_line),
		cmocka_unit_test(test_refusal_stops_stream),
		cmocka_unit_test(test_flood_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
