/*
 * tests/fuzz — fuzz targets for the parsers that read what strangers send:
 * the model's server (SSE, streamed and whole replies, tool-call arguments),
 * the screen's keys, images, the code the scanner judges, the files that
 * hostile code in the workspace could plant (config, conversation, audit
 * log), and what applications answer on the accessibility bus.
 *
 * Each target is one file defining LLVMFuzzerTestOneInput (libFuzzer's
 * entry point). Built with -Dfuzzing=libfuzzer it links libFuzzer's driver;
 * otherwise it links replay.c, which runs every file of the checked-in
 * corpus tests/fuzz/corpus/<target>/ once, as an ordinary test (also under
 * ASan+UBSan in tests/run). A target reports a broken property by abort(),
 * through fuzz_check, so both drivers see it as a crash with a message.
 */
#ifndef DESKHAND_TESTS_FUZZ_H
#define DESKHAND_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond, ...)                                                 \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: property broken: %s: ",       \
			        __FILE__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			abort();                                              \
		}                                                             \
	} while (0)

/* A NUL-terminated copy of the input (the parsers under test take C strings). Caller frees. */
char *fuzz_cstr(const uint8_t *data, size_t size);

struct conv;
/*
 * Builds the next request from `c` in both wire formats (as the loop would
 * after a hostile answer or when resuming a planted conversation file) and
 * checks that each body is valid JSON.
 */
void fuzz_build_requests(const struct conv *c); /* in every wire format */

struct turn;
struct conv_block;
struct provider_format;
/*
 * After a turn was assembled from a stranger's bytes: its answer goes into
 * a conversation after the user's "task", every call is answered ("done",
 * every third a "failed" error, every other call's safety checks
 * acknowledged), the user says "next" and fuzz_build_requests runs.
 * Checks that every call has an id and a name and every item kept as
 * received is JSON. `each` (may be NULL) sees every call first.
 */
void fuzz_next_request(struct turn *t, void (*each)(const struct conv_block *call));
/*
 * A wire format's answer as raw bytes: the first byte picks the form (even:
 * a server-sent event stream, odd: a whole body), the rest is the body; the
 * calls announced must be the calls of the message; then fuzz_next_request.
 */
int fuzz_format_answer(const struct provider_format *f, const char *who,
                       const uint8_t *data, size_t size);

#endif
