import { afterEach, describe, expect, test } from "bun:test";
import { admin } from "../support/harness.ts";
import { rawRequest } from "../support/raw-http.ts";
import { bearer, startWorld, type Business, type World } from "../support/world.ts";
import { createAccount, signInCookie } from "../dashboard/support.ts";

// Issue 19, items 1, 2 and 4: the request log of proxied calls (every field), its API with
// filters, lookup by request id and the words for an error, usage per number, retention, and
// another account's ids.

let world: World;
afterEach(() => world.stop());

const V = "/v21.0";
const HOUR = 3_600_000;

interface Logged {
  id: string;
  at: string;
  api_key_id: string;
  api_key_name: string | null;
  method: string;
  route: string | null;
  phone_number_id: string | null;
  waba_id: string | null;
  status: number;
  error_code: number | null;
  upstream_status: number | null;
  upstream_error_code: number | null;
  upstream_error_subcode: number | null;
  upstream_ms: number | null;
  request_bytes: number | null;
  response_bytes: number | null;
  message_id: string | null;
  explanation: string | null;
}

/** A business with a dashboard login (the log is read through the session API). */
async function setUp(env: Record<string, string> = {}, throughput: "STANDARD" | "HIGH" = "STANDARD") {
  world = await startWorld({ env });
  const login = await createAccount(world.url, `Log ${Math.random().toString(36).slice(2, 8)}`);
  let cookie = await signInCookie(world.url, login);
  const keyBody = (await (
    await admin(world.url, "POST", `/admin/accounts/${login.id}/api-keys`, { mode: "live", name: "Orders service" })
  ).json()) as { id: string; key: string };
  const { wabaId } = await world.waba(login.id);
  const phoneNumberId = await world.number(login.id, wabaId, { throughput });
  const biz: Pick<Business, "accountId" | "wabaId" | "phoneNumberId" | "liveKey"> = {
    accountId: login.id,
    wabaId,
    phoneNumberId,
    liveKey: keyBody.key,
  };
  const api = async (path: string) => {
    let r = await fetch(`${world.url}${path}`, { headers: { cookie } });
    // A test that moves the clock a day on outlives its session: sign in again.
    if (r.status === 401) {
      cookie = await signInCookie(world.url, login);
      r = await fetch(`${world.url}${path}`, { headers: { cookie } });
    }
    return {
      status: r.status,
      body: (await r.json()) as { data: Logged[]; next_cursor: string | null } & Logged & { error: { code: string } },
    };
  };
  const send = (body = { messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }) =>
    world.call(`${V}/${phoneNumberId}/messages`, {
      method: "POST",
      headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const flush = () => world.app().requestLog!.flush();
  return { biz, keyId: keyBody.id, cookie, api, send, flush };
}

describe("request log: every field of a call", () => {
  test("a forwarded send: route, number, WABA, statuses, sizes, latency and the message id upstream gave it", async () => {
    const t = await setUp();
    const r = await t.send();
    expect(r.status).toBe(200);
    const answer = (await r.json()) as { messages: { id: string }[] };
    const requestId = r.headers.get("x-proxy-request-id")!;
    await t.flush();
    const { body } = await t.api(`/api/requests/${requestId}`);
    expect(body).toMatchObject({
      id: requestId,
      at: new Date(world.deps.clock.now()).toISOString(),
      api_key_id: t.keyId,
      api_key_name: "Orders service",
      method: "POST",
      route: "POST /{version}/{phone_number_id}/messages",
      phone_number_id: t.biz.phoneNumberId,
      waba_id: t.biz.wabaId,
      status: 200,
      error_code: null,
      upstream_status: 200,
      upstream_error_code: null,
      upstream_error_subcode: null,
      message_id: answer.messages[0]!.id,
      explanation: null,
    });
    expect(body.request_bytes).toBeGreaterThan(40);
    expect(body.response_bytes).toBe(Number(r.headers.get("content-length")));
    expect(body.upstream_ms).toBeGreaterThanOrEqual(0);
    // The key itself is never in the log.
    expect(JSON.stringify(body)).not.toContain(t.biz.liveKey);
  });

  test("an upstream error: its status, error code and subcode, and what it means", async () => {
    const t = await setUp();
    world.sim.fault(t.biz.phoneNumberId, { error: 368 }, 1);
    const r = await t.send();
    expect(r.status).toBe(400);
    await r.arrayBuffer();
    await t.flush();
    const { body } = await t.api(`/api/requests/${r.headers.get("x-proxy-request-id")}`);
    expect(body).toMatchObject({
      status: 400,
      error_code: null,
      upstream_status: 400,
      upstream_error_code: 368,
      upstream_error_subcode: 1390008,
      message_id: null,
    });
    expect(body.explanation).toContain("blocked the number for a while");
  });

  test("our own errors after the key is known (404, 422, 413) and a 429, each with its code and words; calls without a valid key are not logged", async () => {
    const t = await setUp();
    const ids: Record<string, string> = {};
    const other = await world.call(`${V}/123456789/messages`, {
      method: "POST",
      headers: { ...bearer(t.biz.liveKey), "content-type": "application/json" },
      body: "{}",
    });
    ids["404"] = other.headers.get("x-proxy-request-id")!;
    // fetch always sends the true length: a declared 101 MB goes over a raw socket.
    const head = [
      `POST ${V}/${t.biz.phoneNumberId}/media HTTP/1.1`,
      "Host: proxy",
      `Authorization: Bearer ${t.biz.liveKey}`,
      `Content-Length: ${101 * 1024 * 1024}`,
    ].join("\r\n");
    ids["413"] = (await rawRequest(world.url, head, "x")).headers["x-proxy-request-id"]!;
    // The number's 80 at once, then until one is refused (in the scale-out mode Redis refills by the real clock meanwhile).
    await Promise.all(Array.from({ length: 80 }, async () => (await t.send()).arrayBuffer()));
    let limited: Response | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const r = await t.send();
      await r.arrayBuffer();
      if (r.status === 429) limited = r;
    }
    ids["429"] = limited!.headers.get("x-proxy-request-id")!;
    expect(
      (await admin(world.url, "PATCH", `/admin/numbers/${t.biz.phoneNumberId}`, { status: "restricted" })).status,
    ).toBe(200);
    const blocked = await t.send();
    ids["422"] = blocked.headers.get("x-proxy-request-id")!;
    const unknown = await world.call(`${V}/${t.biz.phoneNumberId}/messages`, {
      method: "POST",
      headers: bearer("px_live_not_a_key"),
      body: "{}",
    });
    await t.flush();

    const expected: Record<string, { status: number; error_code: number; words: string }> = {
      "404": { status: 404, error_code: 1003, words: "does not belong to this account" },
      "413": { status: 413, error_code: 1004, words: "over 100 MB" },
      "429": { status: 429, error_code: 1006, words: "rate limit was reached" },
      "422": { status: 422, error_code: 1005, words: "not connected" },
    };
    for (const [name, id] of Object.entries(ids)) {
      const { body } = await t.api(`/api/requests/${id}`);
      expect(body).toMatchObject({
        status: expected[name]!.status,
        error_code: expected[name]!.error_code,
        upstream_status: null,
      });
      expect(body.response_bytes).toBeGreaterThan(80);
      expect(body.explanation).toContain(expected[name]!.words);
    }
    expect((await t.api(`/api/requests/${unknown.headers.get("x-proxy-request-id")}`)).status).toBe(404);
  });
});

describe("GET /api/requests", () => {
  test("newest first, keyset pages, filters by number, status class, error code, key and time; lookup by id as pasted", async () => {
    const t = await setUp();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.send();
      await r.arrayBuffer();
      sent.push(r.headers.get("x-proxy-request-id")!);
      world.deps.clock.advance(1000);
    }
    world.sim.fault(t.biz.phoneNumberId, { error: 131031 }, 1);
    const failed = await t.send();
    await failed.arrayBuffer();
    await t.flush();

    const all = (await t.api("/api/requests?limit=4")).body;
    expect(all.data.map((r) => r.id)).toEqual([failed.headers.get("x-proxy-request-id")!, ...sent.slice(2).reverse()]);
    const next = (await t.api(`/api/requests?limit=4&cursor=${all.next_cursor}`)).body;
    expect(next.data.map((r) => r.id)).toEqual(sent.slice(0, 2).reverse());
    expect(next.next_cursor).toBeNull();

    expect((await t.api("/api/requests?status=4xx")).body.data.map((r) => r.upstream_error_code)).toEqual([131031]);
    expect((await t.api("/api/requests?error_code=131031")).body.data).toHaveLength(1);
    expect((await t.api("/api/requests?status=2xx")).body.data).toHaveLength(5);
    expect((await t.api(`/api/requests?number=${t.biz.phoneNumberId}&api_key_id=${t.keyId}`)).body.data).toHaveLength(
      6,
    );
    expect((await t.api("/api/requests?number=999")).body.data).toHaveLength(0);
    const third = new Date(Date.parse((await t.api(`/api/requests/${sent[2]}`)).body.at)).toISOString();
    expect((await t.api(`/api/requests?to=${encodeURIComponent(third)}`)).body.data.map((r) => r.id)).toEqual(
      sent.slice(0, 2).reverse(),
    );
    expect((await t.api(`/api/requests/${encodeURIComponent(` "${sent[0]}" `)}`)).body.id).toBe(sent[0]!);
    expect((await t.api("/api/requests?from=yesterday")).status).toBe(400);
    // Whole numbers an integer column holds: a fraction or 10^36 reached the database and answered 500.
    for (const bad of ["limit=1.5", "error_code=1.5", `error_code=${"9".repeat(37)}`])
      expect((await t.api(`/api/requests?${bad}`)).status).toBe(400);
  });

  test("another account's request ids answer 404; the log keeps the account's retention and is purged with it", async () => {
    const t = await setUp();
    const r = await t.send();
    await r.arrayBuffer();
    const id = r.headers.get("x-proxy-request-id")!;
    await t.flush();
    const stranger = await createAccount(world.url, "Stranger");
    const cookie = await signInCookie(world.url, stranger);
    expect((await fetch(`${world.url}/api/requests/${id}`, { headers: { cookie } })).status).toBe(404);
    expect(
      ((await (await fetch(`${world.url}/api/requests`, { headers: { cookie } })).json()) as { data: unknown[] }).data,
    ).toHaveLength(0);

    world.deps.clock.advance(23 * HOUR);
    await world.app().retention.run();
    expect((await t.api(`/api/requests/${id}`)).status).toBe(200);
    world.deps.clock.advance(2 * HOUR);
    await world.app().retention.run();
    expect((await t.api(`/api/requests/${id}`)).status).toBe(404);
  });

  test("REQUEST_LOG=0 keeps no log; a full buffer drops records, counts them, and the calls pass", async () => {
    const off = await setUp({ REQUEST_LOG: "0" });
    expect(world.app().requestLog).toBeNull();
    expect((await off.send()).status).toBe(200);
    await world.stop();

    // 115 sends at once: a number whose bucket holds them (the scale-out mode's refills by the real clock).
    const t = await setUp({ REQUEST_LOG_BUFFER: "100" }, "HIGH");
    for (let i = 0; i < 70; i++) await (await t.send()).arrayBuffer();
    world.deps.clock.advance(1000);
    for (let i = 0; i < 45; i++) expect((await t.send()).status).toBe(200);
    await t.flush();
    const metrics = await (await world.call("/metrics")).text();
    expect(metrics).toMatch(/switchboard_request_log_dropped_total 15\b/);
    expect((await t.api("/api/requests?limit=200")).body.data).toHaveLength(100);
  });
});

