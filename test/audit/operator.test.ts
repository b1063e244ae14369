// Issue 29: the audit log of the operator's changes, over real HTTP (and the CLI, a real process)
// on the test backend: each change leaves exactly one entry with its actor, address and fields
// before → after, never a secret; a refused change leaves none; GET /admin/audit filters and
// pages; entries past AUDIT_RETENTION are purged with the retention pass.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { numericId } from "../../src/simulator/world.ts";
import { admin, TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { startWorld, type World } from "../support/world.ts";
import { allEntries, auditTrail, LOOPBACK, Secrets, TOKEN } from "./support.ts";

let world: World;
let trail: ReturnType<typeof auditTrail>;
const secrets = new Secrets();
const DAY = 86_400_000;

beforeAll(async () => {
  world = await startWorld();
  // The CLI's process keeps the real time: the test's clock starts there too.
  world.deps.clock.set(Date.now());
  trail = auditTrail(world.url);
  secrets.add(TEST_ADMIN_TOKEN);
});
afterAll(() => world.stop());

/** Each step at its own millisecond, so that entries read in the order they were made. */
const tick = () => world.deps.clock.advance(1);
// biome-ignore lint/suspicious/noExplicitAny: each test reads the few fields of an answer it needs
type Answer = Record<string, any>;
const json = async (r: Promise<Response>, status: number) => {
  const res = await r;
  expect(res.status).toBe(status);
  return res.status === 204 ? null : ((await res.json()) as Answer);
};
const call = (method: string, path: string, body?: unknown) => admin(world.url, method, path, body);
const byToken = { actor: TOKEN, ip: LOOPBACK };

let accountId: string;
let wabaId: string;
let phoneNumberId: string;

describe("each change through the operator API leaves exactly one entry", () => {
  test("accounts: created, billing status changed", async () => {
    tick();
    const account = await json(call("POST", "/admin/accounts", { name: "Acme", email: "ops@acme.example" }), 201);
    accountId = account!.id;
    expect(await trail.fresh()).toMatchObject([
      {
        ...byToken,
        action: "account.create",
        object: { kind: "account", id: accountId },
        account_id: accountId,
        changes: {
          name: [null, "Acme"],
          email: [null, "ops@acme.example"],
          billing_status: [null, "active"],
          retention: [null, "24h"],
        },
      },
    ]);
    tick();
    await json(call("PATCH", `/admin/accounts/${accountId}`, { billing_status: "overdue", max_numbers: 1 }), 200);
    const [update] = await trail.fresh();
    expect(update).toMatchObject({ ...byToken, action: "account.update", object: { kind: "account", id: accountId } });
    expect(update!.changes).toEqual({ billing_status: ["active", "overdue"], max_numbers: [null, 1] });
  });

  test("a dashboard user, an API key created and revoked", async () => {
    const password = "correct horse battery staple";
    secrets.add(password);
    const user = await json(
      call("POST", `/admin/accounts/${accountId}/users`, { email: "Me@Acme.example", password }),
      201,
    );
    expect(await trail.fresh()).toMatchObject([
      {
        ...byToken,
        action: "user.create",
        object: { kind: "user", id: user!.id },
        changes: { email: [null, "me@acme.example"] },
      },
    ]);
    const key = await json(call("POST", `/admin/accounts/${accountId}/api-keys`, { mode: "live", name: "CI" }), 201);
    secrets.add(key!.key);
    tick();
    await json(call("DELETE", `/admin/api-keys/${key!.id}`), 204);
    const [created, revoked] = await trail.fresh();
    expect(created).toMatchObject({
      ...byToken,
      action: "api_key.create",
      object: { kind: "api_key", id: key!.id },
      account_id: accountId,
      changes: { mode: [null, "live"], name: [null, "CI"], prefix: [null, key!.prefix] },
    });
    expect(Object.keys(created!.changes)).not.toContain("key_hash");
    expect(revoked).toMatchObject({
      ...byToken,
      action: "api_key.revoke",
      changes: { revoked_at: [null, new Date(world.deps.clock.now()).toISOString()] },
    });
    // Revoked already: nothing changes, nothing is recorded.
    await trail.none(() => call("DELETE", `/admin/api-keys/${key!.id}`), 204);
  });

  test("a WABA connected, its token replaced, its state set: secrets named as changed, never shown", async () => {
    const first = await world.waba(accountId, { appSecret: "byo-app-secret-0001" });
    wabaId = first.wabaId;
    secrets.add(first.token, "byo-app-secret-0001");
    const [created] = await trail.fresh();
    expect(created).toMatchObject({
      ...byToken,
      action: "waba.create",
      object: { kind: "waba", id: wabaId },
      changes: {
        status: [null, "connected"],
        access_token: [null, "[secret changed]"],
        app_secret: [null, "[secret changed]"],
      },
    });
    const newToken = `EAAG${numericId(cryptoRandom)}`;
    secrets.add(newToken);
    world.sim.addWaba({ wabaId, accessToken: newToken, appSecret: "byo-app-secret-0001" });
    await json(call("PATCH", `/admin/wabas/${wabaId}`, { access_token: newToken }), 200);
    expect((await trail.fresh())[0]!.changes).toEqual({ access_token: ["[secret]", "[secret changed]"] });
    await json(call("PATCH", `/admin/wabas/${wabaId}`, { status: "disconnected" }), 200);
    tick();
    await json(call("PATCH", `/admin/wabas/${wabaId}`, { status: "connected" }), 200);
    expect((await trail.fresh()).map((e) => [e.action, e.changes.status])).toEqual([
      ["waba.update", ["connected", "disconnected"]],
      ["waba.update", ["disconnected", "connected"]],
    ]);
  });

  test("a number connected (one entry, its details read with it), its state set, checked again", async () => {
    phoneNumberId = await world.number(accountId, wabaId);
    const [created] = await trail.fresh();
    expect(created).toMatchObject({
      ...byToken,
      action: "number.create",
      object: { kind: "number", id: phoneNumberId },
      changes: { waba_id: [null, wabaId], kind: [null, "embedded"], status: [null, "connected"] },
    });
    tick();
    await json(call("PATCH", `/admin/numbers/${phoneNumberId}`, { status: "flagged" }), 200);
    expect((await trail.fresh())[0]).toMatchObject({
      action: "number.update",
      changes: { status: ["connected", "flagged"] },
    });
    // Check again: a good read connects it again, recorded once.
    tick();
    await json(call("POST", `/admin/numbers/${phoneNumberId}/sync`), 200);
    const [check] = await trail.fresh();
    expect(check).toMatchObject({ ...byToken, action: "number.sync", object: { kind: "number", id: phoneNumberId } });
    expect(check!.changes.status).toEqual(["flagged", "connected"]);
    // The platform says the token is revoked: the WABA changes (its own entry), the number records why its read failed.
    world.sim.fault(phoneNumberId, { error: 190 }, 1);
    tick();
    await json(call("POST", `/admin/numbers/${phoneNumberId}/sync`), 200);
    const [number, waba] = await trail.fresh();
    expect(number).toMatchObject({ action: "number.sync", changes: { sync_error: [null, expect.any(String)] } });
    expect(waba).toMatchObject({
      ...byToken,
      action: "waba.update",
      object: { kind: "waba", id: wabaId },
      changes: { status: ["connected", "token_revoked"], cause_code: [null, 190] },
    });
  });

  test("the CLI's changes are the operator's, marked as made on the command line", async () => {
    const redis = world.deps.config.redis;
    const env = {
      ...processEnv("unused"),
      DATABASE_URL: world.deps.databaseUrl,
      ...(redis ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.keyPrefix } : {}),
    };
    const run = await runMain(["admin", "accounts", "update", accountId, "--name", "Acme Ltd"], env);
    expect(run.code).toBe(0);
    expect(await trail.fresh()).toMatchObject([
      {
        actor: { kind: "operator_token", id: "cli" },
        ip: null,
        action: "account.update",
        changes: { name: ["Acme", "Acme Ltd"] },
      },
    ]);
    const listed = await runMain(["admin", "audit", "list", "--account-id", accountId, "--action", "account"], env);
    expect(JSON.parse(listed.stdout).data.map((e: { action: string }) => e.action)).toEqual([
      "account.update",
      "account.update",
      "account.create",
    ]);
  });
});

