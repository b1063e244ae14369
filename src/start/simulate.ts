import type { SimulateArgs } from "../cli/simulate-args.ts";
import { ConfigError, DEV_APP_SECRET, platformSetting } from "../config/config.ts";
import type { PlatformNames } from "../platform/names.ts";
import { configurationError } from "./exits.ts";

/** `switchboard simulate`: a local stand-in of the upstream platform. */
export async function simulate(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  const [{ UsageError }, { parseSimulateArgs, SIMULATE_USAGE }, { startSimulator }, { signupAppId }] =
    await Promise.all([
      import("../cli/admin-commands.ts"),
      import("../cli/simulate-args.ts"),
      import("../simulator/server.ts"),
      import("../demo/stack.ts"),
    ]);
  if (argv.includes("--help")) {
    console.log(SIMULATE_USAGE);
    return;
  }
  const appSecret = env.APP_SECRET?.trim() || DEV_APP_SECRET;
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
    names = platformSetting(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    configurationError(error.message);
  }
  const sim = startSimulator({
    names,
    port: args.port,
    // Embedded Signup's stand-in: Switchboard's EMBEDDED_SIGNUP_SDK_URL=<this>/_sim/signup/sdk.js.
    signupApp: { id: signupAppId(env), secret: appSecret },
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
    `simulator: Embedded Signup stand-in at EMBEDDED_SIGNUP_SDK_URL=${sim.url}/_sim/signup/sdk.js (app id ${signupAppId(env)})`,
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => void sim.stop().then(() => process.exit(0)));
}
