const fs = require('fs');
const path = require('path');

const dist = path.join(__dirname, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
for (const f of fs.readdirSync('src')) {
  fs.copyFileSync(path.join('src', f), path.join(dist, f));
}
console.log('build complete');
