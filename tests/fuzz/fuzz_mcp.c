/*
 * One line an MCP client sent (agent/mcp/jsonrpc.h), then, for a
 * tools/call, its tool and arguments as the MCP translator makes them
 * deskhand's (agent/tools/mcp_actions.h) and the computer tool's parser
 * checks them against a view (the input's size picks one of four).
 *
 * Checked, whatever the bytes:
 *  - the parse says valid exactly when the kind is not INVALID; an invalid
 *    message carries one of the codes deskhand answers and a reason; the
 *    error line it is answered with is one JSON object on one line;
 *  - a request has an id whose key is the one mcp_id_key gives, a
 *    notification none, a response exactly one of result and error; the
 *    method's enum is the one its name says (a table of its own here);
 *    params is an object or absent; the _meta facts have their types;
 *  - the lines deskhand writes (a result to the id, a notification, a
 *    request) read back as the same message: same id key, same method,
 *    same params;
 *  - a tool call: an unknown tool and deskhand's own tools are not
 *    translated (with a reason); a translation is the same twice, names a
 *    known action, takes only the arguments the tool's input schema lists
 *    and, once the computer parser accepts it, every argument the schema
 *    requires was given; the action is input exactly when the tool is not
 *    read-only (the hint the host reads), and its points are the x, y
 *    given, inside the view.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "agent/mcp/jsonrpc.h"
#include "agent/tools/actions.h"
#include "agent/tools/computer.h"
#include "agent/tools/mcp_actions.h"

static const vision_view views[] = {
	{0, 0, 1920, 1080, 1280, 720, 0, 0},
	{0, 0, 1366, 768, 1366, 768, 0, 0},
	{1920, 0, 2560, 1440, 1280, 720, 0, 0},
	{0, 0, 1023, 767, 997, 747, 0, 0},
};

static const struct {
	const char *name;
	mcp_method method;
} methods[] = {
	{"initialize", MCP_M_INITIALIZE},
	{"notifications/initialized", MCP_M_INITIALIZED},
	{"ping", MCP_M_PING},
	{"server/discover", MCP_M_DISCOVER},
	{"tools/list", MCP_M_TOOLS_LIST},
	{"tools/call", MCP_M_TOOLS_CALL},
	{"notifications/cancelled", MCP_M_CANCELLED},
	{"resources/list", MCP_M_RESOURCES_LIST},
	{"prompts/list", MCP_M_PROMPTS_LIST},
	{"logging/setLevel", MCP_M_SET_LEVEL},
};

static mcp_method method_of(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(name, methods[i].name) == 0)
			return methods[i].method;
	return MCP_M_OTHER;
}

static bool id_like(const cJSON *v)
{
	char key[80];
	return mcp_id_key(v, key, sizeof(key));
}

/* A line deskhand writes: one JSON object, no newline inside (stdio's framing). */
static cJSON *written(const char *line)
{
	fuzz_check(line != NULL, "a line was not written");
	fuzz_check(strchr(line, '\n') == NULL && strchr(line, '\r') == NULL,
	           "a newline inside a line: %.200s", line);
	cJSON *j = cJSON_Parse(line);
	fuzz_check(cJSON_IsObject(j), "not a JSON object: %.200s", line);
	fuzz_check(strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "jsonrpc")),
	                  "2.0") == 0, "no jsonrpc 2.0: %.200s", line);
	return j;
}

static void check_invalid(const mcp_msg *m)
{
	fuzz_check(m->code == MCP_PARSE_ERROR || m->code == MCP_INVALID_REQUEST ||
	           m->code == MCP_INVALID_PARAMS, "code %d", m->code);
	fuzz_check(m->why[0] != '\0' && memchr(m->why, '\0', sizeof(m->why)) != NULL,
	           "an invalid message without a reason");
	fuzz_check(m->id == NULL || id_like(m->id), "an invalid message's id is no id");
	char *line = mcp_line_error(m->id, m->code, m->why, NULL);
	cJSON *j = written(line);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	fuzz_check(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "code")) == m->code,
	           "the error line's code");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
	fuzz_check(m->id != NULL ? cJSON_Compare(id, m->id, true) : cJSON_IsNull(id),
	           "the error line's id: %.200s", line);
	cJSON_Delete(j);
	free(line);
}

static void check_meta(const mcp_msg *m)
{
	fuzz_check(m->meta_capabilities == NULL || cJSON_IsObject(m->meta_capabilities),
	           "clientCapabilities");
	fuzz_check(m->meta_client == NULL || cJSON_IsObject(m->meta_client), "clientInfo");
	fuzz_check(m->progress_token == NULL || id_like(m->progress_token), "progressToken");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(m->params, "_meta");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "io.modelcontextprotocol/protocolVersion");
	fuzz_check(m->meta_version == (v != NULL ? v->valuestring : NULL), "the protocol version");
}

