// Chooses the PostgreSQL driver by measurement: Bun's built-in SQL client against postgres.js,
// on the same server in the same run (bench/RESULTS.md, "PostgreSQL driver").
//
//   flock /tmp/switchboard-heavy.lock bun bench/postgres/drivers.ts
//
// postgres.js is not a dependency: install it beside the bench for a run with
// `npm install --no-save postgres@3`, or the bench measures Bun's client alone.
// PG_URL (default postgres://postgres@127.0.0.1:5432/test) names a server where the bench may
// create and drop its own database.
import { SQL } from "bun";

const ADMIN_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const DB = `bench_drivers_${process.pid}`;
const url = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${DB}`;
  return u.toString();
})();

/** What the bench needs of a driver; both clients have these shapes. */
interface Client {
  unsafe(text: string, params?: unknown[]): Promise<unknown[]>;
  begin<T>(work: (tx: { unsafe(text: string, params?: unknown[]): Promise<unknown[]> }) => Promise<T>): Promise<T>;
  listen(channel: string, onnotify: (payload: string) => void): Promise<unknown>;
  close(): Promise<void>;
}
interface Driver {
  name: string;
  open(options: { max: number; url?: string }): Client;
}

const bunSql: Driver = {
  name: "Bun.sql (built in)",
  open: ({ max, url: to = url }) => {
    const sql = new SQL({ url: to, max });
    return {
      unsafe: (text, params) => sql.unsafe(text, params as never[]),
      begin: (work) =>
        sql.begin((tx) => work({ unsafe: (text, params) => tx.unsafe(text, params as never[]) })) as never,
      listen: (channel, onnotify) => sql.listen(channel, onnotify),
      close: () => sql.close(),
    };
  },
};

/** What the bench calls of postgres.js (not installed for type checks, so declared here). */
interface PostgresJsQueries {
  unsafe(text: string, params: unknown[] | undefined, options: { prepare: boolean }): Promise<unknown[]>;
}
interface PostgresJs extends PostgresJsQueries {
  begin<T>(work: (tx: PostgresJsQueries) => Promise<T>): Promise<T>;
  listen(channel: string, onnotify: (payload: string) => void): Promise<unknown>;
  end(options: { timeout: number }): Promise<void>;
}

async function postgresJs(): Promise<Driver | null> {
  let postgres: (url: string, options: object) => PostgresJs;
  try {
    // Not a dependency of the project: present only when installed for the run.
    const name = "postgres";
    postgres = (await import(name)).default;
  } catch {
    return null;
  }
  return {
    name: "postgres.js",
    open: ({ max, url: to = url }) => {
      const sql = postgres(to, { max, onnotice: () => {} });
      return {
        // Prepared, as Bun prepares every parameterised query by default.
        unsafe: (text, params) => sql.unsafe(text, params, { prepare: true }),
        begin: (work) =>
          sql.begin((tx) => work({ unsafe: (text, params) => tx.unsafe(text, params, { prepare: true }) })),
        listen: (channel, onnotify) => sql.listen(channel, onnotify),
        close: () => sql.end({ timeout: 1 }),
      };
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const ms = (n: number) => n.toFixed(3);
function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
}
const withTimeout = <T>(work: Promise<T>, limitMs: number) =>
  Promise.race([work, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), limitMs).unref())]);

async function sequential(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await op(i);
    times.push(performance.now() - t);
  }
  return times;
}

async function concurrently(total: number, workers: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < total) await op(next++);
    }),
  );
}

async function measure(driver: Driver): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const one = driver.open({ max: 1 });
  await one.unsafe("DROP TABLE IF EXISTS t");
  await one.unsafe("CREATE TABLE t (id bigint PRIMARY KEY, v bigint NOT NULL)");
  // Warm-up: connection, prepared statements, the server's caches.
  for (let i = 0; i < 200; i++) await one.unsafe("INSERT INTO t (id, v) VALUES ($1, $2)", [-1 - i, i]);

  // The commit floor: one INSERT committed on its own (one round trip, one WAL flush).
  const auto = stats(await sequential(2_000, (i) => one.unsafe("INSERT INTO t (id, v) VALUES ($1, $2)", [i, i])));
  out["INSERT + COMMIT (autocommit), p50 / p99 ms"] = `${ms(auto.p50)} / ${ms(auto.p99)}`;
  // The same in the driver's transaction: BEGIN, INSERT, COMMIT.
  const tx = stats(
    await sequential(2_000, (i) =>
      one.begin((t) => t.unsafe("INSERT INTO t (id, v) VALUES ($1, $2)", [10_000 + i, i])),
    ),
  );
  out["begin(INSERT), p50 / p99 ms"] = `${ms(tx.p50)} / ${ms(tx.p99)}`;
  await one.close();

  // Small queries: a primary-key read by 64 callers over a pool of 10.
  const pool = driver.open({ max: 10 });
  await concurrently(2_000, 64, (i) => pool.unsafe("SELECT v FROM t WHERE id = $1", [i % 2_000]));
  let start = performance.now();
  const reads = 40_000;
  await concurrently(reads, 64, (i) => pool.unsafe("SELECT v FROM t WHERE id = $1", [i % 2_000]));
  out["PK reads/s (64 callers, pool 10)"] = Math.round(reads / ((performance.now() - start) / 1000)).toString();

  // Short write transactions (BEGIN, UPDATE, COMMIT) by 64 callers: what a queue's claims cost.
  start = performance.now();
  const txs = 10_000;
  await concurrently(txs, 64, (i) => pool.begin((t) => t.unsafe("UPDATE t SET v = v + 1 WHERE id = $1", [i % 2_000])));
  out["write transactions/s (64 callers, pool 10)"] = Math.round(txs / ((performance.now() - start) / 1000)).toString();
  await pool.close();

  // Pool stall (Bun #32004): transactions beside plain parameterized queries on a pool of 4.
  let stalls = 0;
  for (let run = 0; run < 10; run++) {
    const small = driver.open({ max: 4 });
    const work = concurrently(2_000, 64, (i) =>
      i % 2 === 0
        ? small.begin((t) => t.unsafe("UPDATE t SET v = v + 1 WHERE id = $1", [i % 2_000]))
        : small.unsafe("UPDATE t SET v = v + 1 WHERE id = $1", [i % 2_000]),
    );
    if ((await withTimeout(work, 20_000)) === "timeout") stalls++;
    await withTimeout(small.close(), 2_000);
  }
  out["pool stalls (runs of 2,000 mixed ops, pool 4)"] = `${stalls} of 10`;

  // LISTEN/NOTIFY: from pg_notify's commit on one connection to the callback on another.
  const listener = driver.open({ max: 1 });
  const sender = driver.open({ max: 1 });
  let waiting: ((payload: string) => void) | null = null;
  await listener.listen("bench", (payload) => waiting?.(payload));
  const arrival = () => new Promise<string>((resolve) => (waiting = resolve));
  const notifyTimes = await sequential(500, async (i) => {
    const got = arrival();
    await sender.unsafe("SELECT pg_notify('bench', $1)", [String(i)]);
    await got;
  });
  const n = stats(notifyTimes);
  out["NOTIFY → listener, p50 / p99 ms"] = `${ms(n.p50)} / ${ms(n.p99)}`;

  // Reconnect: the server ends the listening session; notifications are sent every 20 ms until
  // one arrives again.
  const reconnects: number[] = [];
  for (let round = 0; round < 3; round++) {
    const killed = performance.now();
    await sender.unsafe(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid() AND query ILIKE 'listen%'`,
      [DB],
    );
    let delivered = false;
    const got = arrival().then(() => (delivered = true));
    while (!delivered && performance.now() - killed < 30_000) {
      await sender.unsafe("SELECT pg_notify('bench', 'again')");
      await Promise.race([got, Bun.sleep(20)]);
    }
    reconnects.push(delivered ? performance.now() - killed : Number.POSITIVE_INFINITY);
  }
  out["LISTEN back after its session was ended, ms (3 rounds)"] = reconnects
    .map((t) => (Number.isFinite(t) ? t.toFixed(0) : "never"))
    .join(" / ");
  await withTimeout(listener.close(), 2_000);
  await sender.close();

  // A server that is not there (nothing listens on port 9): how soon a query says so.
  const nowhere = new URL(url);
  nowhere.port = "9";
  const absent = driver.open({ max: 1, url: nowhere.toString() });
  start = performance.now();
  const failed = await withTimeout(
    absent.unsafe("SELECT 1").then(
      () => "answered",
      (e) => String(e?.code ?? e?.message),
    ),
    30_000,
  );
  out["query with no server: rejected after, ms"] = `${(performance.now() - start).toFixed(1)} (${failed})`;
  await withTimeout(absent.close(), 2_000);
  return out;
}

const admin = new SQL({ url: ADMIN_URL, max: 1 });
await admin.unsafe(`CREATE DATABASE ${DB}`);
try {
  const drivers = [bunSql, await postgresJs()].filter((d): d is Driver => d !== null);
  const results = new Map<string, Record<string, string>>();
  for (const driver of drivers) {
    console.error(`measuring ${driver.name}…`);
    results.set(driver.name, await measure(driver));
  }
  const names = [...results.keys()];
  console.log(`| measure | ${names.join(" | ")} |`);
  console.log(`|---|${names.map(() => "---:").join("|")}|`);
  for (const row of Object.keys(results.get(names[0]!)!))
    console.log(`| ${row} | ${names.map((n) => results.get(n)![row]).join(" | ")} |`);
  if (drivers.length === 1) console.log("(postgres.js not installed: `npm install --no-save postgres@3` to compare)");
} finally {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.close();
}
