import { Database } from "bun:sqlite";
import { NO_CAUSE } from "../../src/store/types.ts";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createAccount, createUser } from "../../src/accounts/accounts.ts";
import { createApiKey } from "../../src/accounts/keys.ts";
import { createWaba, updateWaba } from "../../src/numbers/wabas.ts";
import { apiKeyMode, hashApiKey } from "../../src/accounts/api-key.ts";
import { createSealer, SealError } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { DatabaseInUseError, takeServerLock } from "../../src/store/sqlite/server-lock.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { SLOT_RECORDS } from "../../src/store/sqlite/request-log-writes.ts";
import type { RequestRecord } from "../../src/store/requests.ts";
import { embeddedMigrations } from "../../db/migrations.gen.ts";
import { sqliteTestDeps, tempDir } from "../support/harness.ts";
import { databaseBefore } from "../support/old-database.ts";
import { eventually } from "../support/eventually.ts";
import { bySystem } from "../../src/audit/entry.ts";

const BY_TEST = bySystem("test");

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fresh() {
  const deps = await sqliteTestDeps();
  cleanups.push(deps.cleanup);
  return deps;
}

/** Every byte SQLite wrote for this database: the main file and its write-ahead log. */
function rawBytes(dbPath: string): string {
  let text = readFileSync(dbPath).toString("latin1");
  try {
    text += readFileSync(`${dbPath}-wal`).toString("latin1");
  } catch {
    // no WAL file: everything is in the main file
  }
  return text;
}

describe("migrations", () => {
  test("a fresh database gets every table and one applied migration per file", async () => {
    const deps = await fresh();
    const db = new Database(deps.dbPath, { readonly: true });
    const tables = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => r.name);
    for (const name of [
      "accounts",
      "users",
      "sessions",
      "api_keys",
      "wabas",
      "numbers",
      "endpoints",
      "events",
      "deliveries",
      "attempts",
      "notifications",
      "rate_buckets",
    ]) {
      expect(tables).toContain(name);
    }
    const applied = db.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()!.n;
    expect(applied).toBe(embeddedMigrations.length);
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
    db.close();
  });

  test("reopening an existing database keeps its data and applies nothing twice", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const sealer = createSealer(new Uint8Array(32).fill(1), cryptoRandom);
    const first = openSqliteStore(path, sealer);
    await first.directory.createAccount({
      id: "acc_kept",
      name: "Kept",
      email: "k@example.com",
      billingStatus: "active",
      retention: "7d",
      maxNumbers: null,
      createdAt: 1,
    });
    await first.close();
    const second = openSqliteStore(path, sealer);
    expect(second.directory.account("acc_kept")).toMatchObject({ name: "Kept", retention: "7d" });
    await second.close();
    const db = new Database(path, { readonly: true });
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()!.n).toBe(
      embeddedMigrations.length,
    );
    db.close();
  });

  test("a database from an older build is upgraded in place", async () => {
    // Simulate the older build: only the first migration applied, then the current code opens it.
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const old = databaseBefore(path, embeddedMigrations[1]!.tag);
    old.run(
      "INSERT INTO accounts (id, name, email, billing_status, retention, created_at) VALUES ('acc_old', 'Old', 'o@example.com', 'active', '24h', 1)",
    );
    old.close();
    const store = openSqliteStore(path, createSealer(new Uint8Array(32).fill(1), cryptoRandom));
    expect(store.directory.account("acc_old")?.name).toBe("Old");
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()!.n).toBe(
      embeddedMigrations.length,
    );
    db.close();
  });
});

