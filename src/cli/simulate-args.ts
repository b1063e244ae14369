import type { SimNumber, SimWaba } from "../simulator/world.ts";
import { parseFlags, UsageError } from "./admin-commands.ts";

export const SIMULATE_USAGE = `Usage: switchboard simulate [--port 8090] [--webhook-url URL]
                            [--waba WABA_ID:TOKEN[:APP_SECRET]]... [--number WABA_ID:PHONE_NUMBER_ID[:HIGH]]...
  A local stand-in of the upstream platform. Point Switchboard's UPSTREAM_URL at it.
  --webhook-url   Switchboard's ingress (e.g. http://127.0.0.1:8080/webhooks/upstream): status webhooks
                  follow each accepted send, and POST /_sim/inbound sends an inbound message.
  --waba/--number register what Switchboard will call with (the app secret defaults to APP_SECRET).
  Embedded Signup: set Switchboard's EMBEDDED_SIGNUP_SDK_URL to <simulator>/_sim/signup/sdk.js; its popup
                  creates the business's WABA and number, and codes are exchanged for APP_SECRET's app
                  (EMBEDDED_SIGNUP_APP_ID, 1000000000000001 when unset).
  Control API: POST /_sim/wabas, /_sim/numbers, /_sim/faults {id, error|delay_ms|drop, times?},
               DELETE /_sim/faults, POST /_sim/inbound {phone_number_id, from?, text?}`;

export interface SimulateArgs {
  port: number;
  webhookUrl: string | null;
  wabas: SimWaba[];
}

/** Parses `switchboard simulate` flags; `appSecret` is the default for WABAs that name none. */
export function parseSimulateArgs(argv: string[], appSecret: string): SimulateArgs {
  const { values } = parseFlags({
    args: argv,
    options: {
      port: { type: "string", default: "8090" },
      "webhook-url": { type: "string" },
      waba: { type: "string", multiple: true, default: [] },
      number: { type: "string", multiple: true, default: [] },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number, got "${values.port}"`);
  const webhookUrl = values["webhook-url"] ?? null;
  if (webhookUrl !== null && !/^https?:\/\/\S+$/.test(webhookUrl))
    throw new UsageError(`--webhook-url must be an http(s) URL, got "${webhookUrl}"`);
  const wabas = values.waba.map((spec): SimWaba & { numbers: SimNumber[] } => {
    const [wabaId, accessToken, secret] = spec.split(":");
    if (!wabaId || !accessToken) throw new UsageError(`--waba must be WABA_ID:TOKEN[:APP_SECRET], got "${spec}"`);
    return { wabaId, accessToken, appSecret: secret || appSecret, numbers: [] };
  });
  for (const spec of values.number) {
    const [wabaId, phoneNumberId, level] = spec.split(":");
    const waba = wabas.find((w) => w.wabaId === wabaId);
    if (!waba || !phoneNumberId || (level !== undefined && level !== "HIGH")) {
      throw new UsageError(
        `--number must be WABA_ID:PHONE_NUMBER_ID[:HIGH] of a --waba given before it, got "${spec}"`,
      );
    }
    waba.numbers.push({ phoneNumberId, throughputLevel: level === "HIGH" ? "HIGH" : "STANDARD" });
  }
  return { port, webhookUrl, wabas };
}
