// A small MCP server written with the SDK's own McpServer: the counterpart
// test_driver_selftest.py runs driver.mjs against, so the driver is proven on
// a server nobody here wrote before it meets deskhand's.
//
//   node fake_server.mjs [--http] [--token T] [--quirks [--broken-input]] [--noise] --log PATH
// stdio unless --http; --http listens on 127.0.0.1, port 0, prints
// {"url":...} on standard output and, with --token, answers 401 to a request
// without "Authorization: Bearer T". --log: one JSON line per thing it saw
// (initialized, call, progress_sent, cancelled, elicitation_result, http, tty).
// Tools: echo {text, steps?, until_cancelled?} (500 ms a step, a progress
// notification each when asked), ask {question} (an elicitation), tty {prompt}
// (a line read from /dev/tty). --quirks instead serves a low-level Server
// with two pages of tools, some with schemas a strict compiler refuses, and
// "mismatch", whose structured content breaks its own output schema.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ElicitResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import fs from 'node:fs';
import http from 'node:http';
import { randomUUID, webcrypto } from 'node:crypto';

// Node 18 (Debian 12's) has no global Web Crypto, which the SDK's HTTP
// server side uses; Node 20 has it.
if (globalThis.crypto === undefined)
  globalThis.crypto = webcrypto;

const argv = process.argv.slice(2);
const opt = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const logPath = opt('--log');
const token = opt('--token');
const record = (o) => { if (logPath) fs.appendFileSync(logPath, JSON.stringify(o) + '\n'); };

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

function toolServer() {
  const server = new McpServer({ name: 'fake-mcp', version: '1.2.3' }, { instructions: 'a fake for the driver' });
  server.server.oninitialized = () => record({
    event: 'initialized',
    clientInfo: server.server.getClientVersion(),
    capabilities: server.server.getClientCapabilities(),
  });
  server.registerTool('echo', {
    description: 'Says the text back, a step every 500 ms',
    inputSchema: { text: z.string(), steps: z.number().int().min(1).max(20).optional(), until_cancelled: z.boolean().optional() },
    outputSchema: { text: z.string(), steps: z.number() },
    annotations: { readOnlyHint: true },
  }, async ({ text, steps = 4, until_cancelled = false }, extra) => {
    const token = extra._meta?.progressToken;
    record({ event: 'call', name: 'echo', requestId: extra.requestId, progressToken: token ?? null });
    extra.signal.addEventListener('abort', () => record({
      event: 'cancelled', requestId: extra.requestId, reason: String(extra.signal.reason),
    }), { once: true });
    for (let i = 1; i <= steps && !extra.signal.aborted; i++) {
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: 'step ' + i } });
        record({ event: 'progress_sent', requestId: extra.requestId, progress: i });
      }
      // until_cancelled: after the first step, hold until the client cancels (bounded).
      await sleep(until_cancelled ? 120000 : 500, extra.signal);
    }
    if (extra.signal.aborted) record({ event: 'returned_after_cancel', requestId: extra.requestId });
    return { content: [{ type: 'text', text }], structuredContent: { text, steps } };
  });
  server.registerTool('ask', {
    description: 'Asks the host a question by elicitation',
    inputSchema: { question: z.string() },
  }, async ({ question }, extra) => {
    try {
      const r = await extra.sendRequest({
        method: 'elicitation/create',
        params: {
          mode: 'form', message: question,
          requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve?' } }, required: ['approve'] },
        },
      }, ElicitResultSchema);
      record({ event: 'elicitation_result', result: r });
      return { content: [{ type: 'text', text: JSON.stringify(r) }], structuredContent: r };
    } catch (e) {
      record({ event: 'elicitation_failed', error: String(e.message || e) });
      return { content: [{ type: 'text', text: 'elicitation failed: ' + (e.message || e) }], isError: true };
    }
  });
  server.registerTool('tty', {
    description: 'Reads a line from the controlling terminal',
    inputSchema: { prompt: z.string() },
  }, async ({ prompt }) => {
    let fh;
    try {
      fh = await fs.promises.open('/dev/tty', 'r+');
    } catch (e) {
      record({ event: 'tty', error: e.code });
      return { content: [{ type: 'text', text: 'no controlling terminal: ' + e.code }], isError: true };
    }
    try {
      await fh.write(prompt);
      const buf = Buffer.alloc(256);
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      const line = buf.subarray(0, bytesRead).toString().replace(/\r?\n$/, '');
      record({ event: 'tty', line });
      return { content: [{ type: 'text', text: line }] };
    } finally {
      await fh.close();
    }
  });
  return server;
}

// --quirks: what McpServer would never send.
function quirksServer() {
  const server = new Server({ name: 'fake-mcp-quirks', version: '0.0.1' }, { capabilities: { tools: {} } });
  const obj = { type: 'object', properties: {} };
  const pages = {
    '': { tools: [{ name: 'plain', inputSchema: obj }], nextCursor: 'page2' },
    page2: {
      tools: [
        { name: 'typo_output', inputSchema: obj, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, requird: ['n'] } },
        { name: 'uncompilable', inputSchema: obj, outputSchema: { type: 'object', properties: { n: { type: 'nonsense' } } } },
        { name: 'mismatch', inputSchema: obj, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
      ],
    },
  };
  // --broken-input: one more tool, whose inputSchema is no object.
  if (argv.includes('--broken-input')) pages.page2.tools.push({ name: 'broken_input', inputSchema: { type: 'string' } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const page = pages[req.params?.cursor ?? ''];
    if (!page) throw new Error('no such cursor');
    return page;
  });
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    record({ event: 'call', name: req.params.name });
    if (req.params.name === 'mismatch') return { content: [{ type: 'text', text: 'n' }], structuredContent: { n: 'not a number' } };
    return { content: [{ type: 'text', text: req.params.name }] };
  });
  return server;
}

const make = argv.includes('--quirks') ? quirksServer : toolServer;
process.stderr.write('fake-mcp: ready\n');

if (!argv.includes('--http')) {
  // --noise: a line on standard output that is no JSON-RPC message.
  if (argv.includes('--noise')) process.stdout.write('this is not a message\n');
  await make().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    record({
      event: 'http', method: req.method,
      headers: {
        host: req.headers.host ?? null, origin: req.headers.origin ?? null,
        authorization: req.headers.authorization ?? null,
        'mcp-protocol-version': req.headers['mcp-protocol-version'] ?? null,
        'mcp-session-id': req.headers['mcp-session-id'] ?? null,
      },
    });
    if (token && req.headers.authorization !== 'Bearer ' + token) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('no token');
      return;
    }
    let transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await make().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  httpServer.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${httpServer.address().port}/mcp` }) + '\n');
  });
  // Ends when its standard input does (the test's end of the pipe).
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
