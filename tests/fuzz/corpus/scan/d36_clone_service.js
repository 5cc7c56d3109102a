const express = require('express');
const { exec } = require('child_process');

const app = express();
app.get('/clone', (req, res) => {
  const repo = req.query.repo;
  exec(`git clone ${repo} /srv/repos/latest`, (err, stdout, stderr) => {
    if (err) return res.status(500).send(stderr);
    res.send('cloned');
  });
});
app.listen(3000);
