import { describe, expect, test } from "bun:test";
import { admin } from "../support/harness.ts";
import { rawRequest } from "../support/raw-http.ts";
import { bearer, useWorld } from "../support/world.ts";

const t = useWorld();

const send = (key: string | null, phoneNumberId: string, init: RequestInit = {}) =>
  t.world.call(`/v21.0/${phoneNumberId}/messages`, {
    method: "POST",
    headers: {
      ...(key ? bearer(key) : {}),
      "content-type": "application/json",
      ...(init.headers as Record<string, string>),
    },
    body:
      init.body ?? JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });

/**
 * Asserts one of our errors exactly (docs/errors.md#the-envelope, docs/errors.md#proxy-errors) and that it carries no
 * RateLimit headers unless told.
 */
async function expectError(
  r: Response,
  status: number,
  type: string,
  code: number,
  message: string,
  rateLimited = false,
) {
  const id = r.headers.get("x-proxy-request-id");
  expect(id).toMatch(/^req_[0-9a-z]{20}$/);
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(await r.json()).toEqual({ error: { message, type, code, trace_id: id } });
  expect(r.headers.has("ratelimit-limit")).toBe(rateLimited);
}

const patch = (path: string, body: unknown) => admin(t.world.url, "PATCH", path, body);
/** A message POST that declares `length` bytes and sends only a few: fetch always sends the true length. */
async function declaring(key: string, phoneNumberId: string, length: number): Promise<Response> {
  const head = [
    `POST /v21.0/${phoneNumberId}/messages HTTP/1.1`,
    "Host: proxy",
    `Authorization: Bearer ${key}`,
    "Content-Type: application/json",
    `Content-Length: ${length}`,
  ].join("\r\n");
  const raw = await rawRequest(t.world.url, head, "{}");
  return new Response(raw.body, { status: raw.status, headers: raw.headers });
}
/**
 * Spends the number's 80 tokens at once, then sends until one is refused, and returns that 429. In
 * the scale-out mode the bucket is Redis's, which refills by the real clock while the burst runs.
 */
async function drain(phoneNumberId: string, key: string): Promise<{ burst: Response[]; refused: Response }> {
  const burst = await Promise.all(Array.from({ length: 80 }, () => send(key, phoneNumberId)));
  for (let i = 0; i < 100; i++) {
    const r = await send(key, phoneNumberId);
    if (r.status === 429) return { burst, refused: r };
  }
  throw new Error("the number's bucket never ran out");
}

describe("docs/errors.md#proxy-errors: each error, with its exact status, type, code and message", () => {
  test("401: missing, malformed, unknown and revoked keys", async () => {
    const auth = ["ProxyAuthException", 1001, "Invalid or missing API key."] as const;
    await expectError(await send(null, t.biz.phoneNumberId), 401, ...auth);
    for (const header of [
      "Bearer px_live_short",
      "Basic abc",
      `Bearer ${t.biz.liveKey.replace("px_live_", "px_prod_")}`,
      `Bearer px_live_${"A".repeat(32)}`,
      t.biz.liveKey,
    ]) {
      await expectError(
        await t.world.call(`/v21.0/${t.biz.phoneNumberId}/messages`, {
          method: "POST",
          headers: { authorization: header },
        }),
        401,
        ...auth,
      );
    }
    const keyId = (await (
      await admin(t.world.url, "POST", `/admin/accounts/${t.biz.accountId}/api-keys`, { mode: "live" })
    ).json()) as { id: string; key: string };
    expect((await send(keyId.key, t.biz.phoneNumberId)).status).toBe(200);
    await admin(t.world.url, "DELETE", `/admin/api-keys/${keyId.id}`);
    await expectError(await send(keyId.key, t.biz.phoneNumberId), 401, ...auth);
  });

  test("401: a test key on a non-sandbox number; a test key works on a sandbox number", async () => {
    await expectError(
      await send(t.biz.testKey, t.biz.phoneNumberId),
      401,
      "ProxyAuthException",
      1001,
      "Test keys only work with sandbox numbers.",
    );
    const sandbox = await t.world.number(t.biz.accountId, t.biz.wabaId, { kind: "sandbox" });
    expect((await send(t.biz.testKey, sandbox)).status).toBe(200);
    // A WABA with a live number is not a sandbox WABA.
    const templates = await t.world.call(`/v21.0/${t.biz.wabaId}/message_templates`, {
      headers: bearer(t.biz.testKey),
    });
    await expectError(templates, 401, "ProxyAuthException", 1001, "Test keys only work with sandbox numbers.");
  });

  test("402: no subscription, overdue, suspended", async () => {
    const billing = [
      ["none", "This account has no active subscription."],
      ["overdue", "Subscription payment is overdue."],
      ["suspended", "This account is suspended."],
    ] as const;
    for (const [status, message] of billing) {
      await patch(`/admin/accounts/${t.biz.accountId}`, { billing_status: status });
      await expectError(await send(t.biz.liveKey, t.biz.phoneNumberId), 402, "ProxyBillingException", 1002, message);
    }
    await patch(`/admin/accounts/${t.biz.accountId}`, { billing_status: "active" });
    expect((await send(t.biz.liveKey, t.biz.phoneNumberId)).status).toBe(200);
  });

  test("413: a declared body over 100 MB is refused before it is read, however large; a bad key's 401 comes first", async () => {
    for (const length of [100 * 1024 * 1024 + 1, 4 * 1024 * 1024 * 1024]) {
      const r = await declaring(t.biz.liveKey, t.biz.phoneNumberId, length);
      await expectError(r, 413, "ProxyPayloadTooLargeException", 1004, "Request body exceeds 100 MB.");
      await expectError(
        await declaring(`px_live_${"0".repeat(32)}`, t.biz.phoneNumberId, length),
        401,
        "ProxyAuthException",
        1001,
        "Invalid or missing API key.",
      );
    }
    expect(t.world.sim.requests.filter((q) => q.path.endsWith("/messages"))).toHaveLength(0);
  });

  test("422: each WABA and number condition", async () => {
    const notConnected = "ProxyNotConnectedException";
    for (const [status, message] of [
      ["disconnected", "Number disconnected."],
      ["restricted", "Number restricted."],
      ["flagged", "Number flagged."],
      ["not_registered", "Number not registered."],
    ]) {
      await patch(`/admin/numbers/${t.biz.phoneNumberId}`, { status });
      await expectError(await send(t.biz.liveKey, t.biz.phoneNumberId), 422, notConnected, 1005, message!);
    }
    await patch(`/admin/numbers/${t.biz.phoneNumberId}`, { status: "connected" });
    for (const [status, message] of [
      ["disconnected", "WABA disconnected."],
      ["token_revoked", "WABA token revoked."],
    ]) {
      await patch(`/admin/wabas/${t.biz.wabaId}`, { status });
      await expectError(await send(t.biz.liveKey, t.biz.phoneNumberId), 422, notConnected, 1005, message!);
      await expectError(
        await t.world.call(`/v21.0/${t.biz.wabaId}/message_templates`, { headers: bearer(t.biz.liveKey) }),
        422,
        notConnected,
        1005,
        message!,
      );
    }
  });

  test("429: over the number's limit, with Retry-After and RateLimit-Remaining 0, upstream not contacted", async () => {
    const before = t.world.sim.requests.length;
    const { burst, refused: r } = await drain(t.biz.phoneNumberId, t.biz.liveKey);
    expect(burst.every((a) => a.status === 200)).toBe(true);
    const allowed = t.world.sim.requests.length - before;
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.headers.get("ratelimit-remaining")).toBe("0");
    await expectError(r, 429, "ProxyThrottleException", 1006, "Rate limit reached for this number.", true);
    // Every call upstream saw was an allowed one (at least the 80), and the refused one went nowhere.
    expect(allowed).toBeGreaterThanOrEqual(80);
    expect(t.world.sim.requests.length - before).toBe(allowed);
  });
});

