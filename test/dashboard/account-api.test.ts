import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomId } from "../../src/runtime/random.ts";
import { admin } from "../support/harness.ts";
import { createAccount, dashboardWorld, operatorNumber, signInCookie, type TestAccount } from "./support.ts";

const world = await dashboardWorld();
let acme: TestAccount;
let other: TestAccount;
let acmeCookie: string;
let otherCookie: string;

beforeAll(async () => {
  world.upstream.numbers.set("1001", { level: "HIGH" });
  world.upstream.numbers.set("1002", {});
  world.upstream.numbers.set("2001", {});
  acme = await createAccount(world.url, "Acme API", { maxNumbers: 2 });
  other = await createAccount(world.url, "Other API");
  await operatorNumber(world.url, acme.id, "waba-a", "1001");
  await operatorNumber(world.url, other.id, "waba-o", "2001", "coexistence");
  acmeCookie = await signInCookie(world.url, acme);
  otherCookie = await signInCookie(world.url, other);
});
afterAll(() => world.close());

const api = (
  cookie: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) =>
  fetch(`${world.url}${path}`, {
    method,
    headers: {
      ...(cookie ? { cookie } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("GET /api/numbers", () => {
  test("lists only the session's account's numbers, with status in words, level and rate limit", async () => {
    const res = await api(acmeCookie, "GET", "/api/numbers");
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Record<string, unknown>[] };
    expect(data.map((n) => n.phone_number_id)).toEqual(["1001"]);
    expect(data[0]).toMatchObject({
      kind: "embedded",
      status: "connected",
      throughput_level: "HIGH",
      rate_limit_per_second: 1000,
      usable: true,
      status_text: "Connected",
    });

    const theirs = (await (await api(otherCookie, "GET", "/api/numbers")).json()) as {
      data: Record<string, unknown>[];
    };
    expect(theirs.data).toHaveLength(1);
    expect(theirs.data[0]).toMatchObject({ phone_number_id: "2001", rate_limit_per_second: 20 });
  });

  test("a flagged number and a revoked WABA token say why the number is unusable", async () => {
    await admin(world.url, "PATCH", "/admin/numbers/2001", { status: "flagged" });
    let [number] = (
      (await (await api(otherCookie, "GET", "/api/numbers")).json()) as { data: Record<string, unknown>[] }
    ).data;
    expect(number).toMatchObject({ usable: false, status_text: "Number flagged" });
    await admin(world.url, "PATCH", "/admin/wabas/waba-o", { status: "token_revoked" });
    [number] = (
      (await (await api(otherCookie, "GET", "/api/numbers")).json()) as { data: Record<string, unknown>[] }
    ).data;
    expect(number).toMatchObject({ usable: false, status_text: "WABA token revoked", waba_status: "token_revoked" });
    expect(String(number!.action)).toContain("access token was revoked or expired");
  });

  test("needs a session: 401 in the error envelope", async () => {
    const res = await api(null, "GET", "/api/numbers");
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { code: string; trace_id: string } };
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.trace_id).toBe(res.headers.get("x-proxy-request-id")!);
  });
});

describe("POST /api/numbers (connect a bring-your-own number) and re-sync", () => {
  test("credentials the platform refuses give 422 invalid_credentials and store nothing", async () => {
    const res = await api(acmeCookie, "POST", "/api/numbers", {
      waba_id: "waba-byo",
      phone_number_id: "1002",
      access_token: "nope",
      app_secret: "s3cret",
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "invalid_credentials",
    });
    expect(world.deps.store.directory.waba("waba-byo")).toBeUndefined();
    expect(world.deps.store.directory.number("1002")).toBeUndefined();
  });

  test("connects with a checked token, stores the app secret encrypted, and syncs the level", async () => {
    const res = await api(acmeCookie, "POST", "/api/numbers", {
      waba_id: "waba-byo",
      phone_number_id: "1002",
      access_token: "good-token",
      app_secret: "byo-secret-value",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      phone_number_id: "1002",
      kind: "byo",
      throughput_level: "STANDARD",
      rate_limit_per_second: 80,
    });
    expect(world.deps.store.directory.waba("waba-byo")?.appSecret).toBe("byo-secret-value");
    const raw = (
      await world.deps.query("SELECT app_secret_enc, access_token_enc FROM wabas WHERE waba_id = 'waba-byo'")
    )[0]!;
    expect(raw.app_secret_enc).not.toContain("byo-secret-value");
    expect(raw.access_token_enc).not.toContain("good-token");
  });

  test("the plan's allowance, another account's WABA or number, and bad ids are refused", async () => {
    world.upstream.numbers.set("1003", {});
    const before = world.deps.store.directory.waba("waba-byo");
    const plan = await api(acmeCookie, "POST", "/api/numbers", {
      waba_id: "waba-byo",
      phone_number_id: "1003",
      access_token: "other-token",
      app_secret: "x",
    });
    expect(plan.status).toBe(409);
    expect(((await plan.json()) as { error: { code: string } }).error.code).toBe("plan_limit");
    // Refused before anything was stored: the WABA keeps its token and app secret.
    expect(world.deps.store.directory.waba("waba-byo")).toEqual(before);

    const stolenWaba = await api(otherCookie, "POST", "/api/numbers", {
      waba_id: "waba-byo",
      phone_number_id: "2002",
      access_token: "good-token",
      app_secret: "x",
    });
    expect(stolenWaba.status).toBe(409);
    const stolenNumber = await api(otherCookie, "POST", "/api/numbers", {
      waba_id: "waba-new",
      phone_number_id: "1002",
      access_token: "good-token",
      app_secret: "x",
    });
    expect(stolenNumber.status).toBe(409);
    expect(world.deps.store.directory.number("1002")?.accountId).toBe(acme.id);
    expect(world.deps.store.directory.waba("waba-new")).toBeUndefined();

    const bad = await api(acmeCookie, "POST", "/api/numbers", {
      waba_id: "../x",
      phone_number_id: "1",
      access_token: "t",
      app_secret: "s",
    });
    expect(bad.status).toBe(400);
  });

  test("re-sync reads the level again; another account's number is 404", async () => {
    world.upstream.numbers.set("1002", { level: "HIGH" });
    const res = await api(acmeCookie, "POST", "/api/numbers/1002/sync");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ throughput_level: "HIGH", rate_limit_per_second: 1000 });
    expect((await api(otherCookie, "POST", "/api/numbers/1002/sync")).status).toBe(404);
    expect((await api(otherCookie, "POST", "/api/numbers/nope/sync")).status).toBe(404);
  });
});

