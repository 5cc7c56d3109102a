/*
 * Retry delays (exponential, jitter bounds, cap, Retry-After as seconds and
 * as an HTTP-date), the server's error text, and provider settings (keys
 * from flags or the environment, base URLs, what is refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/llm/provider-internal.h"

static void test_backoff_bounds(void **state)
{
	for (int attempt = 1; attempt <= 8; attempt++) {
		long e = 500L << (attempt - 1);
		if (e > 30000)
			e = 30000;
		uint32_t rnds[] = {0, 1, 12345, 0x7fffffff, 0xffffffff};
		for (size_t i = 0; i < sizeof(rnds) / sizeof(rnds[0]); i++) {
			long d = provider_retry_delay_ms(attempt, 500, 30000, -1, rnds[i]);
			assert_true(d >= e / 2);
			assert_true(d <= e);
		}
		assert_int_equal(provider_retry_delay_ms(attempt, 500, 30000, -1, 0), e / 2);
	}
	/* Jitter spreads: 1000 draws over attempt 3 cover both halves of [1000, 2000]. */
	bool low = false, high = false;
	uint32_t r = 1;
	for (int i = 0; i < 1000; i++) {
		r = r * 1664525u + 1013904223u;
		long d = provider_retry_delay_ms(3, 500, 30000, -1, r);
		low |= d < 1500;
		high |= d > 1500;
	}
	assert_true(low && high);
	assert_int_equal(provider_retry_delay_ms(1, 0, 30000, -1, 99), 0);
}

static void test_retry_after_wins_when_longer(void **state)
{
	assert_int_equal(provider_retry_delay_ms(1, 10, 30000, 3000, 5), 3000);
	assert_true(provider_retry_delay_ms(5, 500, 30000, 100, 5) >= 4000);
}