describe("docs/proxy.md#order-of-checks: a request failing two adjacent checks gets the earlier error", () => {
  test("1 shape before 2 key", async () => {
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}/messages/x`, { method: "POST" });
    expect(r.status).toBe(404);
  });

  test("2 key before 3 billing", async () => {
    await patch(`/admin/accounts/${t.biz.accountId}`, { billing_status: "suspended" });
    expect((await send(null, t.biz.phoneNumberId)).status).toBe(401);
    expect((await send(t.biz.liveKey, t.biz.phoneNumberId)).status).toBe(402);
  });

  test("3 billing before 4 ownership", async () => {
    await patch(`/admin/accounts/${t.biz.accountId}`, { billing_status: "overdue" });
    const other = await t.world.business();
    expect((await send(t.biz.liveKey, other.phoneNumberId)).status).toBe(402);
    expect((await t.world.call(`/v21.0/${t.biz.phoneNumberId}/media`, { headers: bearer(t.biz.liveKey) })).status).toBe(
      404,
    ); // shape fails first
  });

  test("4 ownership before 5 test key", async () => {
    const other = await t.world.business();
    expect((await send(t.biz.testKey, other.phoneNumberId)).status).toBe(404);
  });

  test("5 test key before 6 state", async () => {
    await patch(`/admin/numbers/${t.biz.phoneNumberId}`, { status: "flagged" });
    expect((await send(t.biz.testKey, t.biz.phoneNumberId)).status).toBe(401);
  });

  test("6 state before 7 declared size", async () => {
    await patch(`/admin/numbers/${t.biz.phoneNumberId}`, { status: "restricted" });
    const r = await declaring(t.biz.liveKey, t.biz.phoneNumberId, 150 * 1024 * 1024);
    expect(r.status).toBe(422);
  });

  test("7 declared size before 8 rate limit (and a 413 carries no RateLimit headers)", async () => {
    // Proven only when the bucket was still empty at the 413: a 429 right after says so (a bucket
    // refilling by the real clock, in the scale-out mode, may need another round).
    for (let round = 0; ; round++) {
      await drain(t.biz.phoneNumberId, t.biz.liveKey);
      const r = await declaring(t.biz.liveKey, t.biz.phoneNumberId, 150 * 1024 * 1024);
      expect(r.status).toBe(413);
      expect(r.headers.has("ratelimit-limit")).toBe(false);
      if ((await send(t.biz.liveKey, t.biz.phoneNumberId)).status === 429) break;
      expect(round).toBeLessThan(5);
    }
  });

  test("8 rate limit before 9 forward: a refused call never reaches a dead upstream", async () => {
    await t.world.sim.stop();
    // The allowed calls reach for the dead upstream (502); the refused one answers 429 without it.
    const { burst, refused } = await drain(t.biz.phoneNumberId, t.biz.liveKey);
    expect(new Set(burst.map((r) => r.status))).toEqual(new Set([502]));
    expect(refused.status).toBe(429);
  });
});
