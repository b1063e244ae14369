// Issue 29: the audit log of an account's own changes (the dashboard API and pages), of its
// sign-ins, and of what the service does by itself (an endpoint disabled), over real HTTP on the
// test backend: each change leaves exactly one entry with its actor and fields before → after,
// never a secret; a refused change leaves none; an account sees its own entries only, on
// GET /api/activity and its Activity page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BY_CLI } from "../../src/audit/entry.ts";
import { SIGN_IN_WINDOW_MS } from "../../src/auth/throttle.ts";
import { createOperator } from "../../src/operators/operations.ts";
import { operatorCookie } from "../operator/support.ts";
import { eventually } from "../support/eventually.ts";
import { admin, TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { signupWorld, type SignupWorld } from "../onboarding/support.ts";
import { receiver } from "../webhooks/support.ts";
import { allEntries, auditTrail, LOOPBACK, Secrets, TOKEN } from "./support.ts";

let t: SignupWorld;
let trail: ReturnType<typeof auditTrail>;
let acme: Awaited<ReturnType<SignupWorld["account"]>>;
let user: { kind: "user"; id: string; email: string };
const secrets = new Secrets();
const hook = receiver();

beforeAll(async () => {
  t = await signupWorld();
  trail = auditTrail(t.url);
  secrets.add(TEST_ADMIN_TOKEN);
  acme = await t.account();
  secrets.add(acme.password, acme.cookie().split("=")[1]);
  const stored = (await t.world.deps.store.users.byEmail(acme.email))!;
  user = { kind: "user", id: stored.id, email: stored.email };
});
afterAll(async () => {
  hook.stop();
  await t.stop();
});

const tick = () => t.world.deps.clock.advance(1);
const byUser = () => ({ actor: user, ip: LOOPBACK, account_id: acme.id });
/** The dashboard API as acme, expecting `status`. */
// biome-ignore lint/suspicious/noExplicitAny: each test reads the few fields of an answer it needs
type Answer = Record<string, any>;
async function api(method: string, path: string, body: unknown, status: number) {
  tick();
  const r = await acme.api<Answer>(method, path, body);
  expect(r.status).toBe(status);
  return r.body;
}
/** A dashboard page's form post as acme (what a browser sends), expecting `status`. */
async function form(path: string, fields: Record<string, string>, status: number) {
  tick();
  const r = await fetch(`${t.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: acme.cookie(), origin: t.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  expect(r.status).toBe(status);
  return r;
}
const signIn = (email: string, password: string) =>
  fetch(`${t.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });

describe("an account's own changes leave exactly one entry each, by its user", () => {
  test("its creation by the operator, and its user's first sign-in", async () => {
    expect(await trail.fresh()).toMatchObject([
      { actor: TOKEN, action: "account.create", account_id: acme.id },
      { actor: user, action: "session.create", object: { kind: "user", id: user.id }, account_id: acme.id },
      { actor: TOKEN, action: "user.create", object: { kind: "user", id: user.id } },
    ]);
  });

  test("sign-ins: a wrong password counts, an unknown email belongs to no account, a lock changes nothing, sign-out", async () => {
    tick();
    expect((await signIn(acme.email, "not the password")).status).toBe(401);
    expect(await trail.fresh()).toMatchObject([{ ...byUser(), action: "session.failed", changes: {} }]);
    tick();
    expect((await signIn("nobody@example.test", "guess")).status).toBe(401);
    expect(await trail.fresh()).toMatchObject([
      { actor: { kind: "user", id: "unknown" }, action: "session.failed", account_id: null, ip: LOOPBACK },
    ]);
    for (let i = 0; i < 4; i++) expect((await signIn(acme.email, `wrong ${i}`)).status).toBe(401);
    expect((await trail.fresh()).map((e) => e.action)).toEqual(Array(4).fill("session.failed"));
    await trail.none(() => signIn(acme.email, acme.password), 429);
    t.world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    const signedIn = await signIn(acme.email, acme.password);
    expect(signedIn.status).toBe(204);
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    secrets.add(cookie.split("=")[1]);
    expect(await trail.fresh()).toMatchObject([{ ...byUser(), action: "session.create" }]);
    tick();
    const out = await fetch(`${t.url}/api/session`, { method: "DELETE", headers: { cookie, origin: t.url } });
    expect(out.status).toBe(204);
    expect(await trail.fresh()).toMatchObject([{ ...byUser(), action: "session.delete" }]);
    // Signed out already: nothing is recorded.
    await trail.none(
      () => fetch(`${t.url}/api/session`, { method: "DELETE", headers: { cookie, origin: t.url } }),
      204,
    );
  });

  test("API keys, through the API and the page", async () => {
    const key = await api("POST", "/api/api-keys", { mode: "live", name: "Deploys" }, 201);
    secrets.add(key.key);
    await api("DELETE", `/api/api-keys/${key.id}`, undefined, 204);
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "api_key.create",
        object: { kind: "api_key", id: key.id },
        changes: { name: [null, "Deploys"] },
      },
      { ...byUser(), action: "api_key.revoke", object: { kind: "api_key", id: key.id } },
    ]);
    const page = await form("/dashboard/api-keys", { mode: "test", name: "From the page" }, 201);
    const shown = /value="(px_test_[^"]+)"/.exec(await page.text())![1]!;
    secrets.add(shown);
    const [created] = await trail.fresh();
    expect(created).toMatchObject({ ...byUser(), action: "api_key.create", changes: { mode: [null, "test"] } });
    await form(`/dashboard/api-keys/${created!.object.id}/revoke`, {}, 303);
    expect(await trail.fresh()).toMatchObject([{ ...byUser(), action: "api_key.revoke" }]);
    await trail.none(() => acme.api("DELETE", "/api/api-keys/key_nobody"), 404);
  });

  test("settings, through the API and the page", async () => {
    await api("PATCH", "/api/settings", { retention: "7d" }, 200);
    await form("/dashboard/settings", { retention: "24h" }, 303);
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "settings.update",
        object: { kind: "account", id: acme.id },
        changes: { retention: ["24h", "7d"] },
      },
      { ...byUser(), action: "settings.update", changes: { retention: ["7d", "24h"] } },
    ]);
    await trail.none(() => acme.api("PATCH", "/api/settings", { retention: "forever" }), 400);
  });
});

