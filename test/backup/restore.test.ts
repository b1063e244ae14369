import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { tempDir } from "../support/harness.ts";
import { databaseBefore } from "../support/old-database.ts";
import { processEnv, runMain } from "../support/process.ts";
import { embeddedMigrations } from "../../db/migrations.gen.ts";
import { openRequestLogFile, requestLogPath } from "../../src/store/sqlite/request-log-file.ts";
import { takeServerLock } from "../../src/store/sqlite/server-lock.ts";
import { backedUpDeployment, filesIn } from "./support.ts";
import { expectRefused, nothingWritten, readManifest, repack, unpackBackup, writeManifest } from "./tamper.ts";

type Manifest = {
  name: string;
  at: string;
  bytes: number;
  sha256: string;
  uncompressed_bytes?: number;
  schema_version: number;
  request_log_version?: number;
  counts: Record<string, number>;
  mac?: string;
};

const dir = tempDir();
let deployment: Awaited<ReturnType<typeof backedUpDeployment>>["deployment"];
let backupPath: string;
let manifest: Manifest;
/** The environment of the CLI beside the deployment (its DATABASE_URL, ENCRYPTION_KEY, BACKUP_TO). */
let env: Record<string, string>;

/** A restore into `to` (a path); the environment's ENCRYPTION_KEY unless `key` says otherwise. */
const restore = (from: string, to: string, extra: string[] = [], key?: string) =>
  runMain(["restore", "--from", from, "--to", `file:${to}`, ...extra], key ? { ...env, ENCRYPTION_KEY: key } : env);

/** A copy of the backup and its manifest in a directory of their own, to damage. */
function copyOfBackup(label: string): string {
  const copyDir = join(dir.path, label);
  mkdirSync(copyDir, { recursive: true });
  const copy = join(copyDir, manifest.name);
  copyFileSync(backupPath, copy);
  copyFileSync(`${backupPath}.json`, `${copy}.json`);
  return copy;
}

beforeAll(async () => {
  if (!onSqlite) return;
  // A call in the request log's file, and its usage count.
  ({ deployment, env, manifest, backupPath } = await backedUpDeployment(dir.path, (dbPath) => {
    const log = openRequestLogFile(requestLogPath(dbPath));
    log.run(
      "INSERT INTO request_log (id, account_id, at, api_key_id, method, status) VALUES ('req_before', 'acc', 1, 'key', 'POST', 200)",
    );
    log.run(
      "INSERT INTO usage_hours (account_id, target_id, hour, kind, label, count) VALUES ('acc', 'pn', 0, 'forwarded', 'messages', 1)",
    );
    log.close();
  }));
});

afterAll(async () => {
  await deployment?.cleanup();
  dir.cleanup();
});

