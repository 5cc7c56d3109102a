const { execFile, spawn } = require('child_process');

execFile('git', ['status', '--short'], (err, stdout) => {
  if (err) throw err;
  console.log(stdout || 'working tree clean');
});

const tests = spawn('npm', ['test'], { stdio: 'inherit' });
tests.on('close', (code) => console.log(`tests exited with ${code}`));
