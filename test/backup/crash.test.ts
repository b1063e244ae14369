import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { admin, tempDir } from "../support/harness.ts";
import { processEnv } from "../support/process.ts";
import { BACKUP_FILE, filesIn, padDatabase, serverProcess, until } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server process on `dbPath`, backing up to `to`. */
async function server(dbPath: string, to: string) {
  const started = await serverProcess(processEnv(dbPath, { BACKUP_TO: to, LOG_LEVEL: "warn" }));
  cleanups.push(() => started.proc.kill("SIGKILL"));
  return started;
}

describe.skipIf(!onSqlite)("a server killed in the middle of a backup", () => {
  test("leaves no file under a backup's name, and the next backup works and clears what was left", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const dbPath = join(dir.path, "switchboard.db");
    const to = join(dir.path, "backups");
    // Large enough that a backup takes a while: the kill lands while it compresses.
    padDatabase(dbPath, 60);
    const first = await server(dbPath, to);
    const taking = admin(first.url, "POST", "/admin/backups").catch(() => null);
    await until(() => existsSync(`${dbPath}-backup-artifact`), "the backup to be compressing");
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    expect(await taking).toBeNull();
    expect(filesIn(to).filter((name) => BACKUP_FILE.test(name))).toEqual([]);

    // What else a kill can leave: a copy cut off in the backups' directory, and a backup whose
    // manifest was never written (killed between the two).
    mkdirSync(to, { recursive: true });
    writeFileSync(join(to, ".switchboard-20260101T000000Z-v1.db.zst.partial"), "cut off");
    writeFileSync(join(to, "switchboard-20260101T000000Z-v1.db.zst"), "no manifest");

    const second = await server(dbPath, to);
    const response = await admin(second.url, "POST", "/admin/backups");
    expect(response.status).toBe(201);
    const manifest = (await response.json()) as { name: string; counts: Record<string, number> };
    expect(manifest.counts.meta).toBe(60 * 256);
    expect(filesIn(to)).toEqual([manifest.name, `${manifest.name}.json`]);
    expect(filesIn(dir.path).filter((name) => /-backup-(snapshot|artifact)/.test(name))).toEqual([]);
    const listed = (await (await admin(second.url, "GET", "/admin/backups")).json()) as { data: { name: string }[] };
    expect(listed.data.map((b) => b.name)).toEqual([manifest.name]);
  }, 90_000);
});
