#!/usr/bin/env bun
/**
 * The only module that reads the environment, opens the database and listens.
 *   switchboard serve [--dev]      the whole service on one port
 *   switchboard admin <noun> <verb> the operator API on the command line (prints JSON)
 *   switchboard healthcheck         exit 0 when the local server's /healthz answers 200 (for containers)
 */
import { parseArgs } from "node:util";
import { createApp } from "./app.ts";
import { adminUsage, runAdminCommand, UsageError } from "./cli/admin-commands.ts";
import { ConfigError, parseConfig, type Config } from "./config/config.ts";
import { SealError } from "./crypto/sealer.ts";
import { AppError, errorEnvelope } from "./errors/catalog.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import type { Deps } from "./runtime/deps.ts";
import { systemDeps } from "./runtime/system-deps.ts";

const USAGE = `Usage:
  switchboard serve [--dev]          start the service (--dev: DEV_MODE=1)
  switchboard admin <noun> <verb>    operator commands; 'switchboard admin help' lists them
  switchboard healthcheck            exit 0 when the server on PORT answers /healthz with 200
Configuration comes from the environment; see README.md.`;

/** Prints one line naming the bad variable and exits 2 (CONTRACT 2). */
function loadConfig(env: Record<string, string | undefined>): Config {
  try {
    return parseConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`switchboard: configuration error: ${error.message}`);
    process.exit(2);
  }
}

function openDeps(config: Config, logger: Logger): Deps {
  try {
    return systemDeps(config, logger);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    console.error(`switchboard: configuration error: ENCRYPTION_KEY: ${error.message}`);
    process.exit(2);
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dev: { type: "boolean" } } });
  const env = { ...process.env };
  if (values.dev) env.DEV_MODE = "1";
  const config = loadConfig(env);
  const deps = openDeps(config, createLogger(config.logLevel));
  const app = createApp(deps);
  app.listen({ port: config.port, hostname: config.host });
  deps.logger.info("listening", {
    url: `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${app.server!.port}`,
    database: config.databasePath,
    dev_mode: config.devMode,
    operator_api: config.adminToken !== null,
  });
  if (config.devMode) deps.logger.warn("DEV_MODE=1: webhook URLs may use http:// and loopback; never run production like this");
  if (deps.store.directory.accounts().length === 0) {
    deps.logger.info("no accounts yet; create the first one with", {
      command: "switchboard admin accounts create --name 'Acme' --email ops@acme.example && switchboard admin users create <account_id> --email you@acme.example --password '<at least 10 characters>'",
    });
  }
  const shutdown = async (signal: string) => {
    deps.logger.info("shutting down", { signal });
    await app.shutdown();
    deps.store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function admin(argv: string[]): Promise<void> {
  if (argv.length === 0 || argv[0] === "help" || argv.includes("--help")) {
    console.log(adminUsage());
    return;
  }
  const config = loadConfig(process.env);
  // Standard output carries the command's JSON; log lines go to standard error.
  const deps = openDeps(config, createLogger(config.logLevel, (line) => process.stderr.write(line + "\n")));
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
    deps.store.close();
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
