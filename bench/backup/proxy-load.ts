/**
 * The backup bench's proxy load, in a process of its own so that it does not share an event loop
 * with the events' sender: CONCURRENCY loops send messages through Switchboard's proxy as fast as
 * the answers come, spread over the numbers given (each stays under its 80/s bucket). Every 100 ms
 * it prints "<epoch ms> <answers so far> <errors so far>"; an answer other than 200 is an error.
 *   bun bench/backup/proxy-load.ts BASE_URL API_KEY CONCURRENCY NUMBER…
 */
const [base, key, concurrency, ...numbers] = process.argv.slice(2);
const body = JSON.stringify({
  messaging_product: "chat",
  to: "15550100",
  type: "text",
  text: { body: "hello from the backup bench" },
});
let answers = 0;
let errors = 0;
let next = 0;
setInterval(() => console.log(`${performance.timeOrigin + performance.now()} ${answers} ${errors}`), 100);
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    for (;;) {
      const number = numbers[next++ % numbers.length];
      try {
        const response = await fetch(`${base}/v21.0/${number}/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 200) answers++;
        else errors++;
      } catch {
        errors++;
      }
    }
  }),
);
export {};
