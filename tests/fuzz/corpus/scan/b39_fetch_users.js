async function main() {
  const res = await fetch('https://jsonplaceholder.typicode.com/users');
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const users = await res.json();
  for (const u of users) {
    console.log(`${u.name.padEnd(25)} ${u.email}`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
