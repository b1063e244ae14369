// The audit log's storage (src/store/audit.ts) on the backend SWITCHBOARD_TEST_BACKEND names:
// its query, its purge, and entries written in the transaction of the change they record.
import { afterEach, describe, expect, test } from "bun:test";
import type { AuditEntry } from "../../src/store/audit.ts";
import type { Store } from "../../src/store/store.ts";
import { testDeps, type TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const DAY = 86_400_000;

async function fresh(): Promise<TestDeps> {
  const deps = await testDeps();
  cleanups.push(deps.cleanup);
  return deps;
}

function account(store: Store, id: string, at: number) {
  return store.directory.createAccount({
    id,
    name: `Account ${id}`,
    email: `${id}@example.com`,
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: at,
  });
}

function entry(id: string, at: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id,
    at,
    actor: { kind: "user", id: "usr_1", email: "one@example.com" },
    action: "account.update",
    object: { kind: "account", id: "acc_a" },
    accountId: "acc_a",
    ip: "127.0.0.1",
    changes: { name: ["Old", "New"] },
    ...over,
  };
}

/** Writes `entries` as the store writes them: each with a change (an account's name) it records. */
async function record(store: Store, entries: AuditEntry[]) {
  for (const e of entries) await store.directory.updateAccount("acc_a", { name: e.id }, e);
}

describe("the audit log's query", () => {
  test("newest first, by time then id; filtered by account, actor (id or email), action or kind of action, object and time; keyset pages", async () => {
    const deps = await fresh();
    const { store } = deps;
    const t = deps.clock.now();
    await account(store, "acc_a", t);
    const operator = { kind: "operator_token", id: "admin_token", email: null } as const;
    const entries = [
      entry("aud_1", t + 1),
      entry("aud_2", t + 2, { action: "endpoint.update", object: { kind: "endpoint", id: "ep_1" } }),
      entry("aud_3", t + 2, { actor: operator, action: "api_key.revoke", object: { kind: "api_key", id: "key_1" } }),
      entry("aud_4", t + 3, { accountId: null, actor: { kind: "user", id: "unknown", email: null } }),
      entry("aud_5", t + 4, { action: "endpoint.enable", object: { kind: "endpoint", id: "ep_1" } }),
    ];
    await record(store, entries);
    const ids = async (filter: Parameters<Store["audit"]["list"]>[0], limit = 50) =>
      (await store.audit.list(filter, limit)).map((e) => e.id);

    expect(await ids({})).toEqual(["aud_5", "aud_4", "aud_3", "aud_2", "aud_1"]);
    expect(await store.audit.list({ objectId: "key_1" }, 10)).toEqual([entries[2]!]);
    expect(await ids({ accountId: "acc_a" })).toEqual(["aud_5", "aud_3", "aud_2", "aud_1"]);
    expect(await ids({ actor: "admin_token" })).toEqual(["aud_3"]);
    expect(await ids({ actor: "ONE@example.com" })).toEqual(["aud_5", "aud_2", "aud_1"]);
    expect(await ids({ action: "endpoint" })).toEqual(["aud_5", "aud_2"]);
    expect(await ids({ action: "endpoint.enable" })).toEqual(["aud_5"]);
    // A kind is a whole word before the dot: `api` is not `api_key`.
    expect(await ids({ action: "api" })).toEqual([]);
    expect(await ids({ objectKind: "endpoint", objectId: "ep_1" })).toEqual(["aud_5", "aud_2"]);
    expect(await ids({ from: t + 2, to: t + 4 })).toEqual(["aud_4", "aud_3", "aud_2"]);
    // Two entries at one time are paged by id, none skipped or repeated.
    expect(await ids({}, 2)).toEqual(["aud_5", "aud_4"]);
    expect(await ids({ before: { at: t + 3, id: "aud_4" } }, 2)).toEqual(["aud_3", "aud_2"]);
    expect(await ids({ before: { at: t + 2, id: "aud_2" } }, 2)).toEqual(["aud_1"]);
  });

  test("the purge deletes entries older than its cut-off, and only those", async () => {
    const deps = await fresh();
    const { store } = deps;
    const t = deps.clock.now();
    await account(store, "acc_a", t);
    await record(store, [entry("aud_old", t), entry("aud_edge", t + DAY), entry("aud_new", t + 2 * DAY)]);
    expect(await store.retention.purgeAudit(t + DAY - 1, 0, { "24h": 0, "7d": 0 }, 2)).toBe(1);
    expect((await store.audit.list({}, 10)).map((e) => e.id)).toEqual(["aud_new", "aud_edge"]);
    expect(await store.retention.purgeAudit(t + DAY - 1, 0, { "24h": 0, "7d": 0 }, 2)).toBe(0);
  });
});

