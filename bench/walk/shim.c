/*
 * bench/walk/shim — preloaded into the step walk's deskhand: counts how
 * often the computer tool's argument object is parsed from JSON text or
 * printed to it (cJSON_Parse*, cJSON_Print*) by noting each in the
 * tracer's event stream. An object counts when its text names left_click
 * and is short (the whole conversation, saved, is not an argument object).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cJSON cJSON;

enum { NOTE_PARSE = 1, NOTE_PRINT = 2 };

static void note(const char *text, size_t len, int what)
{
	static void (*fn)(int);
	if (fn == NULL)
		fn = (void (*)(int))dlsym(RTLD_DEFAULT, "deskhand_walk_note");
	if (fn == NULL || text == NULL || len >= 400 || memmem(text, len, "left_click", 10) == NULL)
		return;
	/* The conversation file holds the arguments as the model's text: saving
	 * it prints no argument object. */
	static const char conv[] = "{\"format\":\"deskhand-conversation\"";
	if (len >= sizeof(conv) - 1 && memcmp(text, conv, sizeof(conv) - 1) == 0)
		return;
	fn(what);
	/* What was parsed or printed, for the walk's verbose listing. */
	const char *path = getenv("DESKHAND_WALK_NOTES");
	FILE *f = path != NULL ? fopen(path, "a") : NULL;
	if (f != NULL) {
		fprintf(f, "%s %.*s\n", what == NOTE_PARSE ? "parse" : "print", (int)len, text);
		fclose(f);
	}
}

/* Each entry point noted once, however libcjson calls itself inside. */
static _Thread_local int depth;

#define REAL(fn)                                \
	static __typeof__(fn) *real;                 \
	if (real == NULL)                            \
		real = (__typeof__(fn) *)dlsym(RTLD_NEXT, #fn)

cJSON *cJSON_Parse(const char *value);
cJSON *cJSON_Parse(const char *value)
{
	REAL(cJSON_Parse);
	if (depth++ == 0)
		note(value, value ? strlen(value) : 0, NOTE_PARSE);
	cJSON *r = real(value);
	depth--;
	return r;
}

cJSON *cJSON_ParseWithLength(const char *value, size_t len);
cJSON *cJSON_ParseWithLength(const char *value, size_t len)
{
	REAL(cJSON_ParseWithLength);
	if (depth++ == 0)
		note(value, len, NOTE_PARSE);
	cJSON *r = real(value, len);
	depth--;
	return r;
}

cJSON *cJSON_ParseWithOpts(const char *value, const char **end, int req);
cJSON *cJSON_ParseWithOpts(const char *value, const char **end, int req)
{
	REAL(cJSON_ParseWithOpts);
	if (depth++ == 0)
		note(value, value ? strlen(value) : 0, NOTE_PARSE);
	cJSON *r = real(value, end, req);
	depth--;
	return r;
}

cJSON *cJSON_ParseWithLengthOpts(const char *value, size_t len, const char **end, int req);
cJSON *cJSON_ParseWithLengthOpts(const char *value, size_t len, const char **end, int req)
{
	REAL(cJSON_ParseWithLengthOpts);
	if (depth++ == 0)
		note(value, len, NOTE_PARSE);
	cJSON *r = real(value, len, end, req);
	depth--;
	return r;
}

/* A print of the outermost call, noted once it is done. */
static char *printed(char *s, int outer)
{
	depth--;
	if (outer)
		note(s, s ? strlen(s) : 0, NOTE_PRINT);
	return s;
}

char *cJSON_PrintUnformatted(const cJSON *item);
char *cJSON_PrintUnformatted(const cJSON *item)
{
	REAL(cJSON_PrintUnformatted);
	int outer = depth++ == 0;
	return printed(real(item), outer);
}

char *cJSON_Print(const cJSON *item);
char *cJSON_Print(const cJSON *item)
{
	REAL(cJSON_Print);
	int outer = depth++ == 0;
	return printed(real(item), outer);
}
