// An MCP host the Python tests drive: the official TypeScript SDK's Client
// (@modelcontextprotocol/sdk, pinned by package-lock.json) on stdio or on
// Streamable HTTP. tests/lib/mcplib.py starts it; nothing here decides a test.
//
//   node driver.mjs CONFIG      CONFIG is one JSON object:
//     transport      "stdio" | "http"
//     command, args, env, cwd  stdio: the server to start (the SDK adds HOME,
//                    LOGNAME, PATH, SHELL, TERM, USER of this process to env)
//     stderr_file    stdio: the server's standard error is appended there
//     url, headers   http: the endpoint, and headers sent with every request
//     client_name, client_version   the clientInfo of initialize
//     elicitation    null (no capability) | "accept" | "decline" | "record"
//     elicitation_content  the content an "accept" answers (else one made
//                    from the requested schema)
//     trace_file     if set, every JSON-RPC message both ways, one a line:
//                    {"dir":"out"|"in","msg":...}
//
// Standard input: one command a line, each with a "tag" its answer carries.
//   {"op":"list","tag":T}       -> {"tag":T,"ok":true,"tools":[...],"pages":N,"schema_errors":[...]}
//   {"op":"call","tag":T,"name":N,"arguments":{},"timeout_ms":?,"progress":?}
//        runs beside later commands; {"tag":T,"event":"progress",...} per progress
//        notification, then {"tag":T,"ok":true,"result":{...}}
//        or {"tag":T,"ok":false,"error":{"code":C,"message":M[,"data"][,"aborted":true]}}
//   {"op":"abort","tag":T[,"reason":R]}  aborts call T (the SDK sends
//        notifications/cancelled); answers {"tag":T,"event":"abort_sent"}
//        (the call's own line follows)
//   {"op":"server_info","tag":T} -> {"tag":T,"ok":true,...server info}
//   {"op":"ping","tag":T}        -> {"tag":T,"ok":true}
//   {"op":"set_elicitation","tag":T,"elicitation":M[,"content":{}]}  changes the
//        answer (not the declared capability)
//   {"op":"close","tag":T}       -> {"tag":T,"ok":true[,"server_exit":{code,signal}]}, exit 0
// Events without a tag:
//   {"event":"connected",...server info}  {"event":"connect_failed","error":E} (exit 1)
//   {"event":"elicitation","params":P,"answer":A}
//   {"event":"notification","method":M,"params":P}  (notifications nothing else handles)
//   {"event":"error","message":M}   (the SDK's onerror: e.g. a non-JSON line on stdout)
//   {"event":"closed"}              (the connection ended)
//   {"event":"bad_command","line":L,"error":M}
// Standard output carries only these lines.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fs from 'node:fs';
import readline from 'node:readline';

const cfg = JSON.parse(process.argv[2] || '{}');
// On Linux, writes to a pipe are synchronous: each line is out when write returns.
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const log = (s) => process.stderr.write('driver: ' + s + '\n');

function errorJson(e) {
  const o = { message: String((e && e.message) || e) };
  if (e && e.code !== undefined) o.code = e.code;
  if (e && e.data !== undefined) o.data = e.data;
  if (e && e.name) o.name = e.name;
  return o;
}

// ---- elicitation: answered here, as a host that answers itself would
let elicitMode = cfg.elicitation || null;
let elicitContent = cfg.elicitation_content || null;

function contentFor(schema) {
  const c = {};
  for (const [k, p] of Object.entries((schema && schema.properties) || {})) {
    if (p.type === 'boolean') c[k] = true;
    else if (p.type === 'number' || p.type === 'integer') c[k] = p.minimum ?? 1;
    else if (p.type === 'array') c[k] = (p.items && p.items.enum) ? [p.items.enum[0]] : [];
    else if (Array.isArray(p.enum)) c[k] = p.enum[0];
    else if (Array.isArray(p.oneOf) && p.oneOf[0] && p.oneOf[0].const !== undefined) c[k] = p.oneOf[0].const;
    else c[k] = 'yes';
  }
  return c;
}

