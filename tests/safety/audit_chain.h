/*
 * tests/safety/audit_chain — chains hand-written audit log lines the way
 * agent/safety/audit writes them, so the unit tests and the fuzz target can
 * reach the verifier's rules behind the chain. Header-only, for tests.
 */
#ifndef DESKHAND_TESTS_AUDIT_CHAIN_H
#define DESKHAND_TESTS_AUDIT_CHAIN_H

#include <stdlib.h>
#include <string.h>

#include "agent/safety/audit.h"

/*
 * Every complete line whose first byte above ' ' is '{' gets "prev" (the hash of the
 * line before it as written here) as its first member; other lines and an
 * unfinished last line are copied as they are. Ownership: the caller frees.
 */
static inline char *audit_chain(const char *text, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1 + (len / 2 + 1) * (AGENT_AUDIT_HASH_HEX + 12));
	if (out == NULL)
		abort();
	char prev[AGENT_AUDIT_HASH_HEX + 1];
	memset(prev, '0', AGENT_AUDIT_HASH_HEX);
	prev[AGENT_AUDIT_HASH_HEX] = '\0';
	size_t o = 0, pos = 0;
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - line) + 1 : len - pos;
		size_t start = o, lead = 0;
		/* cJSON skips every byte up to ' ' before a value, so the line's object may start later */
		while (lead < n && (unsigned char)line[lead] <= ' ')
			lead++;
		if (nl != NULL && lead < n && line[lead] == '{') {
			memcpy(out + o, line, lead);
			o += lead;
			o += (size_t)sprintf(out + o, "{\"prev\":\"%s\"%s", prev,
			                     line[lead + 1] == '}' ? "" : ",");
			memcpy(out + o, line + lead + 1, n - lead - 1);
			o += n - lead - 1;
		} else {
			memcpy(out + o, line, n);
			o += n;
		}
		agent_audit_hash(out + start, o - start, prev);
		pos += n;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

#endif
