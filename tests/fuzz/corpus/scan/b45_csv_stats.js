const fs = require('fs');

const lines = fs.readFileSync('scores.csv', 'utf8').trim().split('\n');
const header = lines.shift().split(',');
const idx = header.indexOf('score');
const scores = lines.map((l) => Number(l.split(',')[idx])).filter((n) => !Number.isNaN(n));
const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
const sd = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length);
console.log({ count: scores.length, mean: mean.toFixed(2), sd: sd.toFixed(2) });
