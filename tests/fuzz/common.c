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
		&provider_format_ollama,
	};
	for (int f_i = 0; f_i < 4; f_i++) {
		int anthropic = f_i == 1;
		struct provider_request r = {.system = "system", .max_tokens = 100,
		                             .keep_images = 2, .prompt_cache = anthropic};
		struct request_ctx rc = {.conv = c, .view = &v, .req = &r, .model = "m",
		                         .stream = true, .think = "low"};
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
