import { expect } from "bun:test";
import { BY_CLI, byOperator } from "../../src/audit/entry.ts";
import { createOperator } from "../../src/operators/operations.ts";
import { OPERATOR_COOKIE, openOperatorSession } from "../../src/operators/session.ts";
import { MemoryLimiter } from "../../src/limits/limiter.ts";
import { flushBuckets } from "../../src/limits/write-through.ts";
import { eventually } from "../support/eventually.ts";
import { testBackend, type Row } from "../support/backend.ts";
import { bearer } from "../support/world.ts";
import { receiver, type Receiver } from "../webhooks/support.ts";
import { signupWorld, type SignupWorld } from "../onboarding/support.ts";
import type { Kind } from "./route-table.ts";

/** An account with a dashboard user, its session cookie, and the real ids of what it owns. */
export interface Seeded {
  id: string;
  email: string;
  cookie: string;
  ids: Partial<Record<Kind, string>>;
}

/**
 * The simulator (with Embedded Signup and webhooks back to ingress) and Switchboard, started once
 * for a whole file; `receivers` are stopped with it.
 */
export async function isolationWorld(options: Parameters<typeof signupWorld>[0] = {}) {
  const t = await signupWorld(options);
  const receivers: Receiver[] = [];
  const hook = (respond?: Parameters<typeof receiver>[0]) => {
    const r = receiver(respond);
    receivers.push(r);
    return r;
  };
  return {
    t,
    hook,
    async stop() {
      for (const r of receivers) r.stop();
      await t.stop();
    },
  };
}

export type IsolationWorld = Awaited<ReturnType<typeof isolationWorld>>;

/** The Cookie header of a new operator's session (opened as a sign-in opens one, without the slow password check). */
export async function operatorSession(w: IsolationWorld): Promise<string> {
  const { deps } = w.t.world;
  const operator = await createOperator(
    deps,
    { email: `operator-${deps.random.bytes(4).join("")}@ops.example`, password: "operator password 1" },
    BY_CLI,
  );
  return `${OPERATOR_COOKIE}=${await openOperatorSession(deps, operator, byOperator(operator, null))}`;
}

