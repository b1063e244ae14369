import type { PlatformNames } from "../platform/names.ts";
import { startSimulator, type Simulator } from "../simulator/server.ts";
import type { SignupApp } from "../simulator/signup.ts";
import { startDemoReceiver, type DemoReceiver } from "./receiver.ts";

export interface DemoStack {
  sim: Simulator;
  receiver: DemoReceiver;
  stop(): Promise<void>;
}

/**
 * What `serve --demo` runs beside Switchboard: the upstream simulator (sending its webhooks to
 * Switchboard's ingress at `appUrl`) and a receiver for the demo endpoint, both printing what happens.
 */
export function startDemoStack(options: {
  appUrl: string;
  names: PlatformNames;
  signupApp: SignupApp;
  print: (line: string) => void;
}): DemoStack {
  const { print } = options;
  const sim = startSimulator({
    names: options.names,
    signupApp: options.signupApp,
    webhooks: {
      url: `${options.appUrl}/webhooks/upstream`,
      onResult: ({ status, error }) => {
        if (status !== 200) print(`simulator: Switchboard did not take a webhook (${error ?? `status ${status}`})`);
      },
    },
    onMessageAccepted: (m) =>
      print(`simulator: accepted ${m.type} message ${m.messageId} to ${m.to} from number ${m.phoneNumberId}`),
  });
  const receiver = startDemoReceiver({ print });
  return {
    sim,
    receiver,
    async stop() {
      await Promise.all([sim.stop(), receiver.stop()]);
    },
  };
}

/** The simulator's Embedded Signup app: EMBEDDED_SIGNUP_APP_ID's, else the demo's. */
export const signupAppId = (env: Record<string, string | undefined>): string =>
  env.EMBEDDED_SIGNUP_APP_ID?.trim() || "1000000000000001";

/** The settings that turn Embedded Signup on against the simulator's stand-in (the SDK URL points at it). */
export function demoSignupEnv(env: Record<string, string | undefined>, sim: Simulator): Record<string, string> {
  return {
    EMBEDDED_SIGNUP_APP_ID: signupAppId(env),
    EMBEDDED_SIGNUP_CONFIG_ID: env.EMBEDDED_SIGNUP_CONFIG_ID?.trim() || "2000000000000002",
    EMBEDDED_SIGNUP_SDK_URL: `${sim.url}/_sim/signup/sdk.js`,
  };
}
