import { createAccount, createUser } from "../accounts/accounts.ts";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import { bySystem } from "../audit/entry.ts";
import { createNumber } from "../numbers/numbers.ts";
import { createOperator } from "../operators/operations.ts";
import { createWaba } from "../numbers/wabas.ts";
import { hashPassword } from "../crypto/password.ts";
import type { Deps } from "../deps.ts";
import type { Simulator } from "../simulator/server.ts";
import { numericId } from "../simulator/world.ts";
import type { PhoneNumber } from "../store/types.ts";
import { createEndpoint, rotateSecret, updateEndpoint, type EndpointDeps } from "../webhooks/endpoints.ts";

export const DEMO_EMAIL = "demo@switchboard.local";
/** The demo's operator: signs in to the console at /operator. */
export const DEMO_OPERATOR_EMAIL = "operator@switchboard.local";
const DEMO_KEY_NAMES = ["demo live", "demo test"];
const DEMO_FIELDS = ["messages", "message_template_status_update", "phone_number_quality_update", "account_update"];

export interface DemoCredentials {
  accountId: string;
  email: string;
  password: string;
  liveKey: string;
  testKey: string;
  wabaId: string;
  numberId: string;
  sandboxNumberId: string;
  endpointId: string;
  endpointSecret: string;
  operatorEmail: string;
  operatorPassword: string;
}

type SeedDeps = EndpointDeps & Pick<Deps, "fetch" | "logger">;

/** Who the audit log says set the demo up. */
const DEMO = bySystem("demo");

/**
 * Makes the demo account ready and returns credentials to print. Idempotent: the first start
 * creates the account, its user, a WABA, a standard and a sandbox number and an endpoint on the
 * demo receiver; every later start (`bun --watch` restarts often) keeps them, re-registers the WABA
 * and numbers with the fresh simulator, and hands out a new password, new keys (the previous demo
 * keys are revoked) and a new endpoint secret, because none of those can be read back.
 */
export async function seedDemo(deps: SeedDeps, sim: Simulator, receiverUrl: string): Promise<DemoCredentials> {
  const { directory } = deps.store;
  const account =
    directory.accounts().find((a) => a.email === DEMO_EMAIL) ??
    (await createAccount(deps, { name: "Demo business", email: DEMO_EMAIL }, DEMO));

  const password = Buffer.from(deps.random.bytes(12)).toString("base64url");
  const user = await deps.store.users.byEmail(DEMO_EMAIL);
  // Its sessions stay: `bun --watch` restarts at every save, which would sign the browser out each time.
  if (user) await deps.store.users.setPasswordHash(user.id, await hashPassword(password), undefined, "all");
  else await createUser(deps, account.id, { email: DEMO_EMAIL, password }, DEMO);

  const waba =
    directory.wabas(account.id)[0] ??
    (await createWaba(
      deps,
      account.id,
      { waba_id: numericId(deps.random), access_token: `EAAGdemo${numericId(deps.random, 24)}` },
      DEMO,
    ));
  sim.addWaba({
    wabaId: waba.wabaId,
    accessToken: waba.accessToken,
    appSecret: waba.appSecret ?? deps.config.appSecret,
  });

  const numberOfKind = async (kind: PhoneNumber["kind"]): Promise<PhoneNumber> => {
    const existing = directory.numbers(account.id).find((n) => n.kind === kind);
    if (existing) {
      sim.addNumber(waba.wabaId, { phoneNumberId: existing.phoneNumberId, throughputLevel: existing.throughputLevel });
      return existing;
    }
    const phoneNumberId = numericId(deps.random);
    sim.addNumber(waba.wabaId, { phoneNumberId, verifiedName: kind === "sandbox" ? "Demo Sandbox" : "Demo Business" });
    return createNumber(deps, account.id, { phone_number_id: phoneNumberId, waba_id: waba.wabaId, kind }, DEMO);
  };
  const number = await numberOfKind("embedded");
  const sandbox = await numberOfKind("sandbox");

  for (const key of directory.apiKeys(account.id)) {
    if (key.revokedAt === null && key.name !== null && DEMO_KEY_NAMES.includes(key.name))
      await revokeApiKey(deps, key.id, DEMO);
  }
  const live = await createApiKey(deps, account.id, { mode: "live", name: "demo live" }, DEMO);
  const test = await createApiKey(deps, account.id, { mode: "test", name: "demo test" }, DEMO);

  const existing = (await deps.store.endpoints.ofAccount(account.id))[0];
  let endpointId: string;
  let secret: string;
  if (existing) {
    // The receiver listens on a new port at every start.
    await updateEndpoint(deps, account.id, existing.id, { url: receiverUrl }, DEMO);
    ({ secret } = await rotateSecret(deps, account.id, existing.id, DEMO));
    endpointId = existing.id;
  } else {
    const created = await createEndpoint(deps, account.id, { url: receiverUrl, fields: DEMO_FIELDS }, DEMO);
    ({ id: endpointId, secret } = created);
  }

  // The operator's side too: a new password at every start, as the user's (their sessions stay).
  const operatorPassword = Buffer.from(deps.random.bytes(12)).toString("base64url");
  const operator = await deps.store.operators.byEmail(DEMO_OPERATOR_EMAIL);
  if (operator)
    await deps.store.operators.setPasswordHash(operator.id, await hashPassword(operatorPassword), undefined, "all");
  else await createOperator(deps, { email: DEMO_OPERATOR_EMAIL, password: operatorPassword }, DEMO);

  return {
    accountId: account.id,
    email: DEMO_EMAIL,
    password,
    liveKey: live.key,
    testKey: test.key,
    wabaId: waba.wabaId,
    numberId: number.phoneNumberId,
    sandboxNumberId: sandbox.phoneNumberId,
    endpointId,
    endpointSecret: secret,
    operatorEmail: DEMO_OPERATOR_EMAIL,
    operatorPassword,
  };
}

