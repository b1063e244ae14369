/**
 * The fixed cost of a call of the queue's functions: each with nothing to do, beside no-op PL/pgSQL
 * functions with and without their SET clauses; backend CPU a call from /proc (issue 38).
 *   bun bench/scale-out/queue-calls.ts   (N calls a case, CASE=complete keeps the cases named so)
 */
import { SQL } from "bun";
import { startPostgresCluster } from "../support/postgres-cluster.ts";
import { applyMigrations } from "../../src/store/postgres/migrate.ts";
const port = 20000 + Math.floor(Math.random() * 20000);
const cluster = await startPostgresCluster(port, []);
try {
  const admin = new SQL({ url: cluster.url, max: 1 });
  await admin.unsafe("CREATE DATABASE m");
  const db = new SQL({ url: cluster.url.replace(/\/postgres$/, "/m"), max: 1 });
  await applyMigrations(db);
  await db.unsafe(`CREATE FUNCTION noop_plain() RETURNS TABLE (id text) LANGUAGE plpgsql AS $$ BEGIN RETURN; END $$`);
  await db.unsafe(
    `CREATE FUNCTION noop_set() RETURNS TABLE (id text) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET enable_sort = off SET jit = off AS $$ BEGIN PERFORM set_config('synchronous_commit', 'off', true); RETURN; END $$`,
  );
  const e = "{}";
  const cases: [string, () => Promise<unknown>][] = [
    ["noop_plain", () => db`SELECT * FROM noop_plain()`],
    ["noop_set (6 SETs + set_config)", () => db`SELECT * FROM noop_set()`],
    [
      "claim, nothing due",
      () =>
        db`SELECT * FROM switchboard_claim(${1}::bigint, ${"l"}::text, ${"h"}::text, ${2}::bigint, ${10}::integer, ${10}::integer, ${1000000}::bigint)`,
    ],
    [
      "complete, empty arrays",
      () =>
        db.unsafe(
          `SELECT * FROM switchboard_complete($1::text[],$1::text[],$1::text[],$1::text[],$2::integer[],$3::bigint[],$1::text[],$4::boolean[],$3::bigint[],$1::text[],$1::text[],$2::integer[],$3::bigint[],$2::integer[],$1::text[],$1::text[],$2::integer[],$1::text[],$1::text[],$3::bigint[],$2::integer[],$2::integer[],$2::integer[],$1::text[],$1::text[],$3::bigint[],$5::bigint)`,
          [e, e, e, e, 1],
        ),
    ],
  ];
  const cpu = async () => {
    const [r] = await db`SELECT pg_backend_pid() AS pid`;
    const f = ((await Bun.file(`/proc/${r.pid}/stat`).text()).split(") ")[1] ?? "").split(" ");
    return (Number(f[11]) + Number(f[12])) * 10; // ms (100 Hz ticks)
  };
  const N = Number(process.env.N ?? 3000);
  for (let round = 0; round < 2; round++)
    for (const [name, fn] of cases.filter(([n]) => n.startsWith(process.env.CASE ?? ""))) {
      for (let i = 0; i < 200; i++) await fn();
      const c0 = await cpu();
      const t0 = performance.now();
      for (let i = 0; i < N; i++) await fn();
      const t = performance.now() - t0;
      const c = (await cpu()) - c0;
      console.log(
        `${name.padEnd(34)} ${((c * 1000) / N).toFixed(0).padStart(5)} µs backend CPU a call, ${((t * 1000) / N).toFixed(0)} µs wall`,
      );
    }
  await db.close();
  await admin.close();
} finally {
  cluster.stop();
}