const capabilities = {};
if (elicitMode) capabilities.elicitation = { form: {} };
const client = new Client(
  { name: cfg.client_name || 'deskhand-test-host', version: cfg.client_version || '0.0.1' },
  { capabilities },
);
if (elicitMode) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    let answer;
    if (elicitMode === 'accept') answer = { action: 'accept', content: elicitContent || contentFor(req.params.requestedSchema) };
    else if (elicitMode === 'decline') answer = { action: 'decline' };
    else answer = { action: 'cancel' }; // "record": noted, dismissed
    out({ event: 'elicitation', params: req.params, answer });
    return answer;
  });
}
client.fallbackNotificationHandler = async (n) => out({ event: 'notification', method: n.method, params: n.params });
client.onerror = (e) => out({ event: 'error', message: String((e && e.message) || e) });
let closing = false;
let serverExit = null;
client.onclose = () => out({ event: 'closed', ...(serverExit ? { server_exit: serverExit } : {}) });

// ---- the transport
let transport;
let negotiated;
if (cfg.transport === 'http') {
  transport = new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: cfg.headers || {} } });
} else {
  transport = new StdioClientTransport({
    command: cfg.command, args: cfg.args || [], env: cfg.env || undefined, cwd: cfg.cwd || undefined,
    stderr: 'pipe',
  });
  const sink = cfg.stderr_file ? fs.createWriteStream(cfg.stderr_file, { flags: 'a' }) : process.stderr;
  transport.stderr.pipe(sink);
}
// The SDK keeps the negotiated version nowhere but in the HTTP transport's
// header state: it calls setProtocolVersion on a transport that has one.
{
  const set = transport.setProtocolVersion ? transport.setProtocolVersion.bind(transport) : null;
  transport.setProtocolVersion = (v) => { negotiated = v; if (set) set(v); };
}
if (cfg.trace_file) {
  const trace = fs.openSync(cfg.trace_file, 'a');
  const line = (dir, msg) => fs.writeSync(trace, JSON.stringify({ dir, msg }) + '\n');
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => { line('out', msg); return send(msg, opts); };
  transport.onmessage = (msg) => line('in', msg); // Protocol.connect chains its own after this
}

function info() {
  const o = {
    serverVersion: client.getServerVersion() ?? null,
    serverCapabilities: client.getServerCapabilities() ?? null,
    instructions: client.getInstructions() ?? null,
    protocolVersion: negotiated ?? null,
  };
  if (cfg.transport === 'http') o.sessionId = transport.sessionId ?? null;
  else o.server_pid = transport.pid;
  return o;
}

try {
  await client.connect(transport);
} catch (e) {
  out({ event: 'connect_failed', error: errorJson(e) });
  try { await client.close(); } catch { /* already closed */ }
  process.exit(1);
}
if (cfg.transport !== 'http' && transport._process) {
  // The child the SDK spawned (a private field): its exit status for "close".
  transport._process.once('exit', (code, signal) => { serverExit = { code, signal }; });
}
out({ event: 'connected', ...info() });

// ---- schemas: every inputSchema and outputSchema compiled strictly. A
// schema without "$schema" is compiled as draft-07 (the dialect of the SDK's
// own validator) and as 2020-12 (MCP's default dialect since 2025-11-25):
// what hosts make of it must not depend on which they pick.
let ajvs = {}; // afresh for each list: a schema's $id may be compiled once per instance
function ajv(dialect) {
  if (!ajvs[dialect]) {
    const A = dialect === '2020-12' ? Ajv2020 : Ajv;
    ajvs[dialect] = new A({ strict: true, allowUnionTypes: true, validateFormats: true, allErrors: true });
    addFormats(ajvs[dialect]);
  }
  return ajvs[dialect];
}
function dialects(schema) {
  const d = String(schema.$schema || '');
  if (!d) return ['draft-07', '2020-12'];
  return [d.includes('2020-12') ? '2020-12' : 'draft-07'];
}
function schemaErrors(tools) {
  ajvs = {};
  const errs = [];
  const names = new Set();
  for (const t of tools) {
    if (names.has(t.name)) errs.push({ tool: t.name, error: 'listed twice' });
    names.add(t.name);
    for (const which of ['inputSchema', 'outputSchema']) {
      const s = t[which];
      if (s === undefined) {
        if (which === 'inputSchema') errs.push({ tool: t.name, which, error: 'missing' });
        continue;
      }
      if (!s || typeof s !== 'object' || s.type !== 'object') {
        errs.push({ tool: t.name, which, error: 'type is not "object": ' + JSON.stringify(s && s.type) });
      }
      if (!s || typeof s !== 'object') continue;
      for (const d of dialects(s)) {
        try {
          ajv(d).compile(s);
        } catch (e) {
          errs.push({ tool: t.name, which, dialect: d, error: String(e.message || e) });
        }
      }
    }
  }
  return errs;
}

