// In-process cost of the proxy pipeline with a canned upstream (no sockets).
import { createProxy } from "../src/proxy/pipeline.ts";
import { MemoryLimiter } from "../src/limits/limiter.ts";
import { testDeps, startApp, admin } from "../test/support/harness.ts";
const answer = JSON.stringify({ messaging_product: "chat", messages: [{ id: "wamid.x" }] });
const canned = async () => new Response(answer, { headers: { "content-type": "application/json", "x-upstream-trace-id": "abc", "x-app-usage": "{}" } });
const deps = testDeps({ deps: { fetch: canned as any } });
const { url, stop } = startApp(deps);
const acc = await (await admin(url, "POST", "/admin/accounts", { name: "B", email: "b@example.com" })).json() as any;
const { key } = await (await admin(url, "POST", `/admin/accounts/${acc.id}/api-keys`, { mode: "live" })).json() as any;
await admin(url, "POST", `/admin/accounts/${acc.id}/wabas`, { waba_id: "900000000000001", access_token: "EAAG" });
const nums = Array.from({ length: 200 }, (_, i) => String(100_000_000_000_000 + i));
for (const n of nums) await admin(url, "POST", `/admin/accounts/${acc.id}/numbers`, { phone_number_id: n, waba_id: "900000000000001", kind: "embedded" });
await stop();
deps.store.directory.refresh?.();
const proxy = createProxy(deps, new MemoryLimiter(deps.clock));
const body = '{"messaging_product":"chat","to":"15550100","type":"text","text":{"body":"hello from wrk"}}';
const mk = (i: number) => new Request(`http://127.0.0.1:1/v21.0/${nums[i % nums.length]}/messages`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": String(body.length) }, body });
async function run(n: number, f: (r: Request) => Promise<Response>) {
  const reqs = Array.from({ length: n }, (_, i) => mk(i));
  const t = performance.now();
  let ok = 0; for (const r of reqs) { deps.clock.advance(1); const res = await f(r); if (res.status === 200) ok++; await res.arrayBuffer(); } if (ok < n) console.log('non-200', n - ok);
  return ((performance.now() - t) * 1000) / n;
}
const bare = async (r: Request) => { const up = await canned(); return new Response(up.body, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "" } }); };
for (let k = 0; k < 5; k++) {
  deps.clock.advance?.(10_000);
  const a = await run(20000, bare); const b = await run(20000, proxy);
  console.log(`bare ${a.toFixed(2)} us/call, proxy ${b.toFixed(2)} us/call, (status check) ${(await proxy(mk(1))).status}`);
}
deps.cleanup();
