import { join } from "node:path";
import type { Config } from "../../src/config/config.ts";
import type { Sealer } from "../../src/crypto/sealer.ts";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/store.ts";
import { tempDir } from "./temp-dir.ts";

/** A row of any table, as assertions read it. */
export type Row = Record<string, any>;

/**
 * The backend every test of the service runs on, chosen by SWITCHBOARD_TEST_BACKEND: `sqlite`
 * (the default) or `postgres` (the scale-out mode; `.ci/run` runs the whole suite on each).
 */
export type TestBackend = "sqlite" | "postgres";

export function testBackend(): TestBackend {
  const chosen = process.env.SWITCHBOARD_TEST_BACKEND ?? "sqlite";
  if (chosen !== "sqlite" && chosen !== "postgres") throw new Error(`SWITCHBOARD_TEST_BACKEND must be sqlite or postgres, got "${chosen}"`);
  return chosen;
}

/** For tests of SQLite's own machinery (its file, WAL, lock, query plans): `describe.skipIf(!onSqlite)`. */
export const onSqlite = testBackend() === "sqlite";

/** One test's own, empty database on the chosen backend. */
export interface TestDatabase {
  /** DATABASE_URL of it, for the configuration and for processes a test starts. */
  url: string;
  /** A store over it (again, for a restart). `sqlite` options apply to SQLite only. */
  open(config: Config, sealer: Sealer, sqlite?: SqliteStoreOptions): Promise<Store>;
  /** A raw query for assertions on what was stored; integers come back as numbers on every backend. */
  query(sql: string): Promise<Row[]>;
  /** Removes the database and everything beside it. */
  drop(): Promise<void>;
}

export function sqliteDatabase(): TestDatabase {
  const dir = tempDir();
  const path = join(dir.path, "switchboard.db");
  let latest: SqliteStore | null = null;
  return {
    url: `file:${path}`,
    async open(_config, sealer, options) {
      latest = openSqliteStore(path, sealer, options);
      return latest;
    },
    // On the store's own connection, which sees what it wrote the moment its commit ends.
    async query(sql) {
      if (!latest) throw new Error("open the store before querying it");
      return latest.db.$client.query(sql).all() as Row[];
    },
    async drop() {
      dir.cleanup();
    },
  };
}

export async function testDatabase(): Promise<TestDatabase> {
  switch (testBackend()) {
    case "sqlite":
      return sqliteDatabase();
    case "postgres":
      throw new Error("the PostgreSQL test backend is not built yet");
  }
}
