/*
 * agent/mcp — deskhand as the desktop of any agent host: `deskhand mcp`,
 * a Model Context Protocol server on standard input and output (or on
 * Streamable HTTP with --http), speaking revision 2025-11-25 (initialize)
 * and 2026-07-28 (server/discover, the version in each request's _meta).
 *
 * Its tools are deskhand's commands (agent/tools/mcp_actions.h); each call
 * becomes one tool call of the MCP dialect and passes the same gate as
 * the agent's model's, with the same settings, audit records (the client
 * named as the proposer) and questions. The host and its model are on the
 * untrusted side: questions are answered only in deskhand's own places —
 * the controlling terminal (/dev/tty: standard input is the protocol) and
 * the console — never by anything the client sends, unless the user
 * started the server with --trust-host-approvals. A cancelled call
 * withdraws its question as a denial.
 *
 * The door of agent/mcp. Owns: the protocol (jsonrpc.h, private), the
 * server's threads (the reader, the one worker that takes calls to the
 * gate in turn, the progress ticker), the HTTP daemon of --http, the
 * host's place beside the terminal.
 * May call: agent/session (deskhand's hands: options, audit, desktop,
 * tools, gate, console), agent/safety, agent/tools, agent/ui, agent/util,
 * base/, executors/ (the languages), libmicrohttpd (for --http), cJSON.
 */
#ifndef DESKHAND_AGENT_MCP_H
#define DESKHAND_AGENT_MCP_H

/* `deskhand mcp [OPTIONS]`: the process's exit status (2: a usage error). */
int agent_mcp_main(int argc, char **argv);

#endif
