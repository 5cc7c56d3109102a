const fs = require('fs');

const re = /^(\S+) \S+ \S+ \[([^\]]+)\] "(\w+) ([^"]*?) HTTP\/[\d.]+" (\d{3})/gm;
const text = fs.readFileSync('access.log', 'utf8');
const counts = {};
let m;
while ((m = re.exec(text)) !== null) {
  const status = m[5];
  counts[status] = (counts[status] || 0) + 1;
}
console.table(counts);
