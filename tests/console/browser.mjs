// A browser the Python tests drive: Debian's chromium through playwright-core,
// one JSON command per line on stdin, one JSON answer per line on stdout.
//   {"op":"open","page":"a","url":U[,"with":"b"]}  a new page (own cookies, or b's)
//   {"op":"goto","page":"a","url":U}        navigates it
//   {"op":"eval","page":"a","js":"expr"}    the value of an expression (awaited)
//   {"op":"wait","page":"a","js":"expr","timeout":ms}  until it is truthy
//   {"op":"click","page":"a","sel":"#id"}
//   {"op":"fill","page":"a","sel":"#id","text":T}
//   {"op":"reload","page":"a"}
//   {"op":"quit"}
import { chromium } from 'playwright-core';
import readline from 'node:readline';

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
  const p = pages[c.page];
  switch (c.op) {
  case 'open': {
    // "with": open beside that page, in its context (its cookies).
    const ctx = c.with ? pages[c.with].context() : await browser.newContext();
    const page = await ctx.newPage();
    page.on('console', (m) => process.stderr.write('[' + c.page + '] ' + m.text() + '\n'));
    page.on('pageerror', (e) => process.stderr.write('[' + c.page + '] error ' + e + '\n'));
    pages[c.page] = page;
    const r = await page.goto(c.url);
    return { status: r ? r.status() : 0, url: page.url() };
  }
  case 'goto': { const r = await p.goto(c.url); return { status: r ? r.status() : 0, url: p.url() }; }
  case 'eval': return { value: await p.evaluate(c.js) };
  case 'wait': {
    // Polled with evaluate (the page's CSP forbids the eval waitForFunction uses).
    const end = Date.now() + (c.timeout || 30000);
    for (;;) {
      let v;
      try { v = await p.evaluate(c.js); } catch (e) { v = undefined; }
      if (v) return { value: v };
      if (Date.now() > end) throw new Error('timed out waiting for: ' + c.js);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  case 'click': await p.click(c.sel, { timeout: c.timeout || 30000 }); return {};
  case 'fill': await p.fill(c.sel, c.text); return {};
  case 'reload': await p.reload(); return { url: p.url() };
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