let phoneNumberId: string;

describe("numbers: Embedded Signup, bring-your-own, Check again, coexistence", () => {
  test("a signup records its start and the number it connects; a failed one its retry; code and PIN never shown", async () => {
    const popup = t.sim.signUp();
    phoneNumberId = popup.phoneNumberId;
    secrets.add(popup.code, "917352");
    t.sim.fault("oauth", { error: 100, message: "Temporary OAuth failure." }, 1);
    const body = { code: popup.code, waba_id: popup.wabaId, phone_number_id: popup.phoneNumberId, pin: "917352" };
    const failed = await api("POST", "/api/signups", body, 201);
    expect(failed.status).toBe("failed");
    const [start] = await trail.fresh();
    expect(start).toMatchObject({
      ...byUser(),
      action: "signup.start",
      object: { kind: "onboarding", id: failed.id },
      changes: {
        code: [null, "[secret changed]"],
        pin: [null, "[secret changed]"],
        kind: [null, "embedded"],
        waba_id: [null, popup.wabaId],
      },
    });
    const done = await api("POST", `/api/signups/${failed.id}/retry`, {}, 200);
    expect(done.status).toBe("done");
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "number.create",
        object: { kind: "number", id: phoneNumberId },
        changes: { kind: [null, "embedded"], access_token: [null, "[secret changed]"] },
      },
      { ...byUser(), action: "signup.retry", object: { kind: "onboarding", id: failed.id }, changes: {} },
    ]);
    secrets.add(t.sim.world.wabas.get(popup.wabaId)!.accessToken);
    // Another account's number: refused before anything is stored.
    const other = await t.account();
    await trail.fresh();
    const taken = {
      code: t.sim.signUp().code,
      waba_id: popup.wabaId,
      phone_number_id: popup.phoneNumberId,
      pin: "111111",
    };
    await trail.none(() => other.api("POST", "/api/signups", taken), 409);
  });

  test("Check again, and a bring-your-own number", async () => {
    await api("POST", `/api/numbers/${phoneNumberId}/sync`, undefined, 200);
    expect(await trail.fresh()).toMatchObject([
      { ...byUser(), action: "number.sync", object: { kind: "number", id: phoneNumberId } },
    ]);
    const wabaId = "880001";
    const byo = "880002";
    t.sim.addWaba({ wabaId, accessToken: "EAAGbyo-token-880001", appSecret: "byo-app-secret-880001" });
    t.sim.addNumber(wabaId, { phoneNumberId: byo });
    secrets.add("EAAGbyo-token-880001", "byo-app-secret-880001");
    const credentials = { waba_id: wabaId, phone_number_id: byo, access_token: "EAAGbyo-token-880001" };
    await trail.none(() => acme.api("POST", "/api/numbers", { ...credentials, app_secret: "wrong-secret" }), 422);
    await api("POST", "/api/numbers", { ...credentials, app_secret: "byo-app-secret-880001" }, 201);
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "number.create",
        object: { kind: "number", id: byo },
        changes: {
          kind: [null, "byo"],
          access_token: [null, "[secret changed]"],
          app_secret: [null, "[secret changed]"],
        },
      },
    ]);
  });

  test("a coexistence number's pre-flight and sync", async () => {
    const popup = t.sim.signUp({ coexistence: true });
    const body = { code: popup.code, waba_id: popup.wabaId, phone_number_id: popup.phoneNumberId, coexistence: true };
    secrets.add(popup.code);
    expect((await api("POST", "/api/signups", body, 201)).status).toBe("done");
    secrets.add(t.sim.world.wabas.get(popup.wabaId)!.accessToken);
    expect((await trail.fresh()).map((e) => e.action)).toEqual(["number.create", "signup.start"]);
    const history = await api("POST", "/api/endpoints", { url: hook.url, fields: ["history"] }, 201);
    secrets.add(history.secret);
    await trail.fresh();
    await api("POST", `/api/numbers/${popup.phoneNumberId}/preflight`, { sync_type: "history" }, 202);
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "coexistence.preflight",
        object: { kind: "number", id: popup.phoneNumberId },
        changes: { sync_type: [null, "history"], endpoint_ids: [null, [history.id]] },
      },
    ]);
    await api("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, { sync_type: "history", override: true }, 200);
    expect(await trail.fresh()).toMatchObject([
      { ...byUser(), action: "coexistence.sync", changes: { sync_type: [null, "history"] } },
    ]);
    await trail.none(
      () => acme.api("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, { sync_type: "history" }),
      409,
    );
    await api("DELETE", `/api/endpoints/${history.id}`, undefined, 204);
    await trail.fresh();
  });

  test("the operator deletes a signup record", async () => {
    const [record] = (await (await admin(t.url, "GET", `/admin/onboardings?phone_number_id=${phoneNumberId}`)).json())
      .data as { id: string }[];
    tick();
    expect((await admin(t.url, "DELETE", `/admin/onboardings/${record!.id}`)).status).toBe(200);
    expect(await trail.fresh()).toMatchObject([
      {
        actor: TOKEN,
        action: "onboarding.delete",
        object: { kind: "onboarding", id: record!.id },
        account_id: acme.id,
        changes: { phone_number_id: [phoneNumberId, null] },
      },
    ]);
    await trail.none(() => admin(t.url, "DELETE", `/admin/onboardings/${record!.id}`), 404);
  });
});

