/**
 * The benchmark's webhook receiver, run as its own process so that receiving 5,000 requests/s does
 * not compete with the sender for one event loop. Prints its port on the first stdout line.
 * GET /stats answers {count, cpuMs, arrivals: {event index: [epoch ms…]}}; GET /count just the count
 * of deliveries answered 200; GET /outage?ms=N answers every delivery 503 for the next N ms.
 */
let count = 0;
let outageUntil = 0;
const arrivals: Record<number, number[]> = {};
const epochNow = () => performance.timeOrigin + performance.now();

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (req.method === "GET") {
      const path = new URL(req.url).pathname;
      if (path === "/count") return new Response(String(count));
      if (path === "/outage") {
        outageUntil = performance.now() + Number(new URL(req.url).searchParams.get("ms"));
        return new Response("ok");
      }
      const cpu = process.cpuUsage();
      return Response.json({ count, cpuMs: (cpu.user + cpu.system) / 1000, arrivals });
    }
    const body = await req.text();
    if (performance.now() < outageUntil) return new Response("down", { status: 503 });
    const at = epochNow();
    const match = /wamid\.bench\.(\d+)\./.exec(body);
    if (match) (arrivals[Number(match[1])] ??= []).push(at);
    count++;
    return new Response("ok");
  },
});
console.log(server.port);
