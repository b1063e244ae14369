/** Row (c): the floor of what our runtime costs, a few lines of Bun fetch with no checks at all. */
const upstream = process.env.UPSTREAM_URL!;
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
      body: request.body,
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