describe.skipIf(!onSqlite)("switchboard restore (docs/backups.md#restore)", () => {
  test("restores the database and its request log into a new file and prints what it restored, from where", async () => {
    expect(manifest.counts).toMatchObject({ accounts: 1, endpoints: 1, request_log: 1, usage_hours: 1 });
    const target = join(dir.path, "restored", "switchboard.db");
    const result = await restore(backupPath, target);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe(
      `restored ${manifest.name} (taken ${manifest.at}, schema ${manifest.schema_version}) from ${backupPath} into ${target}:`,
    );
    expect(result.stdout).toMatch(/^ {2}accounts +1$/m);
    expect(result.stdout).toMatch(/^ {2}endpoints +1$/m);
    expect(result.stdout).toMatch(/^ {2}request_log +1$/m);
    expect(filesIn(join(target, ".."))).toEqual(["switchboard-requests.db", "switchboard.db", "switchboard.db-lock"]);
    const restored = new Database(target, { readonly: true });
    const rows = (table: string) => (restored.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect([rows("accounts"), rows("wabas"), rows("numbers"), rows("endpoints"), rows("users")]).toEqual([
      1, 1, 1, 1, 1,
    ]);
    restored.close();
    const log = new Database(requestLogPath(target), { readonly: true });
    expect(log.query("SELECT id FROM request_log").all()).toEqual([{ id: "req_before" }]);
    expect(log.query("SELECT count FROM usage_hours").all()).toEqual([{ count: 1 }]);
    log.close();
  });

  test("--latest restores the newest verified backup at BACKUP_TO, saying which and where it looked", async () => {
    const target = join(dir.path, "latest", "switchboard.db");
    const result = await runMain(["restore", "--latest", "--to", `file:${target}`], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toContain(`${manifest.name} (taken ${manifest.at}, schema`);
    expect(result.stdout.split("\n")[0]).toContain(`from ${backupPath} into ${target}:`);
    const none = await runMain(["restore", "--latest", "--to", `file:${join(dir.path, "latest", "b.db")}`], {
      ...env,
      BACKUP_TO: join(dir.path, "no-backups-here"),
    });
    expectRefused(none, `no backup at ${join(dir.path, "no-backups-here")} (BACKUP_TO)`);
  });

  test("a backup with bytes flipped is refused with its reason, before anything is written", async () => {
    const copy = copyOfBackup("flipped");
    const bytes = readFileSync(copy);
    for (let i = 0; i < 16; i++) bytes[Math.floor(bytes.length / 2) + i]! ^= 0xff;
    writeFileSync(copy, bytes);
    const target = join(dir.path, "flipped", "target.db");
    expectRefused(await restore(copy, target), "the backup's sha256 does not match its manifest: the file is damaged");
    nothingWritten(target);
  });

  test("a truncated backup is refused with its reason", async () => {
    const copy = copyOfBackup("truncated");
    truncateSync(copy, Math.floor(manifest.bytes / 2));
    const target = join(dir.path, "truncated", "target.db");
    expectRefused(
      await restore(copy, target),
      `the backup is ${Math.floor(manifest.bytes / 2)} bytes where its manifest says ${manifest.bytes}: it is truncated or damaged`,
    );
    nothingWritten(target);
  });

  test("a backup signed by the key's holder whose database is damaged fails the integrity check", async () => {
    const copy = copyOfBackup("damaged");
    const files = await unpackBackup(copy, join(dir.path, "damaged", "unpacked"));
    const database = readFileSync(files.database);
    // A page in the middle of the file (not the header) overwritten.
    const pageSize = database.readUInt16BE(16);
    database.fill(0xa5, pageSize * 3 + 100, pageSize * 4);
    writeFileSync(files.database, database);
    await repack(copy, files, readManifest(copy), "with the key");
    const target = join(dir.path, "damaged", "target.db");
    expectRefused(await restore(copy, target), "the backup's database fails SQLite's integrity check");
    nothingWritten(target);
  });

  test("a wrong ENCRYPTION_KEY is refused in words before anything is written, even with --force over a deployment", async () => {
    const otherKey = Buffer.alloc(32, 9).toString("base64");
    const target = join(dir.path, "wrong-key", "target.db");
    mkdirSync(join(dir.path, "wrong-key"), { recursive: true });
    // The manifest's MAC is checked first, under a key derived from ENCRYPTION_KEY.
    expectRefused(
      await restore(backupPath, target, [], otherKey),
      "the backup's manifest does not verify (its MAC) under this ENCRYPTION_KEY: the backup or its manifest was changed, or it was taken under another key",
    );
    nothingWritten(target);
    // Unsigned and trusted, the sealed secrets still say it.
    const unsigned = copyOfBackup("wrong-key-unsigned");
    const { mac: _mac, ...fields } = readManifest(unsigned);
    writeManifest(unsigned, fields);
    expectRefused(
      await restore(unsigned, target, ["--trust-unsigned"], otherKey),
      "ENCRYPTION_KEY does not open the backup's sealed secrets (endpoints.secret_enc: a stored secret cannot be decrypted",
    );
    nothingWritten(target);

    // Over an existing deployment with --force: it stays exactly as it was.
    const existing = join(dir.path, "wrong-key", "existing.db");
    expect((await restore(backupPath, existing)).code).toBe(0);
    const before = new Bun.CryptoHasher("sha256").update(readFileSync(existing)).digest("hex");
    const refused = await restore(backupPath, existing, ["--force"], otherKey);
    expectRefused(refused, "or it was taken under another key");
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(existing)).digest("hex")).toBe(before);
  });

  test("a database that holds data is refused unless --force; one a server holds, even with --force", async () => {
    const target = join(dir.path, "occupied", "switchboard.db");
    expect((await restore(backupPath, target)).code).toBe(0);
    expectRefused(await restore(backupPath, target), `${target} already holds data (`);
    // A request log alone holding calls is data too.
    const logOnly = join(dir.path, "occupied", "log-only.db");
    const log = openRequestLogFile(requestLogPath(logOnly));
    log.run(
      "INSERT INTO request_log (id, account_id, at, api_key_id, method, status) VALUES ('r', 'a', 1, 'k', 'GET', 200)",
    );
    log.close();
    expectRefused(await restore(backupPath, logOnly), `${logOnly} already holds data (request_log: 1)`);
    expect((await restore(backupPath, target, ["--force"])).code).toBe(0);

    const lock = takeServerLock(target);
    try {
      expectRefused(
        await restore(backupPath, target, ["--force"]),
        `${target} is in use by another switchboard server`,
      );
    } finally {
      lock.release();
    }
  });

  test("a backup without its manifest, or a PostgreSQL target, is refused", async () => {
    const copy = copyOfBackup("alone");
    rmSync(`${copy}.json`);
    expectRefused(
      await restore(copy, join(dir.path, "alone", "t.db")),
      `no manifest ${manifest.name}.json beside ${copy}`,
    );
    const postgres = await runMain(["restore", "--from", backupPath, "--to", "postgres://x@127.0.0.1/db"], env);
    expect(postgres.code).toBe(2);
    expect(postgres.stderr).toContain("--to must name the SQLite file to restore into");
  });

  test("a backup of an older schema is brought up to this build's migrations", async () => {
    const old = join(dir.path, "old", "switchboard.db");
    mkdirSync(join(dir.path, "old"), { recursive: true });
    const db = databaseBefore(old, "0010_onboardings");
    db.run(
      "INSERT INTO accounts (id, name, email, billing_status, retention, created_at) VALUES ('acc_old', 'Old', 'o@example.com', 'active', '24h', 1)",
    );
    db.close();
    const oldEnv = processEnv(old, { BACKUP_TO: join(dir.path, "old", "backups") });
    const taken = await runMain(["backup"], oldEnv);
    expect(taken.code).toBe(0);
    const oldManifest = JSON.parse(taken.stdout) as Manifest;
    expect(oldManifest.schema_version).toBe(10);
    expect(oldManifest.name).toMatch(/-v10\.tar\.zst$/);

    const target = join(dir.path, "old", "restored.db");
    const result = await restore(join(dir.path, "old", "backups", oldManifest.name), target);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`schema 10, migrated from schema 10 to ${embeddedMigrations.length})`);
    const restored = new Database(target, { readonly: true });
    expect(restored.query("SELECT name FROM accounts").all()).toEqual([{ name: "Old" }]);
    expect(restored.query("SELECT COUNT(*) AS n FROM onboardings").get()).toEqual({ n: 0 });
    restored.close();
  });
});
