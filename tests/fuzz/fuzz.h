/*
 * tests/fuzz — fuzz targets for the parsers that read what strangers send:
 * the model's server (SSE, streamed and whole replies, tool-call arguments),
 * the screen's keys, images, the code the scanner judges, and the files
 * that hostile code in the workspace could plant (config, conversation,
 * audit log).
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

#endif
