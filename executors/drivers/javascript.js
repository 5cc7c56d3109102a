// deskhand's JavaScript driver: runs blocks read from fd 3 in this one
// global context (like consecutive <script> tags) and reports
// "MARKER STATUS" on fd 4 after each. A block whose value is a promise is
// awaited; a block using top-level await runs wrapped in an async function.
(function () {
  const fs = require('fs');
  const net = require('net');
  const util = require('util');
  const vm = require('vm');
  let n = 0;
  let pending = Buffer.alloc(0);
  let busy = false;
  let onInterrupt = null;

  // An error's stack, cut where this driver's own frames begin.
  const describe = (e) => {
    if (!e || !e.stack) return util.inspect(e);
    const lines = String(e.stack).split('\n');
    const cut = lines.findIndex((l) => /^\s+at (sigintHandlersWrap|Script\.runInThisContext|new Script|run \(\[eval\])/.test(l));
    return (cut > 0 ? lines.slice(0, cut) : lines).join('\n');
  };
  // Output goes straight to the descriptors. Node's stream objects keep
  // state across a write (a "writing" flag, a buffer): an interrupt landing
  // inside console.log would leave it half-done, and every later line of
  // the session would wait in memory, never written. A direct write either
  // happened or not; nothing is left behind.
  const direct = (fd) => function (chunk, encoding, callback) {
    if (typeof encoding === 'function') { callback = encoding; encoding = undefined; }
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : chunk;
    for (let off = 0; off < bytes.length;) {
      try {
        off += fs.writeSync(fd, bytes, off, bytes.length - off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  };
  process.stdout.write = direct(1);
  process.stderr.write = direct(2);
  process.on('SIGINT', () => { if (onInterrupt) onInterrupt(); });
  process.on('uncaughtException', (e) => { process.stderr.write(describe(e) + '\n'); });
  process.on('unhandledRejection', (e) => {
    process.stderr.write('Unhandled promise rejection: ' + describe(e) + '\n');
  });

  const interrupted = (e) => e && (e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED' ||
                                   e.deskhandInterrupt === true);

  async function run(src) {
    const filename = `<block ${++n}>`;
    try {
      // Compiling shows the offending line under a SyntaxError; running
      // does not decorate errors with the driver's own source.
      let script;
      try {
        script = new vm.Script(src, { filename });
      } catch (e) {
        if (!(e instanceof SyntaxError) || !/await is only valid/.test(e.message)) throw e;
        script = new vm.Script(`(async () => {\n${src}\n})()`, { filename, lineOffset: -1 });
      }
      let value = script.runInThisContext({ displayErrors: false, breakOnSigint: true });
      if (value && typeof value.then === 'function') {
        value = await new Promise((resolve, reject) => {
          onInterrupt = () => reject(Object.assign(new Error('Interrupted'),
                                                   { deskhandInterrupt: true }));
          value.then(resolve, reject);
        }).finally(() => { onInterrupt = null; });
      }
      if (value !== undefined) process.stdout.write(util.inspect(value) + '\n');
      return 0;
    } catch (e) {
      if (interrupted(e)) {
        process.stderr.write('Interrupted\n');
        return 130;
      }
      process.stderr.write(describe(e) + '\n');
      return 1;
    }
  }

  function pump() {
    if (busy) return;
    // Empty lines are deskhand's tokens: it looks whether we wait here.
    let skip = 0;
    while (skip < pending.length && pending[skip] === 10) skip++;
    if (skip > 0) pending = pending.subarray(skip);
    const nl = pending.indexOf(10);
    if (nl < 0) return;
    const [marker, sizeText] = pending.subarray(0, nl).toString('latin1').split(' ');
    const size = Number(sizeText);
    if (pending.length < nl + 1 + size) return;
    const src = pending.subarray(nl + 1, nl + 1 + size).toString('utf8');
    pending = pending.subarray(nl + 1 + size);
    busy = true;
    run(src).then((status) => {
      fs.writeSync(4, `${marker} ${status}\n`);
      busy = false;
      pump();
    });
  }

  const blocks = new net.Socket({ fd: 3, readable: true, writable: false });
  blocks.on('data', (d) => { pending = Buffer.concat([pending, d]); pump(); });
  blocks.on('end', () => process.exit(0));
  blocks.on('error', () => process.exit(70));
})();
