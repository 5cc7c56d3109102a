const fs = require('fs');
const path = require('path');

const dir = path.join(__dirname, 'data');
const merged = [];
for (const name of fs.readdirSync(dir)) {
  if (!name.endsWith('.json')) continue;
  const records = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
  merged.push(...records);
}
fs.writeFileSync('merged.json', JSON.stringify(merged, null, 2));
console.log(`merged ${merged.length} records`);
