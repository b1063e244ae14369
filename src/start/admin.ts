import { AppError, errorEnvelope } from "../errors/catalog.ts";
import { announceDatabase, databaseName, requireDatabase } from "./database.ts";
import { loadConfig } from "./exits.ts";
import { openDeps, stderrLogger, type Workers } from "./open-deps.ts";

/** `switchboard admin <noun> <verb>`: the operator API on the command line (prints JSON). */
export async function admin(argv: string[], env: Record<string, string | undefined>, workers: Workers): Promise<void> {
  const { adminUsage, runAdminCommand, UsageError } = await import("../cli/admin-commands.ts");
  if (argv.length === 0 || argv[0] === "help" || argv.includes("--help")) {
    console.log(adminUsage());
    return;
  }
  const config = loadConfig(env);
  requireDatabase("admin", config);
  announceDatabase(databaseName(config));
  const deps = await openDeps(config, stderrLogger(config), workers.self);
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
