/*
 * Key combinations ("ctrl+shift+t", "alt+F4", "é", "ctrl++"): parse never
 * crashes and fails with a message; a parsed combination formats to a
 * canonical text that parses to the same keysyms and formats to itself.
 */
#include <string.h>

#include "fuzz.h"
#include "os/os.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	os_combo c;
	if (os_key_parse(text, &c)) {
		fuzz_check(c.count >= 1 && c.count <= OS_COMBO_MAX, "count %d", c.count);
		char canon[1024], again[1024];
		os_combo c2;
		fuzz_check(os_key_format(&c, canon, sizeof(canon)), "'%s' does not format", text);
		fuzz_check(os_key_parse(canon, &c2), "canonical '%s' of '%s' does not parse: %s",
		           canon, text, os_error());
		fuzz_check(c2.count == c.count &&
		           memcmp(c.keysyms, c2.keysyms, sizeof(uint32_t) * (size_t)c.count) == 0,
		           "'%s' -> '%s' reads back as other keys", text, canon);
		fuzz_check(os_key_format(&c2, again, sizeof(again)) && strcmp(canon, again) == 0,
		           "'%s' is not stable: '%s'", canon, again);
	} else {
		fuzz_check(os_error()[0] != '\0', "'%s' refused without a message", text);
	}
	free(text);
	return 0;
}
