import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { sharedSync, timedSync, walFileSync } from "../../src/store/sqlite/wal-sync.ts";
import { tempDir } from "../support/harness.ts";
import { manualSync, settledFlags } from "../support/manual-sync.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** With no sync running, a new caller starts one at once (the `started`th) and resolves when it ends. */
async function startsAtOnce(
  durable: () => Promise<void>,
  disk: ReturnType<typeof manualSync>,
  started: number,
): Promise<void> {
  const caller = durable();
  expect(disk.started).toBe(started);
  await disk.finish();
  await caller;
}

test("a caller waits for a sync that began after its call; those who come during a running sync share the next one", async () => {
  const disk = manualSync();
  const durable = sharedSync(disk.sync);

  const first = durable();
  expect(disk.started).toBe(1);
  // These come while the first sync runs: it may have begun before their commits.
  const second = durable();
  const third = durable();
  expect(disk.started).toBe(1);
  const done = settledFlags([first, second, third]);

  await disk.finish();
  expect(done).toEqual([true, false, false]);
  expect(disk.started).toBe(2);

  await disk.finish();
  expect(done).toEqual([true, true, true]);
  expect(disk.started).toBe(2);

  await startsAtOnce(durable, disk, 3);
});

test("a failed sync rejects those who waited for it, and the next callers get a sync of their own", async () => {
  const disk = manualSync();
  const durable = sharedSync(disk.sync);

  const first = durable();
  const second = durable();
  const firstResult = first.then(
    () => "resolved",
    (error: Error) => error.message,
  );
  await disk.finish(new Error("EIO: i/o error, fsync"));
  expect(await firstResult).toBe("EIO: i/o error, fsync");
  // The second waited for the sync after the failed one, which goes ahead.
  expect(disk.started).toBe(2);
  await disk.finish();
  await second;

  await startsAtOnce(durable, disk, 3);
});

test("the store's own sync opens the database's WAL file and resolves once it is flushed; with no WAL it rejects, naming the file", async () => {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const path = join(dir.path, "switchboard.db");
  const store = openSqliteStore(path, createSealer(new Uint8Array(32), cryptoRandom));
  cleanups.push(() => store.close());

  const sync = walFileSync(path);
  cleanups.push(() => sync.close());
  await sync();
  await sync();

  const missing = walFileSync(join(dir.path, "nothing-here.db"));
  const error = await missing().then(
    () => null,
    (e: NodeJS.ErrnoException) => e,
  );
  expect(error?.code).toBe("ENOENT");
  expect(error?.message).toContain("nothing-here.db-wal");
});

test("timedSync reports each sync's time once it has ended, a failed one too", async () => {
  const disk = manualSync();
  const seconds: number[] = [];
  const sync = timedSync(disk.sync, (s) => seconds.push(s));

  const first = sync();
  const calledAt = performance.now();
  for (let i = 0; i < 20; i++) await nextTurn();
  expect(seconds).toEqual([]);
  const heldFor = performance.now() - calledAt;
  await disk.finish();
  await first;
  expect(seconds).toHaveLength(1);
  expect(seconds[0]! * 1000).toBeGreaterThanOrEqual(heldFor);

  const failing = sync().then(
    () => null,
    (error: Error) => error,
  );
  await disk.finish(new Error("EIO: i/o error, fdatasync"));
  expect((await failing)?.message).toContain("EIO");
  expect(seconds).toHaveLength(2);
});
