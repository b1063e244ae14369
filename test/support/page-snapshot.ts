/**
 * Writes the HTML of every dashboard and console page to a directory, for diffing two trees
 * (`bun test/support/page-snapshot.ts /tmp/a` in each, then `diff -r`): the demo's data on a
 * seeded random and a manual clock, one message proxied and one inbound message relayed, then
 * every same-origin link under /dashboard and /operator followed from the two home pages (and
 * three pages no page links to), and the OpenAPI document.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seedDemo } from "../../src/demo/seed.ts";
import { startDemoReceiver } from "../../src/demo/receiver.ts";
import { seededRandom } from "../../src/runtime/random.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { startApp, testDeps } from "./harness.ts";

const out = process.argv[2];
if (!out) throw new Error("usage: bun test/support/page-snapshot.ts <out-dir>");
mkdirSync(out, { recursive: true });

// The simulator starts first (the app's upstream is its URL), so its webhooks find the app late.
let appUrl = "";
const sim = startSimulator({
  random: seededRandom(37),
  now: () => Date.UTC(2026, 0, 1),
  webhooks: {
    url: "/webhooks/upstream",
    schedule: (_ms, run) => run(),
    fetch: (input, init) => fetch(`${appUrl}${input}`, init),
  },
});
const deps = await testDeps({ env: { DEV_MODE: "1", UPSTREAM_URL: sim.url }, deps: { random: seededRandom(36) } });
const app = startApp(deps);
appUrl = app.url;
const receiver = startDemoReceiver({ print: () => {} });
const demo = await seedDemo({ ...deps, urlRules: app.app.relay.urlRules }, sim, receiver.url);

const sent = await fetch(`${app.url}/v22.0/${demo.numberId}/messages`, {
  method: "POST",
  headers: { authorization: `Bearer ${demo.liveKey}`, "content-type": "application/json" },
  body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "Hello" } }),
});
if (!sent.ok) throw new Error(`proxied send: ${sent.status} ${await sent.text()}`);
await sim.webhooksIdle();
await sim.inbound({ phoneNumberId: demo.numberId, text: "Hi" });
await sim.webhooksIdle();
await app.app.decorator.webhookRelay.dispatcher.tick();
await app.app.requestLog?.flush();
// The overview's event counts reach the store once a second otherwise: a race with the crawl.
await app.app.relay.events.flush();

async function cookie(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify(body),
  });
  if (res.status !== 204) throw new Error(`sign-in at ${path}: ${res.status} ${await res.text()}`);
  return res.headers.get("set-cookie")?.split(";")[0] ?? "";
}
const account = await cookie("/api/session", { email: demo.email, password: demo.password });
const operator = await cookie("/operator/session", { email: demo.operatorEmail, password: demo.operatorPassword });

// Ports, temporary directories and the upstream's measured latencies differ between runs; nothing else should.
const steady = (html: string) =>
  html
    .replaceAll(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT")
    .replaceAll(/switchboard-test-\w+/g, "switchboard-test-DIR")
    .replaceAll(/(Upstream latency \(ms\)<\/dt><dd>)[\d.]+/g, "$1N")
    .replaceAll(/(data-label="(?:Upstream|Duration)" class="num(?: small)?">)[\d.]+ ms/g, "$1N ms");
const seen = new Set<string>();
const queue = [
  "/dashboard",
  "/operator",
  "/dashboard/requests/lookup",
  `/dashboard/numbers/${demo.numberId}/coexistence`,
  `/dashboard/endpoints/${demo.endpointId}/recover`,
  // The OpenAPI document, written from the JSON APIs' route tables.
  "/docs/json",
];
while (queue.length > 0) {
  const path = queue.shift() ?? "";
  if (seen.has(path)) continue;
  seen.add(path);
  const res = await fetch(`${app.url}${path}`, {
    headers: { cookie: path.startsWith("/operator") ? operator : account },
    redirect: "manual",
  });
  const body = steady(await res.text());
  const location = res.headers.get("location");
  writeFileSync(join(out, `${encodeURIComponent(path)}.html`), `${res.status} ${location ?? ""}\n${body}`);
  if (location?.startsWith("/")) queue.push(location);
  for (const [, href] of body.matchAll(/href="(\/(?:dashboard|operator)[^"#]*)"/g))
    if (href && !seen.has(href)) queue.push(href.replaceAll("&amp;", "&"));
}
console.log(`${seen.size} pages in ${out}`);

await app.stop();
await sim.stop();
await receiver.stop();
await deps.cleanup();
