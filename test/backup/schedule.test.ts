import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ManualClock } from "../../src/runtime/clock.ts";
import { holdFileLock } from "../../src/store/sqlite/server-lock.ts";
import { admin, sqliteTestDeps, startApp, tempDir } from "../support/harness.ts";
import { BACKUP_FILE, filesIn, startS3 } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MINUTE = 60_000;

/** A server on SQLite whose clock stands still, with backups every minute (by that clock) to `env`'s BACKUP_TO. */
async function scheduled(env: Record<string, string>) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const deps = await sqliteTestDeps({ env: { BACKUP_SCHEDULE: "* * * * *", ...env }, deps: { clock } });
  const server = startApp(deps);
  cleanups.push(deps.cleanup, server.stop);
  const backups = server.app.backups!;
  return {
    deps,
    url: server.url,
    clock,
    /** The clock's tick: the scheduled backup when one is due, awaited. */
    tick: () => backups.tick(),
    /** The clock moves a minute and its tick runs. */
    async nextMinute() {
      clock.advance(MINUTE);
      await backups.tick();
    },
    async list() {
      const response = await admin(server.url, "GET", "/admin/backups");
      expect(response.status).toBe(200);
      return (await response.json()) as {
        data: { name: string; at: string; bytes: number }[];
        last_failure: null | { stage: string; error: string };
      };
    },
    async metric(name: string): Promise<string | undefined> {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return text
        .split("\n")
        .find((line) => line.startsWith(name))
        ?.split(" ")
        .at(-1);
    },
  };
}

describe("scheduled backups (injected clock)", () => {
  test("N+2 runs keep the newest N; /healthz says how old the last one is and /metrics counts it", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const to = join(dir.path, "backups");
    const server = await scheduled({ BACKUP_TO: to, BACKUP_KEEP: "2" });
    const health = async (): Promise<unknown> => (await fetch(`${server.url}/healthz`)).json();
    expect(await health()).toMatchObject({ status: "ok", backup: { last_success_at: null, age_seconds: null } });

    // Not yet due: the first run is at the next whole minute.
    await server.tick();
    expect((await server.list()).data).toEqual([]);
    await server.nextMinute();
    expect((await server.list()).data.map((b) => b.at)).toEqual(["2026-01-01T00:01:00.000Z"]);
    for (let run = 2; run <= 4; run++) await server.nextMinute();

    const { data, last_failure } = await server.list();
    expect(last_failure).toBeNull();
    expect(data.map((b) => b.at)).toEqual(["2026-01-01T00:04:00.000Z", "2026-01-01T00:03:00.000Z"]);
    expect(data[0]!.name).toMatch(/^switchboard-20260101T000400Z-v\d+\.tar\.zst$/);
    // Only the two kept are on disk, each beside its manifest.
    expect(filesIn(to)).toEqual(data.flatMap((b) => [b.name, `${b.name}.json`]).sort());

    server.clock.advance(90_000);
    expect(await health()).toMatchObject({
      status: "ok",
      backup: { last_success_at: "2026-01-01T00:04:00.000Z", age_seconds: 90 },
    });
    expect(Number(await server.metric("switchboard_backup_last_success_timestamp_seconds"))).toBe(
      Date.UTC(2026, 0, 1, 0, 4) / 1000,
    );
    expect(Number(await server.metric("switchboard_backup_last_size_bytes"))).toBe(data[0]!.bytes);
    expect(Number(await server.metric("switchboard_backup_last_duration_seconds"))).toBeGreaterThan(0);
    expect(await server.metric("switchboard_backup_failures_total")).toBeUndefined();
  }, 60_000);

  test("a failed upload keeps the older backups, is counted and shown; the next run deletes past BACKUP_KEEP again", async () => {
    const s3 = await startS3();
    cleanups.push(() => s3.stop());
    const server = await scheduled({ BACKUP_TO: `s3://${s3.bucket}/nightly`, BACKUP_KEEP: "2", ...s3.env });
    await server.nextMinute();
    await server.nextMinute();
    const before = (await server.list()).data.map((b) => b.name);
    expect(before).toHaveLength(2);

    s3.refuseUploads(true);
    await server.nextMinute();
    const failed = await server.list();
    expect(failed.data.map((b) => b.name)).toEqual(before);
    expect(failed.last_failure).toMatchObject({ at: "2026-01-01T00:03:00.000Z", stage: "upload" });
    expect(failed.last_failure!.error).toContain("Access Denied");
    expect(await server.metric('switchboard_backup_failures_total{stage="upload"}')).toBe("1");
    expect(server.deps.logger.lines.filter((line) => line.msg === "backup failed")).toEqual([
      expect.objectContaining({
        level: "error",
        stage: "upload",
        to: `s3://${s3.bucket}/nightly`,
        error: expect.stringContaining("Access Denied"),
      }),
    ]);
    expect(await s3.keys()).toEqual(before.flatMap((name) => [`nightly/${name}`, `nightly/${name}.json`]).sort());
    // Nothing of the failed run is left beside the database.
    expect(
      filesIn(join(server.deps.dbPath, "..")).filter(
        (name) => name.includes("backup-snapshot") || name.includes("backup-artifact"),
      ),
    ).toEqual([]);

    s3.refuseUploads(false);
    await server.nextMinute();
    const after = (await server.list()).data;
    expect(after.map((b) => b.at)).toEqual(["2026-01-01T00:04:00.000Z", "2026-01-01T00:02:00.000Z"]);
    expect(await s3.keys()).toEqual(after.flatMap((b) => [`nightly/${b.name}`, `nightly/${b.name}.json`]).sort());
  }, 60_000);

  test("two backups asked for at once give one run and one 409 backup_running; so does one asked for while a scheduled one runs", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const to = join(dir.path, "backups");
    const server = await scheduled({ BACKUP_TO: to });
    const both = await Promise.all([
      admin(server.url, "POST", "/admin/backups"),
      admin(server.url, "POST", "/admin/backups"),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const refused = both.find((r) => r.status === 409)!;
    expect(await refused.json()).toMatchObject({ error: { code: "backup_running", type: "ConflictException" } });
    const taken = both.find((r) => r.status === 201)!;
    expect(await taken.json()).toMatchObject({
      name: expect.stringMatching(BACKUP_FILE),
      schema_version: expect.any(Number),
    });
    expect(filesIn(to).filter((name) => BACKUP_FILE.test(name))).toHaveLength(2);

    // The scheduled run starts at its tick; a manual one meanwhile is refused, and only one is taken.
    server.clock.advance(MINUTE);
    const tick = server.tick();
    expect((await admin(server.url, "POST", "/admin/backups")).status).toBe(409);
    await tick;
    expect(filesIn(to).filter((name) => BACKUP_FILE.test(name))).toHaveLength(4);
  }, 60_000);

  test("a backup another process is taking (its lock beside the database) is refused with 409 too", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const server = await scheduled({ BACKUP_TO: join(dir.path, "backups") });
    const lock = holdFileLock(`${server.deps.dbPath}-backup-lock`)!;
    cleanups.push(() => lock.release());
    const refused = await admin(server.url, "POST", "/admin/backups");
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { code: "backup_running", message: expect.stringContaining("Another process") },
    });
    lock.release();
    expect((await admin(server.url, "POST", "/admin/backups")).status).toBe(201);
  }, 60_000);
});
