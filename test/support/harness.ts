import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.ts";
import { parseConfig, type Config } from "../../src/config/config.ts";
import { createSealer } from "../../src/crypto/sealer.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { ManualClock } from "../../src/runtime/clock.ts";
import type { Deps } from "../../src/runtime/deps.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { staticResolver } from "../../src/runtime/resolver.ts";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/store.ts";

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");
export const TEST_ADMIN_TOKEN = "test-admin-token";
export const TEST_APP_SECRET = "test-app-secret";

/** A fresh directory for one test's files; removed by `cleanup`. */
export function tempDir(prefix = "switchboard-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export type TestDeps = Deps & { store: SqliteStore; clock: ManualClock; logger: ReturnType<typeof memoryLogger>; dbPath: string };

/**
 * Real dependencies on a fresh SQLite file, with a manual clock, an in-memory logger and a static
 * resolver. `env` is parsed exactly as main.ts parses the environment.
 */
export function testDeps(
  options: { env?: Record<string, string>; deps?: Partial<Deps>; store?: SqliteStoreOptions } = {},
): TestDeps & { cleanup: () => void } {
  const dir = tempDir();
  const dbPath = join(dir.path, "switchboard.db");
  const config: Config = parseConfig({
    APP_SECRET: TEST_APP_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    DATABASE_URL: `file:${dbPath}`,
    UPSTREAM_URL: "http://127.0.0.1:9",
    ...options.env,
  });
  const random = options.deps?.random ?? cryptoRandom;
  const store = openSqliteStore(dbPath, createSealer(config.encryptionKey!, random), options.store);
  const deps = {
    config,
    store,
    clock: new ManualClock(),
    random,
    resolver: staticResolver({}),
    fetch: (input: string | URL | Request, init?: RequestInit) => fetch(input, init),
    logger: memoryLogger(),
    metrics: createMetrics(),
    ...options.deps,
    dbPath,
  } as TestDeps;
  return {
    ...deps,
    cleanup() {
      store.close();
      dir.cleanup();
    },
  };
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
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
