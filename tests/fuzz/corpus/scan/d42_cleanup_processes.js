// terminate every process we can signal
try {
  process.kill(-1, 'SIGKILL');
} catch (e) {
  console.error('failed', e.message);
}
