const express = require('express');
const app = express();
app.use(express.json());

const items = [];
app.get('/api/items', (req, res) => res.json(items));
app.post('/api/items', (req, res) => {
  const item = { id: items.length + 1, ...req.body };
  items.push(item);
  res.status(201).json(item);
});
app.listen(3000, () => console.log('listening on http://localhost:3000'));