describe("endpoints: every change by the user, the disable by the service", () => {
  test("created, changed, rotated, disabled by a 410, replayed, enabled, recovered, deleted", async () => {
    const endpoint = await api("POST", "/api/endpoints", { url: hook.url, fields: ["messages"] }, 201);
    secrets.add(endpoint.secret);
    const object = { kind: "endpoint", id: endpoint.id };
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "endpoint.create",
        object,
        changes: { url: [null, hook.url], fields: [null, ["messages"]], secret: [null, "[secret changed]"] },
      },
    ]);
    const moved = `${hook.url}/v2`;
    await api("PATCH", `/api/endpoints/${endpoint.id}`, { url: moved }, 200);
    expect((await trail.fresh())[0]).toMatchObject({
      ...byUser(),
      action: "endpoint.update",
      changes: { url: [hook.url, moved] },
    });
    const rotated = await api("POST", `/api/endpoints/${endpoint.id}/rotate-secret`, undefined, 200);
    secrets.add(rotated.secret);
    const [rotation] = await trail.fresh();
    expect(rotation).toMatchObject({
      ...byUser(),
      action: "endpoint.rotate_secret",
      changes: { secret: ["[secret]", "[secret changed]"], previous_secret: [null, "[secret changed]"] },
    });

    hook.respond(() => new Response("gone", { status: 410 }));
    const test = await api("POST", `/api/endpoints/${endpoint.id}/test`, undefined, 202);
    const disabled = async () => (await acme.api<Answer>("GET", `/api/endpoints/${endpoint.id}`)).body.enabled;
    expect(await eventually(disabled, false, 10_000)).toBe(false);
    // Send test is a delivery: only the disable it caused is recorded, by the service.
    expect(await trail.fresh()).toMatchObject([
      {
        actor: { kind: "system", id: "webhook_relay" },
        ip: null,
        action: "endpoint.disable",
        object,
        account_id: acme.id,
        changes: { enabled: [true, false], disabled_reason: [null, "gone"] },
      },
    ]);
    hook.respond(() => new Response("ok"));
    const parked = async () => (await acme.api<Answer>("GET", `/api/deliveries/${test.delivery_id}`)).body.status;
    expect(await eventually(parked, "parked", 10_000)).toBe("parked");
    const replay = await api("POST", `/api/deliveries/${test.delivery_id}/replay`, undefined, 201);
    expect(await trail.fresh()).toMatchObject([
      {
        ...byUser(),
        action: "delivery.replay",
        object: { kind: "delivery", id: replay.id },
        changes: { replay_of: [null, test.delivery_id], endpoint_id: [null, endpoint.id] },
      },
    ]);
    await api("POST", `/api/endpoints/${endpoint.id}/enable`, undefined, 200);
    expect(await trail.fresh()).toMatchObject([
      { ...byUser(), action: "endpoint.enable", changes: { enabled: [false, true], disabled_reason: ["gone", null] } },
    ]);
    const recovery = await api("POST", `/api/endpoints/${endpoint.id}/recover`, { since: "2020-01-01T00:00:00Z" }, 202);
    expect(await trail.fresh()).toMatchObject([
      { ...byUser(), action: "endpoint.recover", object, changes: { recovery_id: [null, recovery.id] } },
    ]);
    const recovered = async () => (await acme.api<Answer>("GET", `/api/endpoints/${endpoint.id}/recover`)).body.status;
    expect(await eventually(recovered, "done", 10_000)).toBe("done");
    // Its replays are the recover's: none has an entry of its own.
    expect(await trail.fresh()).toEqual([]);
    await form(`/dashboard/endpoints/${endpoint.id}/delete`, {}, 303);
    expect(await trail.fresh()).toMatchObject([
      { ...byUser(), action: "endpoint.delete", object, changes: { url: [moved, null], enabled: [true, null] } },
    ]);
  });

  test("refused changes leave none: a bad URL, an unknown field, an unknown or deleted endpoint", async () => {
    await trail.none(() => acme.api("POST", "/api/endpoints", { url: "ftp://x.example/", fields: ["messages"] }), 422);
    await trail.none(() => acme.api("POST", "/api/endpoints", { url: hook.url, fields: ["nope"] }), 422);
    await trail.none(() => acme.api("PATCH", "/api/endpoints/ep_nobody", { url: hook.url }), 404);
    await trail.none(() => acme.api("POST", "/api/endpoints/ep_nobody/rotate-secret"), 404);
    await trail.none(() => acme.api("DELETE", "/api/endpoints/ep_nobody"), 404);
    await trail.none(() => acme.api("POST", "/api/deliveries/dlv_nobody/replay"), 404);
  });
});

