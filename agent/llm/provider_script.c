/*
 * The script provider: replays recorded assistant turns from a JSON file,
 * for the offline demo. No network; the answer is assembled by the same
 * code as a streamed one, so the loop cannot tell the difference.
 *
 * Format:
 *   {"turns": [
 *      {"text": "Let me look at the screen.",
 *       "tool_calls": [{"name": "computer", "arguments": {"action": "screenshot"}}]},
 *      {"text": "I'll write the file.",
 *       "tool_calls": [{"id": "call_7", "name": "execute",
 *                       "arguments": {"language": "python", "code": "print(1)"}}]},
 *      {"text": "Done."}]}
 * (a bare array of turns is accepted too). "arguments" is an object, or a
 * string holding raw JSON text (to replay a malformed call). "id" defaults to
 * "script_<turn>_<n>". The turn replayed is the one numbered by how many
 * assistant messages the conversation already holds, so a resumed
 * conversation continues where it stopped; past the last turn provider_turn
 * returns PROVIDER_EXHAUSTED.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm/provider-internal.h"
#include "agent/util/textutil.h"
#include "base/base.h"

struct script {
	cJSON *root;
	const cJSON *turns;
};

void script_destroy(struct script *s)
{
	if (!s)
		return;
	cJSON_Delete(s->root);
	free(s);
}

static bool turn_valid(const cJSON *turn, int n)
{
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(turn, "text");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(turn, "tool_calls");
	const cJSON *call;
	int k = 0;
	if (!cJSON_IsObject(turn))
		return provider_fail("script: turn %d is not an object", n);
	if (text && !cJSON_IsString(text))
		return provider_fail("script: turn %d: \"text\" is not a string", n);
	if (calls && !cJSON_IsArray(calls))
		return provider_fail("script: turn %d: \"tool_calls\" is not an array", n);
	/* An empty turn would add no message, and the same turn would play forever. */
	if ((!text || !*text->valuestring) && cJSON_GetArraySize(calls) == 0)
		return provider_fail("script: turn %d has neither text nor tool calls", n);
	cJSON_ArrayForEach(call, calls) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(call, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(call, "arguments");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(call, "id");
		k++;
		if (!cJSON_IsString(name) || !*name->valuestring)
			return provider_fail("script: turn %d, call %d has no name", n, k);
		if (args && !cJSON_IsObject(args) && !cJSON_IsString(args))
			return provider_fail("script: turn %d, call %d: \"arguments\" must be an object or a string",
			                     n, k);
		if (id && !cJSON_IsString(id))
			return provider_fail("script: turn %d, call %d: \"id\" is not a string", n, k);
	}
	return true;
}

struct script *script_load(const char *path)
{
	struct script *s = NULL;
	size_t len = 0;
	char *text = base_read_file(path, 64u << 20, &len);
	if (!text) {
		provider_fail("script: cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		free(text);
		provider_fail("script: out of memory");
		return NULL;
	}
	s->root = cJSON_ParseWithLength(text, len);
	free(text);
	if (!s->root) {
		provider_fail("script: %s is not valid JSON", path);
		goto fail;
	}
	s->turns = cJSON_IsArray(s->root) ? s->root
	                                  : cJSON_GetObjectItemCaseSensitive(s->root, "turns");
	if (!cJSON_IsArray(s->turns)) {
		provider_fail("script: %s has no \"turns\" array", path);
		goto fail;
	}
	int n = 0;
	const cJSON *turn;
	cJSON_ArrayForEach(turn, s->turns) {
		if (!turn_valid(turn, ++n))
			goto fail;
	}
	return s;
fail:
	script_destroy(s);
	return NULL;
}

enum provider_status script_turn(struct script *s, struct conv *c,
                                 const struct provider_events *ev, struct provider_usage *u)
{
	size_t done = 0;
	for (size_t i = 0; i < c->n_messages; i++)
		done += c->messages[i]->role == CONV_ASSISTANT;
	const cJSON *turn = cJSON_GetArrayItem(s->turns, (int)done);
	if (!turn) {
		provider_fail("script: no recorded turn left (%d played)", cJSON_GetArraySize(s->turns));
		return PROVIDER_EXHAUSTED;
	}
	struct turn t;
	turn_init(&t, "script", ev);
	enum provider_status status = PROVIDER_FAILED;
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(turn, "text");
	if (cJSON_IsString(text))
		turn_text(&t, text->valuestring, strlen(text->valuestring));
	const cJSON *call;
	long k = 0;
	cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(call, "id");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(call, "arguments");
		struct tool_acc *a = turn_call(&t, k++);
		if (!a)
			goto out;
		if (cJSON_IsString(id)) {
			agent_buf_puts(&a->id, id->valuestring);
		} else {
			char gen[48];
			snprintf(gen, sizeof(gen), "script_%zu_%ld", done + 1, k);
			agent_buf_puts(&a->id, gen);
		}
		agent_buf_puts(&a->name, cJSON_GetObjectItemCaseSensitive(call, "name")->valuestring);
		if (cJSON_IsString(args))
			agent_buf_puts(&a->args, args->valuestring);
		else if (args)
			jb_json(&a->args, args);
		if (!turn_finish_call(&t, a))
			goto out;
	}
	if (!turn_commit_text(&t))
		goto out;
	turn_set_stop(&t, k ? "tool_use" : "end_turn");
	*u = t.usage;
	u->attempts = 1;
	if (turn_append(&t, c))
		status = PROVIDER_OK;
out:
	if (status != PROVIDER_OK)
		provider_fail("script: %s", t.error[0] ? t.error : "out of memory");
	turn_clear(&t);
	return status;
}