describe("usage per number (GET /admin/usage)", () => {
  test("per hour: calls forwarded by row, upstream errors by code, our refusals by code", async () => {
    const t = await setUp();
    const hour = Math.floor(world.deps.clock.now() / HOUR) * HOUR;
    for (let i = 0; i < 3; i++) await (await t.send()).arrayBuffer();
    await (
      await world.call(`${V}/${t.biz.phoneNumberId}?fields=throughput`, { headers: bearer(t.biz.liveKey) })
    ).arrayBuffer();
    world.sim.fault(t.biz.phoneNumberId, { error: 131031 }, 1);
    await (await t.send()).arrayBuffer();
    // Refusals of ours on the number: 422 once it is not connected (131031 has just restricted it).
    await Bun.sleep(20);
    for (let i = 0; i < 2; i++) await (await t.send()).arrayBuffer();
    await t.flush();

    const from = new Date(hour).toISOString();
    const res = await admin(world.url, "GET", `/admin/usage?account_id=${t.biz.accountId}&from=${from}`);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as {
      data: { target_id: string; hour: string; kind: string; label: string; count: number }[];
    };
    const count = (kind: string, label: string) => data.find((u) => u.kind === kind && u.label === label)?.count ?? 0;
    expect(data.every((u) => u.hour === from)).toBe(true);
    expect(count("forwarded", "POST /{version}/{phone_number_id}/messages")).toBe(3);
    expect(count("forwarded", "GET /{version}/{phone_number_id}")).toBe(1);
    expect(count("upstream_error", "131031")).toBe(1);
    expect(count("refused", "1005")).toBe(2);
    expect(data.every((u) => u.target_id === t.biz.phoneNumberId || u.target_id === t.biz.wabaId)).toBe(true);
    expect((await admin(world.url, "GET", `/admin/usage?account_id=acc_nope&from=${from}`)).status).toBe(404);
  });
});