/* Parses deskhand's own line back: it is a message of kind `kind`. */
static void reads_back(char *line, mcp_kind kind, mcp_msg *back)
{
	cJSON_Delete(written(line));
	size_t n = strlen(line);
	if (n > MCP_MAX_MESSAGE) {
		memset(back, 0, sizeof(*back));
		free(line);
		return;
	}
	bool ok = mcp_msg_parse(line, n, back);
	fuzz_check(ok && back->kind == kind, "deskhand's line does not read back (%s): %.200s",
	           back->why, line);
	free(line);
}

/*
 * Whether a and b print the same (cJSON_Compare finds an object with a key
 * twice unequal even to itself; printing also makes inf and nan null, as
 * they travel).
 */
static bool same(const cJSON *a, const cJSON *b)
{
	char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
	fuzz_check(pa != NULL && pb != NULL, "unprintable");
	bool eq = strcmp(pa, pb) == 0;
	free(pa);
	free(pb);
	return eq;
}

static void check_round_trips(const mcp_msg *m)
{
	cJSON *params = m->params != NULL ? cJSON_Duplicate(m->params, true) : cJSON_CreateObject();
	mcp_msg back;
	if (m->kind == MCP_REQUEST) {
		reads_back(mcp_line_result(m->id, cJSON_Duplicate(params, true)), MCP_RESPONSE, &back);
		if (back.root != NULL) {
			fuzz_check(strcmp(back.id_key, m->id_key) == 0, "id %s became %s", m->id_key,
			           back.id_key);
			fuzz_check(same(back.result, params),
			           "the result changed");
		}
		mcp_msg_finish(&back);
		if (cJSON_IsString(m->id)) {
			reads_back(mcp_line_request(m->id->valuestring, m->method_name,
			                            cJSON_Duplicate(params, true)), MCP_REQUEST, &back);
			if (back.root != NULL) {
				fuzz_check(back.method == m->method, "the request's method changed");
				fuzz_check(strcmp(back.id_key, m->id_key) == 0, "the request's id changed");
			}
			mcp_msg_finish(&back);
		}
	}
	reads_back(mcp_line_notification(m->method_name, cJSON_Duplicate(params, true)),
	           MCP_NOTIFICATION, &back);
	if (back.root != NULL) {
		fuzz_check(back.method == m->method && strcmp(back.method_name, m->method_name) == 0,
		           "the notification's method changed");
		fuzz_check(same(back.params, params),
		           "the params changed");
		fuzz_check((back.meta_version == NULL) == (m->meta_version == NULL) &&
		           (back.meta_version == NULL || strcmp(back.meta_version, m->meta_version) == 0),
		           "the _meta version changed");
	}
	mcp_msg_finish(&back);
	cJSON_Delete(params);
}

