#!/usr/bin/env bun
/**
 * The only module that reads the environment, opens the database and listens.
 *   switchboard serve [--dev|--demo] the whole service on one port (--demo adds the simulator and a seeded account)
 *   switchboard simulate           a local stand-in of the upstream platform
 *   switchboard admin <noun> <verb> the operator API on the command line (prints JSON)
 *   switchboard migrate --from --to  move a SQLite deployment to PostgreSQL
 *   switchboard backup / restore    a verified backup of the SQLite file, and back
 *   switchboard healthcheck         exit 0 when the local server's /healthz answers 200 (for containers)
 */
import { parseArgs } from "node:util";
import type { App } from "./app.ts";
import type { RestoreArgs } from "./cli/backup-args.ts";
import type { MigrateArgs } from "./cli/migrate-args.ts";
import type { SimulateArgs } from "./cli/simulate-args.ts";
import { ConfigError, DEV_APP_SECRET, parseConfig, platformSetting, type Config } from "./config/config.ts";
import { SealError } from "./crypto/sealer.ts";
import { DatabaseInUseError } from "./store/sqlite/server-lock.ts";
import { AppError, errorEnvelope } from "./errors/catalog.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import type { Deps } from "./deps.ts";
import type { PlatformNames } from "./platform/names.ts";
import { systemDeps, type ServerOptions } from "./system-deps.ts";

// Each command imports what only it uses when it runs (the server never loads the CLI, the
// simulator or the move to PostgreSQL): start-up time is what a module costs to load (bench/startup).

const USAGE = `Usage:
  switchboard serve [--dev|--demo]   start the service (--dev: DEV_MODE=1; --demo: also the upstream
                                     simulator, a seeded demo account and a receiver; prints how to try it)
  switchboard simulate [flags]       a local stand-in of the upstream platform; --help for its flags
  switchboard admin <noun> <verb>    operator commands; 'switchboard admin help' lists them
  switchboard migrate --from file:… --to postgres://…   move a SQLite deployment to PostgreSQL
  switchboard backup [--to DIR|s3://bucket/prefix]      a verified backup of the SQLite database, while it serves
  switchboard restore --from PATH|s3://… [--to file:…]  restore one; --help for what it checks
  switchboard healthcheck            exit 0 when the server on PORT answers /healthz with 200
Configuration comes from the environment; see README.md.`;

/** Prints one line naming the variable behind a failed start and exits 2 (docs/operations.md#configuration). */
function configurationError(line: string): never {
  console.error(`switchboard: configuration error: ${line}`);
  process.exit(2);
}

function loadConfig(env: Record<string, string | undefined>): Config {
  try {
    return parseConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    configurationError(error.message);
  }
}

/** The server's threads' entries (see BackgroundCheckpoints.workerUrl): resolved here, where the compiled binary keeps src/'s layout. */
const WORKERS = {
  checkpointWorker: new URL("./store/sqlite/checkpoint-worker.ts", import.meta.url).href,
  requestLogWorker: new URL("./store/sqlite/request-log-worker.ts", import.meta.url).href,
  snapshotWorker: new URL("./backup/snapshot-worker.ts", import.meta.url).href,
};

/** Errors that mean the database file cannot be made or opened where DATABASE_URL points. */
const CANNOT_OPEN =
  /^(ENOENT|EACCES|EPERM|EROFS|ENOTDIR|EISDIR|EEXIST|SQLITE_CANTOPEN|SQLITE_NOTADB|SQLITE_READONLY|SQLITE_PERM)/;

/** Where DATABASE_URL points, for messages: never the URL itself, which may hold a password. */
function databaseName(config: Config): string {
  if (config.database.kind === "sqlite") return config.database.path;
  const url = new URL(config.database.url);
  return `postgres://${url.host}${url.pathname}`;
}

async function openDeps(config: Config, logger: Logger, server?: ServerOptions): Promise<Deps> {
  try {
    return { ...(await systemDeps(config, logger, server)), snapshotWorkerUrl: WORKERS.snapshotWorker };
  } catch (error) {
    if (error instanceof SealError) configurationError(`ENCRYPTION_KEY: ${error.message}`);
    if (error instanceof DatabaseInUseError) configurationError(`DATABASE_URL: ${error.message}`);
    if (error instanceof ConfigError) configurationError(error.message);
    const { code, message } = error as { code?: unknown; message?: string };
    if (typeof code === "string" && CANNOT_OPEN.test(code))
      configurationError(`DATABASE_URL: cannot open ${databaseName(config)}: ${message}`);
    throw error;
  }
}

