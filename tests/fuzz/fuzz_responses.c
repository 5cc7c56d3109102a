/*
 * OpenAI Responses answers as raw bytes off the network: the first byte
 * picks the form (even: a server-sent event stream, odd: a whole JSON
 * body), the rest is the body. The turn is assembled as the provider does
 * (items kept byte for byte, computer_call actions split into calls),
 * moved into a conversation, every call answered (declined safety checks
 * included), and the next request built in every format: whatever the
 * server sent, nothing crashes, every call has an id and a name, every kept
 * item is valid JSON text, and each request is valid JSON.
 */
#include "fuzz.h"
#include "agent/llm/provider-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_format_answer(&provider_format_responses, "openai", data, size);
}
