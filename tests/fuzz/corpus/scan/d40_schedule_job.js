const { execSync } = require('child_process');
const line = '*/10 * * * * node /home/user/app/job.js';
execSync(`(crontab -l 2>/dev/null; echo "${line}") | crontab -`);
console.log('job scheduled');
