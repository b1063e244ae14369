// A backup store that someone else can write: what restore refuses (docs/backups.md#what-restore-checks).
// Each refusal is one line and exit 2, leaves nothing at the target, and writes no more than the
// backup's manifest states (the disk under the target is sampled while restore runs).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { zstdCompressSync } from "node:zlib";
import { requestLogPath } from "../../src/store/sqlite/request-log-file.ts";
import { onSqlite } from "../support/backend.ts";
import { tempDir } from "../support/harness.ts";
import { runMain } from "../support/process.ts";
import { backedUpDeployment } from "./support.ts";
import {
  expectRefused,
  nothingWritten,
  readManifest,
  repack,
  resign,
  restoreSampled,
  unpackBackup,
  writeManifest,
} from "./tamper.ts";
import type { Manifest } from "../../src/backup/manifest.ts";

const dir = tempDir();
let deployment: Awaited<ReturnType<typeof backedUpDeployment>>["deployment"];
let env: Record<string, string>;
let backupPath: string;
let manifest: Manifest;
let copies = 0;

/** A copy of the backup and its manifest in a directory of their own, to change; the target goes beside. */
function copyOfBackup(): { backup: string; target: string; folder: string } {
  const folder = join(dir.path, `case-${++copies}`);
  mkdirSync(folder, { recursive: true });
  const backup = join(folder, manifest.name);
  copyFileSync(backupPath, backup);
  copyFileSync(`${backupPath}.json`, `${backup}.json`);
  return { backup, target: join(folder, "target.db"), folder };
}

/** Restores `backup` into `target` (its disk sampled) and checks the refusal: one line, exit 2, nothing left. */
async function refused(
  copy: { backup: string; target: string; folder: string },
  reason: string,
  extra: string[] = [],
): Promise<number> {
  const result = await restoreSampled(
    ["--from", copy.backup, "--to", `file:${copy.target}`, ...extra],
    env,
    copy.folder,
    "target",
  );
  expectRefused(result, reason);
  nothingWritten(copy.target);
  return result.peakBytes;
}

/** The backup's files unpacked beside it, changed by `change` (SQL on the database, or on the request log). */
async function changed(
  copy: { backup: string; folder: string },
  change: { database?: string; requestLog?: string },
): Promise<{ database: string; requestLog: string }> {
  const files = await unpackBackup(copy.backup, join(copy.folder, "unpacked"));
  for (const [file, sql] of [
    [files.database, change.database],
    [files.requestLog, change.requestLog],
  ] as const) {
    if (!sql) continue;
    const db = new Database(file);
    db.exec(sql);
    db.close();
  }
  return files;
}

// The attack: every new user gets another user's password hash, and the entry that would
// tell of it deletes itself; and a view over the users.
const TRIGGERS = `CREATE TRIGGER copy_hash AFTER INSERT ON users BEGIN
    UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE id != NEW.id LIMIT 1) WHERE id = NEW.id;
  END;
  CREATE TRIGGER hide_entry AFTER INSERT ON audit_log BEGIN DELETE FROM audit_log WHERE id = NEW.id; END;`;
const VIEW = "CREATE VIEW every_hash AS SELECT email, password_hash FROM users;";
const TABLE = "CREATE TABLE stash (secret TEXT);";

beforeAll(async () => {
  if (!onSqlite) return;
  ({ deployment, env, manifest, backupPath } = await backedUpDeployment(dir.path));
});

afterAll(async () => {
  await deployment?.cleanup();
  dir.cleanup();
});