describe("the request log's own file", () => {
  const HOUR = 3_600_000;
  const route = "POST /{version}/{phone_number_id}/messages";
  const sealer = createSealer(new Uint8Array(32).fill(1), cryptoRandom);
  const tables = (path: string) => {
    const db = new Database(path, { readonly: true });
    const names = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name);
    db.close();
    return names;
  };
  const oldRecord = (
    id: string,
  ) => `INSERT INTO moved_request_log (id, account_id, at, api_key_id, method, route, phone_number_id, waba_id, status,
    error_code, upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id)
    VALUES ('${id}', 'acc_old', ${HOUR + 5}, 'key_1', 'POST', '${route}', '555', '444', 200, NULL, 200, NULL, NULL, 12.5, 100, 150, 'wamid.old')`;
  const usage = [
    { accountId: "acc_old", targetId: "555", hour: HOUR, kind: "forwarded" as const, label: route, count: 7 },
  ];

  /** A server's store on `path`, once the older release's records have left the main file. */
  async function moved(path: string) {
    const store = openSqliteStore(path, sealer, { serving: true });
    cleanups.push(() => store.close());
    // Its usage counts moved before the store opened; its records move on the writer thread.
    expect(await store.requests.usage("acc_old", 0, 2 * HOUR)).toEqual(usage);
    expect(await eventually(async () => tables(path).includes("moved_request_log"), false, 10_000)).toBe(false);
    return store;
  }

  test("an older database's log and usage counts move into the file beside it, the records after the start, and leave the main file", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const old = databaseBefore(path, "0012_request_log_moved");
    old.run(
      "INSERT INTO accounts (id, name, email, billing_status, retention, created_at) VALUES ('acc_old', 'Old', 'o@example.com', 'active', '7d', 1)",
    );
    old.exec("ALTER TABLE request_log RENAME TO moved_request_log");
    // More than a step of the move (5,000 records).
    old.transaction(() => {
      for (let i = 0; i < 12_000; i++) old.run(oldRecord(`req_${String(i).padStart(20, "0")}`));
    })();
    old.exec("ALTER TABLE moved_request_log RENAME TO request_log");
    old.run(`INSERT INTO usage_hours VALUES ('acc_old', '555', ${HOUR}, 'forwarded', '${route}', 7)`);
    old.close();

    const store = await moved(path);
    expect(await store.requests.get("acc_old", `req_${"0".repeat(20)}`)).toMatchObject({
      at: HOUR + 5,
      upstreamMs: 12.5,
      messageId: "wamid.old",
    });
    expect(await store.requests.list("acc_old", {}, 200)).toHaveLength(200);
    expect(await store.requests.byMessageId("acc_old", "wamid.old")).toHaveLength(12_000);
    await store.close();
    expect(tables(path).filter((name) => /request_log|usage_hours/.test(name))).toEqual([]);
    expect(tables(join(dir.path, "db-requests.sqlite")).sort()).toEqual(["request_log", "usage_hours"]);

    // A move cut short after its copies (the old tables still there) is done again: nothing counted twice.
    const main = new Database(path);
    main.run("CREATE TABLE moved_usage_hours (account_id, target_id, hour, kind, label, count)");
    main.run(`INSERT INTO moved_usage_hours VALUES ('acc_old', '555', ${HOUR}, 'forwarded', '${route}', 7)`);
    main.run(`CREATE TABLE moved_request_log (id TEXT PRIMARY KEY, account_id, at, api_key_id, method, route, phone_number_id, waba_id, status,
      error_code, upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id)`);
    main.run(oldRecord(`req_${"0".repeat(20)}`));
    main.close();
    const again = await moved(path);
    expect(await again.requests.byMessageId("acc_old", "wamid.old")).toHaveLength(12_000);
    expect(tables(path)).not.toContain("moved_usage_hours");
  });

  test("a log file of version 1 (WITHOUT ROWID, the whole message id indexed) keeps its records at version 3", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const v1 = new Database(join(dir.path, "db-requests.sqlite"), { create: true });
    v1.exec(`CREATE TABLE moved_request_log (id TEXT PRIMARY KEY NOT NULL, account_id TEXT NOT NULL, at INTEGER NOT NULL,
      api_key_id TEXT NOT NULL, method TEXT NOT NULL, route TEXT, phone_number_id TEXT, waba_id TEXT, status INTEGER NOT NULL,
      error_code INTEGER, upstream_status INTEGER, upstream_error_code INTEGER, upstream_error_subcode INTEGER,
      upstream_ms REAL, request_bytes INTEGER, response_bytes INTEGER, message_id TEXT) WITHOUT ROWID;
      CREATE INDEX request_log_account ON moved_request_log (account_id, at);
      CREATE INDEX request_log_message ON moved_request_log (message_id) WHERE message_id IS NOT NULL;
      CREATE TABLE usage_hours (account_id TEXT NOT NULL, target_id TEXT NOT NULL, hour INTEGER NOT NULL,
      kind TEXT NOT NULL, label TEXT NOT NULL, count INTEGER NOT NULL,
      PRIMARY KEY (account_id, hour, target_id, kind, label)) WITHOUT ROWID;`);
    for (let i = 0; i < 3; i++) v1.run(oldRecord(`req_${i}`));
    v1.exec("ALTER TABLE moved_request_log RENAME TO request_log; PRAGMA user_version = 1");
    v1.close();

    const store = openSqliteStore(path, sealer, { serving: true });
    cleanups.push(() => store.close());
    expect((await store.requests.list("acc_old", {}, 10)).map((r) => r.id).sort()).toEqual(["req_0", "req_1", "req_2"]);
    expect(await store.requests.get("acc_old", "req_1")).toMatchObject({ upstreamMs: 12.5, messageId: "wamid.old" });
    expect(await store.requests.byMessageId("acc_old", "wamid.old")).toHaveLength(3);
    expect(await store.requests.byMessageId("acc_old", "x.wamid.old")).toEqual([]);
    const file = new Database(join(dir.path, "db-requests.sqlite"), { readonly: true });
    expect(file.query<{ user_version: number }, []>("PRAGMA user_version").get()?.user_version).toBe(3);
    expect(
      file
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE tbl_name = 'request_log' ORDER BY name")
        .all()
        .map((r) => r.name),
    ).toEqual(["request_log", "request_log_account", "request_log_id", "request_log_message"]);
    file.close();

    // Records written since, over more than two slots of the message-id index, are found beside
    // the older ones (whose slot is null), and another account's are not.
    const sent = (i: number, accountId = "acc_old"): RequestRecord => ({
      id: `req_new_${String(i).padStart(6, "0")}`,
      accountId,
      at: HOUR + 10 + i,
      apiKeyId: "key_1",
      method: "POST",
      route,
      phoneNumberId: "555",
      wabaId: "444",
      status: 200,
      errorCode: null,
      upstreamStatus: 200,
      upstreamErrorCode: null,
      upstreamErrorSubcode: null,
      upstreamMs: 1,
      requestBytes: 100,
      responseBytes: 150,
      messageId: i % 1000 === 7 ? "wamid.old" : `wamid.new${i}`,
    });
    const batch = Array.from({ length: 2 * SLOT_RECORDS + 100 }, (_, i) => sent(i));
    for (let i = 0; i < batch.length; i += 4000) await store.requests.append(batch.slice(i, i + 4000));
    await store.requests.append([sent(999_999, "acc_other")]);
    expect((await store.requests.byMessageId("acc_old", "wamid.old")).length).toBe(3 + 17);
    expect(await store.requests.byMessageId("acc_old", `wamid.new${2 * SLOT_RECORDS + 50}`)).toMatchObject([
      { id: `req_new_${String(2 * SLOT_RECORDS + 50).padStart(6, "0")}` },
    ]);
    expect(await store.requests.byMessageId("acc_old", "wamid.new999999")).toEqual([]);
  });
});

