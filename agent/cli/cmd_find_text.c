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

int cmd_find_text(int argc, char **argv)
{
	bool all = false;
	const char *monitor_arg = NULL;
	size_t text_len = 0;
	int words = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else if (strcmp(argv[i], "--monitor") == 0) {
			if (i + 1 >= argc)
				return cli_usage_error("find-text", "--monitor needs a value");
			monitor_arg = argv[++i];
		} else if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++, words++)
				text_len += strlen(argv[i]) + 1;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return cli_usage_error("find-text", "unknown option '%s'", argv[i]);
		} else {
			text_len += strlen(argv[i]) + 1;
			words++;
		}
	}
	if (words == 0)
		return cli_usage_error("find-text", "no text to find");
	long monitor = -1;
	if (monitor_arg != NULL &&
	    !cli_parse_int(monitor_arg, 0, 1023, "--monitor", &monitor)) {
		fprintf(stderr, "usage: %s\n", cli_synopsis("find-text"));
		return CLI_USAGE;
	}
	if (!vision_ocr_available()) {
		vision_match *none;
		size_t n;
		vision_ocr_find_screen(NULL, NULL, "-", &none, &n);
		cli_error("%s", vision_error());
		return CLI_FAIL;
	}
	/* the words, joined by single spaces (several arguments or one) */
	char *text = malloc(text_len + 1);
	if (text == NULL) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	text[0] = '\0';
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		if (!options_done) {
			if (strcmp(argv[i], "--all") == 0)
				continue;
			if (strcmp(argv[i], "--monitor") == 0) {
				i++;
				continue;
			}
			if (strcmp(argv[i], "--") == 0) {
				options_done = true;
				continue;
			}
		}
		if (text[0] != '\0')
			strcat(text, " ");
		strcat(text, argv[i]);
	}

	int status = CLI_FAIL;
	vision_match *m = NULL;
	size_t n = 0;
	os_display *d = os_display_open(NULL);
	if (d == NULL) {
		cli_error("%s", os_error());
		goto out_text;
	}
	os_rect mon, *region = NULL;
	if (monitor >= 0) {
		if (!vision_monitor(d, (int)monitor, &mon)) {
			status = cli_usage_error("find-text", "%s", vision_error());
			goto out_display;
		}
		region = &mon;
	}
	if (!vision_ocr_find_screen(d, region, text, &m, &n)) {
		const char *e = vision_error();
		/* an empty or malformed query is the caller's mistake */
		if (strstr(e, "UTF-8") != NULL || strstr(e, "is empty") != NULL)
			status = cli_usage_error("find-text", "%s", e);
		else
			cli_error("%s", e);
		goto out_display;
	}
	if (n == 0) {
		cli_error("text not found on the screen: %s", text);
		goto out_display;
	}
	for (size_t i = 0; i < (all ? n : 1); i++) {
		printf("%d %d %d %d %.0f ", m[i].x + m[i].width / 2,
		       m[i].y + m[i].height / 2, m[i].width, m[i].height,
		       (double)m[i].confidence);
		print_text(m[i].text);
	}
	status = CLI_OK;
	vision_matches_free(m, n);
out_display:
	os_display_close(d);
out_text:
	free(text);
	return status;
}
