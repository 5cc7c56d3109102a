/* agent/mcp/jsonrpc — MCP's messages read and written (see the header). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mcp/jsonrpc.h"
#include "agent/util/textutil.h"
#include "base/base.h"

static const char *const method_names[] = {
	[MCP_M_OTHER] = "",
	[MCP_M_INITIALIZE] = "initialize",
	[MCP_M_INITIALIZED] = "notifications/initialized",
	[MCP_M_PING] = "ping",
	[MCP_M_DISCOVER] = "server/discover",
	[MCP_M_TOOLS_LIST] = "tools/list",
	[MCP_M_TOOLS_CALL] = "tools/call",
	[MCP_M_CANCELLED] = "notifications/cancelled",
	[MCP_M_RESOURCES_LIST] = "resources/list",
	[MCP_M_PROMPTS_LIST] = "prompts/list",
	[MCP_M_SET_LEVEL] = "logging/setLevel",
};

static bool invalid(mcp_msg *m, int code, const char *why)
{
	m->kind = MCP_INVALID;
	m->code = code;
	snprintf(m->why, sizeof(m->why), "%s", why);
	return false;
}

bool mcp_id_key(const cJSON *id, char *key, size_t len)
{
	if (cJSON_IsString(id) && strlen(id->valuestring) < 64) {
		snprintf(key, len, "s:%s", id->valuestring);
		return true;
	}
	/* An integer JSON can carry exactly (MCP's ids are strings or integers). */
	if (cJSON_IsNumber(id) && id->valuedouble == floor(id->valuedouble) &&
	    fabs(id->valuedouble) < 9007199254740992.0) {
		snprintf(key, len, "n:%.0f", id->valuedouble);
		return true;
	}
	return false;
}

/* params._meta's facts of 2026-07-28; false when one is of the wrong type. */
static bool read_meta(mcp_msg *m)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(m->params, "_meta");
	if (meta == NULL)
		return true;
	if (!cJSON_IsObject(meta))
		return invalid(m, MCP_INVALID_PARAMS, "params._meta must be an object");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "io.modelcontextprotocol/protocolVersion");
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(meta,
	                                                     "io.modelcontextprotocol/clientCapabilities");
	const cJSON *info = cJSON_GetObjectItemCaseSensitive(meta, "io.modelcontextprotocol/clientInfo");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	char key[80];
	if (v != NULL && !cJSON_IsString(v))
		return invalid(m, MCP_INVALID_PARAMS, "the protocol version in _meta must be a string");
	if ((caps != NULL && !cJSON_IsObject(caps)) || (info != NULL && !cJSON_IsObject(info)))
		return invalid(m, MCP_INVALID_PARAMS,
		               "clientCapabilities and clientInfo in _meta must be objects");
	if (tok != NULL && !mcp_id_key(tok, key, sizeof(key)))
		return invalid(m, MCP_INVALID_PARAMS, "progressToken must be a string or an integer");
	m->meta_version = v != NULL ? v->valuestring : NULL;
	m->meta_capabilities = caps;
	m->meta_client = info;
	m->progress_token = tok;
	return true;
}

static bool read_response(mcp_msg *m, const cJSON *root)
{
	m->result = cJSON_GetObjectItemCaseSensitive(root, "result");
	m->error = cJSON_GetObjectItemCaseSensitive(root, "error");
	if ((m->result == NULL) == (m->error == NULL) ||
	    cJSON_GetObjectItemCaseSensitive(root, "method") != NULL)
		return invalid(m, MCP_INVALID_REQUEST, "a response has exactly one of result and error");
	if (m->id == NULL)
		return invalid(m, MCP_INVALID_REQUEST, "a response needs the request's id");
	m->kind = MCP_RESPONSE;
	return true;
}

static bool read_call(mcp_msg *m, const cJSON *root)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
	if (!cJSON_IsString(method))
		return invalid(m, MCP_INVALID_REQUEST, "\"method\" must be a string");
	m->method_name = method->valuestring;
	int i = base_name_index(BASE_NAMES(method_names), method->valuestring);
	m->method = i > 0 ? (mcp_method)i : MCP_M_OTHER;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
	if (params != NULL && !cJSON_IsObject(params))
		return invalid(m, MCP_INVALID_PARAMS, "\"params\" must be an object");
	m->params = params;
	m->kind = m->id != NULL ? MCP_REQUEST : MCP_NOTIFICATION;
	return read_meta(m);
}


