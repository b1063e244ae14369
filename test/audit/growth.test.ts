import { afterAll, beforeAll, expect, test } from "bun:test";
import type { AuditView } from "../../src/audit/queries.ts";
import { ACCOUNT_HOURLY_ENTRIES } from "../../src/store/audit.ts";
import { admin } from "../support/harness.ts";
import { createAccount, dashboardWorld, operatorNumber, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { allEntries } from "./support.ts";

// Issue 34, item 7: a tenant cannot grow the audit log without bound. A change that changes
// nothing writes no entry; a long value is cut short with a marker; past ACCOUNT_HOURLY_ENTRIES of
// its own entries in an hour, an account's further changes still apply and are counted in one
// entry of the hour; its own entries go with its retention, the operator's stay AUDIT_RETENTION.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let world: Awaited<ReturnType<typeof dashboardWorld>>;
let acme: TestAccount;
let cookie: string;
let endpointId: string;

/** The dashboard API as acme, a millisecond after the last call (entries are listed newest first). */
async function api(method: string, path: string, body?: unknown) {
  world.deps.clock.advance(1);
  return fetch(`${world.url}${path}`, {
    method,
    headers: { cookie, origin: world.url, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
const entries = () => allEntries(world.url, { account_id: acme.id });
const size = (list: AuditView[]) => JSON.stringify(list).length;

beforeAll(async () => {
  world = await dashboardWorld();
  world.upstream.numbers.set("1001", { display: "+1 555 0101" });
  acme = await createAccount(world.url, "Acme");
  await operatorNumber(world.url, acme.id, "waba-acme", "1001");
  cookie = await signInCookie(world.url, acme);
  const created = await api("POST", "/api/endpoints", { url: "http://127.0.0.1:4000/in", fields: ["messages"] });
  expect(created.status).toBe(201);
  endpointId = ((await created.json()) as { id: string }).id;
});
afterAll(() => world.close());

test("a change that changes nothing writes no entry: an endpoint, the settings, an account by the operator", async () => {
  const before = (await entries()).length;
  for (let i = 0; i < 3; i++) {
    expect((await api("PATCH", `/api/endpoints/${endpointId}`, { url: "http://127.0.0.1:4000/in" })).status).toBe(200);
    expect((await api("PATCH", "/api/settings", { retention: "24h" })).status).toBe(200);
    expect((await admin(world.url, "PATCH", `/admin/accounts/${acme.id}`, { name: "Acme" })).status).toBe(200);
    expect((await admin(world.url, "PATCH", `/admin/wabas/waba-acme`, { status: "connected" })).status).toBe(200);
  }
  expect((await entries()).length).toBe(before);
});

test("a long value is cut short with a marker; the change itself is whole", async () => {
  const long = `http://127.0.0.1:4000/in?pad=${"a".repeat(2000)}`;
  expect((await api("PATCH", `/api/endpoints/${endpointId}`, { url: long })).status).toBe(200);
  const [entry] = await entries();
  expect(entry).toMatchObject({ action: "endpoint.update", object: { id: endpointId } });
  const [was, now] = entry!.changes.url as [string, string];
  expect(was).toBe("http://127.0.0.1:4000/in");
  expect(now.length).toBeLessThan(300);
  expect(now).toStartWith(long.slice(0, 200));
  expect(now).toEndWith(`… [${long.length} characters]`);
  const stored = (await (await api("GET", `/api/endpoints/${endpointId}`)).json()) as { url: string };
  expect(stored.url).toBe(long);
  // 200 such changes: well under the 810 KB they added before.
  const before = size(await entries());
  for (let i = 0; i < 200; i++)
    expect((await api("PATCH", `/api/endpoints/${endpointId}`, { url: `${long}${i % 2}` })).status).toBe(200);
  expect(size(await entries()) - before).toBeLessThan(200 * 800);
});

test("past the hourly figure the changes apply and are counted in one entry of the hour; the next hour records again", async () => {
  world.deps.clock.advance(HOUR - (world.deps.clock.now() % HOUR));
  const own = (list: AuditView[]) => list.filter((e) => e.actor.kind === "user");
  const url = (i: number) => `http://127.0.0.1:4000/in/${i}`;
  for (let i = 0; i < ACCOUNT_HOURLY_ENTRIES + 25; i++) {
    const r = await api("PATCH", `/api/endpoints/${endpointId}`, { url: url(i) });
    expect(r.status).toBe(200);
  }
  const stored = (await (await api("GET", `/api/endpoints/${endpointId}`)).json()) as { url: string };
  expect(stored.url).toBe(url(ACCOUNT_HOURLY_ENTRIES + 24));
  const thisHour = (await entries()).filter(
    (e) => Date.parse(e.at!) >= world.deps.clock.now() - (world.deps.clock.now() % HOUR),
  );
  expect(own(thisHour).length).toBe(ACCOUNT_HOURLY_ENTRIES);
  const counted = thisHour.filter((e) => e.action === "audit.capped");
  expect(counted).toMatchObject([
    {
      actor: { kind: "system", id: "audit_cap" },
      object: { kind: "account", id: acme.id },
      changes: { not_recorded: [null, 25] },
    },
  ]);
  // The operator's changes are never capped.
  world.deps.clock.advance(1);
  expect((await admin(world.url, "PATCH", `/admin/accounts/${acme.id}`, { name: "Acme Corp" })).status).toBe(200);
  expect((await entries())[0]).toMatchObject({ action: "account.update", actor: { kind: "operator_token" } });
  world.deps.clock.advance(HOUR);
  expect((await api("PATCH", `/api/endpoints/${endpointId}`, { url: url(0) })).status).toBe(200);
  expect((await entries())[0]).toMatchObject({ action: "endpoint.update", actor: { kind: "user" } });
});

test("failed sign-ins fill a figure of their own: guesses from many addresses never push the account's changes out", async () => {
  world.deps.clock.advance(HOUR - (world.deps.clock.now() % HOUR));
  const user = (await world.deps.store.users.byEmail(acme.email))!;
  // A wrong password from each of many addresses (no throttle stops one guess an address), past
  // the hour's figure; written as the sign-in door writes them, without hashing 300 passwords.
  for (let i = 0; i < ACCOUNT_HOURLY_ENTRIES + 7; i++)
    await world.deps.store.audit.record({
      id: `aud_guess_${i}`,
      at: world.deps.clock.now(),
      actor: { kind: "user", id: user.id, email: user.email },
      action: "session.failed",
      object: { kind: "user", id: user.id },
      accountId: acme.id,
      ip: `203.0.${i >> 8}.${i & 255}`,
      changes: {},
    });
  expect((await api("PATCH", `/api/endpoints/${endpointId}`, { url: "http://127.0.0.1:4000/mine" })).status).toBe(200);
  const thisHour = (await entries()).filter(
    (e) => Date.parse(e.at!) >= world.deps.clock.now() - (world.deps.clock.now() % HOUR),
  );
  expect(thisHour.filter((e) => e.action === "session.failed")).toHaveLength(ACCOUNT_HOURLY_ENTRIES);
  expect(thisHour.filter((e) => e.action === "audit.capped")).toMatchObject([
    { object: { kind: "sign_in", id: acme.id }, changes: { not_recorded: [null, 7] } },
  ]);
  expect(thisHour[0]).toMatchObject({ action: "endpoint.update", actor: { kind: "user" } });
});

test("failed sign-ins of no account (unknown emails, operators) share one figure of their own", async () => {
  world.deps.clock.advance(HOUR - (world.deps.clock.now() % HOUR));
  const since = world.deps.clock.now();
  for (let i = 0; i < ACCOUNT_HOURLY_ENTRIES + 3; i++)
    await world.deps.store.audit.record({
      id: `aud_unknown_${i}`,
      at: since,
      actor: { kind: "user", id: "unknown", email: `nobody${i}@example.com` },
      action: "session.failed",
      object: { kind: "user", id: "unknown" },
      accountId: null,
      ip: `2001:db8:${i}::1`,
      changes: {},
    });
  const list = await allEntries(world.url, { from: new Date(since).toISOString() });
  expect(list.filter((e) => e.action === "session.failed")).toHaveLength(ACCOUNT_HOURLY_ENTRIES);
  expect(list.filter((e) => e.action === "audit.capped")).toMatchObject([
    { object: { kind: "sign_in", id: "unknown" }, account_id: null, changes: { not_recorded: [null, 3] } },
  ]);
});

test("the account's own entries go with its retention; the operator's stay AUDIT_RETENTION", async () => {
  world.deps.clock.advance(DAY + HOUR);
  await world.purge();
  const left = await entries();
  expect(left.filter((e) => e.actor.kind === "user" || e.actor.kind === "system")).toEqual([]);
  expect(left.map((e) => e.action as string).sort()).toEqual(
    ["account.create", "account.update", "user.create", "waba.create", "number.create"].sort(),
  );
  world.deps.clock.advance(90 * DAY);
  await world.purge();
  expect(await entries()).toEqual([]);
});