/** Calls the dashboard API as a signed-in user, as the dashboard's own script does (JSON, same Origin). */
export function apiCall(url: string, cookie: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    redirect: "manual",
    headers: { cookie, origin: url, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The JSON of an answer with the expected status, as the shape the caller reads. */
async function ok<T>(response: Promise<Response>, status: number): Promise<T> {
  const r = await response;
  const text = await r.text();
  if (r.status !== status) throw new Error(`seeding: ${r.url} answered ${r.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as T;
}

type Created = { id: string };
type Page = { data: Created[] };

/**
 * An account with one of everything, made through the real API, the proxy and ingress: a number
 * and its WABA from a (coexistence) Embedded Signup, an API key, an endpoint whose receiver takes
 * every delivery and one that answered 410 Gone (disabled, its delivery parked, a notification
 * sent, a bulk recover run), and a message sent through the proxy (a request log entry) whose
 * status webhooks were delivered with their attempts.
 */
export async function seedAccount(w: IsolationWorld): Promise<Seeded> {
  const { t } = w;
  const user = await t.account();
  const cookie = user.cookie();
  const api = <T>(method: string, path: string, body: unknown, status: number) =>
    ok<T>(apiCall(t.url, cookie, method, path, body), status);

  const popup = t.sim.signUp({ coexistence: true });
  const signup = await api<Created & { status: string }>(
    "POST",
    "/api/signups",
    { code: popup.code, waba_id: popup.wabaId, phone_number_id: popup.phoneNumberId, coexistence: true },
    201,
  );
  expect(signup.status).toBe("done");
  const key = await api<Created & { key: string }>("POST", "/api/api-keys", { mode: "live", name: "Seeded key" }, 201);

  const taking = w.hook();
  const gone = w.hook(() => new Response("gone", { status: 410 }));
  const endpoint = await api<Created>("POST", "/api/endpoints", { url: taking.url, fields: ["messages"] }, 201);
  const disabled = await api<Created>("POST", "/api/endpoints", { url: gone.url, fields: ["messages"] }, 201);

  const sent = await t.world.call(`/v21.0/${popup.phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(key.key), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
  expect(sent.status).toBe(200);
  const wamid = ((await sent.json()) as { messages: { id: string }[] }).messages[0]!.id;
  await t.sim.webhooksIdle();
  expect(await eventually(async () => taking.received.length >= 3, true, 10_000)).toBe(true);
  const disabledNow = async () =>
    (await api<{ enabled: boolean }>("GET", `/api/endpoints/${disabled.id}`, undefined, 200)).enabled === false;
  expect(await eventually(disabledNow, true, 10_000)).toBe(true);
  await t.world.app().requestLog!.flush();

  const recovery = await api<Created>(
    "POST",
    `/api/endpoints/${disabled.id}/recover`,
    { since: "2000-01-01T00:00:00Z" },
    202,
  );
  const recovered = async () =>
    (await api<{ status: string }>("GET", `/api/endpoints/${disabled.id}/recover`, undefined, 200)).status;
  expect(await eventually(recovered, "done", 10_000)).toBe("done");
  const deliveries = await api<Page>("GET", `/api/deliveries?endpoint_id=${endpoint.id}`, undefined, 200);
  const notifications = await api<Page>("GET", "/api/notifications", undefined, 200);
  expect(notifications.data.length).toBeGreaterThan(0);
  await quiet(t, cookie);
  const stored = await t.world.deps.store.users.byEmail(user.email);

  return {
    id: user.id,
    email: user.email,
    cookie,
    ids: {
      account: user.id,
      endpoint: endpoint.id,
      delivery: deliveries.data[0]!.id,
      request: sent.headers.get("x-proxy-request-id")!,
      message: wamid,
      number: popup.phoneNumberId,
      waba: popup.wabaId,
      signup: signup.id,
      recovery: recovery.id,
      key: key.id,
      notification: notifications.data[0]!.id,
      user: stored?.id,
    },
  };
}

/** An account with a number (connected by the operator), an endpoint and a session: the caller. */
export async function callerAccount(w: IsolationWorld): Promise<Seeded> {
  const { t } = w;
  const user = await t.account();
  const cookie = user.cookie();
  const { wabaId } = await t.world.waba(user.id);
  const number = await t.world.number(user.id, wabaId);
  const endpoint = await ok<Created>(
    apiCall(t.url, cookie, "POST", "/api/endpoints", { url: w.hook().url, fields: ["messages"] }),
    201,
  );
  const stored = await t.world.deps.store.users.byEmail(user.email);
  return {
    id: user.id,
    email: user.email,
    cookie,
    ids: { account: user.id, number, waba: wabaId, endpoint: endpoint.id, user: stored?.id },
  };
}

/**
 * Waits until no delivery is pending and writes the rate-limit buckets the seeding's calls took:
 * nothing of the account changes on its own afterwards.
 */
async function quiet(t: SignupWorld, cookie: string): Promise<void> {
  const pending = async () =>
    ((await (await apiCall(t.url, cookie, "GET", "/api/deliveries?status=pending")).json()) as { data: unknown[] }).data
      .length;
  expect(await eventually(pending, 0, 10_000)).toBe(0);
  await t.sim.webhooksIdle();
  const { limits, store } = t.world.deps;
  if (limits.limiter instanceof MemoryLimiter) await flushBuckets(limits.limiter, store.buckets);
}

/** Tables that hold no account's rows, and why. */
const NOBODYS: Record<string, string> = {
  meta: "the server's own settings",
  changes: "PostgreSQL's change feed between instances (ids only, pruned)",
  instances: "the server instances alive and their heartbeats (the scale-out mode's)",
  __drizzle_migrations: "applied migrations",
  sqlite_sequence: "SQLite's counters",
  operators: "the people who run the service, no account's",
  operator_sessions: "operators' sessions",
  sign_in_counts: "sign-in attempts of both doors, by a hash of email and client address: no account's",
  event_hours: "the upstream events ingress accepted per hour, of every account together",
};

/**
 * Every row of every table that belongs to `account`, by table, sorted: rows with its account_id,
 * rows hanging off its endpoints, deliveries or events, and rate
 * buckets keyed by one of its ids. A table nobody has said how to attribute fails the dump, so
 * a new table is covered or named.
 */
export async function ownedRows(
  query: (sql: string) => Promise<Row[]>,
  account: Seeded,
): Promise<Record<string, Row[]>> {
  const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const owner = lit(account.id);
  const tables =
    testBackend() === "sqlite"
      ? (await query("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name as string)
      : (
          await query("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()")
        ).map((r) => r.name as string);
  const columnsOf = async (table: string) =>
    testBackend() === "sqlite"
      ? (await query(`SELECT name FROM pragma_table_info(${lit(table)})`)).map((r) => r.name as string)
      : (
          await query(
            `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${lit(table)}`,
          )
        ).map((r) => r.name as string);
  const ids = Object.values(account.ids).filter((id): id is string => !!id);
  const dump: Record<string, Row[]> = {};
  for (const table of tables.sort()) {
    if (NOBODYS[table] !== undefined) continue;
    const columns = await columnsOf(table);
    const where =
      table === "accounts"
        ? `id = ${owner}`
        : columns.includes("account_id")
          ? `account_id = ${owner}`
          : columns.includes("endpoint_id")
            ? `endpoint_id IN (SELECT id FROM endpoints WHERE account_id = ${owner})`
            : columns.includes("delivery_id")
              ? `delivery_id IN (SELECT id FROM deliveries WHERE account_id = ${owner})`
              : columns.includes("event_id")
                ? `event_id IN (SELECT id FROM events WHERE account_id = ${owner})`
                : table === "rate_buckets"
                  ? ids.map((id) => `key LIKE ${lit(`%${id}%`)}`).join(" OR ")
                  : null;
    if (where === null)
      throw new Error(`table ${table}: the isolation dump cannot tell which of its rows belong to an account`);
    const rows = await query(`SELECT * FROM ${table} WHERE ${where}`);
    dump[table] = rows
      .map((r) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? String(v) : v)))
      .sort()
      .map((s) => JSON.parse(s));
  }
  return dump;
}
