/*
 * A conversation file (resumed with --conversation; code in the workspace
 * may plant one): any text is loaded or refused with a message; a loaded
 * conversation yields a valid next request in both wire formats.
 */
#include "fuzz.h"
#include "agent/llm/conversation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct conv *c = conv_parse("/nonexistent/conversation.json", text);
	if (c != NULL) {
		(void)conv_tokens(c);
		fuzz_build_requests(c);
		conv_destroy(c);
	} else {
		fuzz_check(conv_error()[0] != '\0', "refused without a message");
	}
	free(text);
	return 0;
}
