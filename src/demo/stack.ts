import type { PlatformNames } from "../platform/names.ts";
import { startSimulator, type Simulator } from "../simulator/server.ts";
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
export function startDemoStack(options: { appUrl: string; names: PlatformNames; print: (line: string) => void }): DemoStack {
  const { print } = options;
  const sim = startSimulator({
    names: options.names,
    webhooks: {
      url: `${options.appUrl}/webhooks/upstream`,
      onResult: ({ status, error }) => {
        if (status !== 200) print(`simulator: Switchboard did not take a webhook (${error ?? `status ${status}`})`);
      },
    },
    onMessageAccepted: (m) => print(`simulator: accepted ${m.type} message ${m.messageId} to ${m.to} from number ${m.phoneNumberId}`),
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
