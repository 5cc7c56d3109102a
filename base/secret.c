/*
 * base/secret — the secrets of deskhand's HTTP servers (the console's
 * links and sessions, deskhand mcp --http's bearer token) and where they
 * listen: random hex from the kernel, a comparison whose time does not
 * tell where two strings differ, and "[ADDR:]PORT" read once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/base.h"

bool base_random_bytes(unsigned char *out, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = getrandom(out + got, n - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

bool base_random_hex(char *out, size_t nbytes)
{
	unsigned char raw[64];
	if (nbytes > sizeof(raw)) {
		errno = EINVAL;
		return false;
	}
	if (!base_random_bytes(raw, nbytes))
		return false;
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < nbytes; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * nbytes] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return true;
}

bool base_same_secret(const char *a, const char *b, size_t len)
{
	if (a == NULL || b == NULL || strlen(a) != len || strlen(b) != len)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < len; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

bool base_listen_parse(const char *s, base_listen *out)
{
	memset(out, 0, sizeof(*out));
	const char *colon = strrchr(s, ':');
	const char *p = colon ? colon + 1 : s;
	char *end;
	errno = 0;
	long n = strtol(p, &end, 10);
	if (*p == '\0' || *end != '\0' || errno != 0 || n < 0 || n > 65535) {
		errno = EINVAL;
		return false;
	}
	out->port = (int)n;
	size_t alen = colon ? (size_t)(colon - s) : 0;
	if (alen == 0)
		snprintf(out->addr, sizeof(out->addr), "127.0.0.1");
	else if (s[0] == '[' && alen >= 2 && s[alen - 1] == ']')
		snprintf(out->addr, sizeof(out->addr), "%.*s", (int)(alen - 2), s + 1);
	else
		snprintf(out->addr, sizeof(out->addr), "%.*s", (int)alen, s);
	unsigned char buf[16];
	out->v6 = inet_pton(AF_INET6, out->addr, buf) == 1;
	if (!out->v6 && inet_pton(AF_INET, out->addr, buf) != 1) {
		errno = EINVAL;
		return false;
	}
	out->loopback = out->v6 ? strcmp(out->addr, "::1") == 0 : strncmp(out->addr, "127.", 4) == 0;
	out->wildcard = strcmp(out->addr, "0.0.0.0") == 0 || strcmp(out->addr, "::") == 0;
	return true;
}