static void test_parse_retry_after(void **state)
{
	time_t now = 1700000000;
	assert_int_equal(provider_parse_retry_after("3", now), 3000);
	assert_int_equal(provider_parse_retry_after("  10 \r\n", now), 10000);
	assert_int_equal(provider_parse_retry_after("0", now), 0);
	char date[64];
	time_t later = now + 7;
	struct tm tm;
	gmtime_r(&later, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	assert_int_equal(provider_parse_retry_after(date, now), 7000);
	assert_int_equal(provider_parse_retry_after(date, now + 100), 0); /* in the past */
	assert_int_equal(provider_parse_retry_after("soon", now), -1);
	assert_int_equal(provider_parse_retry_after("", now), -1);
	assert_int_equal(provider_parse_retry_after(NULL, now), -1);
	assert_true(provider_parse_retry_after("99999999999", now) > PROVIDER_RETRY_AFTER_MAX_MS);
}

static void test_error_text(void **state)
{
	char out[200];
	const char *oa = "{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\"}}";
	provider_error_text(oa, strlen(oa), out, sizeof(out));
	assert_string_equal(out, "Incorrect API key provided (invalid_request_error)");
	const char *an = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";
	provider_error_text(an, strlen(an), out, sizeof(out));
	assert_string_equal(out, "invalid x-api-key (authentication_error)");
	const char *ol = "{\"error\":\"model 'x' not found\"}";
	provider_error_text(ol, strlen(ol), out, sizeof(out));
	assert_string_equal(out, "model 'x' not found");
	const char *fa = "{\"detail\":\"Not Found\"}";
	provider_error_text(fa, strlen(fa), out, sizeof(out));
	assert_string_equal(out, "Not Found");
	const char *plain = "\n<html>\r\n502 Bad Gateway\x01</html>\n";
	provider_error_text(plain, strlen(plain), out, sizeof(out));
	assert_string_equal(out, "<html>  502 Bad Gateway⟨SOH⟩</html>");
	provider_error_text(NULL, 0, out, sizeof(out));
	assert_string_equal(out, "");
	/* A hostile server: C1 controls (CSI as U+009B), escapes, bidi
	 * controls, invalid bytes, and a cut that would fall inside a character:
	 * shown as marks, never passed on. */
	const char *c1 = "{\"error\":{\"message\":\"a\\u009b2Jb\\u001b]0;x\\u0007c\\u202e\"}}";
	provider_error_text(c1, strlen(c1), out, sizeof(out));
	assert_string_equal(out, "a⟨U+009B⟩2Jb⟨ESC⟩]0;x⟨BEL⟩c⟨U+202E⟩");
	const char *bad = "caf\xC3 \xFF ok";
	provider_error_text(bad, strlen(bad), out, sizeof(out));
	assert_string_equal(out, "caf\xEF\xBF\xBD \xEF\xBF\xBD ok");
	char small[6];
	const char *wide = "{\"error\":\"ab\xE2\x9C\x93\xE2\x9C\x93\"}";
	provider_error_text(wide, strlen(wide), small, sizeof(small));
	assert_string_equal(small, "ab\xE2\x9C\x93");
}

static void test_settings(void **state)
{
	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("ANTHROPIC_BASE_URL");
	struct provider_settings s = {.kind = PROVIDER_OPENAI};
	struct provider *p = provider_create(&s);
	assert_null(p);
	assert_string_equal(provider_error(),
	                    "openai: no API key (pass --api-key or set OPENAI_API_KEY)");
	setenv("OPENAI_API_KEY", "sk-env", 1);
	p = provider_create(&s);
	assert_non_null(p);
	/* OpenAI's own endpoint speaks Responses, with a current computer-use model. */
	assert_string_equal(provider_endpoint(p), "https://api.openai.com/v1/responses");
	assert_string_equal(provider_format_name(p), "openai-responses");
	assert_string_equal(provider_model(p), "gpt-5.4");
	provider_destroy(p);
	s.api = PROVIDER_API_CHAT; /* --api chat */
	p = provider_create(&s);
	assert_string_equal(provider_endpoint(p), "https://api.openai.com/v1/chat/completions");
	assert_string_equal(provider_format_name(p), "openai-chat");
	provider_destroy(p);
	s.api = PROVIDER_API_AUTO;
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1/", 1);
	unsetenv("OPENAI_API_KEY");
	p = provider_create(&s); /* a compatible server needs no key, and serves Chat Completions */
	assert_non_null(p);
	assert_string_equal(provider_endpoint(p), "http://127.0.0.1:8000/v1/chat/completions");
	provider_destroy(p);
	s.api = PROVIDER_API_RESPONSES; /* --api responses */
	p = provider_create(&s);
	assert_string_equal(provider_endpoint(p), "http://127.0.0.1:8000/v1/responses");
	provider_destroy(p);
	s.api = PROVIDER_API_AUTO;
	setenv("OPENAI_BASE_URL", "https://api.openai.com/v1/", 1);
	setenv("OPENAI_API_KEY", "sk-env", 1);
	p = provider_create(&s);
	assert_string_equal(provider_format_name(p), "openai-responses");
	provider_destroy(p);
	unsetenv("OPENAI_API_KEY");
	setenv("OPENAI_BASE_URL", "https://api.openai.com.evil.example/v1", 1);
	p = provider_create(&s);
	assert_string_equal(provider_format_name(p), "openai-chat");
	provider_destroy(p);
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1/", 1);
	s.kind = PROVIDER_ANTHROPIC;
	s.api = PROVIDER_API_RESPONSES;
	assert_null(provider_create(&s));
	assert_non_null(strstr(provider_error(), "--api responses is OpenAI's API"));
	s.kind = PROVIDER_OPENAI;
	s.api = PROVIDER_API_AUTO;

	s.kind = PROVIDER_ANTHROPIC;
	assert_null(provider_create(&s));
	assert_string_equal(provider_error(),
	                    "anthropic: no API key (pass --api-key or set ANTHROPIC_API_KEY)");
	s.api_key = "sk-ant";
	p = provider_create(&s);
	assert_non_null(p);
	assert_string_equal(provider_endpoint(p), "https://api.anthropic.com/v1/messages");
	provider_destroy(p);

	s.kind = PROVIDER_OLLAMA;
	s.api_key = NULL;
	p = provider_create(&s);
	assert_non_null(p);
	assert_string_equal(provider_endpoint(p), "http://localhost:11434/api/chat");
	assert_string_equal(provider_format_name(p), "ollama");
	provider_destroy(p);

	s.kind = PROVIDER_OPENAI;
	s.base_url = "ftp://example.org";
	assert_null(provider_create(&s));
	assert_non_null(strstr(provider_error(), "must start with http:// or https://"));
	s.base_url = "http://127.0.0.1:1/v1";
	s.api_key = "sk-a\r\nX-Evil: 1";
	assert_null(provider_create(&s));
	assert_string_equal(provider_error(), "openai: the API key contains control characters");

	s.kind = PROVIDER_SCRIPT;
	s.script = NULL;
	assert_null(provider_create(&s));
	s.script = "/nonexistent/script.json";
	assert_null(provider_create(&s));
	assert_non_null(strstr(provider_error(), "cannot read"));

	enum provider_kind k;
	assert_true(provider_kind_parse("ollama", &k));
	assert_int_equal(k, PROVIDER_OLLAMA);
	assert_true(provider_kind_parse("gemini", &k));
	assert_int_equal(k, PROVIDER_GEMINI);
	assert_false(provider_kind_parse("palm", &k));
	assert_false(provider_kind_parse(NULL, &k));
	assert_string_equal(provider_kind_name(PROVIDER_ANTHROPIC), "anthropic");
	assert_string_equal(provider_kind_name(PROVIDER_KIND_COUNT), "?");

	/* --api and --think: their names; AUTO and NONE have none. */
	enum provider_api api = PROVIDER_API_AUTO;
	assert_true(provider_api_parse("chat", &api));
	assert_int_equal(api, PROVIDER_API_CHAT);
	assert_true(provider_api_parse("responses", &api));
	assert_int_equal(api, PROVIDER_API_RESPONSES);
	assert_false(provider_api_parse("completions", &api));
	assert_false(provider_api_parse("", &api));
	assert_int_equal(api, PROVIDER_API_RESPONSES);
	assert_string_equal(provider_api_name(PROVIDER_API_AUTO), "?");
	enum provider_think th = PROVIDER_THINK_NONE;
	assert_true(provider_think_parse("false", &th));
	assert_int_equal(th, PROVIDER_THINK_FALSE);
	assert_true(provider_think_parse("high", &th));
	assert_int_equal(th, PROVIDER_THINK_HIGH);
	assert_false(provider_think_parse("maybe", &th));
	assert_false(provider_think_parse(NULL, &th));
	assert_string_equal(provider_think_name(PROVIDER_THINK_MEDIUM), "medium");
	assert_string_equal(provider_think_name(PROVIDER_THINK_NONE), "?");
}

static void test_script_provider(void **state)
{
	char path[] = "/tmp/deskhand-script-XXXXXX";
	int fd = mkstemp(path);
	const char *text =
		"{\"turns\":[{\"text\":\"Looking.\",\"tool_calls\":[{\"name\":\"computer\","
		"\"arguments\":{\"action\":\"screenshot\"}},{\"id\":\"x1\",\"name\":\"execute\","
		"\"arguments\":\"{broken\"}]},{\"text\":\"Done.\"}]}";
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct provider_settings s = {.kind = PROVIDER_SCRIPT, .script = path};
	struct provider *p = provider_create(&s);
	assert_non_null(p);
	struct conv *c = conv_create(NULL);
	struct provider_request req = {0};
	struct provider_usage u;
	assert_true(conv_add_user_text(c, "go"));
	assert_int_equal(provider_turn(p, c, &req, NULL, &u), PROVIDER_OK);
	assert_int_equal(u.stop, PROVIDER_STOP_TOOL_USE);
	struct conv_message *m = conv_last(c);
	assert_int_equal(m->n_blocks, 3);
	assert_string_equal(m->blocks[0].text, "Looking.");
	assert_string_equal(m->blocks[1].id, "script_1_1");
	assert_string_equal(cJSON_GetObjectItem(m->blocks[1].args, "action")->valuestring, "screenshot");
	assert_string_equal(m->blocks[2].id, "x1");
	assert_null(m->blocks[2].args);
	struct conv_message *t = conv_add_message(c, CONV_TOOL);
	assert_true(conv_msg_add_tool_result(t, "script_1_1", "", false, NULL));
	assert_int_equal(provider_turn(p, c, &req, NULL, &u), PROVIDER_OK);
	assert_string_equal(conv_last(c)->blocks[0].text, "Done.");
	assert_int_equal(u.stop, PROVIDER_STOP_END);
	size_t n = c->n_messages;
	assert_int_equal(provider_turn(p, c, &req, NULL, &u), PROVIDER_EXHAUSTED);
	assert_int_equal(c->n_messages, n);
	conv_destroy(c);
	provider_destroy(p);

	/* A turn with nothing in it would replay forever: refused at load. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "[{\"text\":\"\"}]", 13), 13);
	close(fd);
	assert_null(provider_create(&s));
	assert_string_equal(provider_error(), "script: turn 1 has neither text nor tool calls");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_bounds),
		cmocka_unit_test(test_retry_after_wins_when_longer),
		cmocka_unit_test(test_parse_retry_after),
		cmocka_unit_test(test_error_text),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_script_provider),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