describe("/api/api-keys", () => {
  test("create shows the key once; list shows prefix and times; revoke works only on own keys", async () => {
    const created = await api(acmeCookie, "POST", "/api/api-keys", { mode: "test", name: "ci" });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; key: string; prefix: string; mode: string };
    expect(key.key).toMatch(/^px_test_/);
    expect(key.prefix).toBe(key.key.slice(0, 12));

    const list = (await (await api(acmeCookie, "GET", "/api/api-keys")).json()) as { data: Record<string, unknown>[] };
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      id: key.id,
      prefix: key.prefix,
      mode: "test",
      name: "ci",
      revoked_at: null,
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(JSON.stringify(list)).not.toContain(key.key);
    expect(((await (await api(otherCookie, "GET", "/api/api-keys")).json()) as { data: unknown[] }).data).toEqual([]);

    expect((await api(otherCookie, "DELETE", `/api/api-keys/${key.id}`)).status).toBe(404);
    expect(world.deps.store.directory.apiKey(key.id)?.revokedAt).toBeNull();
    expect((await api(acmeCookie, "DELETE", `/api/api-keys/${key.id}`)).status).toBe(204);
    expect(world.deps.store.directory.apiKey(key.id)?.revokedAt).not.toBeNull();
  });

  test("a bad mode is 400", async () => {
    expect((await api(acmeCookie, "POST", "/api/api-keys", { mode: "prod" })).status).toBe(400);
  });
});

describe("GET /api/notifications", () => {
  test("the account's own notifications, newest first", async () => {
    const add = (accountId: string, subject: string, createdAt: number) =>
      world.deps.store.notifications.add({
        id: randomId(world.deps.random, "ntf"),
        accountId,
        kind: "endpoint_warning",
        subject,
        body: "b",
        emailedAt: null,
        createdAt,
      });
    await add(acme.id, "older", 1000);
    await add(acme.id, "newer", 2000);
    await add(other.id, "not yours", 3000);
    const { data } = (await (await api(acmeCookie, "GET", "/api/notifications")).json()) as {
      data: { subject: string; emailed_at: null }[];
    };
    expect(data.map((n) => n.subject)).toEqual(["newer", "older"]);
    expect(data[0]!.emailed_at).toBeNull();
  });
});

describe("cross-site requests", () => {
  test("a state-changing call from another Origin is 403 and changes nothing", async () => {
    const res = await api(acmeCookie, "POST", "/api/api-keys", { mode: "live" }, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(world.deps.store.directory.apiKeys(acme.id).filter((k) => k.mode === "live")).toHaveLength(0);
    const same = await api(acmeCookie, "POST", "/api/api-keys", { mode: "live" }, { origin: world.url });
    expect(same.status).toBe(201);
  });
});