describe("the server lock", () => {
  test("a second server's store on the same file is refused until the first closes; other stores open beside it", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const sealer = createSealer(new Uint8Array(32).fill(1), cryptoRandom);
    const server = openSqliteStore(path, sealer, { serving: true });
    await server.directory.createAccount({
      id: "acc_one",
      name: "One",
      email: "o@example.com",
      billingStatus: "active",
      retention: "24h",
      maxNumbers: null,
      createdAt: 1,
    });
    expect(() => openSqliteStore(path, sealer, { serving: true })).toThrow(DatabaseInUseError);
    // The CLI's store, beside the running server.
    const cli = openSqliteStore(path, sealer);
    expect(cli.directory.account("acc_one")?.name).toBe("One");
    await cli.close();
    await server.close();
    const next = openSqliteStore(path, sealer, { serving: true });
    expect(next.directory.account("acc_one")?.name).toBe("One");
    await next.close();
  });

  test("a refused server leaves its database as it found it: no migration runs under the running server", () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const sealer = createSealer(new Uint8Array(32).fill(1), cryptoRandom);
    // Another server holds the lock on a file that has no schema yet.
    const other = takeServerLock(path);
    try {
      expect(() => openSqliteStore(path, sealer, { serving: true })).toThrow(
        `${path} is in use by another switchboard server`,
      );
      expect(existsSync(path)).toBe(false);
    } finally {
      other.release();
    }
  });
});