/** What `serve --demo` prints once it is ready: credentials and three lines to paste. */
export function demoBanner(
  c: DemoCredentials,
  urls: { app: string; simulator: string },
  version: string,
  product: string,
): string {
  const send = `curl -sS -X POST ${urls.app}/${version}/${c.numberId}/messages -H 'Authorization: Bearer ${c.liveKey}' -H 'Content-Type: application/json' -d '{"messaging_product":"${product}","to":"15551234567","type":"text","text":{"body":"Hello from Switchboard"}}'`;
  const deliveries = `curl -sS -c /tmp/switchboard-demo.cookie -H 'Content-Type: application/json' -d '{"email":"${c.email}","password":"${c.password}"}' ${urls.app}/api/session && curl -sS -b /tmp/switchboard-demo.cookie '${urls.app}/api/deliveries?endpoint_id=${c.endpointId}'`;
  const inbound = `curl -sS -X POST ${urls.simulator}/_sim/inbound -H 'Content-Type: application/json' -d '{"phone_number_id":"${c.numberId}","text":"Hi, is my order on its way?"}'`;
  return [
    "",
    `Switchboard demo: DEV_MODE=1, the upstream platform is the built-in simulator at ${urls.simulator}`,
    `  dashboard  ${urls.app}/dashboard   email ${c.email}   password ${c.password}   (new at every start)`,
    `  console    ${urls.app}/operator   email ${c.operatorEmail}   password ${c.operatorPassword}   (the operator's side: every account)`,
    `  live key   ${c.liveKey}   for number ${c.numberId}`,
    `  test key   ${c.testKey}   for sandbox number ${c.sandboxNumberId}`,
    `  endpoint   ${c.endpointId} → the demo receiver below, which verifies every signature`,
    "",
    "1) Send a message through the proxy:",
    `   ${send}`,
    '2) Its sent, delivered and read status webhooks print here as "demo receiver: verified …"; list the deliveries:',
    `   ${deliveries}`,
    `3) Open the dashboard: ${urls.app}/dashboard`,
    `4) Open the operator console: ${urls.app}/operator (email and password above)`,
    "Also: a customer writes in (an inbound message webhook):",
    `   ${inbound}`,
    `   and "Connect with the platform" on ${urls.app}/dashboard/numbers runs Embedded Signup against the simulator's stand-in popup.`,
    "",
  ].join("\n");
}
