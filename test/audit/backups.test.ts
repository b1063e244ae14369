// Backups in the audit log (docs/operations.md#audit-log): who took one, through the operator API,
// `switchboard admin backups create` and `switchboard backup`, written once the backup is verified
// and stored; a backup refused or failed leaves no entry. Backups are of a SQLite file only.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ManualClock } from "../../src/runtime/clock.ts";
import { onSqlite } from "../support/backend.ts";
import { admin, sqliteTestDeps, startApp, tempDir, testDeps } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { allEntries, auditTrail, LOOPBACK, TOKEN } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function withBackups(to?: string) {
  const dir = tempDir();
  const deps = await sqliteTestDeps({ env: { BACKUP_TO: to ?? join(dir.path, "backups") } });
  const server = startApp(deps);
  cleanups.push(dir.cleanup, deps.cleanup, server.stop);
  return { deps, url: server.url, dir: dir.path };
}

type Manifest = { name: string; bytes: number; sha256: string };

const entryOf = (manifest: Manifest) => ({
  action: "backup.create",
  object: { kind: "backup", id: manifest.name },
  account_id: null,
  changes: { name: [null, manifest.name], bytes: [null, manifest.bytes], sha256: [null, manifest.sha256] },
});

describe.skipIf(!onSqlite)("backups", () => {
  test("POST /admin/backups leaves one entry: the token's holder, from its address, the backup's name, size and checksum", async () => {
    const { url } = await withBackups();
    const trail = auditTrail(url);
    const created = await admin(url, "POST", "/admin/backups");
    expect(created.status).toBe(201);
    const manifest = (await created.json()) as Manifest;
    expect(await trail.fresh()).toEqual([
      expect.objectContaining({ ...entryOf(manifest), actor: expect.objectContaining(TOKEN), ip: LOOPBACK }),
    ]);
    // A body the route refuses starts no backup and writes nothing.
    await trail.none(() => admin(url, "POST", "/admin/backups", { to: "elsewhere" }), 400);
  });

  test("a backup that fails leaves no entry", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    // BACKUP_TO under a file: nothing can be stored there.
    const blocker = join(dir.path, "file");
    await Bun.write(blocker, "not a directory");
    const { url } = await withBackups(join(blocker, "backups"));
    const trail = auditTrail(url);
    await trail.fresh();
    const response = await admin(url, "POST", "/admin/backups");
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await trail.fresh()).toEqual([]);
  });

  test("'switchboard admin backups create' and 'switchboard backup' each leave one entry, the command line's", async () => {
    const { deps, url, dir } = await withBackups();
    const env = processEnv(deps.dbPath, { BACKUP_TO: join(dir, "cli-backups"), LOG_LEVEL: "warn" });
    const viaAdmin = await runMain(["admin", "backups", "create"], env);
    expect(viaAdmin.code).toBe(0);
    const viaBackup = await runMain(["backup"], env);
    expect(viaBackup.code).toBe(0);
    const [first, second] = [JSON.parse(viaAdmin.stdout), JSON.parse(viaBackup.stdout)] as Manifest[];
    const cli = expect.objectContaining({ kind: "operator_token", id: "cli" });
    expect(await allEntries(url, { action: "backup" })).toEqual([
      expect.objectContaining({ ...entryOf(second!), actor: cli, ip: null }),
      expect.objectContaining({ ...entryOf(first!), actor: cli, ip: null }),
    ]);
  });

  test("a download is recorded before its first byte, as who downloaded which backup from where; a manifest's read is not", async () => {
    const { url } = await withBackups();
    const trail = auditTrail(url);
    const manifest = (await (await admin(url, "POST", "/admin/backups")).json()) as Manifest;
    await trail.fresh();
    expect((await admin(url, "GET", `/admin/backups/${manifest.name}.json`)).status).toBe(200);
    expect(await trail.fresh()).toEqual([]);
    const file = await admin(url, "GET", `/admin/backups/${manifest.name}`);
    expect(file.status).toBe(200);
    await file.arrayBuffer();
    expect(await trail.fresh()).toEqual([
      expect.objectContaining({
        action: "backup.download",
        object: { kind: "backup", id: manifest.name },
        account_id: null,
        actor: expect.objectContaining(TOKEN),
        ip: LOOPBACK,
        changes: { bytes: [null, manifest.bytes] },
      }),
    ]);
    // A name that is no backup is 404 and recorded nowhere.
    await trail.none(() => admin(url, "GET", "/admin/backups/switchboard-20200101T000000Z-v1.tar.zst"), 404);
  }, 60_000);

  test("a backup taken with ?wait=false is recorded once it is verified", async () => {
    const { url } = await withBackups();
    const trail = auditTrail(url);
    await trail.fresh();
    const started = await admin(url, "POST", "/admin/backups?wait=false");
    expect(started.status).toBe(202);
    const { name } = (await started.json()) as { name: string };
    let manifest: Manifest | null = null;
    while (manifest === null) {
      const polled = await admin(url, "GET", `/admin/backups/${name}.json`);
      if (polled.status === 200) manifest = (await polled.json()) as Manifest;
      else await Bun.sleep(20);
    }
    // Recorded just after the manifest is written.
    let entries = await trail.fresh();
    while (entries.length === 0) {
      await Bun.sleep(20);
      entries = await trail.fresh();
    }
    expect(entries).toEqual([expect.objectContaining({ ...entryOf(manifest), actor: expect.objectContaining(TOKEN) })]);
  }, 60_000);

  test("a scheduled backup is the service's own", async () => {
    const dir = tempDir();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const env = { BACKUP_SCHEDULE: "* * * * *", BACKUP_TO: join(dir.path, "backups") };
    const deps = await sqliteTestDeps({ env, deps: { clock } });
    const server = startApp(deps);
    cleanups.push(dir.cleanup, deps.cleanup, server.stop);
    clock.advance(60_000);
    await server.app.backups?.tick();
    const [entry] = await allEntries(server.url, { action: "backup.create" });
    expect(entry).toMatchObject({ actor: { kind: "system", id: "backup_schedule" }, ip: null, account_id: null });
  });
});

test.skipIf(onSqlite)("on PostgreSQL a backup is refused (backup_unsupported) and leaves no entry", async () => {
  const deps = await testDeps();
  const server = startApp(deps);
  cleanups.push(deps.cleanup, server.stop);
  await auditTrail(server.url).none(() => admin(server.url, "POST", "/admin/backups"), 409);
});