describe("a change refused leaves no entry", () => {
  test("409, 404 and validation errors", async () => {
    await trail.none(
      () => call("POST", `/admin/accounts/${accountId}/wabas`, { waba_id: wabaId, access_token: "x" }),
      409,
    );
    const other = await world.waba(accountId);
    await trail.fresh();
    const second = numericId(cryptoRandom);
    world.sim.addNumber(other.wabaId, { phoneNumberId: second });
    await trail.none(
      () =>
        call("POST", `/admin/accounts/${accountId}/numbers`, {
          phone_number_id: second,
          waba_id: other.wabaId,
          kind: "embedded",
        }),
      409,
    );
    await trail.none(() => call("PATCH", "/admin/accounts/acc_nobody", { name: "X" }), 404);
    await trail.none(() => call("PATCH", `/admin/accounts/${accountId}`, { billing_status: "maybe" }), 400);
    await trail.none(
      () =>
        call("POST", `/admin/accounts/${accountId}/users`, { email: "me@acme.example", password: "another password" }),
      409,
    );
    await trail.none(() => call("DELETE", "/admin/api-keys/key_nobody"), 404);
    await trail.none(() => call("POST", "/admin/numbers/0000/sync"), 404);
    await trail.none(() => fetch(`${world.url}/admin/accounts`, { method: "POST" }), 401);
  });
});

