// The report's browser: Debian's chromium through playwright-core, the copy
// pinned in tests/console (one npm tree for the project's browser tests),
// one JSON command per line on stdin, one JSON answer per line on stdout.
//   {"op":"open","page":"a","url":U}   a new page; what it does is recorded
//   {"op":"eval","page":"a","js":"expr"}   the value of an expression (awaited)
//   {"op":"wait","page":"a","js":"expr","timeout":ms}   until it is truthy
//   {"op":"record","page":"a"}   what the page did: every request, dialog,
//                                console message and uncaught error
//   {"op":"quit"}
import { createRequire } from 'node:module';
import readline from 'node:readline';

const require = createRequire(new URL('../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const args = ['--disable-gpu', '--no-first-run', '--no-default-browser-check'];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
const browser = await chromium.launch({
  executablePath: process.env.DESKHAND_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args,
});
const pages = {};
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

async function run(c) {
  const p = pages[c.page] && pages[c.page].page;
  switch (c.op) {
  case 'open': {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const rec = { requests: [], dialogs: [], console: [], errors: [] };
    page.on('request', (r) => rec.requests.push(r.url()));
    // A dialog would be a script that ran: recorded, then dismissed so
    // that the page goes on.
    page.on('dialog', (d) => { rec.dialogs.push(d.type() + ': ' + d.message()); d.dismiss(); });
    page.on('console', (m) => rec.console.push(m.text()));
    page.on('pageerror', (e) => rec.errors.push(String(e)));
    pages[c.page] = { page, rec };
    const r = await page.goto(c.url);
    await page.waitForLoadState('load');
    return { status: r ? r.status() : 0, url: page.url() };
  }
  case 'eval': return { value: await p.evaluate(c.js) };
  case 'wait': {
    // Polled with evaluate: the page's policy forbids the eval that
    // waitForFunction would use.
    const end = Date.now() + (c.timeout || 30000);
    for (;;) {
      let v;
      try { v = await p.evaluate(c.js); } catch (e) { v = undefined; }
      if (v) return { value: v };
      if (Date.now() > end) throw new Error('timed out waiting for: ' + c.js);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  case 'record': return { value: pages[c.page].rec };
  case 'quit': await browser.close(); process.exit(0);
  default: throw new Error('unknown op ' + c.op);
  }
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  try {
    out({ ok: true, ...(await run(JSON.parse(line))) });
  } catch (e) {
    out({ ok: false, error: String(e && e.message || e) });
  }
}
await browser.close();
