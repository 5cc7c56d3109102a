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
#include "fuzz.h"
#include "agent/llm/provider-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_format_answer(&provider_format_gemini, "gemini", data, size);
}
