import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startSimulator } from "../../src/simulator/server.ts";
import { postgresAdmin, postgresUrl, TEST_POSTGRES_URL, testBackend } from "../support/backend.ts";
import { freePort, MAIN, processEnv, ROOT } from "../support/process.ts";
import { tempDir } from "../support/temp-dir.ts";
import { eventBody, messageChange, postUpstream, relayAccount } from "../webhooks/support.ts";
import { countingReceiver, scaleOut, until } from "./instances.ts";

// docs/operations.md#pgbouncer: instances behind PgBouncer in transaction mode work when LISTEN and
// the migrations' lock go to DATABASE_DIRECT_URL, and refuse to start, in one line, without it.
// Only on the PostgreSQL pass, and only where pgbouncer is installed (CI machines have Node and npm
// only: there the tests are skipped, and say why).

/** The pgbouncer program, on PATH or where Debian puts it; null when it is not installed. */
const PGBOUNCER = Bun.which("pgbouncer") ?? ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find(existsSync) ?? null;
const skipped = testBackend() !== "postgres" || PGBOUNCER === null;
if (testBackend() === "postgres" && PGBOUNCER === null)
  console.warn("pgbouncer tests skipped: no pgbouncer on PATH, /usr/sbin or /usr/bin (apt-get install pgbouncer)");

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** PgBouncer in transaction mode on a loopback port, in front of the tests' PostgreSQL server; its URL for `database`. */
async function pgbouncer() {
  const server = new URL(TEST_POSTGRES_URL);
  const dir = tempDir("switchboard-pgbouncer-");
  cleanups.push(() => dir.cleanup());
  // pgbouncer will not run as root: then it runs as nobody, who must read its files.
  chmodSync(dir.path, 0o755);
  const port = freePort();
  const users = join(dir.path, "users.txt");
  writeFileSync(users, `"${decodeURIComponent(server.username)}" ""\n`);
  const config = join(dir.path, "pgbouncer.ini");
  writeFileSync(
    config,
    `[databases]
* = host=${server.hostname} port=${server.port || 5432}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${users}
pool_mode = transaction
default_pool_size = 20
`,
  );
  chmodSync(users, 0o644);
  chmodSync(config, 0o644);
  const asRoot = process.getuid?.() === 0;
  const proc = Bun.spawn([...(asRoot ? ["runuser", "-u", "nobody", "--"] : []), PGBOUNCER!, config], {
    stdout: "ignore",
    stderr: "ignore",
  });
  cleanups.push(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  const through = (database: string) => {
    const url = new URL(postgresUrl(database));
    url.port = String(port);
    return url.toString();
  };
  await until(async () => {
    const probe = new SQL({ url: through("test"), max: 1, prepare: false, connectionTimeout: 1 });
    const ok = await probe.unsafe("SELECT 1").then(
      () => true,
      () => false,
    );
    await probe.close();
    return ok;
  }, "pgbouncer to answer");
  return { through };
}

describe.skipIf(skipped)("PgBouncer in transaction mode", () => {
  test("without DATABASE_DIRECT_URL the server refuses to start with one line naming it, and migrates nothing", async () => {
    const bouncer = await pgbouncer();
    const name = `sb_bouncer_${process.pid}_${Date.now().toString(36)}`;
    await postgresAdmin().unsafe(`CREATE DATABASE ${name}`);
    cleanups.push(() => postgresAdmin().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: processEnv("", {
        DATABASE_URL: bouncer.through(name),
        REDIS_URL: "redis://127.0.0.1:6379",
        REDIS_KEY_PREFIX: `${name}:`,
        PORT: String(freePort()),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^switchboard: configuration error: DATABASE_URL: a notification committed through it was not heard on its own LISTEN connection within 5 s \(PgBouncer in transaction or statement mode\?\); set DATABASE_DIRECT_URL/,
      ),
    ]);
    const db = new SQL({ url: postgresUrl(name), max: 1 });
    const [{ n }] = await db.unsafe("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'drizzle'");
    await db.close();
    expect(n).toBe(0);
  }, 30_000);

  test("with DATABASE_DIRECT_URL two instances work through it: a change through one holds on the other within 1 s, and events are delivered once", async () => {
    const bouncer = await pgbouncer();
    const sim = startSimulator();
    cleanups.push(() => sim.stop());
    const cluster = await scaleOut({ UPSTREAM_URL: sim.url });
    cleanups.push(() => cluster.stop());
    const name = new URL(cluster.databaseUrl).pathname.slice(1);
    const env = { DATABASE_URL: bouncer.through(name), DATABASE_DIRECT_URL: cluster.databaseUrl };
    const [a, b] = [await cluster.start(env), await cluster.start(env)];
    const rx = countingReceiver();
    cleanups.push(() => rx.stop());
    const account = await relayAccount(a!.url);
    await account.endpoint(rx.url("/through-bouncer"));
    const created = performance.now();
    // b hears of the endpoint made through a (a notification on its LISTEN connection to the
    // direct URL): the first event posted to b that is delivered was posted within 1 s.
    const posted = new Map<string, number>();
    await until(
      async () => {
        // (a probe posted before b knew the endpoint is rightly delivered to no one)
        const change = messageChange(account.numbers[0]!, "probe");
        posted.set((change.value.messages[0] as { id: string }).id, performance.now());
        expect((await postUpstream(b!.url, eventBody([{ id: account.wabaId, changes: [change] }]))).status).toBe(200);
        return (rx.seen.get("/through-bouncer")?.length ?? 0) > 0;
      },
      "a delivery of an event posted to b",
      3_000,
    );
    expect(posted.get(rx.seen.get("/through-bouncer")![0]!)! - created).toBeLessThanOrEqual(1_000);
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const change = messageChange(account.numbers[0]!, `event ${i}`);
      ids.add((change.value.messages[0] as { id: string }).id);
      const url = i % 2 === 0 ? a!.url : b!.url;
      expect((await postUpstream(url, eventBody([{ id: account.wabaId, changes: [change] }]))).status).toBe(200);
    }
    const events = () => (rx.seen.get("/through-bouncer") ?? []).filter((id) => ids.has(id));
    await until(() => events().length >= ids.size, "every delivery", 15_000);
    const seen = events();
    expect(new Set(seen)).toEqual(ids);
    expect(seen).toHaveLength(ids.size);
  }, 60_000);
});
