import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createAccount } from "../../src/accounts/accounts.ts";
import { createNumber } from "../../src/numbers/numbers.ts";
import { createWaba } from "../../src/numbers/wabas.ts";
import { staticResolver } from "../../src/runtime/resolver.ts";
import { createEndpoint } from "../../src/webhooks/endpoints.ts";
import { EVENT_FIELDS } from "../../src/webhooks/fields.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { acceptEvent } from "../../src/webhooks/ingress.ts";
import { webhookRelay } from "../../src/webhooks/relay.ts";
import { admin, TEST_APP_SECRET, testDeps } from "../support/harness.ts";
import { eventBody, messageChange, relayApp, type RelayApp } from "./support.ts";
import type {
  DeliveryDetailJson,
  DeliveryJson,
  EndpointJson,
  ErrorEnvelope,
  NewEndpointJson,
  PageJson,
  StatsJson,
} from "../support/api-json.ts";
import { bySystem } from "../../src/audit/entry.ts";

const BY_TEST = bySystem("test");

let app: RelayApp;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await app?.close();
});

describe("GET /api/webhooks/fields", () => {
  test("lists the 14 field names of docs/webhooks.md#event-fields without a login", async () => {
    app = await relayApp();
    const response = await fetch(`${app.url}/api/webhooks/fields`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ fields: [...EVENT_FIELDS] });
    expect(EVENT_FIELDS).toHaveLength(14);
  });
});

