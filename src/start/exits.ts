import { ConfigError, parseConfig, type Config } from "../config/config.ts";

/** Prints one line naming the variable behind a failed start and exits 2 (docs/operations.md#configuration). */
export function configurationError(line: string): never {
  console.error(`switchboard: configuration error: ${line}`);
  process.exit(2);
}

/** Prints one line saying why the server could not start though its configuration is sound, and exits 1. */
export function startFailure(line: string): never {
  console.error(`switchboard: cannot start: ${line}`);
  process.exit(1);
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  try {
    return parseConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    configurationError(error.message);
  }
}

/** A command line or setting that cannot be used: one line, exit 2. */
export function usageFailure(command: string, usage: string, error: unknown): never {
  // By name: the CLI's module is loaded only by the commands that use it.
  if (error instanceof Error && error.name === "UsageError") console.error(`switchboard: ${error.message}\n\n${usage}`);
  else if (error instanceof ConfigError) console.error(`switchboard: ${command}: ${error.message}`);
  else throw error;
  process.exit(2);
}
