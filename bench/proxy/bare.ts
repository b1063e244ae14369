/**
 * Rows (c) and (w): the floor of what our runtime costs, a few lines of Bun fetch with no checks at
 * all. BODY=stream (row c) hands the caller's body to fetch as a stream; BODY=whole (row w) reads
 * it whole first, as Switchboard does for a body declaring at most PROXY_BODY_BUFFER_BYTES.
 * CLIENT=socket (with BODY=whole) calls upstream with bench/proxy/socket-client.ts instead of
 * fetch: issue 40 item 6's experiment (bench/proxy/socket-floor.ts). ANSWER=whole (with BODY=whole,
 * row v of bench/proxy/threads.ts) reads upstream's answer whole and answers with those bytes, as
 * Switchboard does for a send's answer when the request log reads its message id.
 */
import { socketFetch } from "./socket-client.ts";

const upstream = process.env.UPSTREAM_URL!;
const whole = process.env.BODY === "whole";
const answerWhole = process.env.ANSWER === "whole";
const client = process.env.CLIENT === "socket" ? (socketFetch as typeof fetch) : fetch;
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  maxRequestBodySize: 200 * 1024 * 1024,
  async fetch(request) {
    const url = new URL(request.url);
    const response = await client(upstream + url.pathname + url.search, {
      method: request.method,
      headers: {
        "content-type": request.headers.get("content-type") ?? "application/json",
        authorization: "Bearer upstream-token",
      },
      body: whole ? await request.arrayBuffer() : request.body,
      duplex: "half",
      decompress: false,
      redirect: "manual",
    } as RequestInit);
    return new Response(answerWhole ? await response.bytes() : response.body, {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "" },
    });
  },
});
console.log(`listening ${server.port}`);
