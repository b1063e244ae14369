// The backup's own process (src/backup/child.ts): at the lowest priority, and never a danger to the
// server that started it. Run many times beside busy loops with
// `bun test/stress/run.ts --runs 20 --parallel 2 -- test/backup/child.test.ts -t "kill -9"`.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { admin, tempDir } from "../support/harness.ts";
import { processEnv } from "../support/process.ts";
import {
  BACKUP_FILE,
  backupChild,
  filesIn,
  isRunning,
  padDatabase,
  serverProcess,
  threadNiceness,
  until,
} from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * How long a step may take: run beside busy loops on every core (the stress runner), a process
 * below their priority gets a few percent of a core, and the server's start is slow too.
 */
const PATIENCE_MS = 240_000;

/** A server process on a database made large enough that a backup takes a moment. */
async function serverWithBulk(megabytes: number) {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const dbPath = join(dir.path, "switchboard.db");
  const to = join(dir.path, "backups");
  padDatabase(dbPath, megabytes);
  const server = await serverProcess(processEnv(dbPath, { BACKUP_TO: to, LOG_LEVEL: "error" }), PATIENCE_MS);
  cleanups.push(() => server.proc.kill("SIGKILL"));
  return { ...server, dbPath, to, dir: dir.path };
}

/** Polls GET /admin/backups/{name}.json while it answers 202 (the backup runs). */
async function outcome(url: string, name: string): Promise<Response> {
  for (;;) {
    const response = await admin(url, "GET", `/admin/backups/${name}.json`);
    if (response.status !== 202) return response;
    await Bun.sleep(20);
  }
}

describe.skipIf(!onSqlite || process.platform !== "linux")("the backup's own process", () => {
  test("kill -9 of it mid-run: the server keeps serving, no file is left under a backup's name, and the next backup works", async () => {
    const server = await serverWithBulk(12);
    const started = await admin(server.url, "POST", "/admin/backups?wait=false");
    expect(started.status).toBe(202);
    const { name } = (await started.json()) as { name: string };
    expect(name).toMatch(BACKUP_FILE);
    const child = await backupChild(server.proc.pid, PATIENCE_MS);
    // Once it works, every thread of it runs below the server: nice 10 for the snapshots, then 19.
    // It is stopped (SIGSTOP) at each stage while it is looked at, so that it cannot finish meanwhile.
    await until(() => existsSync(`${server.dbPath}-backup-snapshot`), "the snapshots to begin", PATIENCE_MS);
    process.kill(child, "SIGSTOP");
    const snapshotting = threadNiceness(child);
    expect(snapshotting.length).toBeGreaterThan(1);
    for (const nice of snapshotting) expect([10, 19]).toContain(nice);
    process.kill(child, "SIGCONT");
    await until(() => existsSync(`${server.dbPath}-backup-artifact`), "the compression to begin", PATIENCE_MS);
    process.kill(child, "SIGSTOP");
    expect(new Set(threadNiceness(child))).toEqual(new Set([19]));

    process.kill(child, "SIGKILL");
    const failed = await outcome(server.url, name);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({
      error: { code: "backup_failed", message: expect.stringContaining("was killed (SIGKILL)") },
    });
    // The server went on serving.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const account = await admin(server.url, "POST", "/admin/accounts", { name: "After", email: "after@example.com" });
    expect(account.status).toBe(201);
    expect(filesIn(server.to).filter((file) => BACKUP_FILE.test(file))).toEqual([]);
    const listed = (await (await admin(server.url, "GET", "/admin/backups")).json()) as { last_failure: unknown };
    expect(listed.last_failure).toMatchObject({ name, stage: "snapshot" });

    const next = await admin(server.url, "POST", "/admin/backups");
    expect(next.status).toBe(201);
    const manifest = (await next.json()) as { name: string; counts: Record<string, number> };
    expect(manifest.counts).toMatchObject({ accounts: 1, meta: 12 * 256 });
    expect(filesIn(server.to)).toEqual([manifest.name, `${manifest.name}.json`]);
    expect(filesIn(server.dir).filter((file) => file.includes("-backup-"))).toEqual(["switchboard.db-backup-lock"]);
  }, 900_000);

  test("a server killed mid-backup takes its backup's process with it", async () => {
    const server = await serverWithBulk(12);
    expect((await admin(server.url, "POST", "/admin/backups?wait=false")).status).toBe(202);
    const child = await backupChild(server.proc.pid, PATIENCE_MS);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    await until(() => !isRunning(child), "the backup's process to end with its server", 30_000);
  }, 900_000);
});
