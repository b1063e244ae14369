import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import {
  AUTOCHECKPOINT_WITH_THREAD_PAGES,
  SQLITE_AUTOCHECKPOINT_PAGES,
  WAL_SIZE_LIMIT_BYTES,
} from "../../src/store/sqlite/checkpointer.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../support/harness.ts";

const WORKER = new URL("../../src/store/sqlite/checkpoint-worker.ts", import.meta.url).href;
const KEY = new Uint8Array(32).fill(1);

/** The checkpointer is a real thread on its own schedule: its effect is awaited, with a deadline. */
async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not reached");
    await Bun.sleep(5);
  }
}

function open(workerUrl: string) {
  const dir = tempDir();
  const dbPath = join(dir.path, "db.sqlite");
  const errors: string[] = [];
  const store = openSqliteStore(dbPath, createSealer(KEY, cryptoRandom), {
    backgroundCheckpoints: { workerUrl, onError: (m) => errors.push(m) },
  });
  return { dir, dbPath, errors, store };
}

test("a background thread copies committed pages into the database file, and close() stops it at once", async () => {
  const { dir, dbPath, errors, store } = open(WORKER);
  try {
    // Far below SQLite's own automatic checkpoint (1,000 pages): only the thread copies these.
    store.db.$client.exec("PRAGMA wal_autocheckpoint = 0; CREATE TABLE filler (b BLOB)");
    const before = statSync(dbPath).size;
    const insert = store.db.$client.prepare("INSERT INTO filler VALUES (randomblob(4000))");
    for (let i = 0; i < 50; i++) insert.run();
    await eventually(() => statSync(dbPath).size >= before + 50 * 4096);
  } finally {
    const started = performance.now();
    await store.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    dir.cleanup();
  }
  expect(errors).toEqual([]);
});

test("a store closed while its thread is still starting closes at once", async () => {
  const { dir, errors, store } = open(WORKER);
  const started = performance.now();
  await store.close();
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(errors).toEqual([]);
  dir.cleanup();
});

const pragma = (store: ReturnType<typeof open>["store"], name: string) =>
  (store.db.$client.query(`PRAGMA ${name}`).get() as Record<string, number>)[name];

test("while the thread runs, the server's connection checkpoints on its own only every 10,000 pages, and cuts a grown WAL back", async () => {
  const { dir, store } = open(WORKER);
  expect(pragma(store, "wal_autocheckpoint")).toBe(AUTOCHECKPOINT_WITH_THREAD_PAGES);
  expect(pragma(store, "journal_size_limit")).toBe(WAL_SIZE_LIMIT_BYTES);
  await store.close();
  dir.cleanup();
});

test("a thread that cannot start is reported; the store works without it, checkpointing as SQLite does by default", async () => {
  const { dir, errors, store } = open(new URL("./no-such-worker.ts", import.meta.url).href);
  await eventually(() => errors.length > 0);
  expect(await store.healthy()).toBe(true);
  expect(pragma(store, "wal_autocheckpoint")).toBe(SQLITE_AUTOCHECKPOINT_PAGES);
  await store.close();
  dir.cleanup();
});
