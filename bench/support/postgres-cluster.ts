/**
 * A PostgreSQL server of the bench's own, from Debian's binaries, on a free port with its data in
 * a temporary directory and the server's default settings (autovacuum on, fsync and synchronous
 * commits on): what an operator runs, and not this machine's shared test server, whose autovacuum
 * is off. pg_stat_statements is loaded so the bench can count statements per delivery. As root the
 * server runs as the `postgres` user (PostgreSQL refuses root).
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";

function asPostgres(args: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...args] : args;
}

function run(args: string[]): void {
  const done = Bun.spawnSync(asPostgres(args), { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${done.stderr.toString()}`);
}

export async function startPostgresCluster(
  port: number,
  settings: string[] = [],
): Promise<{ url: string; dataDir: string; logFile: string; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-bench-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  run([`${BIN}/initdb`, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
  run([
    `${BIN}/pg_ctl`,
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "start",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements,auto_explain -c max_connections=200 ${settings.map((s) => `-c ${s}`).join(" ")}`,
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    dataDir: data,
    logFile: join(dir, "log"),
    stop() {
      run([`${BIN}/pg_ctl`, "-D", data, "-m", "fast", "-w", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
