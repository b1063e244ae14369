/**
 * Rows (c) and (w): the floor of what our runtime costs, a few lines of Bun fetch with no checks at
 * all. BODY=stream (row c) hands the caller's body to fetch as a stream; BODY=whole (row w) reads
 * it whole first, as Switchboard does for a body declaring at most PROXY_BODY_BUFFER_BYTES.
 */
const upstream = process.env.UPSTREAM_URL!;
const whole = process.env.BODY === "whole";
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  maxRequestBodySize: 200 * 1024 * 1024,
  async fetch(request) {
    const url = new URL(request.url);
    const response = await fetch(upstream + url.pathname + url.search, {
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
    return new Response(response.body, {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "" },
    });
  },
});
console.log(`listening ${server.port}`);
export {};