function listen(app: App, config: Config): void {
  try {
    // Bun shares a port between servers by default: a second server started on the same port would
    // quietly take some of this one's connections.
    app.listen({ port: config.port, hostname: config.host, reusePort: false });
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: string };
    if (code === "EADDRINUSE") configurationError(`PORT: ${config.port} is in use on ${config.host}`);
    configurationError(`HOST: cannot listen on ${config.host}:${config.port}: ${message}`);
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dev: { type: "boolean" }, demo: { type: "boolean" } } });
  const env = { ...process.env };
  if (values.dev || values.demo) env.DEV_MODE = "1";
  let config = loadConfig(env);
  const appUrl = `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`;
  // The demo's simulator must be up before the config is final: it is the upstream.
  const stack = values.demo ? await import("./demo/stack.ts") : null;
  const demo = stack?.startDemoStack({
    appUrl,
    names: config.platform,
    signupApp: { id: stack.signupAppId(env), secret: config.appSecret },
    print: (line) => console.log(line),
  });
  if (stack && demo) config = loadConfig({ ...env, UPSTREAM_URL: demo.sim.url, ...stack.demoSignupEnv(env, demo.sim) });
  const [deps, { createApp }] = await Promise.all([
    openDeps(config, createLogger(config.logLevel), WORKERS),
    import("./app.ts"),
  ]);
  const app = createApp(deps);
  listen(app, config);
  deps.logger.info("listening", {
    url: appUrl,
    database: databaseName(config),
    dev_mode: config.devMode,
    operator_api: config.adminToken !== null,
    traces: config.tracing?.url ?? "off",
  });
  if (config.devMode)
    deps.logger.warn("DEV_MODE=1: webhook URLs may use http:// and loopback; never run production like this");
  if (demo) {
    const { demoBanner, seedDemo } = await import("./demo/seed.ts");
    const credentials = await seedDemo({ ...deps, urlRules: app.relay.urlRules }, demo.sim, demo.receiver.url);
    demo.receiver.setSecret(credentials.endpointSecret);
    console.log(
      demoBanner(
        credentials,
        { app: appUrl, simulator: demo.sim.url },
        config.upstreamApiVersion,
        config.platform.product,
      ),
    );
  } else if (deps.store.directory.accounts().length === 0) {
    deps.logger.info("no accounts yet; create the first one with", {
      command:
        "switchboard admin accounts create --name 'Acme' --email ops@acme.example && switchboard admin users create <account_id> --email you@acme.example --password '<at least 10 characters>'",
    });
  }
  const shutdown = async (signal: string) => {
    deps.logger.info("shutting down", { signal });
    await app.shutdown();
    await demo?.stop();
    // After the workers: the last delivery attempts' spans go out too.
    await deps.tracing?.shutdown();
    await deps.store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function admin(argv: string[]): Promise<void> {
  const { adminUsage, runAdminCommand, UsageError } = await import("./cli/admin-commands.ts");
  if (argv.length === 0 || argv[0] === "help" || argv.includes("--help")) {
    console.log(adminUsage());
    return;
  }
  const config = loadConfig(process.env);
  const deps = await openDeps(config, stderrLogger(config));
  try {
    console.log(JSON.stringify(await runAdminCommand(deps, argv), null, 2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`switchboard: ${error.message}\n\n${adminUsage()}`);
      process.exitCode = 2;
    } else if (error instanceof AppError) {
      console.error(JSON.stringify(errorEnvelope(error.errorName, "cli", error.message)));
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await deps.store.close();
  }
}

async function simulate(argv: string[]): Promise<void> {
  const [{ UsageError }, { parseSimulateArgs, SIMULATE_USAGE }, { startSimulator }, { signupAppId }] =
    await Promise.all([
      import("./cli/admin-commands.ts"),
      import("./cli/simulate-args.ts"),
      import("./simulator/server.ts"),
      import("./demo/stack.ts"),
    ]);
  if (argv.includes("--help")) {
    console.log(SIMULATE_USAGE);
    return;
  }
  const appSecret = process.env.APP_SECRET?.trim() || DEV_APP_SECRET;
  let args: SimulateArgs;
  try {
    args = parseSimulateArgs(argv, appSecret);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`switchboard: ${error.message}\n\n${SIMULATE_USAGE}`);
    process.exit(2);
  }
  let names: PlatformNames;
  try {
    names = platformSetting(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    configurationError(error.message);
  }
  const sim = startSimulator({
    names,
    port: args.port,
    // Embedded Signup's stand-in: Switchboard's EMBEDDED_SIGNUP_SDK_URL=<this>/_sim/signup/sdk.js.
    signupApp: { id: signupAppId(process.env), secret: appSecret },
    wabas: args.wabas,
    webhooks:
      args.webhookUrl === null
        ? undefined
        : {
            url: args.webhookUrl,
            onResult: ({ status, error }) => console.log(`simulator: webhook → ${status ?? error}`),
          },
    onMessageAccepted: (m) => console.log(`simulator: accepted ${m.type} message ${m.messageId} to ${m.to}`),
  });
  console.log(
    `simulator: listening on ${sim.url} (UPSTREAM_URL=${sim.url})${args.webhookUrl ? `, webhooks to ${args.webhookUrl}` : ""}`,
  );
  console.log(
    `simulator: Embedded Signup stand-in at EMBEDDED_SIGNUP_SDK_URL=${sim.url}/_sim/signup/sdk.js (app id ${signupAppId(process.env)})`,
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => void sim.stop().then(() => process.exit(0)));
}

/** One line per table, its rows aligned: what migrate copied, what restore restored. */
function printCounts(counts: Record<string, number>): void {
  const width = Math.max(...Object.keys(counts).map((name) => name.length));
  for (const [table, rows] of Object.entries(counts))
    console.log(`  ${table.padEnd(width)}  ${rows.toLocaleString("en")}`);
}

async function migrate(argv: string[]): Promise<void> {
  const [
    { UsageError },
    { MIGRATE_USAGE, parseMigrateArgs },
    { progressBar },
    { moveToPostgres, TargetNotEmptyError },
    { UncopyableRowError },
  ] = await Promise.all([
    import("./cli/admin-commands.ts"),
    import("./cli/migrate-args.ts"),
    import("./cli/progress-bar.ts"),
    import("./move/move.ts"),
    import("./move/rows.ts"),
  ]);
  if (argv.includes("--help")) {
    console.log(MIGRATE_USAGE);
    return;
  }
  let args: MigrateArgs;
  try {
    args = parseMigrateArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`switchboard: ${error.message}\n\n${MIGRATE_USAGE}`);
    process.exit(2);
  }
  const bar = progressBar((text) => process.stderr.write(text), process.stderr.isTTY === true);
  try {
    const counts = await moveToPostgres(args.sqlitePath, args.postgresUrl, bar);
    bar.finish();
    console.log("copied:");
    printCounts(counts);
  } catch (error) {
    bar.finish();
    if (error instanceof DatabaseInUseError) console.error(`switchboard: migrate: ${error.message}; stop it first`);
    else if (error instanceof TargetNotEmptyError) console.error(`switchboard: migrate: ${error.message}`);
    else if (error instanceof UncopyableRowError) {
      console.error(
        `switchboard: migrate: cannot copy ${error.message}; mend or delete that row in the SQLite file and run again (nothing was copied)`,
      );
      process.exit(2);
    } else console.error(`switchboard: migrate failed, nothing was copied: ${(error as Error).message}`);
    process.exit(1);
  }
}

/** Standard output carries a command's JSON or report; log lines go to standard error. */
const stderrLogger = (config: Config) => createLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`));

/** A command line or setting that cannot be used: one line, exit 2. */
function usageFailure(command: string, usage: string, error: unknown): never {
  // By name: the CLI's module is loaded only by the commands that use it.
  if (error instanceof Error && error.name === "UsageError") console.error(`switchboard: ${error.message}\n\n${usage}`);
  else if (error instanceof ConfigError) console.error(`switchboard: ${command}: ${error.message}`);
  else throw error;
  process.exit(2);
}

async function backup(argv: string[]): Promise<void> {
  const [
    { backupSource, createBackups },
    { backupEntry },
    { BY_CLI },
    { recordInFile },
    { BACKUP_USAGE, parseBackupArgs },
    { parseBackupLocation, requireS3Keys },
    { createMetrics },
    { systemClock },
    { cryptoRandom },
  ] = await Promise.all([
    import("./backup/backups.ts"),
    import("./backup/audit.ts"),
    import("./audit/entry.ts"),
    import("./store/sqlite/audit.ts"),
    import("./cli/backup-args.ts"),
    import("./config/backup-config.ts"),
    import("./observability/metrics.ts"),
    import("./runtime/clock.ts"),
    import("./runtime/random.ts"),
  ]);
  if (argv.includes("--help")) return console.log(BACKUP_USAGE);
  const config = loadConfig(process.env);
  if (backupSource(config) === null) {
    const how = "pg_dump for a snapshot, WAL archiving for point-in-time recovery (PITR)";
    console.error(
      `switchboard: backup: DATABASE_URL is not a SQLite file; back up PostgreSQL with its own tools: ${how}`,
    );
    process.exit(2);
  }
  let to = config.backup.to;
  try {
    const args = parseBackupArgs(argv);
    if (args.to !== null) to = parseBackupLocation("--to", args.to);
    if (to.kind === "s3") requireS3Keys(config.backup.s3);
  } catch (error) {
    usageFailure("backup", BACKUP_USAGE, error);
  }
  const deps = {
    config,
    clock: systemClock,
    logger: stderrLogger(config),
    metrics: createMetrics(),
    snapshotWorkerUrl: WORKERS.snapshotWorker,
  };
  const backups = createBackups(deps, to);
  try {
    const manifest = await backups.create();
    // Who took it, in the audit log of the file it is a backup of (src/backup/audit.ts). The backup
    // stands whatever happens to its entry: a failure to write it is said, not the command's failure.
    const source = backupSource(config);
    try {
      const entry = backupEntry({ clock: systemClock, random: cryptoRandom }, manifest, BY_CLI);
      if (source !== null && !recordInFile(source, entry))
        deps.logger.warn("the backup is not in the audit log: the database predates it (a server's start migrates it)");
    } catch (error) {
      deps.logger.error("the backup's audit entry could not be written", { error: (error as Error).message });
    }
    console.log(JSON.stringify(manifest, null, 2));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(`switchboard: backup: ${error.message}`);
    process.exit(1);
  }
}

async function restoreCommand(argv: string[]): Promise<void> {
  const [
    { backupSource },
    { restore, RestoreRefused },
    { parseRestoreArgs, RESTORE_USAGE },
    { createSealer },
    { devEncryptionKey },
    { cryptoRandom },
  ] = await Promise.all([
    import("./backup/backups.ts"),
    import("./backup/restore.ts"),
    import("./cli/backup-args.ts"),
    import("./crypto/sealer.ts"),
    import("./crypto/dev-key.ts"),
    import("./runtime/random.ts"),
  ]);
  if (argv.includes("--help")) return console.log(RESTORE_USAGE);
  let args: RestoreArgs;
  try {
    args = parseRestoreArgs(argv);
  } catch (error) {
    usageFailure("restore", RESTORE_USAGE, error);
  }
  const config = loadConfig(args.to === null ? process.env : { ...process.env, DATABASE_URL: args.to });
  const path = backupSource(config);
  if (path === null) {
    console.error(
      "switchboard: restore refused: DATABASE_URL is not a SQLite file; pass --to file:… (PostgreSQL: pg_restore)",
    );
    process.exit(2);
  }
  const sealer = createSealer(config.encryptionKey ?? devEncryptionKey(config.database, cryptoRandom), cryptoRandom);
  try {
    const { manifest, schemaVersion } = await restore({
      from: args.from,
      to: path,
      force: args.force,
      sealer,
      s3: config.backup.s3,
    });
    const from = manifest.schema_version;
    const migrated = schemaVersion === from ? "" : `, migrated from schema ${from} to ${schemaVersion}`;
    console.log(`restored ${manifest.name} (taken ${manifest.at}, schema ${from}${migrated}) into ${path}:`);
    printCounts(manifest.counts);
  } catch (error) {
    if (error instanceof RestoreRefused) console.error(`switchboard: restore refused: ${error.message}`);
    else console.error(`switchboard: restore failed, the database was not changed: ${(error as Error).message}`);
    process.exit(error instanceof RestoreRefused ? 2 : 1);
  }
}

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
    await serve(rest);
    break;
  case "admin":
    await admin(rest);
    break;
  case "simulate":
    await simulate(rest);
    break;
  case "migrate":
    await migrate(rest);
    break;
  case "backup":
    await backup(rest);
    break;
  case "restore":
    await restoreCommand(rest);
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
