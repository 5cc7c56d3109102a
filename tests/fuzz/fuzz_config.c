/*
 * The config file (code in the workspace may plant or edit it): any text is
 * either applied or refused with a message naming the file, and whatever
 * was applied passes or fails validation without crashing.
 */
#include <string.h>

#include "fuzz.h"
#include "agent/session/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	agent_options o;
	agent_options_init(&o);
	if (agent_options_apply_config(&o, "config.json", text))
		(void)agent_options_validate(&o);
	else
		fuzz_check(strstr(agent_options_error(), "config.json") != NULL,
		           "refusal does not name the file: %s", agent_options_error());
	agent_options_finish(&o);
	free(text);
	return 0;
}
