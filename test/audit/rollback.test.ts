// Issue 29: an entry is written in the same transaction as the change it records, on the test
// backend. A trigger makes the database refuse every audit insert: each change through the API
// then fails (500) and leaves nothing changed, in the database and in what the server answers;
// once the trigger is gone the same change goes through with its entry. The relay's automatic
// disable too: refused with its entry, the endpoint stays enabled and the attempt is made again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount, signInCookie } from "../dashboard/support.ts";
import { testBackend } from "../support/backend.ts";
import { eventually } from "../support/eventually.ts";
import { admin } from "../support/harness.ts";
import { startWorld, type World } from "../support/world.ts";
import { receiver } from "../webhooks/support.ts";
import { allEntries } from "./support.ts";

let world: World;
const hook = receiver();
let account: { id: string; email: string; password: string };
let cookie: string;
let phoneNumberId: string;

beforeAll(async () => {
  world = await startWorld({ env: { DEV_MODE: "1" } });
  account = await createAccount(world.url, "Rollback");
  cookie = await signInCookie(world.url, account);
  const { wabaId } = await world.waba(account.id);
  phoneNumberId = await world.number(account.id, wabaId);
});
afterAll(async () => {
  hook.stop();
  await world.stop();
});

const refuse = async () => {
  if (testBackend() === "sqlite") {
    await world.deps.query(
      "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit refused'); END",
    );
    return;
  }
  await world.deps.query(
    "CREATE OR REPLACE FUNCTION audit_refused() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$",
  );
  await world.deps.query(
    "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_refused()",
  );
};
const allow = () =>
  world.deps.query(
    testBackend() === "sqlite" ? "DROP TRIGGER audit_refused" : "DROP TRIGGER audit_refused ON audit_log",
  );

