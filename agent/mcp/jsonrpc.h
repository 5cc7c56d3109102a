/*
 * agent/mcp/jsonrpc — one MCP message, as a stranger sent it, made a typed
 * value once (private to agent/mcp; tests/fuzz/fuzz_mcp.c feeds it).
 *
 * A message is a JSON-RPC 2.0 request, notification or response, or it is
 * invalid and carries the error to answer (parse error, invalid request,
 * invalid params). The method's name becomes an mcp_method here and is
 * never compared again; so do the 2026-07-28 facts in params._meta (the
 * protocol version, the client's capabilities and self-reported name) and
 * the progress token. Nothing here decides anything about the session.
 */
#ifndef DESKHAND_AGENT_MCP_JSONRPC_H
#define DESKHAND_AGENT_MCP_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* JSON-RPC's codes, and MCP's of 2026-07-28. */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603
#define MCP_MISSING_CAPABILITY -32021
#define MCP_UNSUPPORTED_VERSION -32022

/* The longest message read (a bigger one is refused, never buffered whole). */
#define MCP_MAX_MESSAGE (8u << 20)

typedef enum mcp_kind {
	MCP_INVALID,
	MCP_REQUEST,
	MCP_NOTIFICATION,
	MCP_RESPONSE,
} mcp_kind;

typedef enum mcp_method {
	MCP_M_OTHER,             /* a name deskhand does not serve */
	MCP_M_INITIALIZE,
	MCP_M_INITIALIZED,       /* notifications/initialized */
	MCP_M_PING,
	MCP_M_DISCOVER,          /* server/discover */
	MCP_M_TOOLS_LIST,
	MCP_M_TOOLS_CALL,
	MCP_M_CANCELLED,         /* notifications/cancelled */
	MCP_M_RESOURCES_LIST,    /* answered empty: hosts ask whatever was declared */
	MCP_M_PROMPTS_LIST,
	MCP_M_SET_LEVEL,         /* logging/setLevel */
} mcp_method;

typedef struct mcp_msg {
	mcp_kind kind;
	cJSON *root;             /* owned; every pointer below is into it */
	const cJSON *id;         /* REQUEST, RESPONSE (a string or an integer) */
	char id_key[80];         /* the id as text ("s:abc", "n:7"), for lookups */
	mcp_method method;
	const char *method_name; /* REQUEST, NOTIFICATION */
	const cJSON *params;     /* an object, or NULL */
	const cJSON *result;     /* RESPONSE: one of result and error */
	const cJSON *error;
	/* params._meta, 2026-07-28 */
	const char *meta_version;          /* io.modelcontextprotocol/protocolVersion */
	const cJSON *meta_capabilities;    /* .../clientCapabilities (an object) */
	const cJSON *meta_client;          /* .../clientInfo (an object) */
	const cJSON *progress_token;       /* a string or an integer */
	/* INVALID: what to answer, to id (NULL: null) */
	int code;
	char why[200];
} mcp_msg;

/*
 * Reads one message of len bytes (not NUL-terminated). Always fills m;
 * returns false when it is INVALID (m->code, m->why). Ownership:
 * mcp_msg_finish.
 */
bool mcp_msg_parse(const char *text, size_t len, mcp_msg *m);
void mcp_msg_finish(mcp_msg *m);

/*
 * The lines deskhand sends, one JSON object without a newline inside
 * (stdio's framing). Each consumes the cJSON it is given (NULL: {}), and
 * returns NULL only when out of memory. Ownership: the caller frees.
 */
char *mcp_line_result(const cJSON *id, cJSON *result);
char *mcp_line_error(const cJSON *id, int code, const char *message, cJSON *data);
char *mcp_line_notification(const char *method, cJSON *params);
char *mcp_line_request(const char *id, const char *method, cJSON *params);

/* An id's key as mcp_msg's id_key (false: not a string or an integer). */
bool mcp_id_key(const cJSON *id, char *key, size_t len);
/* A copy of an id (or a progress token) that prints as it was sent: an
 * integer exactly, whatever its size. Ownership: the caller's. */
cJSON *mcp_id_copy(const cJSON *id);

#endif
