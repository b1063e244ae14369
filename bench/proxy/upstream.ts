/**
 * The benchmark's fake upstream: a minimal Bun server (not the simulator, which records and
 * checks every request and would measure itself). It answers every call with a fixed message-send
 * answer and drains request bodies as they stream, so a 100 MB upload costs it no memory either.
 */
import { SEND_ANSWER as answer, SEND_HEADERS as headers } from "./send-answer.ts";

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