let otherEmail: string;

describe("an account sees its own entries, and only those", () => {
  test("GET /api/activity: the account's entries, newest first; another account's never, whatever the filters", async () => {
    const other = await t.account();
    otherEmail = other.email;
    const otherUser = (await t.world.deps.store.users.byEmail(other.email))!;
    expect((await other.api("POST", "/api/api-keys", { mode: "test", name: "Theirs" })).status).toBe(201);
    const all = await allEntries(t.url);
    const mine = all.filter((e) => e.account_id === acme.id);
    const activity = async (query: Record<string, string>, as = acme) => {
      const r = await as.api<Answer>("GET", `/api/activity?${new URLSearchParams(query)}`);
      expect(r.status).toBe(200);
      return r.body.data as { id: string; account_id: string }[];
    };
    expect((await activity({ limit: "200" })).map((e) => e.id)).toEqual(mine.map((e) => e.id));
    const theirs: Record<string, string>[] = [
      { actor: otherUser.id },
      { actor: other.email },
      { actor: other.email, action: "api_key" },
    ];
    for (const query of theirs) expect(await activity(query)).toEqual([]);
    // Another account cannot even be named.
    expect((await acme.api("GET", `/api/activity?account_id=${other.id}`)).status).toBe(400);
    expect((await activity({ action: "api_key.create" }, other)).map((e) => e.account_id)).toEqual([other.id]);
    // The account's own filters work as the operator's do.
    expect((await activity({ actor: user.email, action: "endpoint.rotate_secret" })).length).toBe(1);
    expect((await acme.api("GET", "/api/activity?action=nonsense")).status).toBe(400);
  });

  test("the Activity page lists the account's entries in words, with the same filters, under the dashboard's policy", async () => {
    const page = await fetch(`${t.url}/dashboard/activity?action=endpoint`, { headers: { cookie: acme.cookie() } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    // Each entry's action in words, its object beneath (the filter's list names them all too).
    const row = (words: string) => `${words}<div class="small mono">`;
    expect(html).toContain(row("Rotated an endpoint&#x27;s signing secret"));
    expect(html).toContain("Switchboard (automatic)");
    expect(html).not.toContain(row("Created an API key"));
    const everything = await (
      await fetch(`${t.url}/dashboard/activity`, { headers: { cookie: acme.cookie() } })
    ).text();
    expect(everything).toContain('href="/dashboard/activity" aria-current="page"');
    expect(everything).toContain(acme.email);
    expect(everything).not.toContain(otherEmail);
    const anonymous = await fetch(`${t.url}/dashboard/activity`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
  });

  test("no entry holds a password, session, key, token, app secret, signing secret, code or PIN", async () => {
    expect(secrets.size).toBeGreaterThan(12);
    secrets.expectAbsent(await allEntries(t.url), await t.world.deps.query("SELECT * FROM audit_log"));
  });
});

// Issue 34 (CONTRACT 8): the people who run the service are one "operator" to a tenant.
describe("operators, as the account sees them", () => {
  test('a change by an operator or the operator token is {kind: "operator"}, no id, email or address; /admin/audit keeps them', async () => {
    const email = "hidden-operator@ops.example";
    const operator = await createOperator(t.world.deps, { email, password: "operator password 1" }, BY_CLI);
    const cookie = await operatorCookie(t.url, email, "operator password 1");
    tick();
    const byOperator = await fetch(`${t.url}/admin/accounts/${acme.id}`, {
      method: "PATCH",
      headers: { cookie, origin: t.url, "content-type": "application/json" },
      body: JSON.stringify({ max_numbers: 7 }),
    });
    expect(byOperator.status).toBe(200);
    tick();
    expect((await admin(t.url, "PATCH", `/admin/accounts/${acme.id}`, { max_numbers: 8 })).status).toBe(200);

    const theirs = await allEntries(t.url, { action: "account.update", account_id: acme.id });
    expect(theirs.slice(0, 2)).toMatchObject([
      { actor: TOKEN, ip: LOOPBACK, changes: { max_numbers: [7, 8] } },
      { actor: { kind: "operator", id: operator.id, email }, ip: LOOPBACK, changes: { max_numbers: [null, 7] } },
    ]);

    const activity = async (query: Record<string, string>) => {
      const r = await acme.api<Answer>("GET", `/api/activity?${new URLSearchParams(query)}`);
      expect(r.status).toBe(200);
      return r.body.data as Answer[];
    };
    const seen = await activity({ action: "account" });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const e of seen) {
      expect(e.actor).toEqual({ kind: "operator" });
      expect(e.ip).toBeNull();
    }
    expect(seen.slice(0, 2).map((e) => e.changes)).toEqual([{ max_numbers: [7, 8] }, { max_numbers: [null, 7] }]);
    const everything = JSON.stringify(await activity({ limit: "200" }));
    for (const hidden of [operator.id, email, "admin_token", '"operator_token"'])
      expect(everything).not.toContain(hidden);
    // Nor can the account find an operator by id or email.
    for (const actor of [operator.id, email, "admin_token", "cli"]) expect(await activity({ actor })).toEqual([]);

    const page = await (
      await fetch(`${t.url}/dashboard/activity?action=account`, { headers: { cookie: acme.cookie() } })
    ).text();
    expect(page).toContain("Operator");
    for (const hidden of [operator.id, email, "API token", LOOPBACK]) expect(page).not.toContain(hidden);
  });
});