// ---- commands
const pending = new Map(); // tag -> AbortController of a call

async function list(c) {
  // Page by page through client.request, then the SDK's own cache of output
  // validators over all of them: client.listTools() keeps only the validators
  // of the page it fetched last (cacheToolMetadata clears them per call), and
  // throws away the whole list when one outputSchema does not compile.
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const params = cursor !== undefined ? { cursor } : undefined;
    const r = await client.request({ method: 'tools/list', params }, ListToolsResultSchema,
      c.timeout_ms ? { timeout: c.timeout_ms } : undefined);
    tools.push(...r.tools);
    cursor = r.nextCursor;
    pages++;
    if (pages > 1000) throw new Error('more than 1000 pages of tools');
  } while (cursor !== undefined);
  const errs = schemaErrors(tools);
  // A schema the SDK's validator cannot compile stops its cache at that tool:
  // each alone first, then all that compile.
  const good = [];
  for (const t of tools) {
    try {
      client.cacheToolMetadata([t]);
      good.push(t);
    } catch (e) {
      errs.push({ tool: t.name, which: 'outputSchema', error: "the SDK's validator: " + String(e.message || e) });
    }
  }
  client.cacheToolMetadata(good);
  return { tools, pages, schema_errors: errs };
}

async function call(c) {
  const ac = new AbortController();
  pending.set(c.tag, ac);
  const opts = { signal: ac.signal };
  if (c.timeout_ms) opts.timeout = c.timeout_ms;
  if (c.progress) {
    opts.onprogress = (p) => out({ tag: c.tag, event: 'progress', ...p });
    opts.resetTimeoutOnProgress = true;
  }
  try {
    const result = await client.callTool({ name: c.name, arguments: c.arguments || {} }, undefined, opts);
    return { result };
  } catch (e) {
    const err = errorJson(e);
    if (ac.signal.aborted) err.aborted = true;
    throw Object.assign(new Error(err.message), { json: err });
  } finally {
    pending.delete(c.tag);
  }
}

async function close(c) {
  closing = true;
  const r = {};
  if (cfg.transport === 'http' && transport.sessionId) {
    try { await transport.terminateSession(); } catch (e) { r.terminate_error = errorJson(e); }
  }
  await client.close();
  // Let the calls the close ended write their lines first.
  await new Promise((res) => setImmediate(res));
  if (serverExit) r.server_exit = serverExit;
  out({ tag: c.tag, ok: true, ...r });
  process.exit(0);
}

async function run(c) {
  switch (c.op) {
  case 'list': return list(c);
  case 'call': return call(c);
  case 'server_info': return info();
  case 'ping': await client.ping(); return {};
  case 'set_elicitation':
    elicitMode = c.elicitation; elicitContent = c.content || null; return {};
  default: throw new Error('unknown op ' + c.op);
  }
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let c;
  try {
    c = JSON.parse(line);
  } catch (e) {
    out({ event: 'bad_command', line, error: String(e.message) });
    continue;
  }
  if (c.op === 'close') { await close(c); break; }
  if (c.op === 'abort') {
    const ac = pending.get(c.tag);
    if (!ac) { out({ tag: c.tag, event: 'abort_unknown' }); continue; }
    out({ tag: c.tag, event: 'abort_sent' });
    ac.abort(c.reason || 'the test client cancelled the call');
    continue;
  }
  run(c).then(
    (r) => out({ tag: c.tag, ok: true, ...r }),
    (e) => out({ tag: c.tag, ok: false, error: e.json || errorJson(e) }),
  );
}
// Standard input ended without "close": close all the same.
if (!closing) await close({ tag: null });
