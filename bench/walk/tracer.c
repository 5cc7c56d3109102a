/*
 * bench/walk/tracer — the function-entry recorder of the step walk
 * (bench/walk/run): linked into a -finstrument-functions build, it keeps
 * every entry and exit of a deskhand function in memory and writes them,
 * as offsets from the executable's start, to $DESKHAND_WALK at exit.
 * Never part of the product.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WALK_MAX (1u << 24)

extern char __executable_start;

static uintptr_t *events;
static size_t n_events;
/* Only the main thread's walk: the encoder's bands run on threads of their own. */
static _Thread_local int walk_thread = -1;

__attribute__((no_instrument_function)) static void walk_dump(void)
{
	const char *path = getenv("DESKHAND_WALK");
	FILE *f = path != NULL ? fopen(path, "w") : NULL;
	if (f == NULL)
		return;
	for (size_t i = 0; i < n_events; i++) {
		uintptr_t e = events[i];
		if (e & ((uintptr_t)1 << 62))
			fprintf(f, "! %lu\n", (unsigned long)((e & ~((uintptr_t)1 << 62)) >> 1));
		else
			fprintf(f, "%c %lx\n", (e & 1) ? '<' : '>', (unsigned long)(e >> 1));
	}
	fclose(f);
}

__attribute__((no_instrument_function)) static void walk_record(uintptr_t ev)
{
	if (walk_thread < 0)
		walk_thread = gettid() == getpid();
	if (!walk_thread)
		return;
	if (events == NULL) {
		if (getenv("DESKHAND_WALK") == NULL)
			return;
		events = malloc(WALK_MAX * sizeof(*events));
		if (events == NULL)
			return;
		atexit(walk_dump);
	}
	if (n_events < WALK_MAX)
		events[n_events++] = ev;
}

__attribute__((no_instrument_function)) static uintptr_t walk_fn(void *fn, int exit)
{
	return ((uintptr_t)((char *)fn - &__executable_start) << 1) | (uintptr_t)exit;
}

/* A mark from bench/walk/shim.c (the arguments parsed or printed): "! N". */
__attribute__((no_instrument_function)) void deskhand_walk_note(int what);
void deskhand_walk_note(int what)
{
	walk_record(((uintptr_t)what << 1) | ((uintptr_t)1 << 62));
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site);
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site);

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	walk_record(walk_fn(fn, 0));
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	walk_record(walk_fn(fn, 1));
}
