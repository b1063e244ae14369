import { parseArgs } from "node:util";
import type { App } from "../app.ts";
import type { Config } from "../config/config.ts";
import type { Deps } from "../deps.ts";
import { createLogger } from "../observability/logger.ts";
import { configurationError, loadConfig } from "./exits.ts";
import { announceDatabase, databaseName } from "./database.ts";
import { openDeps, type Workers } from "./open-deps.ts";

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

/**
 * What a new deployment needs next, in its log: on a database with no operator, the command that
 * makes the first one (naming this database, so that it works from any directory) and where the
 * console is; with no account yet, the commands that make one and its first login.
 */
async function firstSteps(deps: Deps, config: Config, appUrl: string): Promise<void> {
  const database = config.database.kind === "sqlite" ? `DATABASE_URL=file:${databaseName(config)} ` : "";
  if ((await deps.store.operators.list()).length === 0) {
    deps.logger.info("no operator yet: make the first one, then sign in to the console", {
      command: `${database}switchboard admin operators create --email you@example.com --password '<at least 10 characters>'`,
      console: `${appUrl}/operator`,
    });
  }
  if (deps.store.directory.accounts().length === 0) {
    deps.logger.info("no accounts yet: create one on the console's Accounts page, or with", {
      command: `${database}switchboard admin accounts create --name 'Acme' --email ops@acme.example && ${database}switchboard admin users create <account_id> --email you@acme.example --password '<at least 10 characters>'`,
    });
  }
}

/** `switchboard serve [--dev|--demo]`: the whole service on one port. */
export async function serve(
  argv: string[],
  environment: Record<string, string | undefined>,
  workers: Workers,
): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dev: { type: "boolean" }, demo: { type: "boolean" } } });
  const env = { ...environment };
  if (values.dev || values.demo) env.DEV_MODE = "1";
  let config = loadConfig(env);
  announceDatabase(databaseName(config));
  const appUrl = `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`;
  // The demo's simulator must be up before the config is final: it is the upstream.
  const stack = values.demo ? await import("../demo/stack.ts") : null;
  const demo = stack?.startDemoStack({
    appUrl,
    names: config.platform,
    signupApp: { id: stack.signupAppId(env), secret: config.appSecret },
    print: (line) => console.log(line),
  });
  if (stack && demo) config = loadConfig({ ...env, UPSTREAM_URL: demo.sim.url, ...stack.demoSignupEnv(env, demo.sim) });
  const [deps, { createApp }] = await Promise.all([
    openDeps(config, createLogger(config.logLevel), workers.self, workers),
    import("../app.ts"),
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
    const { demoBanner, seedDemo } = await import("../demo/seed.ts");
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
  } else {
    await firstSteps(deps, config, appUrl);
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
