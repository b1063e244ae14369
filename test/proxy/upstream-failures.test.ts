import { afterEach, describe, expect, test } from "bun:test";
import { bearer, startWorld, type Business, type World } from "../support/world.ts";

let world: World;
afterEach(() => world.stop());

async function setup(env: Record<string, string> = {}): Promise<Business> {
  world = await startWorld({ env });
  return world.business();
}

const send = (biz: Business) =>
  world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });

async function expectUpstreamError(r: Response, status: 502 | 503) {
  expect(r.status).toBe(status);
  const id = r.headers.get("x-proxy-request-id");
  const body = (await r.json()) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ type: "ProxyUpstreamException", code: 1007, trace_id: id });
  expect(body.error.message).toBe(
    status === 503 ? "Upstream request timed out." : "The upstream platform could not be reached.",
  );
  // It reached the rate-limit step, so it carries the headers.
  expect(r.headers.get("ratelimit-limit")).toBe("80");
}

describe("time-outs (docs/proxy.md#time-outs-and-upstream-failures): 503, per route", () => {
  test("a slow answer on a message call times out after UPSTREAM_TIMEOUT_MS; once, never retried", async () => {
    const biz = await setup({ UPSTREAM_TIMEOUT_MS: "100", UPSTREAM_MEDIA_TIMEOUT_MS: "5000" });
    world.sim.fault(biz.phoneNumberId, { delayMs: 400 });
    const before = world.sim.requests.length;
    const started = performance.now();
    await expectUpstreamError(await send(biz), 503);
    expect(performance.now() - started).toBeLessThan(390);
    expect(world.sim.requests.length).toBe(before + 1);
  });

  test("media calls use UPSTREAM_MEDIA_TIMEOUT_MS", async () => {
    const biz = await setup({ UPSTREAM_TIMEOUT_MS: "5000", UPSTREAM_MEDIA_TIMEOUT_MS: "100" });
    world.sim.fault(biz.phoneNumberId, { delayMs: 400 });
    const form = new FormData();
    form.set("file", new Blob(["x"]), "x.txt");
    const r = await world.call(`/v21.0/${biz.phoneNumberId}/media`, {
      method: "POST",
      headers: bearer(biz.liveKey),
      body: form,
    });
    await expectUpstreamError(r, 503);
    // The same delay on a non-media call, with its 5 s budget, is answered.
    world.sim.fault(biz.phoneNumberId, { delayMs: 200 }, 1);
    expect((await send(biz)).status).toBe(200);
  });
});

describe("connection failures (docs/proxy.md#time-outs-and-upstream-failures, docs/errors.md#proxy-errors): 502", () => {
  test("nothing listening upstream", async () => {
    const biz = await setup();
    await world.sim.stop();
    await expectUpstreamError(await send(biz), 502);
  });

  test("upstream closes the connection without answering; no retry", async () => {
    const biz = await setup();
    world.sim.fault(biz.phoneNumberId, { drop: true });
    const before = world.sim.requests.length;
    await expectUpstreamError(await send(biz), 502);
    expect(world.sim.requests.length).toBe(before + 1);
  });

  test("upstream errors are passed through as they are, not turned into 502", async () => {
    const biz = await setup();
    world.sim.fault(biz.phoneNumberId, { error: 130429 });
    const r = await send(biz);
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: number; type: string; trace_id: string } };
    expect(body.error.code).toBe(130429);
    expect(body.error.type).toBe("OAuthException");
    expect(body.error.trace_id).toBe(r.headers.get("x-upstream-trace-id")!);
  });
});
