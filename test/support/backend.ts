import { RedisClient, SQL } from "bun";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { embeddedMigrations as postgresMigrations } from "../../db/postgres.gen.ts";
import type { Config } from "../../src/config/config.ts";
import type { Sealer } from "../../src/crypto/sealer.ts";
import { connect } from "../../src/store/postgres/connect.ts";
import { applyMigrations } from "../../src/store/postgres/migrate.ts";
import { openPostgresStore, type PgStore } from "../../src/store/postgres/store.ts";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/store.ts";
import { tempDir } from "./temp-dir.ts";

/** A row of any table, as assertions read it. */
export type Row = Record<string, unknown>;

/**
 * The backend every test of the service runs on, chosen by SWITCHBOARD_TEST_BACKEND: `sqlite`
 * (the default) or `postgres` (the scale-out mode; `.ci/run` runs the whole suite on each).
 */
export type TestBackend = "sqlite" | "postgres";

export function testBackend(): TestBackend {
  const chosen = process.env.SWITCHBOARD_TEST_BACKEND ?? "sqlite";
  if (chosen !== "sqlite" && chosen !== "postgres")
    throw new Error(`SWITCHBOARD_TEST_BACKEND must be sqlite or postgres, got "${chosen}"`);
  return chosen;
}

/** For tests of SQLite's own machinery (its file, WAL, lock, query plans): `describe.skipIf(!onSqlite)`. */
export const onSqlite = testBackend() === "sqlite";

/** One test's own, empty database on the chosen backend. */
export interface TestDatabase {
  /** DATABASE_URL of it, for the configuration and for processes a test starts. */
  url: string;
  /** What else the configuration needs with this backend (the scale-out mode wants REDIS_URL). */
  env: Record<string, string>;
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
    env: {},
    async open(config, sealer, options) {
      latest = openSqliteStore(path, sealer, { ...options, instance: config.instances.id ?? undefined });
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
      return postgresDatabase();
  }
}

/** The server the PostgreSQL tests use; they create their own databases on it and drop them. */
export const TEST_POSTGRES_URL = process.env.SWITCHBOARD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** Connections per test store: many tests run one after another in one process, and the server has ~100. */
const TEST_POOL = 4;

/** The URL of database `name` on the test server. */
export function postgresUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

let admin: SQL | null = null;
let template: Promise<string> | null = null;
let serial = 0;

/** A connection to the server's own database, for creating and dropping the tests' ones. */
export function postgresAdmin(): SQL {
  admin ??= new SQL({ url: TEST_POSTGRES_URL, max: 2, idleTimeout: 5 });
  return admin;
}

/**
 * A database with every migration applied, named after the migrations, made once for all the
 * test processes that run with them: each test's database is a copy of it (CREATE DATABASE …
 * TEMPLATE), far quicker than migrating anew. Made under an advisory lock and renamed into place
 * when complete, so two processes starting together neither race nor see half of one.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const hash = createHash("sha256")
      .update(postgresMigrations.map((m) => m.sql).join("\n"))
      .digest("hex")
      .slice(0, 12);
    const name = `sb_template_${hash}`;
    const server = postgresAdmin();
    const exists = async () => (await server.unsafe("SELECT 1 FROM pg_database WHERE datname = $1", [name])).length > 0;
    if (await exists()) return name;
    const connection = await server.reserve();
    try {
      await connection.unsafe("SELECT pg_advisory_lock(5391826455101338)");
      if (!(await exists())) {
        const building = `${name}_building_${process.pid}`;
        await connection.unsafe(`CREATE DATABASE ${building}`);
        const db = connect(postgresUrl(building), { max: 1 });
        await applyMigrations(db.$client);
        await db.$client.close();
        await connection.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
      await connection.unsafe("SELECT pg_advisory_unlock(5391826455101338)");
    } finally {
      connection.release();
    }
    // Databases left by test processes that died before dropping them.
    const left = (await server.unsafe("SELECT datname FROM pg_database WHERE datname LIKE 'sb\\_test\\_%'")) as {
      datname: string;
    }[];
    for (const { datname } of left) {
      const pid = Number(datname.split("_")[2]);
      if (pid !== process.pid && !alive(pid))
        await server.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
    return name;
  })();
  return template;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** A fresh database of the migrated schema on the test server. */
export async function emptyPostgresDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `sb_test_${process.pid}_${++serial}`;
  await postgresAdmin().unsafe(`CREATE DATABASE ${name} TEMPLATE ${await migratedTemplate()}`);
  return {
    name,
    url: postgresUrl(name),
    async drop() {
      await postgresAdmin().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Deletes every key under `prefix` on the test Redis. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new RedisClient("redis://127.0.0.1:6379");
  try {
    const keys = (await redis.send("KEYS", [`${prefix}*`])) as string[];
    if (keys.length > 0) await redis.send("DEL", keys);
  } finally {
    redis.close();
  }
}

export async function postgresDatabase(): Promise<TestDatabase> {
  const database = await emptyPostgresDatabase();
  let queries: SQL | null = null;
  const stores: PgStore[] = [];
  return {
    url: database.url,
    // The scale-out mode's rate limits: Redis, under a prefix of this test's own.
    env: { REDIS_URL: "redis://127.0.0.1:6379", REDIS_KEY_PREFIX: `${database.name}:` },
    async open(config, sealer) {
      const store = await openPostgresStore(database.url, sealer, {
        max: TEST_POOL,
        instance: config.instances.id ?? undefined,
      });
      stores.push(store);
      return store;
    },
    async query(sql) {
      queries ??= new SQL({ url: database.url, max: 1, bigint: true });
      const rows = (await queries.unsafe(sql)) as Row[];
      return rows.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v])),
      );
    },
    async drop() {
      await queries?.close();
      for (const store of stores) await store.close().catch(() => {});
      await database.drop();
      await deleteRedisKeys(`${database.name}:`);
    },
  };
}