describe("API keys", () => {
  test("only a SHA-256 hash of the key is stored, and the key is found by that hash", async () => {
    const deps = await fresh();
    const account = await createAccount(deps, { name: "A", email: "a@example.com" }, BY_TEST);
    const { key, record } = await createApiKey(deps, account.id, { mode: "live" }, BY_TEST);
    expect(apiKeyMode(key)).toBe("live");
    expect(record.keyHash).toBe(hashApiKey(key));
    expect(deps.store.directory.apiKeyByHash(hashApiKey(key))?.id).toBe(record.id);
    expect(deps.store.directory.apiKeyByHash(hashApiKey(`${key}x`))).toBeUndefined();
    await deps.store.close();
    const raw = rawBytes(deps.dbPath);
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(key.slice(12));
    expect(raw).toContain(record.keyHash);
  });

  test.each([
    "",
    "px_live_short",
    `px_prod_${"a".repeat(32)}`,
    `px_live_${"a".repeat(31)}!`,
    `Bearer px_live_${"a".repeat(32)}`,
  ])("%j is not a well-formed key", (text) => {
    expect(apiKeyMode(text)).toBeNull();
  });
});

describe("encryption at rest", () => {
  test("upstream tokens, BYO app secrets and password never appear in the database file", async () => {
    const deps = await fresh();
    const account = await createAccount(deps, { name: "A", email: "a@example.com" }, BY_TEST);
    const token = `EAAGtoken-${"t".repeat(40)}`;
    const appSecret = `byo-app-secret-${"s".repeat(20)}`;
    await createWaba(deps, account.id, { waba_id: "1001", access_token: token, app_secret: appSecret }, BY_TEST);
    await updateWaba(deps, "1001", { access_token: `${token}-rotated` }, BY_TEST);
    await createUser(deps, account.id, { email: "u@example.com", password: "hunter2hunter2" }, BY_TEST);
    expect(deps.store.directory.waba("1001")?.accessToken).toBe(`${token}-rotated`);
    await deps.store.close();
    const raw = rawBytes(deps.dbPath);
    for (const secret of [token, appSecret, "hunter2hunter2"]) expect(raw).not.toContain(secret);
  });

  test("a database opened with another key fails clearly instead of yielding garbage", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = join(dir.path, "db.sqlite");
    const store = openSqliteStore(path, createSealer(new Uint8Array(32).fill(1), cryptoRandom));
    await store.directory.createAccount({
      id: "acc_a",
      name: "A",
      email: "a@example.com",
      billingStatus: "active",
      retention: "24h",
      maxNumbers: null,
      createdAt: 1,
    });
    await store.directory.createWaba({
      ...NO_CAUSE,
      wabaId: "1001",
      accountId: "acc_a",
      accessToken: "tok",
      appSecret: null,
      status: "connected",
      createdAt: 1,
      updatedAt: 1,
    });
    await store.close();
    expect(() => openSqliteStore(path, createSealer(new Uint8Array(32).fill(2), cryptoRandom))).toThrow(SealError);
  });
});

describe("directory refresh", () => {
  test("changes committed by another connection appear after refresh, not before", async () => {
    const deps = await fresh();
    expect(await deps.store.directory.refresh()).toBe(false);
    const other = openSqliteStore(deps.dbPath, createSealer(deps.config.encryptionKey!, cryptoRandom));
    await other.directory.createAccount({
      id: "acc_cli",
      name: "From CLI",
      email: "c@example.com",
      billingStatus: "active",
      retention: "24h",
      maxNumbers: null,
      createdAt: 1,
    });
    await other.close();
    expect(deps.store.directory.account("acc_cli")).toBeUndefined();
    expect(await deps.store.directory.refresh()).toBe(true);
    expect(deps.store.directory.account("acc_cli")?.name).toBe("From CLI");
    // Our own writes do not trigger a reload.
    await deps.store.directory.updateAccount("acc_cli", { name: "Renamed" });
    expect(await deps.store.directory.refresh()).toBe(false);
  });
});