const api = (method: string, path: string, body?: unknown, as = cookie) =>
  fetch(`${world.url}${path}`, {
    method,
    headers: { cookie: as, origin: world.url, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
// biome-ignore lint/suspicious/noExplicitAny: each test reads the few fields of an answer it needs
type Answer = Record<string, any>;
const read = async (path: string) => (await (await api("GET", path)).json()) as Answer;
const count = async (sql: string) => (await world.deps.query(sql)).length;

/**
 * `change` fails while audit entries are refused, and `state()` reads the same before and after
 * it; then it goes through, and its one entry is there.
 */
async function inOneTransaction(
  change: () => Promise<Response>,
  state: () => Promise<unknown>,
  action: string,
  status = 200,
) {
  const before = await state();
  const entries = new Set((await allEntries(world.url)).map((e) => e.id));
  await refuse();
  try {
    expect((await change()).status).toBe(500);
    expect(await state()).toEqual(before);
  } finally {
    await allow();
  }
  expect((await allEntries(world.url)).length).toBe(entries.size);
  expect(Math.floor((await change()).status / 100)).toBe(Math.floor(status / 100));
  expect(await state()).not.toEqual(before);
  const added = (await allEntries(world.url)).filter((e) => !entries.has(e.id));
  expect(added.map((e) => e.action as string)).toEqual([action]);
}

describe("a change whose entry cannot be written is not made", () => {
  test("the operator's: an account's billing state, a user, a number checked again", async () => {
    await inOneTransaction(
      () => admin(world.url, "PATCH", `/admin/accounts/${account.id}`, { billing_status: "suspended" }),
      async () => (await (await admin(world.url, "GET", `/admin/accounts/${account.id}`)).json()).billing_status,
      "account.update",
    );
    await inOneTransaction(
      () =>
        admin(world.url, "POST", `/admin/accounts/${account.id}/users`, {
          email: "second@rollback.test",
          password: "a long enough password",
        }),
      () => count("SELECT 1 FROM users WHERE email = 'second@rollback.test'"),
      "user.create",
    );
    await admin(world.url, "PATCH", `/admin/accounts/${account.id}`, { billing_status: "active" });
    world.sim.fault(phoneNumberId, { error: 131031 }, 2);
    await inOneTransaction(
      () => admin(world.url, "POST", `/admin/numbers/${phoneNumberId}/sync`),
      async () => (await (await admin(world.url, "GET", `/admin/numbers/${phoneNumberId}`)).json()).status,
      "number.sync",
    );
    await admin(world.url, "PATCH", `/admin/numbers/${phoneNumberId}`, { status: "connected" });
  });

  test("sign-ins: no session; a wrong password stays counted, its entry or not", async () => {
    const signIn = (password: string) =>
      fetch(`${world.url}/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: account.email, password }),
      });
    await inOneTransaction(
      () => signIn(account.password),
      () => count("SELECT 1 FROM sessions"),
      "session.create",
    );
    // The attempt is counted before its password is checked (src/auth/throttle.ts): a guess whose
    // entry cannot be written must not be a free one.
    const counted = () => world.deps.query("SELECT count FROM sign_in_counts");
    const before = await counted();
    await refuse();
    try {
      expect((await signIn("not the password")).status).toBe(500);
    } finally {
      await allow();
    }
    expect(await counted()).not.toEqual(before);
    const entries = (await allEntries(world.url, { action: "session.failed" })).length;
    expect((await signIn("not the password")).status).toBe(401);
    expect((await allEntries(world.url, { action: "session.failed" })).length).toBe(entries + 1);
  });

  test("the account's: a key revoked, settings, an endpoint changed and deleted, a replay, a recover", async () => {
    const key = (await (await api("POST", "/api/api-keys", { mode: "live" })).json()) as { id: string };
    const keyState = async () => (await read("/api/api-keys")).data.find((k: { id: string }) => k.id === key.id);
    await inOneTransaction(() => api("DELETE", `/api/api-keys/${key.id}`), keyState, "api_key.revoke");
    await inOneTransaction(
      () => api("PATCH", "/api/settings", { retention: "7d" }),
      () => read("/api/settings"),
      "settings.update",
    );

    const endpoint = (await (await api("POST", "/api/endpoints", { url: hook.url, fields: ["messages"] })).json()) as {
      id: string;
    };
    await inOneTransaction(
      () => api("PATCH", `/api/endpoints/${endpoint.id}`, { url: `${hook.url}/moved` }),
      () => read(`/api/endpoints/${endpoint.id}`),
      "endpoint.update",
    );
    hook.respond(() => new Response("no", { status: 500 }));
    const test = (await (await api("POST", `/api/endpoints/${endpoint.id}/test`)).json()) as { delivery_id: string };
    const attempted = async () => (await read(`/api/deliveries/${test.delivery_id}`)).attempts.length;
    expect(await eventually(attempted, 1, 10_000)).toBe(1);
    const replays = async () => (await read(`/api/deliveries?endpoint_id=${endpoint.id}`)).data.length;
    await inOneTransaction(() => api("POST", `/api/deliveries/${test.delivery_id}/replay`), replays, "delivery.replay");
    await inOneTransaction(
      () => api("POST", `/api/endpoints/${endpoint.id}/recover`, { since: "2020-01-01T00:00:00Z" }),
      () => read(`/api/endpoints/${endpoint.id}/recover`),
      "endpoint.recover",
    );
    await inOneTransaction(
      () => api("DELETE", `/api/endpoints/${endpoint.id}`),
      async () => (await api("GET", `/api/endpoints/${endpoint.id}`)).status,
      "endpoint.delete",
    );
  });

  test("the relay's automatic disable: refused with its entry, the endpoint stays enabled and is tried again", async () => {
    hook.respond(() => new Response("gone", { status: 410 }));
    const endpoint = (await (await api("POST", "/api/endpoints", { url: hook.url, fields: ["messages"] })).json()) as {
      id: string;
    };
    const before = hook.received.length;
    await refuse();
    try {
      await api("POST", `/api/endpoints/${endpoint.id}/test`);
      const crashed = () => Promise.resolve(world.deps.logger.lines.some((l) => l.msg === "delivery attempt crashed"));
      expect(await eventually(crashed, true, 10_000)).toBe(true);
      expect(hook.received.length).toBe(before + 1);
      expect((await read(`/api/endpoints/${endpoint.id}`)).enabled).toBe(true);
    } finally {
      await allow();
    }
    // Its lease runs out; the next claim makes the attempt again, which disables it with its entry.
    world.deps.clock.advance(10 * 60_000);
    await world.app().relay.dispatcher.tick();
    const enabled = async () => (await read(`/api/endpoints/${endpoint.id}`)).enabled;
    expect(await eventually(enabled, false, 10_000)).toBe(false);
    const disables = await allEntries(world.url, { action: "endpoint.disable", object_id: endpoint.id });
    expect(disables).toHaveLength(1);
  });
});