describe("an entry is written in the transaction of its change", () => {
  test("an entry that cannot be written (its id is taken) takes its change with it, and the change is not cached either", async () => {
    const deps = await fresh();
    const { store } = deps;
    const t = deps.clock.now();
    await account(store, "acc_a", t);
    await record(store, [entry("aud_taken", t)]);
    const rows = async (sql: string) => (await deps.query(sql)).length;

    await expect(
      store.directory.updateAccount("acc_a", { name: "Never" }, entry("aud_taken", t + 1)),
    ).rejects.toThrow();
    expect(store.directory.account("acc_a")?.name).toBe("aud_taken");
    expect(await rows("SELECT 1 FROM accounts WHERE name = 'Never'")).toBe(0);

    const endpoint = endpointRow("ep_tx", "acc_a", t);
    await expect(store.endpoints.create(endpoint, entry("aud_taken", t + 1))).rejects.toThrow();
    expect(await store.endpoints.get("ep_tx")).toBeUndefined();
    await store.endpoints.create(endpoint);
    await expect(
      store.endpoints.update(
        "ep_tx",
        { url: "https://elsewhere.example/", updatedAt: t + 2 },
        entry("aud_taken", t + 2),
      ),
    ).rejects.toThrow();
    expect((await store.endpoints.get("ep_tx"))?.url).toBe(endpoint.url);
    await expect(store.endpoints.delete("ep_tx", entry("aud_taken", t + 3))).rejects.toThrow();
    expect(await store.endpoints.get("ep_tx")).toBeDefined();

    const user = { id: "usr_tx", accountId: "acc_a", email: "tx@example.com", passwordHash: "x", createdAt: t };
    await expect(store.users.create(user, entry("aud_taken", t + 4))).rejects.toThrow();
    expect(await store.users.byEmail("tx@example.com")).toBeUndefined();

    const event = eventRow("evt_tx", "acc_a", t);
    await store.queue.enqueue([event], []);
    const replay = { ...deliveryRow("dlv_tx", event, "ep_tx", t), audit: entry("aud_taken", t + 5) };
    await expect(store.queue.enqueue([], [replay])).rejects.toThrow();
    expect(await store.history.delivery("dlv_tx")).toBeUndefined();

    // Only the first entry is there, and only once.
    expect((await store.audit.list({}, 10)).map((e) => e.id)).toEqual(["aud_taken"]);
  });

  test("no entry when nothing changed: a key revoked already, a user whose email is taken, an unknown endpoint", async () => {
    const deps = await fresh();
    const { store } = deps;
    const t = deps.clock.now();
    await account(store, "acc_a", t);
    const key = {
      id: "key_1",
      accountId: "acc_a",
      mode: "live" as const,
      name: null,
      prefix: "px_live_abcd",
      keyHash: "h".repeat(64),
      createdAt: t,
      revokedAt: null,
    };
    await store.directory.createApiKey(key, entry("aud_key", t, { action: "api_key.create" }));
    await store.directory.revokeApiKey("key_1", t + 1, entry("aud_revoke", t + 1, { action: "api_key.revoke" }));
    await store.directory.revokeApiKey("key_1", t + 2, entry("aud_again", t + 2, { action: "api_key.revoke" }));
    expect(store.directory.apiKey("key_1")?.revokedAt).toBe(t + 1);
    const user = { id: "usr_1", accountId: "acc_a", email: "one@example.com", passwordHash: "x", createdAt: t };
    await store.users.create(user, entry("aud_user", t + 3, { action: "user.create" }));
    expect(await store.users.create({ ...user, id: "usr_2" }, entry("aud_user2", t + 4))).toBeNull();
    expect(
      await store.endpoints.update("ep_none", { url: "https://x.example/", updatedAt: t }, entry("aud_ep", t + 5)),
    ).toBe(undefined);
    expect(await store.endpoints.delete("ep_none", entry("aud_ep_del", t + 6))).toBe(false);
    expect((await store.audit.list({}, 10)).map((e) => e.id)).toEqual(["aud_user", "aud_revoke", "aud_key"]);
  });

  test("an endpoint the relay disables (a 410) is recorded once, by the service, with its account", async () => {
    const deps = await fresh();
    const { store } = deps;
    const t = deps.clock.now();
    await account(store, "acc_a", t);
    await store.endpoints.create(endpointRow("ep_gone", "acc_a", t));
    const event = eventRow("evt_1", "acc_a", t);
    await store.queue.enqueue([event], [deliveryRow("dlv_1", event, "ep_gone", t)]);
    const [claimed] = await store.queue.claimDue(t + 1, {
      leaseId: "lease_1",
      limit: 10,
      perEndpoint: 10,
      leaseMs: 60_000,
      maxBytes: Number.POSITIVE_INFINITY,
    });
    const gone = { next: { status: "parked", reason: "gone" }, effect: "gone" } as const;
    const change = await store.queue.completeAttempt(
      firstAttempt("dlv_1", "ep_gone", t + 2, 410, gone, claimed!.leaseId),
    );
    expect(change.disabled).toBe("gone");
    expect(await store.audit.list({}, 10)).toEqual([
      {
        id: "aud_dlv_1_lease_1",
        at: t + 2,
        actor: { kind: "system", id: "webhook_relay", email: null },
        action: "endpoint.disable",
        object: { kind: "endpoint", id: "ep_gone" },
        accountId: "acc_a",
        ip: null,
        changes: { enabled: [true, false], disabled_reason: [null, "gone"] },
      },
    ]);
  });
});
