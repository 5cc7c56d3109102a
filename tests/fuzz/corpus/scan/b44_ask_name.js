const readline = require('readline');

const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
rl.question('What is your name? ', (name) => {
  rl.question('How old are you? ', (age) => {
    const years = 100 - Number(age);
    console.log(`Hello ${name}, you will be 100 in ${years} years.`);
    rl.close();
  });
});
