// Which backups are kept (docs/backups.md#which-backups-are-kept): the newest BACKUP_KEEP and the
// newest of each of the last 7 days, so that a burst of backups by hand never deletes yesterday's.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { backupsToDelete } from "../../src/backup/keep.ts";
import type { Manifest } from "../../src/backup/manifest.ts";
import { newBackupName } from "../../src/backup/names.ts";
import { ManualClock } from "../../src/runtime/clock.ts";
import { onSqlite } from "../support/backend.ts";
import { admin, sqliteTestDeps, startApp, tempDir } from "../support/harness.ts";
import { filesIn } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const DAY = 86_400_000;
const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();
const backup = (ms: number) => ({ name: at(ms), at: at(ms) }) as Manifest;

describe("backupsToDelete", () => {
  const now = Date.UTC(2026, 0, 10, 12);
  const today = Date.UTC(2026, 0, 10);

  test("seven quick backups keep yesterday's and the days' before", () => {
    const burst = Array.from({ length: 7 }, (_, i) => backup(now - i * 60_000));
    const days = Array.from({ length: 9 }, (_, d) => [
      backup(today - (d + 1) * DAY + 9 * HOUR),
      backup(today - (d + 1) * DAY + 3 * HOUR),
    ]).flat();
    const all = [...burst, ...days];
    const deleted = backupsToDelete(all, 7, now).map((m) => m.at);
    // Kept: the burst (newest 7), and the newest of each of the six days before today.
    const kept = all.map((m) => m.at).filter((a) => !deleted.includes(a));
    expect(kept).toEqual([
      ...burst.map((m) => m.at),
      ...Array.from({ length: 6 }, (_, d) => at(today - (d + 1) * DAY + 9 * HOUR)),
    ]);
  });

  test("BACKUP_KEEP past the days keeps the newest N whatever their days; a day's older ones go", () => {
    const hourly = Array.from({ length: 48 }, (_, i) => backup(now - i * HOUR));
    const deleted = backupsToDelete(hourly, 3, now);
    const kept = hourly.filter((m) => !deleted.includes(m)).map((m) => m.at);
    // The newest 3; today's newest is among them; yesterday's and the day before's newest (23:00).
    expect(kept).toEqual([at(now), at(now - HOUR), at(now - 2 * HOUR), at(today - HOUR), at(today - DAY - HOUR)]);
  });

  test("nothing is deleted while there are no more than BACKUP_KEEP, and old days are not kept", () => {
    const few = [backup(now), backup(now - 30 * DAY), backup(now - 60 * DAY)];
    expect(backupsToDelete(few, 3, now)).toEqual([]);
    expect(backupsToDelete(few, 1, now).map((m) => m.at)).toEqual([at(now - 30 * DAY), at(now - 60 * DAY)]);
  });
});

describe.skipIf(!onSqlite)("a server's backups over days (injected clock)", () => {
  test("BACKUP_KEEP=2 after two a day for eight days: the newest two, and the newest of each of the last 7 days", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const to = join(dir.path, "backups");
    // Backups of the eight days before, as earlier runs left them: two a day, at 10:00 and 11:00.
    mkdirSync(to);
    for (let day = 1; day <= 8; day++) {
      for (const hour of [10, 11]) {
        const name = newBackupName(Date.UTC(2026, 0, day, hour), 1, []);
        writeFileSync(join(to, name), "an older backup");
        const manifest = { name, at: at(Date.UTC(2026, 0, day, hour)), bytes: 15, sha256: "0".repeat(64) };
        writeFileSync(join(to, `${name}.json`), JSON.stringify({ ...manifest, schema_version: 1, counts: {} }));
      }
    }
    const clock = new ManualClock(Date.UTC(2026, 0, 9, 10));
    const deps = await sqliteTestDeps({ env: { BACKUP_TO: to, BACKUP_KEEP: "2" }, deps: { clock } });
    const server = startApp(deps);
    cleanups.push(deps.cleanup, server.stop);
    for (const hour of [10, 11]) {
      clock.set(Date.UTC(2026, 0, 9, hour));
      const taken = await admin(server.url, "POST", "/admin/backups");
      expect(taken.status, await taken.text()).toBe(201);
    }
    const listed = (await (await admin(server.url, "GET", "/admin/backups")).json()) as { data: Manifest[] };
    expect(listed.data.map((m) => m.at)).toEqual([
      at(Date.UTC(2026, 0, 9, 11)),
      at(Date.UTC(2026, 0, 9, 10)),
      ...[8, 7, 6, 5, 4, 3].map((day) => at(Date.UTC(2026, 0, day, 11))),
    ]);
    expect(filesIn(to)).toHaveLength(2 * 8);
  }, 60_000);
});
