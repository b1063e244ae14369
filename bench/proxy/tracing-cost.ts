#!/usr/bin/env bun
/**
 * What tracing adds to one proxied call, without the noise of a whole load test: the CPU this
 * process spends making a call's spans (ProxyCallTrace, exactly as the proxy drives it) and
 * exporting them with the real OTLP/HTTP exporter to the collector stand-in (bench/proxy/collector.ts,
 * its own process), per call, at several sampling ratios, with each span detail (OTEL_SPAN_DETAIL:
 * `call`, one span a call, and `full`, four). Compare with the proxy's own CPU per call in
 * run.ts's row (d).
 *
 *   bun bench/proxy/tracing-cost.ts        (CALLS=200000 RATE=10000 by default)
 */
import { resolve } from "node:path";
import { createTracing } from "../../src/observability/tracing-sdk.ts";
import { proxyCallTracer } from "../../src/proxy/call-trace.ts";
import { allowList } from "../../src/proxy/allow-list.ts";
import { platformNames } from "../../src/platform/names.ts";
import { SPAN_DETAILS, type SpanDetail } from "../../src/config/config.ts";

const ROOT = resolve(import.meta.dir, "../..");
const CALLS = Number(process.env.CALLS ?? 200_000);
/** Calls a second: about what one Switchboard serves on this machine (bench/RESULTS.md), so the exporter keeps up as it does there. */
const RATE = Number(process.env.RATE ?? 10_000);

const port = await (async () => {
  const socket = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const free = socket.port;
  socket.stop(true);
  return free;
})();
const collector = Bun.spawn([process.execPath, "bench/proxy/collector.ts"], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port) },
  stdout: "ignore",
  stderr: "inherit",
});
const collectorUrl = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try {
    await fetch(`${collectorUrl}/stats`);
    break;
  } catch {
    await Bun.sleep(50);
  }
}

const request = new Request("http://127.0.0.1:8080/v21.0/100000000000001/messages", {
  method: "POST",
  headers: { authorization: "Bearer px_live_x", "content-type": "application/json" },
});
const route = allowList(platformNames())[0]!;
const decision = { allowed: true, limit: 80, remaining: 79, resetSeconds: 1, retryAfterSeconds: null };

/**
 * Makes `calls` calls' spans at this ratio (null: tracing off, the pacing alone) and detail, and
 * exports them; the CPU it took, in µs per call.
 */
async function run(ratio: number | null, calls: number, detail: SpanDetail = "call"): Promise<number> {
  const tracing =
    ratio === null
      ? undefined
      : createTracing({
          url: `${collectorUrl}/v1/traces`,
          serviceName: "bench",
          sampler: "parentbased_traceidratio",
          ratio,
          detail,
        });
  const start = proxyCallTracer(tracing, "http://127.0.0.1:9000");
  const before = process.cpuUsage();
  const began = performance.now();
  for (let i = 0; i < calls; i++) {
    const trace = start?.(request, "/v21.0/100000000000001/messages", `req_${i}`);
    trace?.checked(route);
    trace?.limited("number:100000000000001", decision);
    trace?.end(200, { code: null, error: null });
    // Paced at RATE: the exporter's timers and requests run in between, as they would between requests.
    if (i % 100 === 99) await Bun.sleep(Math.max(0, began + ((i + 1) * 1000) / RATE - performance.now()));
  }
  await tracing?.shutdown();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

try {
  console.log(
    `${CALLS} calls at ${RATE}/s per row; CPU of this process per call, less that of the same loop with tracing off`,
  );
  await run(null, 20_000);
  const off = await run(null, CALLS);
  console.log(`tracing off: ${off.toFixed(2)} µs per call (the loop and its pacing alone)`);
  for (const detail of SPAN_DETAILS) {
    for (const ratio of [0, 0.01, 0.1, 1]) {
      await run(ratio, 20_000, detail); // warm-up
      const before = ((await (await fetch(`${collectorUrl}/stats`)).json()) as { spans: number }).spans;
      const us = await run(ratio, CALLS, detail);
      const spans = ((await (await fetch(`${collectorUrl}/stats`)).json()) as { spans: number }).spans - before;
      console.log(
        `span detail ${detail}, sampled at ${ratio}: +${(us - off).toFixed(2)} µs per call; the collector received ${(spans / CALLS).toFixed(2)} spans per call`,
      );
    }
  }
} finally {
  collector.kill();
  await collector.exited;
}