static bool has_key(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

static bool point_in(const vision_view *v, int mx, int my, int sx, int sy)
{
	return mx >= 0 && my >= 0 && mx < v->model_w && my < v->model_h && sx >= v->screen_x &&
	       sy >= v->screen_y && sx < v->screen_x + v->screen_w && sy < v->screen_y + v->screen_h;
}

static bool is_int(const cJSON *v, int want)
{
	return cJSON_IsNumber(v) && v->valuedouble == (double)want;
}

static void check_action(const agent_mcp_tool *t, const cJSON *args, const agent_computer_action *a,
                         const vision_view *v)
{
	fuzz_check(a->input == !t->read_only, "%s: input %d but readOnlyHint %d", t->name,
	           a->input, t->read_only);
	if (a->has_point)
		fuzz_check(point_in(v, a->mx, a->my, a->sx, a->sy), "%s: point %d,%d", t->name,
		           a->mx, a->my);
	if (a->has_start)
		fuzz_check(point_in(v, a->start_mx, a->start_my, a->start_sx, a->start_sy),
		           "%s: start %d,%d", t->name, a->start_mx, a->start_my);
	const char *xk = "x", *yk = "y";
	if (strcmp(t->name, "drag") == 0) {
		fuzz_check(a->has_start && is_int(cJSON_GetObjectItemCaseSensitive(args, "x1"), a->start_mx) &&
		           is_int(cJSON_GetObjectItemCaseSensitive(args, "y1"), a->start_my),
		           "drag: the start is not x1, y1");
		xk = "x2";
		yk = "y2";
	}
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(args, xk);
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(args, yk);
	bool given = x != NULL && !cJSON_IsNull(x);
	if (strcmp(t->name, "wait") != 0 && strcmp(t->name, "screenshot") != 0 &&
	    strcmp(t->name, "windows") != 0 && strcmp(t->name, "key") != 0) {
		fuzz_check(a->has_point == given, "%s: a point %s given", t->name,
		           given ? "was" : "was not");
		if (given)
			fuzz_check(is_int(x, a->mx) && is_int(y, a->my), "%s: the point is not %s, %s",
			           t->name, xk, yk);
	}
}

static void check_call(const mcp_msg *m, size_t size)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m->params, "name"));
	if (name == NULL)
		return;
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
	const agent_mcp_tool *t = agent_mcp_tool_find(name);
	fuzz_check(t == NULL || strcmp(t->name, name) == 0, "found %s for %s", t ? t->name : "", name);
	char err[512] = "", err2[512] = "";
	/* As calls.c hands them on: absent or null arguments are {}. */
	cJSON *empty = cJSON_CreateObject();
	const cJSON *args = given == NULL || cJSON_IsNull(given) ? empty : given;
	cJSON *out = agent_mcp_translate(name, args, err, sizeof(err));
	if (t == NULL || agent_mcp_own_tool(name) || !cJSON_IsObject(args)) {
		fuzz_check(out == NULL && err[0] != '\0', "%s: translated, or refused silently", name);
		cJSON_Delete(empty);
		return;
	}
	cJSON *again = agent_mcp_translate(name, args, err2, sizeof(err2));
	fuzz_check((out == NULL) == (again == NULL) && (out == NULL || same(out, again)),
	           "%s: two translations differ", name);
	cJSON_Delete(again);
	if (out == NULL) {
		fuzz_check(err[0] != '\0' && strcmp(err, err2) == 0, "%s: refused without one reason",
		           name);
		cJSON_Delete(empty);
		return;
	}
	agent_action kind;
	fuzz_check(agent_action_lookup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out,
	                                                                                  "action")),
	                               &kind), "%s: no known action", name);
	cJSON *schema = cJSON_Parse(t->input_schema);
	fuzz_check(schema != NULL, "%s: the input schema is not JSON", name);
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *a;
	cJSON_ArrayForEach(a, args)
		fuzz_check(has_key(props, a->string), "%s: took \"%s\", which its schema does not list",
		           name, a->string);
	const vision_view *v = &views[size % (sizeof(views) / sizeof(views[0]))];
	agent_computer_action act;
	if (agent_computer_parse(out, v, &act, err, sizeof(err))) {
		const cJSON *req;
		cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(schema, "required")) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(args, cJSON_GetStringValue(req));
			fuzz_check(r != NULL && !cJSON_IsNull(r), "%s: ran without \"%s\", which its "
			           "schema requires", name, cJSON_GetStringValue(req));
		}
		check_action(t, args, &act, v);
		agent_computer_action_finish(&act);
	} else {
		fuzz_check(err[0] != '\0', "%s: the parser refused silently", name);
	}
	cJSON_Delete(schema);
	cJSON_Delete(out);
	cJSON_Delete(empty);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mcp_msg m;
	bool ok = mcp_msg_parse((const char *)data, size, &m);
	fuzz_check(ok == (m.kind != MCP_INVALID), "parse said %d for kind %d", ok, m.kind);
	if (!ok) {
		check_invalid(&m);
		mcp_msg_finish(&m);
		return 0;
	}
	fuzz_check(cJSON_IsObject(m.root), "a message that is no object");
	switch (m.kind) {
	case MCP_REQUEST:
	case MCP_NOTIFICATION: {
		fuzz_check((m.kind == MCP_REQUEST) == (m.id != NULL), "a request without an id");
		fuzz_check(m.method_name != NULL, "no method name");
		fuzz_check(m.method == method_of(m.method_name), "method \"%s\" became %d",
		           m.method_name, m.method);
		fuzz_check(m.params == NULL || cJSON_IsObject(m.params), "params not an object");
		if (m.id != NULL) {
			char key[80];
			fuzz_check(mcp_id_key(m.id, key, sizeof(key)) && strcmp(key, m.id_key) == 0,
			           "id key %s", m.id_key);
		}
		check_meta(&m);
		check_round_trips(&m);
		if (m.kind == MCP_REQUEST && m.method == MCP_M_TOOLS_CALL)
			check_call(&m, size);
		break;
	}
	case MCP_RESPONSE:
		fuzz_check(m.id != NULL && m.id_key[0] != '\0', "a response without an id");
		fuzz_check((m.result == NULL) != (m.error == NULL), "result and error");
		fuzz_check(m.method_name == NULL, "a response with a method");
		break;
	default:
		fuzz_check(false, "kind %d", m.kind);
	}
	mcp_msg_finish(&m);
	return 0;
}