describe("endpoints (docs/operations.md#the-dashboard-and-its-api)", () => {
  test("create shows the secret once; read, list, update and delete never show it", async () => {
    app = await relayApp();
    const a = await app.account({ numbers: 2 });
    const created = await a.api<NewEndpointJson>("POST", "/api/endpoints", {
      url: "http://127.0.0.1:4000/in",
      fields: ["messages", "security", "messages"],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: "http://127.0.0.1:4000/in",
      fields: ["messages", "security"],
      phone_number_id: null,
      enabled: true,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    expect(created.body.secret).toMatch(/^whsec_/);
    const id = created.body.id;
    const read = await a.api<Partial<NewEndpointJson>>("GET", `/api/endpoints/${id}`);
    expect(read.body.secret).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain("whsec_");
    expect((await a.api<PageJson<EndpointJson>>("GET", "/api/endpoints")).body.data.map((e) => e.id)).toEqual([id]);
    const patched = await a.api("PATCH", `/api/endpoints/${id}`, {
      fields: ["history"],
      phone_number_id: a.numbers[1],
    });
    expect(patched.body).toMatchObject({ fields: ["history"], phone_number_id: a.numbers[1] });
    expect(
      (await a.api<EndpointJson>("PATCH", `/api/endpoints/${id}`, { phone_number_id: null })).body.phone_number_id,
    ).toBeNull();
    // The secret is stored sealed, never as text.
    const row = (await app.deps.query("SELECT secret_enc FROM endpoints"))[0]!;
    expect(row.secret_enc).toStartWith("v1.");
    expect(row.secret_enc).not.toContain(created.body.secret.slice(6, 20));
    expect((await a.api("DELETE", `/api/endpoints/${id}`)).status).toBe(204);
    expect((await a.api("GET", `/api/endpoints/${id}`)).status).toBe(404);
  });

  test("validation: no_numbers, invalid_url, invalid_fields, a number of another account or not connected", async () => {
    app = await relayApp({ env: { DEV_MODE: "0" } });
    const sandboxOnly = await app.account({ kind: "sandbox" });
    const noNumbers = await sandboxOnly.api<ErrorEnvelope>("POST", "/api/endpoints", {
      url: "https://hooks.example.com/in",
      fields: ["messages"],
    });
    expect(noNumbers.status).toBe(409);
    expect(noNumbers.body.error.code).toBe("no_numbers");

    const a = await app.account({ numbers: 2 });
    const other = await app.account();
    const bad = async (body: unknown, status: number, code: string) => {
      const r = await a.api<ErrorEnvelope>("POST", "/api/endpoints", body);
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    };
    await bad({ url: "http://hooks.example.com/in", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://127.0.0.1/in", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://0x0a000001/in", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://[::ffff:192.168.0.1]/in", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://u:p@hooks.example.com/in", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: `https://hooks.example.com/${"a".repeat(2030)}`, fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://hooks.example.com/in", fields: [] }, 422, "invalid_fields");
    await bad({ url: "https://hooks.example.com/in", fields: ["messages", "nope"] }, 422, "invalid_fields");
    await bad({ url: "https://hooks.example.com/in", fields: Array(41).fill("messages") }, 422, "invalid_fields");
    // However long or many: still the URL and field rules' answer, not a generic 400.
    await bad({ url: `https://hooks.example.com/${"a".repeat(9000)}`, fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "", fields: ["messages"] }, 422, "invalid_url");
    await bad({ url: "https://hooks.example.com/in", fields: Array(101).fill("messages") }, 422, "invalid_fields");
    await bad({ url: "https://hooks.example.com/in", fields: ["x".repeat(101)] }, 422, "invalid_fields");
    // Values of the wrong type are malformed requests.
    await bad({ url: "https://hooks.example.com/in", fields: "messages" }, 400, "invalid_request");
    await bad({ url: 42, fields: ["messages"] }, 400, "invalid_request");
    await bad(
      { url: "https://hooks.example.com/in", fields: ["messages"], phone_number_id: other.numbers[0] },
      400,
      "invalid_request",
    );
    await bad({ url: "https://hooks.example.com/in", fields: ["messages"], secret: "mine" }, 400, "invalid_request");
    // docs/webhooks.md#endpoints: limited to a single connected number.
    expect((await admin(app.url, "PATCH", `/admin/numbers/${a.numbers[1]}`, { status: "disconnected" })).status).toBe(
      200,
    );
    await bad(
      { url: "https://hooks.example.com/in", fields: ["messages"], phone_number_id: a.numbers[1] },
      400,
      "invalid_request",
    );
    const created = await a.api<EndpointJson>("POST", "/api/endpoints", {
      url: "https://hooks.example.com/in",
      fields: ["messages"],
    });
    expect(created.status).toBe(201);
    // PATCH checks the same rules, and a refused change leaves the endpoint as it was.
    const patch = async (body: unknown, status: number, code: string) => {
      const r = await a.api<ErrorEnvelope>("PATCH", `/api/endpoints/${created.body.id}`, body);
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    };
    await patch({ url: "https://10.0.0.1/in" }, 422, "invalid_url");
    await patch({ url: "http://hooks.example.com/in" }, 422, "invalid_url");
    await patch({ fields: [] }, 422, "invalid_fields");
    await patch({ fields: ["nope"] }, 422, "invalid_fields");
    await patch({ phone_number_id: other.numbers[0] }, 400, "invalid_request");
    await patch({ phone_number_id: a.numbers[1] }, 400, "invalid_request");
    await patch({ fields: Array(101).fill("messages") }, 422, "invalid_fields");
    expect((await a.api("GET", `/api/endpoints/${created.body.id}`)).body).toMatchObject({
      url: "https://hooks.example.com/in",
      fields: ["messages"],
      phone_number_id: null,
    });
  });

  test("another account's endpoint or delivery answers 404, exactly like a missing one", async () => {
    app = await relayApp();
    const a = await app.account();
    const b = await app.account();
    const rx = app.receiver();
    const ep = await a.endpoint(rx.url);
    await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    await app.tick();
    const delivery = rx.received[0]!.headers["webhook-id"];
    for (const [method, path] of [
      ["GET", `/api/endpoints/${ep.id}`],
      ["PATCH", `/api/endpoints/${ep.id}`],
      ["DELETE", `/api/endpoints/${ep.id}`],
      ["POST", `/api/endpoints/${ep.id}/enable`],
      ["POST", `/api/endpoints/${ep.id}/rotate-secret`],
      ["POST", `/api/endpoints/${ep.id}/test`],
      ["GET", `/api/endpoints/${ep.id}/stats`],
      ["GET", `/api/deliveries/${delivery}`],
      ["POST", `/api/deliveries/${delivery}/replay`],
      ["GET", `/api/deliveries?endpoint_id=${ep.id}`],
      ["GET", "/api/endpoints/ep_missing"],
    ] as const) {
      const r = await b.api<ErrorEnvelope>(method, path, method === "PATCH" ? { fields: ["messages"] } : undefined);
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 404, "not_found"]);
    }
    expect((await b.api("GET", "/api/deliveries")).body).toMatchObject({ data: [] });
    expect((await fetch(`${app.url}/api/endpoints`)).status).toBe(401);
  });
});

describe("deliveries list, detail and stats", () => {
  test("filters by endpoint and status, pages with next_cursor, newest first", async () => {
    app = await relayApp();
    const a = await app.account();
    const ok = app.receiver();
    const failing = app.receiver(() => new Response("nope", { status: 500 }));
    const e1 = await a.endpoint(ok.url);
    const e2 = await a.endpoint(failing.url);
    for (let i = 0; i < 5; i++) {
      await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!, `m${i}`)] }]));
      app.deps.clock.advance(1000);
    }
    await app.tick();
    const all = await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries");
    expect(all.body.data).toHaveLength(10);
    expect(all.body.next_cursor).toBeNull();
    const pending = await a.api<PageJson<DeliveryJson>>("GET", `/api/deliveries?status=pending&endpoint_id=${e2.id}`);
    expect(pending.body.data).toHaveLength(5);
    expect(pending.body.data[0]?.next_attempt_at).not.toBeNull();
    const succeeded = (endpointId: string) =>
      a.api<PageJson<DeliveryJson>>("GET", `/api/deliveries?status=succeeded&endpoint_id=${endpointId}`);
    expect((await succeeded(e1.id)).body.data).toHaveLength(5);
    expect((await succeeded(e2.id)).body.data).toHaveLength(0);

    const seen: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page: { body: PageJson<DeliveryJson> } = await a.api(
        "GET",
        `/api/deliveries?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.body.data.map((d) => d.id));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(all.body.data.map((d) => d.id));
    const times = all.body.data.map((d) => d.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    // Empty parameters, as a form or a script may send them, filter nothing.
    const unfiltered = await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries?endpoint_id=&status=&cursor=");
    expect(unfiltered.status).toBe(200);
    expect(unfiltered.body.data).toEqual((await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries")).body.data);
    expect(unfiltered.body.data.length).toBeGreaterThan(0);
    expect((await a.api("GET", "/api/deliveries?status=bogus")).status).toBe(400);
    expect((await a.api("GET", "/api/deliveries?cursor=%%%")).status).toBe(400);
  });

  test("stats: hourly buckets of succeeded and failed attempts and parked deliveries", async () => {
    app = await relayApp({ env: { WEBHOOK_RETRY_SCHEDULE: "1s" } });
    const a = await app.account();
    const rx = app.receiver();
    const ep = await a.endpoint(rx.url);
    const send = () => app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    await send();
    await app.tick();
    app.deps.clock.advance(3_600_000);
    rx.respond(() => new Response("", { status: 500 }));
    await send();
    await app.tick();
    app.deps.clock.advance(1000);
    await app.tick();
    const stats = await a.api<StatsJson>("GET", `/api/endpoints/${ep.id}/stats?hours=3`);
    expect(stats.status).toBe(200);
    expect(stats.body.data.map((b) => [b.succeeded, b.failed, b.parked])).toEqual([
      [0, 0, 0],
      [1, 0, 0],
      [0, 2, 1],
    ]);
    expect(stats.body.data[2]?.hour).toBe(
      new Date(Math.floor(app.deps.clock.now() / 3_600_000) * 3_600_000).toISOString(),
    );
    expect((await a.api<StatsJson>("GET", `/api/endpoints/${ep.id}/stats`)).body.data).toHaveLength(24);
  });

  test("the OpenAPI document lists every webhook route", async () => {
    app = await relayApp();
    const spec = (await (await fetch(`${app.url}/docs/json`)).json()) as { paths: Record<string, unknown> };
    for (const path of [
      "/api/webhooks/fields",
      "/api/endpoints",
      "/api/endpoints/{id}",
      "/api/endpoints/{id}/enable",
      "/api/endpoints/{id}/rotate-secret",
      "/api/endpoints/{id}/test",
      "/api/endpoints/{id}/stats",
      "/api/deliveries",
      "/api/deliveries/{id}",
      "/api/deliveries/{id}/replay",
      "/api/settings",
    ]) {
      expect(Object.keys(spec.paths)).toContain(path);
    }
  });
});

describe("production rules end to end (not DEV_MODE)", () => {
  test("a name resolving to a private address: the attempt is blocked and says why", async () => {
    app = await relayApp({
      env: { DEV_MODE: "0" },
      deps: { resolver: staticResolver({ "hooks.example.com": ["10.0.0.7"] }) },
    });
    const a = await app.account();
    await a.endpoint("https://hooks.example.com/in");
    await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    await app.tick();
    const [delivery] = (await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries")).body.data;
    const detail = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${delivery!.id}`);
    expect(detail.body.attempts[0]).toMatchObject({
      status_code: null,
      error: "blocked: resolved to 10.0.0.7",
      response_excerpt: null,
    });
    expect(detail.body.status).toBe("pending");
  });

  test("https only, and loopback only with the explicit DEV_MODE allowance: a TLS receiver for receiver.test gets the signed delivery", async () => {
    const TLS = join(import.meta.dir, "fixtures", "tls");
    const hits: { host: string | null; body: string }[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert: Bun.file(join(TLS, "receiver.crt")), key: Bun.file(join(TLS, "receiver.key")) },
      async fetch(req) {
        hits.push({ host: req.headers.get("host"), body: await req.text() });
        return new Response("ok");
      },
    });
    const deps = await testDeps({
      env: { DEV_MODE: "0" },
      deps: { resolver: staticResolver({ "receiver.test": ["127.0.0.1"] }) },
    });
    cleanups.push(() => server.stop(true), deps.cleanup);
    const ca = await Bun.file(join(TLS, "ca.crt")).text();
    const account = await createAccount(deps, { name: "TLS", email: "tls@example.com" }, BY_TEST);
    await createWaba(deps, account.id, { waba_id: "waba-tls", access_token: "t" }, BY_TEST);
    await createNumber(deps, account.id, { phone_number_id: "pn-tls", waba_id: "waba-tls", kind: "embedded" }, BY_TEST);
    const url = `https://receiver.test:${server.port}/in`;
    const body = new TextEncoder().encode(eventBody([{ id: "waba-tls", changes: [messageChange("pn-tls")] }]));

    for (const allowLoopback of [false, true]) {
      const relay = webhookRelay(deps, { allowLoopback, ca });
      const ep = await createEndpoint(
        { ...deps, urlRules: relay.urlRules },
        account.id,
        { url, fields: ["messages"] },
        BY_TEST,
      );
      // Stored alone, as the dispatcher stores what it cannot start: the tick claims it.
      expect(
        await acceptEvent({ ...deps, queue: deps.store.queue }, body, hubSignature(TEST_APP_SECRET, body)),
      ).toMatchObject({ kind: "accepted", deliveries: 1 });
      await relay.dispatcher.tick();
      if (!allowLoopback) {
        expect(hits).toHaveLength(0);
        const [d] = await deps.store.history.deliveries({ accountId: account.id, limit: 1 });
        expect((await deps.store.history.attempts(d!.id))[0]!.error).toBe("blocked: resolved to 127.0.0.1");
        await deps.store.endpoints.delete(ep.id);
      } else {
        expect(hits).toHaveLength(1);
        expect(hits[0]!.host).toBe(`receiver.test:${server.port}`);
      }
      // Plain http is refused at save without DEV_MODE, whatever the loopback allowance.
      await expect(
        createEndpoint(
          { ...deps, urlRules: relay.urlRules },
          account.id,
          { url: "http://receiver.test/in", fields: ["messages"] },
          BY_TEST,
        ),
      ).rejects.toThrow("https://");
    }
  });
});