describe("GET /admin/audit", () => {
  test("filters by account, action or kind of action, actor, object and time; pages newest first", async () => {
    const everything = await allEntries(world.url);
    expect(everything.length).toBeGreaterThan(10);
    expect(everything.map((e) => e.at)).toEqual([...everything.map((e) => e.at)].sort().reverse());
    const q = (query: Record<string, string>) => allEntries(world.url, query);
    expect((await q({ account_id: accountId })).length).toBe(
      everything.filter((e) => e.account_id === accountId).length,
    );
    expect(new Set((await q({ action: "waba" })).map((e) => e.action))).toEqual(
      new Set(["waba.create", "waba.update"]),
    );
    expect((await q({ action: "api_key.revoke" })).map((e) => e.action)).toEqual(["api_key.revoke"]);
    expect((await q({ actor: "cli" })).map((e) => e.actor.id)).toEqual(["cli"]);
    expect((await q({ object_kind: "number", object_id: phoneNumberId })).length).toBe(4);
    const [newest] = everything;
    const at = newest!.at!;
    expect((await q({ from: at })).every((e) => e.at! >= at)).toBe(true);
    expect((await q({ to: at })).some((e) => e.at === at)).toBe(false);
    // Keyset pages of two: every entry once, in order.
    const paged = [];
    let cursor: string | null = null;
    do {
      const r = await call("GET", `/admin/audit?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      const page = (await r.json()) as { data: { id: string }[]; next_cursor: string | null };
      paged.push(...page.data.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(everything.map((e) => e.id));
  });

  test("refuses what it cannot read, in the envelope; needs the token", async () => {
    expect((await call("GET", "/admin/audit?account_id=acc_nobody")).status).toBe(404);
    expect((await call("GET", "/admin/audit?action=endpoint.explode")).status).toBe(400);
    expect((await call("GET", "/admin/audit?from=yesterday")).status).toBe(400);
    expect((await call("GET", "/admin/audit?cursor=bm9wZQ")).status).toBe(400);
    // A made-up cursor hiding a NUL (which PostgreSQL's text cannot hold).
    expect((await call("GET", `/admin/audit?cursor=${Buffer.from("1.\u0000x").toString("base64url")}`)).status).toBe(
      400,
    );
    expect((await fetch(`${world.url}/admin/audit`)).status).toBe(401);
  });

  test("no entry holds a token, key, password or app secret", async () => {
    expect(secrets.size).toBeGreaterThan(4);
    secrets.expectAbsent(await allEntries(world.url), await world.deps.query("SELECT * FROM audit_log"));
  });
});

describe("retention", () => {
  test("the retention pass deletes entries older than AUDIT_RETENTION (90 days) and keeps the rest", async () => {
    world.deps.clock.advance(89 * DAY);
    await json(call("PATCH", `/admin/accounts/${accountId}`, { name: "Acme Later" }), 200);
    world.deps.clock.advance(2 * DAY);
    const cutoff = world.deps.clock.now() - 90 * DAY;
    const before = await allEntries(world.url);
    expect(before.filter((e) => Date.parse(e.at!) < cutoff).length).toBeGreaterThan(10);
    await world.app().retention.run();
    const after = await allEntries(world.url);
    expect(after).toEqual(before.filter((e) => Date.parse(e.at!) >= cutoff));
    expect(after.map((e) => e.changes.name)).toEqual([["Acme Ltd", "Acme Later"]]);
  });
});
