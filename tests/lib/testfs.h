/*
 * tests/lib/testfs — the file fixtures of the C unit tests: a fresh
 * directory, what is in one, a file of given text. Include after cmocka.h
 * (the helpers assert); static inline, so a test takes only what it uses.
 */
#ifndef DESKHAND_TESTS_TESTFS_H
#define DESKHAND_TESTS_TESTFS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new empty directory under $TMPDIR (else /tmp). Ownership: the caller
 * frees the name (and removes the directory). */
static inline char *testfs_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir = malloc(4096);
	assert_non_null(dir);
	snprintf(dir, 4096, "%s/deskhand-unit-XXXXXX", base ? base : "/tmp");
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* How many entries dir holds, "." and ".." not counted. */
static inline int testfs_count(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Writes text to path (created or truncated). */
static inline void testfs_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#endif
