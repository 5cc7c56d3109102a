/*
 * deskhand find-text: finds text on the screen with local OCR and prints one
 * line per match, "CX CY W H CONFIDENCE TEXT": the centre, the size of the
 * box in screen pixels, Tesseract's confidence (0..100) and the text read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/util/textutil.h"
#include "os/os.h"
#include "vision/vision.h"

/* The recognised text on one line, shown (agent_show_dup): it is the screen's. */
static void print_text(const char *s)
{
	char *shown = agent_show_dup(s, 0);
	puts(shown != NULL ? shown : "?");
	free(shown);
}

/*
 * Reads the flags into *all and *monitor (-1: the whole screen) and adds
 * up in *text_len the room the words need. -1: good, else the exit status.
 */
static int find_text_options(int argc, char **argv, bool *all, long *monitor,
                             size_t *text_len)
{
	const char *monitor_arg = NULL;
	int words = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0) {
			*all = true;
		} else if (strcmp(argv[i], "--monitor") == 0) {
			if (i + 1 >= argc)
				return cli_usage_error("find-text", "--monitor needs a value");
			monitor_arg = argv[++i];
		} else if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++, words++)
				*text_len += strlen(argv[i]) + 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("find-text", "unknown option '%s'", argv[i]);
		} else {
			*text_len += strlen(argv[i]) + 1;
			words++;
		}
	}
	if (words == 0)
		return cli_usage_error("find-text", "no text to find");
	if (monitor_arg != NULL &&
	    !cli_parse_int(monitor_arg, 0, 1023, "--monitor", monitor))
		return cli_usage("find-text");
	return -1;
}

/* The words (the arguments that are not options), joined by single spaces
 * (several arguments or one), in text_len bytes and a NUL; malloc'ed, the
 * caller's. NULL: said why. */
static char *join_words(int argc, char **argv, size_t text_len)
{
	char *text = malloc(text_len + 1);
	if (text == NULL) {
		cli_error("out of memory");
		return NULL;
	}
	text[0] = '\0';
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		if (!options_done && strcmp(argv[i], "--all") == 0)
			continue;
		if (!options_done && strcmp(argv[i], "--monitor") == 0) {
			i++;
			continue;
		}
		if (!options_done && strcmp(argv[i], "--") == 0) {
			options_done = true;
			continue;
		}
		if (text[0] != '\0')
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	return text;
}

/* Reads the screen (or one monitor of it) and prints the best match of
 * text, or all of them; returns the exit status. */
static int find_on_screen(os_display *d, const char *text, long monitor, bool all)
{
	os_rect mon, *region = NULL;
	if (monitor >= 0) {
		if (!vision_monitor(d, (int)monitor, &mon))
			return cli_usage_error("find-text", "%s", vision_error());
		region = &mon;
	}
	vision_match *m = NULL;
	size_t n = 0;
	if (!vision_ocr_find_screen(d, region, text, &m, &n)) {
		const char *e = vision_error();
		/* an empty or malformed query is the caller's mistake */
		if (strstr(e, "UTF-8") != NULL || strstr(e, "is empty") != NULL)
			return cli_usage_error("find-text", "%s", e);
		cli_error("%s", e);
		return CLI_FAIL;
	}
	if (n == 0) {
		cli_error("text not found on the screen: %s", text);
		return CLI_FAIL;
	}
	for (size_t i = 0; i < (all ? n : 1); i++) {
		printf("%d %d %d %d %.0f ", m[i].x + m[i].width / 2,
		       m[i].y + m[i].height / 2, m[i].width, m[i].height,
		       (double)m[i].confidence);
		print_text(m[i].text);
	}
	vision_matches_free(m, n);
	return CLI_OK;
}

int cmd_find_text(int argc, char **argv)
{
	bool all = false;
	long monitor = -1;
	size_t text_len = 0;
	int status = find_text_options(argc, argv, &all, &monitor, &text_len);
	if (status >= 0)
		return status;
	if (!vision_ocr_available()) {
		/* the search sets the reason (no OCR) without touching a display */
		vision_match *none;
		size_t n;
		vision_ocr_find_screen(NULL, NULL, "-", &none, &n);
		cli_error("%s", vision_error());
		return CLI_FAIL;
	}
	char *text = join_words(argc, argv, text_len);
	if (text == NULL)
		return CLI_FAIL;
	os_display *d = cli_display_open(&status);
	if (d != NULL) {
		status = find_on_screen(d, text, monitor, all);
		os_display_close(d);
	}
	free(text);
	return status;
}
