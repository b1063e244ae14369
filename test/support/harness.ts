import { createApp, type App } from "../../src/app.ts";
import { parseConfig, type Config } from "../../src/config/config.ts";
import { createSealer } from "../../src/crypto/sealer.ts";
import { openLimits } from "../../src/limits/open.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { ManualClock } from "../../src/runtime/clock.ts";
import type { Deps } from "../../src/deps.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { staticResolver } from "../../src/runtime/resolver.ts";
import type { SqliteStore, SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/store.ts";
import { sqliteDatabase, testDatabase, type Row, type TestDatabase } from "./backend.ts";

export { tempDir } from "./temp-dir.ts";

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");
export const TEST_ADMIN_TOKEN = "test-admin-token";
export const TEST_APP_SECRET = "test-app-secret";

export type TestDeps = Deps & {
  clock: ManualClock;
  logger: ReturnType<typeof memoryLogger>;
  /** DATABASE_URL of this test's database, for processes the test starts. */
  databaseUrl: string;
  /** A raw query on this test's database, for assertions on what was stored (see TestDatabase.query). */
  query(sql: string): Promise<Row[]>;
  /** Closes the store and opens a new one over the same database (a restart). */
  reopenStore(): Promise<void>;
  /** Another store over the same database, as another instance or the CLI beside the server has; closed at cleanup. */
  anotherStore(): Promise<Store>;
  /** Closes the store and drops the database. */
  cleanup(): Promise<void>;
};

/**
 * Real dependencies on a fresh database of the test backend (testBackend()), with a manual clock,
 * an in-memory logger and a static resolver. `env` is parsed exactly as main.ts parses the
 * environment. `store` options apply to SQLite only.
 */
export async function testDeps(options: TestDepsOptions = {}): Promise<TestDeps> {
  return depsOn(await testDatabase(), options);
}

/** As testDeps, on SQLite whatever the test backend: for tests of SQLite's own machinery. */
export async function sqliteTestDeps(
  options: TestDepsOptions = {},
): Promise<TestDeps & { store: SqliteStore; dbPath: string }> {
  const database = sqliteDatabase();
  const deps = await depsOn(database, options);
  return Object.assign(deps as TestDeps & { store: SqliteStore }, { dbPath: database.url.slice("file:".length) });
}

type TestDepsOptions = { env?: Record<string, string>; deps?: Partial<Deps>; store?: SqliteStoreOptions };

async function depsOn(database: TestDatabase, options: TestDepsOptions): Promise<TestDeps> {
  const config: Config = parseConfig({
    APP_SECRET: TEST_APP_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    DATABASE_URL: database.url,
    ...database.env,
    UPSTREAM_URL: "http://127.0.0.1:9",
    ...options.env,
  });
  const random = options.deps?.random ?? cryptoRandom;
  const sealer = createSealer(config.encryptionKey!, random);
  const clock = options.deps?.clock ?? new ManualClock();
  const logger = memoryLogger();
  const store = await database.open(config, sealer, options.store);
  const others: Store[] = [];
  const deps = {
    config,
    store,
    limits: await openLimits(config, { clock, logger, buckets: store.buckets }),
    clock,
    random,
    resolver: staticResolver({}),
    fetch: (input: string | URL | Request, init?: RequestInit) => fetch(input, init),
    logger,
    metrics: createMetrics(),
    ...options.deps,
    databaseUrl: database.url,
    query: (sql: string) => database.query(sql),
    async anotherStore() {
      const another = await database.open(config, sealer, options.store);
      others.push(another);
      return another;
    },
    async reopenStore() {
      await deps.store.close();
      deps.store = await database.open(config, sealer, options.store);
      deps.limits = await openLimits(config, { clock: deps.clock, logger: deps.logger, buckets: deps.store.buckets });
    },
    async cleanup() {
      for (const other of others) await other.close();
      await deps.store.close();
      await database.drop();
    },
  } as TestDeps;
  return deps;
}

/** Starts the app on a free loopback port. */
export function startApp(deps: Deps): { app: App; url: string; stop: () => Promise<void> } {
  const app = createApp(deps);
  app.listen({ port: 0, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${app.server!.port}`;
  return { app, url, stop: () => app.shutdown() };
}

/** fetch against the operator API with the test admin token. */
export function admin(url: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
