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

/* The index of the first name at or after i; n when there is none. */
static size_t next_name(const char *const *names, size_t n, size_t i)
{
	while (i < n && names[i] == NULL)
		i++;
	return i;
}

size_t base_names_join(const char *const *names, size_t n, const char *sep, const char *last,
                       char *buf, size_t size)
{
	size_t at = 0;
	if (sep == NULL)
		sep = "";
	if (last == NULL)
		last = sep;
	for (size_t i = names != NULL ? next_name(names, n, 0) : n; i < n;) {
		put(buf, size, &at, names[i]);
		i = next_name(names, n, i + 1);
		if (i < n)
			put(buf, size, &at, next_name(names, n, i + 1) < n ? sep : last);
	}
	if (size > 0)
		buf[at < size ? at : size - 1] = '\0';
	return at;
}