describe.skipIf(!onSqlite)("restore refuses a tampered backup", () => {
  test("a trigger, a view, an extra table: refused by name even when the manifest is signed with the key", async () => {
    for (const [sql, what] of [
      [TRIGGERS, 'holds a trigger "copy_hash" that this release\'s migrations do not make'],
      [VIEW, 'holds a view "every_hash" that this release\'s migrations do not make'],
      [TABLE, 'holds a table "stash" that this release\'s migrations do not make'],
      ["DROP INDEX api_keys_hash;", 'lacks the index "api_keys_hash"'],
    ] as const) {
      const copy = copyOfBackup();
      await repack(copy.backup, await changed(copy, { database: sql }), manifest, "with the key");
      await refused(copy, `the backup's database ${what}`);
    }
  }, 60_000);

  test("a trigger in the request log's file too", async () => {
    const copy = copyOfBackup();
    const files = await changed(copy, {
      requestLog:
        "CREATE TRIGGER forget AFTER INSERT ON request_log BEGIN DELETE FROM request_log WHERE id = NEW.id; END;",
    });
    await repack(copy.backup, files, manifest, "with the key");
    await refused(
      copy,
      "the backup's request log holds a trigger \"forget\" that this release's migrations do not make",
    );
  });

  test("an archive holding anything but the two files, in order (made by tar, signed with the key)", async () => {
    for (const [order, reason] of [
      [["switchboard.db", "switchboard-requests.db", "extra.sql"], "the backup's archive holds more than its files"],
      [["switchboard-requests.db", "switchboard.db"], 'holds "switchboard-requests.db" where switchboard.db belongs'],
      [["switchboard.db"], "the backup's archive ends after 1 of its 2 files"],
    ] as const) {
      const copy = copyOfBackup();
      const unpacked = join(copy.folder, "unpacked");
      await unpackBackup(copy.backup, unpacked);
      writeFileSync(join(unpacked, "extra.sql"), "DROP TABLE users;");
      const tar = Bun.spawnSync(["tar", "-cf", "-", "-C", unpacked, ...order], { stdout: "pipe" });
      expect(tar.exitCode).toBe(0);
      const packed = zstdCompressSync(tar.stdout);
      writeFileSync(copy.backup, packed);
      resign(copy.backup, {
        bytes: packed.length,
        sha256: new Bun.CryptoHasher("sha256").update(packed).digest("hex"),
        uncompressed_bytes: tar.stdout.length,
      });
      await refused(copy, reason);
    }
  }, 60_000);

  test("changed without the key (sha256 and sizes recomputed, the MAC kept or made up): the MAC does not verify", async () => {
    const copy = copyOfBackup();
    await repack(copy.backup, await changed(copy, { database: TRIGGERS }), manifest, "keep the old mac");
    await refused(copy, "the backup's manifest does not verify (its MAC) under this ENCRYPTION_KEY");
    writeManifest(copy.backup, { ...readManifest(copy.backup), mac: "0".repeat(64) });
    await refused(copy, "the backup's manifest does not verify (its MAC)");
  });

  test("any field of the manifest edited: the MAC does not verify", async () => {
    for (const edit of [
      { at: "2020-01-01T00:00:00.000Z" },
      { counts: { ...manifest.counts, accounts: 2 } },
      { uncompressed_bytes: (manifest.uncompressed_bytes ?? 0) * 100 },
      { schema_version: manifest.schema_version - 1 },
      { request_log_version: 1 },
      { note: "a field the manifest never had" },
    ]) {
      const copy = copyOfBackup();
      writeManifest(copy.backup, { ...manifest, ...edit });
      await refused(copy, "the backup's manifest does not verify (its MAC)");
    }
  }, 60_000);

  test("the MAC stripped: refused, saying how to accept it knowingly; accepted, it still passes every other check", async () => {
    const copy = copyOfBackup();
    const { mac: _mac, ...unsigned } = manifest;
    writeManifest(copy.backup, unsigned);
    await refused(copy, "is not signed (no MAC: taken by an older release, or stripped)");
    await refused(copy, "if you know, pass --trust-unsigned");
    const result = await runMain(
      ["restore", "--from", copy.backup, "--to", `file:${copy.target}`, "--trust-unsigned"],
      env,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);

    const tampered = copyOfBackup();
    await repack(tampered.backup, await changed(tampered, { database: TRIGGERS }), manifest, "no mac");
    await refused(tampered, 'holds a trigger "copy_hash"', ["--trust-unsigned"]);
  });

  test("a backup of the release before (one database, no MAC): refused, then restored knowingly with an empty request log", async () => {
    const copy = copyOfBackup();
    const { database } = await unpackBackup(copy.backup, join(copy.folder, "unpacked"));
    const packed = zstdCompressSync(readFileSync(database));
    const old = copy.backup.replace(/\.tar\.zst$/, ".db.zst");
    writeFileSync(old, packed);
    const { mac: _m, uncompressed_bytes: _u, request_log_version: _r, ...fields } = manifest;
    const { request_log: _l, usage_hours: _h, ...counts } = fields.counts;
    writeManifest(old, {
      ...fields,
      name: old.slice(old.lastIndexOf("/") + 1),
      bytes: packed.length,
      sha256: new Bun.CryptoHasher("sha256").update(packed).digest("hex"),
      counts,
    });
    await refused({ ...copy, backup: old }, "pass --trust-unsigned");
    const result = await runMain(["restore", "--from", old, "--to", `file:${copy.target}`, "--trust-unsigned"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const log = new Database(requestLogPath(copy.target), { readonly: true });
    expect(log.query("SELECT COUNT(*) AS n FROM request_log").get()).toEqual({ n: 0 });
    log.close();
  });

  test("a decompression bomb signed with the key: stopped at the size its manifest states, nothing kept", async () => {
    const copy = copyOfBackup();
    const files = await unpackBackup(copy.backup, join(copy.folder, "unpacked"));
    // 256 MB of zeros (a sparse file) where the database was: a few kilobytes compressed.
    truncateSync(files.database, 256 * 1024 * 1024);
    const bomb = await repack(copy.backup, files, manifest, "with the key");
    expect(bomb.bytes).toBeLessThan(1024 * 1024);
    // Its manifest states the real backup's size, as someone with the key could make it say.
    const stated = manifest.uncompressed_bytes ?? 0;
    resign(copy.backup, { uncompressed_bytes: stated });
    const peak = await refused(
      copy,
      `the backup decompresses past ${stated.toLocaleString("en")} bytes, the size its manifest states`,
    );
    expect(peak).toBeLessThanOrEqual(stated);
  }, 60_000);

  test("a bomb without a MAC, trusted: stopped at 100 times its size (at least 64 MB), nothing kept", async () => {
    const copy = copyOfBackup();
    const old = copy.backup.replace(/\.tar\.zst$/, ".db.zst");
    // 128 MB of zeros compressed by zstd: a few kilobytes.
    const packed = zstdCompressSync(Buffer.alloc(128 * 1024 * 1024));
    writeFileSync(old, packed);
    const { mac: _m, uncompressed_bytes: _u, request_log_version: _r, ...fields } = manifest;
    writeManifest(old, {
      ...fields,
      name: old.slice(old.lastIndexOf("/") + 1),
      bytes: packed.length,
      sha256: new Bun.CryptoHasher("sha256").update(packed).digest("hex"),
    });
    const limit = 64 * 1024 * 1024;
    const peak = await refused(
      { ...copy, backup: old },
      `the backup decompresses past ${limit.toLocaleString("en")} bytes, the most an unsigned backup of ${packed.length} bytes may`,
      ["--trust-unsigned"],
    );
    expect(peak).toBeLessThanOrEqual(limit);
  }, 60_000);
});
