/*
 * The corpus replayer: the driver a fuzz target links when it is not built
 * for libFuzzer. Runs LLVMFuzzerTestOneInput once on every file of the
 * corpus directories (or files) given as arguments, in name order, and
 * prints one TAP case per target. A crash or a broken property names the
 * input that caused it, so a failing CI log says which corpus file to run.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static const char *current = "(none)";
static const char *target = "fuzz";

static void say_which(void)
{
	/* Only async-signal-safe calls: this also runs from a signal handler. */
	const char *parts[] = {"not ok 1 - ", target, ": crashed on ", current, "\n"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (write(STDOUT_FILENO, parts[i], strlen(parts[i])) < 0)
			return;
}

static void on_fatal(int sig)
{
	say_which();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static bool run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		printf("not ok 1 - %s: cannot open %s: %s\n", target, path, strerror(errno));
		return false;
	}
	size_t cap = 4096, len = 0, n;
	uint8_t *buf = malloc(cap);
	while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);
			if (bigger == NULL) {
				free(buf);
				buf = NULL;
			}
			buf = bigger;
		}
	}
	fclose(f);
	if (buf == NULL) {
		printf("not ok 1 - %s: out of memory reading %s\n", target, path);
		return false;
	}
	current = path;
	/* A copy of exactly len bytes, so ASan sees any read past the input. */
	uint8_t *exact = malloc(len ? len : 1);
	if (exact == NULL)
		abort();
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return true;
}

/* Runs every regular file of dir; the count goes to *ran. */
static bool run_dir(const char *dir, size_t *ran)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name);
	if (n < 0) {
		printf("not ok 1 - %s: cannot read %s: %s\n", target, dir, strerror(errno));
		return false;
	}
	bool ok = true;
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (ok && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			ok = run_file(path);
			*ran += ok;
		}
		free(names[i]);
	}
	free(names);
	return ok;
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');
	target = slash ? slash + 1 : argv[0];
	printf("TAP version 13\n1..1\n");
	fflush(stdout);
	/* Under a sanitizer its own handlers report faults (and call back);
	 * without one, ours name the input. abort() is ours in both. */
	if (__sanitizer_set_death_callback) {
		__sanitizer_set_death_callback(say_which);
	} else {
		signal(SIGSEGV, on_fatal);
		signal(SIGBUS, on_fatal);
		signal(SIGFPE, on_fatal);
		signal(SIGILL, on_fatal);
	}
	signal(SIGABRT, on_fatal);
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	size_t ran = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		bool ok = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)
		          ? run_dir(argv[i], &ran) : run_file(argv[i]) && ++ran;
		if (!ok)
			return 1;
	}
	if (ran == 0) {
		printf("not ok 1 - %s: no corpus input found\n", target);
		return 1;
	}
	printf("ok 1 - %s: %zu corpus inputs\n", target, ran);
	return 0;
}
