/**
 * The benchmark's stand-in for an OpenTelemetry collector: answers OTLP/HTTP trace exports
 * (POST /v1/traces, JSON) as a collector does, reading every body whole, and counts the spans in
 * them (by their `"spanId":"` keys, without building the objects a real collector would). GET
 * /stats tells how many exports, bytes and spans it has had.
 */
const SPAN_KEY = Buffer.from('"spanId":"');
const stats = { exports: 0, bytes: 0, spans: 0 };

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  maxRequestBodySize: 256 * 1024 * 1024,
  async fetch(request) {
    if (request.method === "GET") return Response.json(stats);
    const body = Buffer.from(await request.arrayBuffer());
    stats.exports++;
    stats.bytes += body.length;
    for (let at = body.indexOf(SPAN_KEY); at !== -1; at = body.indexOf(SPAN_KEY, at + SPAN_KEY.length)) stats.spans++;
    return Response.json({});
  },
});
console.log(`listening ${server.port}`);
export {};
