/**
 * The benchmark's fake upstream: a minimal Bun server (not the simulator, which records and
 * checks every request and would measure itself). It answers every call with a fixed message-send
 * answer and drains request bodies as they stream, so a 100 MB upload costs it no memory either.
 */
const answer = JSON.stringify({
  messaging_product: "chat",
  contacts: [{ input: "15550100", wa_id: "15550100" }],
  messages: [{ id: "wamid.HBgLMTU1NTAxMDAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA" }],
});
const headers = {
  "content-type": "application/json",
  "x-upstream-trace-id": "AbCdEfGh123",
  "x-app-usage": '{"call_count":1,"total_cputime":1,"total_time":1}',
};

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  maxRequestBodySize: 1024 * 1024 * 1024,
  idleTimeout: 255,
  async fetch(request) {
    const reader = request.body?.getReader();
    while (reader && !(await reader.read()).done);
    return new Response(answer, { headers });
  },
});
console.log(`listening ${server.port}`);
export {};
