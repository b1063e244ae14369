import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { postgresAdmin, postgresUrl, testBackend } from "../support/backend.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { until } from "./instances.ts";

// docs/operations.md#connections with real `switchboard serve` processes: the connection budget, and
// a start on a server that refuses connections. Only on the PostgreSQL pass.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A database of its own, owned by a role of its own that is no superuser (CONNECTION LIMIT does not
 * hold superusers), with at most `limit` connections; the server migrates it.
 */
async function limitedDatabase(limit: number) {
  const name = `sb_conn_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgresAdmin();
  await admin.unsafe(`CREATE ROLE ${name} LOGIN`);
  await admin.unsafe(`CREATE DATABASE ${name} OWNER ${name} CONNECTION LIMIT ${limit}`);
  cleanups.push(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.unsafe(`DROP ROLE IF EXISTS ${name}`);
  });
  const url = new URL(postgresUrl(name));
  url.username = name;
  url.password = "";
  return {
    name,
    url: url.toString(),
    limit: (n: number) => admin.unsafe(`ALTER DATABASE ${name} CONNECTION LIMIT ${n}`),
    connections: async () =>
      Number((await admin.unsafe("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]))[0].n),
  };
}

/** `switchboard serve` on `databaseUrl`, its standard output (the log) and error kept as they come. */
function serve(databaseUrl: string, env: Record<string, string> = {}) {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
    cwd: ROOT,
    env: processEnv("", {
      DATABASE_URL: databaseUrl,
      REDIS_URL: "redis://127.0.0.1:6379",
      REDIS_KEY_PREFIX: `sb_conn_${port}:`,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ...env,
    }),
    stdout: "pipe",
    stderr: "pipe",
  });
  cleanups.push(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  const output = { stdout: "", stderr: "" };
  const read = (stream: "stdout" | "stderr") => async () => {
    const text = new TextDecoder();
    const reader = proc[stream].getReader();
    for (let part = await reader.read(); !part.done; part = await reader.read())
      output[stream] += text.decode(part.value, { stream: true });
  };
  /** Resolves once the process has ended and all it printed is read. */
  const ended = Promise.all([read("stdout")(), read("stderr")(), proc.exited]).then(([, , code]) => code);
  const refusals = () =>
    output.stdout
      .split("\n")
      .filter((line) => line.includes("PostgreSQL refused the connection"))
      .map((line) => JSON.parse(line) as { attempt: number; reason: string; retry_in_ms: number });
  return { url: `http://127.0.0.1:${port}`, ended, output, refusals };
}

/** A stack trace's frames, in whatever a process printed. */
const STACK_FRAME = /^\s+at\s/m;

describe.skipIf(testBackend() !== "postgres")("connections: the budget, and a start on a server that refuses", () => {
  test("a database at its connection limit: each refusal is one log line, and the server starts once a slot frees, within its budget (DATABASE_POOL_SIZE + 2)", async () => {
    const db = await limitedDatabase(1);
    // The one slot is taken (as by another instance, a migration, a backup).
    const holder = new SQL({ url: db.url, max: 1 });
    await holder.unsafe("SELECT 1");
    cleanups.push(() => holder.close());
    const server = serve(db.url, { DATABASE_POOL_SIZE: "3" });
    await until(() => server.refusals().length >= 3, "three refusals in the log", 15_000);
    const [first, second] = server.refusals();
    expect(first).toMatchObject({ attempt: 1, retry_in_ms: 250 });
    expect(first!.reason).toMatch(/too many connections for database .*\(53300\)/);
    expect(second).toMatchObject({ attempt: 2, retry_in_ms: 500 });
    expect(server.output.stdout + server.output.stderr).not.toMatch(STACK_FRAME);
    expect((await fetch(`${server.url}/healthz`).catch(() => null))?.status).toBeUndefined();
    // A slot frees: exactly the budget the server states (a pool of 3, the listener, the request log's writer).
    await db.limit(5);
    await holder.close();
    await waitForOk(`${server.url}/healthz`, 15_000);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^switchboard_database_connections_max 5$/m);
    // Work that takes connections at once (operator calls, health checks) stays within it.
    const headers = { authorization: `Bearer ${processEnv("").ADMIN_TOKEN}`, "content-type": "application/json" };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${server.url}/admin/accounts`, {
          method: "POST",
          headers,
          body: JSON.stringify({ name: `Budget ${i}`, email: `b${i}@example.com` }),
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    expect(await db.connections()).toBeLessThanOrEqual(5);
    expect(server.output.stdout + server.output.stderr).not.toMatch(STACK_FRAME);
  }, 60_000);

  test("a server that refuses every connection for DATABASE_START_TIMEOUT: one line saying so, exit code 1, no stack trace", async () => {
    // Nothing listens there: ECONNREFUSED, as while PostgreSQL restarts.
    const server = serve(`postgres://sb@127.0.0.1:${freePort()}/switchboard`, { DATABASE_START_TIMEOUT: "2s" });
    expect(await server.ended).toBe(1);
    const stderr = server.output.stderr.trim().split("\n");
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(
      /^switchboard: cannot start: DATABASE_URL: PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/switchboard refused every connection for 2 s \(\d+ attempts, the last: .*\); free connections/,
    );
    expect(server.refusals().length).toBeGreaterThanOrEqual(2);
    expect(server.output.stdout + server.output.stderr).not.toMatch(STACK_FRAME);
  }, 30_000);
});