bool mcp_msg_parse(const char *text, size_t len, mcp_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (len > MCP_MAX_MESSAGE)
		return invalid(m, MCP_INVALID_REQUEST, "the message is too large");
	if (!agent_utf8_valid(text, len))
		return invalid(m, MCP_PARSE_ERROR, "the message is not valid UTF-8 JSON");
	const char *end = NULL;
	m->root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (m->root == NULL)
		return invalid(m, MCP_PARSE_ERROR, "the message is not JSON");
	/* Nothing but white space may follow the object. */
	for (const char *p = end; p != NULL && p < text + len; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return invalid(m, MCP_PARSE_ERROR, "text after the JSON message");
	if (cJSON_IsArray(m->root))
		return invalid(m, MCP_INVALID_REQUEST, "JSON-RPC batches are not part of MCP");
	if (!cJSON_IsObject(m->root))
		return invalid(m, MCP_INVALID_REQUEST, "a message is a JSON object");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->root, "jsonrpc");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
		return invalid(m, MCP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->root, "id");
	if (id != NULL && !mcp_id_key(id, m->id_key, sizeof(m->id_key)))
		return invalid(m, MCP_INVALID_REQUEST, "\"id\" must be a string (under 64 bytes) or "
		               "an integer");
	m->id = id;
	/* Refused whole, with its id: no name or text of it can be trusted. */
	if (agent_json_has_escaped_nul(text, len))
		return invalid(m, MCP_INVALID_REQUEST, "a string of the message holds a NUL "
		               "character (\\u0000), which deskhand does not take");
	if (cJSON_GetObjectItemCaseSensitive(m->root, "method") == NULL)
		return read_response(m, m->root);
	return read_call(m, m->root);
}

void mcp_msg_finish(mcp_msg *m)
{
	if (m == NULL)
		return;
	cJSON_Delete(m->root);
	memset(m, 0, sizeof(*m));
}

/* ---- writing ------------------------------------------------------------- */

cJSON *mcp_id_copy(const cJSON *id)
{
	char key[80];
	if (cJSON_IsString(id))
		return cJSON_CreateString(id->valuestring);
	/* Written exactly: cJSON would print 1e15 as "1e+15", another id. */
	if (mcp_id_key(id, key, sizeof(key)))
		return cJSON_CreateRaw(key + 2);
	return cJSON_CreateNull();
}

static char *envelope(const cJSON *id, const char *key, cJSON *value)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL || value == NULL) {
		cJSON_Delete(o);
		cJSON_Delete(value);
		return NULL;
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	if (id != NULL)
		cJSON_AddItemToObject(o, "id", mcp_id_copy(id));
	else if (strcmp(key, "error") == 0)
		cJSON_AddNullToObject(o, "id");
	cJSON_AddItemToObject(o, key, value);
	/* Unformatted: no newline inside, as stdio's framing needs. */
	char *line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return line;
}

char *mcp_line_result(const cJSON *id, cJSON *result)
{
	return envelope(id, "result", result != NULL ? result : cJSON_CreateObject());
}

char *mcp_line_error(const cJSON *id, int code, const char *message, cJSON *data)
{
	cJSON *e = cJSON_CreateObject();
	if (e != NULL) {
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", message);
		if (data != NULL)
			cJSON_AddItemToObject(e, "data", data);
	} else {
		cJSON_Delete(data);
	}
	return envelope(id, "error", e);
}

static char *with_method(cJSON *id, const char *method, cJSON *params)
{
	cJSON *o = cJSON_CreateObject();
	if (o == NULL) {
		cJSON_Delete(id);
		cJSON_Delete(params);
		return NULL;
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	if (id != NULL)
		cJSON_AddItemToObject(o, "id", id);
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddItemToObject(o, "params", params != NULL ? params : cJSON_CreateObject());
	char *line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return line;
}

char *mcp_line_notification(const char *method, cJSON *params)
{
	return with_method(NULL, method, params);
}

char *mcp_line_request(const char *id, const char *method, cJSON *params)
{
	return with_method(cJSON_CreateString(id), method, params);
}
