/* base/names — enum values by name and back; see base.h. */
#include <limits.h>
#include <string.h>

#include "base/base.h"

int base_name_index_len(const char *const *names, size_t n, const char *s, size_t len)
{
	if (s == NULL || names == NULL)
		return -1;
	/* An index is an int; a table is never that long. */
	for (size_t i = 0; i < n && i <= INT_MAX; i++)
		if (names[i] != NULL && strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return (int)i;
	return -1;
}

int base_name_index(const char *const *names, size_t n, const char *s)
{
	return s == NULL ? -1 : base_name_index_len(names, n, s, strlen(s));
}

const char *base_name_of(const char *const *names, size_t n, int v, const char *unknown)
{
	if (names == NULL || v < 0 || (size_t)v >= n || names[v] == NULL)
		return unknown;
	return names[v];
}

/* Appends s to buf[size] at *at (cut to fit); *at counts what the whole takes. */
static void put(char *buf, size_t size, size_t *at, const char *s)
{
	size_t len = strlen(s);
	if (*at + 1 < size) {
		size_t room = size - 1 - *at;
		memcpy(buf + *at, s, len < room ? len : room);
	}
	*at += len;
}

size_t base_names_join(const char *const *names, size_t n, const char *sep, char *buf,
                       size_t size)
{
	size_t at = 0;
	bool first = true;
	for (size_t i = 0; names != NULL && i < n; i++) {
		if (names[i] == NULL)
			continue;
		if (!first)
			put(buf, size, &at, sep != NULL ? sep : "");
		put(buf, size, &at, names[i]);
		first = false;
	}
	if (size > 0)
		buf[at < size ? at : size - 1] = '\0';
	return at;
}
