#!/usr/bin/env bun
/**
 * The only module that reads the environment; each command's wiring is in src/start/.
 *   switchboard serve [--dev|--demo] the whole service on one port (--demo adds the simulator and a seeded account)
 *   switchboard simulate           a local stand-in of the upstream platform
 *   switchboard admin <noun> <verb> the operator API on the command line (prints JSON)
 *   switchboard migrate --from --to  move a SQLite deployment to PostgreSQL
 *   switchboard backup / restore    a verified backup of the SQLite file, and back
 *   switchboard healthcheck         exit 0 when the local server's /healthz answers 200 (for containers)
 */
import type { Workers } from "./start/open-deps.ts";

// Each command imports its module of src/start/ when it runs, and that module what only it uses (the
// server never loads the CLI, the simulator or the move to PostgreSQL): start-up time is what a module
// costs to load (bench/startup).

const USAGE = `Usage:
  switchboard serve [--dev|--demo]   start the service (--dev: DEV_MODE=1; --demo: also the upstream
                                     simulator, a seeded demo account and a receiver; prints how to try it)
  switchboard simulate [flags]       a local stand-in of the upstream platform; --help for its flags
  switchboard admin <noun> <verb>    operator commands; 'switchboard admin help' lists them
  switchboard migrate --from file:… --to postgres://…   move a SQLite deployment to PostgreSQL
  switchboard backup [--to DIR|s3://bucket/prefix]      a verified backup of the SQLite database, while it serves
  switchboard restore --from PATH|s3://… [--to file:…]  restore one; --help for what it checks
  switchboard healthcheck            exit 0 when the server on PORT answers /healthz with 200
Configuration comes from the environment; see docs/configuration.md.`;

/** The compiled binary runs its own code from Bun's embedded file system, and is run as itself. */
const COMPILED = /[/\\]\$bunfs[/\\]|~BUN/.test(import.meta.path);

/** The server's threads' entries (see BackgroundCheckpoints.workerUrl): resolved here, where the compiled binary keeps src/'s layout. */
const WORKERS: Workers = {
  checkpointWorker: new URL("./store/sqlite/checkpoint-worker.ts", import.meta.url).href,
  requestLogWorker: new URL("./store/sqlite/request-log-worker.ts", import.meta.url).href,
  snapshotWorker: new URL("./backup/snapshot-worker.ts", import.meta.url).href,
  self: COMPILED ? [process.execPath] : [process.execPath, import.meta.path],
};

async function healthcheck(): Promise<void> {
  const port = process.env.PORT?.trim() || "8080";
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
    process.exitCode = response.status === 200 ? 0 : 1;
  } catch {
    process.exitCode = 1;
  }
}

const [command, ...rest] = process.argv.slice(2);
switch (command ?? "serve") {
  case "serve":
    await (await import("./start/serve.ts")).serve(rest, process.env, WORKERS);
    break;
  case "admin":
    await (await import("./start/admin.ts")).admin(rest, process.env, WORKERS);
    break;
  case "simulate":
    await (await import("./start/simulate.ts")).simulate(rest, process.env);
    break;
  case "migrate":
    await (await import("./start/migrate.ts")).migrate(rest);
    break;
  case "backup":
    await (await import("./start/backup.ts")).backup(rest, process.env, WORKERS);
    break;
  case "backup-snapshot":
    // A backup's own process, started by the server or `switchboard backup` (src/backup/child.ts).
    await (await import("./backup/snapshot-child.ts")).snapshotChild(WORKERS.snapshotWorker);
    break;
  case "restore":
    await (await import("./start/restore.ts")).restoreCommand(rest, process.env);
    break;
  case "healthcheck":
    await healthcheck();
    break;
  case "help":
  case "--help":
    console.log(USAGE);
    break;
  default:
    console.error(`switchboard: unknown command "${command}"\n${USAGE}`);
    process.exit(2);
}
