/*
 * deskhand elements: the accessibility tree of the active window (or of
 * every window with --all-windows), one line per element:
 *
 *   ID ROLE "NAME" STATES X Y W H
 *
 * ROLE is AT-SPI's role name ("push button"), NAME the accessible name in
 * its shown form (agent_show_dup: no control character or escape reaches
 * the terminal) with " and \ escaped by a backslash, STATES the states that
 * matter joined by "," ("-" for none), and the box in root coordinates.
 * --json prints {"elements": [...], "partial": bool, "note": "..."}.
 * A partial walk or an empty list says why on standard error; neither is a
 * failure (exit 0): a window without a tree is a fact about that window.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli.h"
#include "agent/session/session.h"
#include "agent/util/textutil.h"
#include "os/os.h"
#include "vision/vision.h"

static void put_quoted(const char *raw)
{
	char *s = agent_show_dup(raw, 0);
	putchar('"');
	for (const char *p = s ? s : "?"; *p; p++) {
		if (*p == '"' || *p == '\\')
			putchar('\\');
		putchar(*p);
	}
	putchar('"');
	free(s);
}

static void print_lines(const vision_elements *e)
{
	for (size_t i = 0; i < e->count; i++) {
		const vision_element *el = &e->items[i];
		printf("%d %s ", el->id, el->role);
		put_quoted(el->name);
		printf(" %s %d %d %d %d\n", el->states[0] ? el->states : "-", el->box.x,
		       el->box.y, el->box.width, el->box.height);
	}
}

/* Adds key: the shown form of raw (names come from applications). */
static bool add_shown(cJSON *o, const char *key, const char *raw)
{
	char *s = agent_show_dup(raw, 0);
	bool ok = s != NULL && cJSON_AddStringToObject(o, key, s) != NULL;
	free(s);
	return ok;
}

static bool print_json(const vision_elements *e)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "elements");
	bool ok = root && arr;
	for (size_t i = 0; ok && i < e->count; i++) {
		const vision_element *el = &e->items[i];
		cJSON *o = cJSON_CreateObject();
		ok = o && cJSON_AddItemToArray(arr, o) && cJSON_AddNumberToObject(o, "id", el->id) &&
		     cJSON_AddStringToObject(o, "role", el->role) && add_shown(o, "name", el->name) &&
		     add_shown(o, "text", el->text) && cJSON_AddStringToObject(o, "states", el->states) &&
		     cJSON_AddNumberToObject(o, "x", el->box.x) &&
		     cJSON_AddNumberToObject(o, "y", el->box.y) &&
		     cJSON_AddNumberToObject(o, "w", el->box.width) &&
		     cJSON_AddNumberToObject(o, "h", el->box.height) &&
		     cJSON_AddNumberToObject(o, "pid", el->pid);
	}
	ok = ok && cJSON_AddBoolToObject(root, "partial", e->partial) &&
	     cJSON_AddStringToObject(root, "note", e->note);
	char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	if (text == NULL)
		return false;
	puts(text);
	cJSON_free(text);
	return true;
}

int cmd_elements(int argc, char **argv)
{
	vision_a11y_options opt = {0};
	bool json = false;
	for (int i = 1; i < argc; i++) {
		long ms = 0;
		if (strcmp(argv[i], "--all-windows") == 0) {
			opt.all_windows = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
			if (!cli_parse_int(argv[++i], 1, 60000, "--timeout-ms", &ms))
				return cli_usage("elements");
			opt.timeout_ms = (int)ms;
		} else {
			return cli_usage_error("elements", "unknown argument '%s'", argv[i]);
		}
	}
	int st;
	os_display *d = cli_display_open(&st);
	if (d == NULL)
		return st;
	char bus[1024];
	if (agent_session_bus(d, bus, sizeof(bus)) != AGENT_BUS_FOUND)
		cli_error("%s", bus);
	vision_elements *e = vision_elements_read(d, &opt);
	os_display_close(d);
	if (e == NULL) {
		cli_error("%s", vision_error());
		return CLI_FAIL;
	}
	bool ok = true;
	if (json)
		ok = print_json(e);
	else
		print_lines(e);
	if (!json && e->note[0] != '\0')
		cli_error("%s", e->note);
	vision_elements_destroy(e);
	if (!ok || fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write the element list: %s", strerror(errno));
		return CLI_FAIL;
	}
	return CLI_OK;
}
