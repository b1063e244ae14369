import type { Deps } from "../../src/deps.ts";
import { TEST_APP_SECRET } from "../support/harness.ts";
import { startWorld, type World } from "../support/world.ts";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";

export const SIGNUP_APP = { id: "1234567890", secret: TEST_APP_SECRET };
export const SIGNUP_CONFIG_ID = "5550001112";

/**
 * The simulator (with its Embedded Signup stand-in, and webhooks back to Switchboard's ingress
 * through a forwarder that learns the app's URL once it runs) and Switchboard with Embedded Signup
 * enabled against it.
 */
export async function signupWorld(
  options: { signup?: boolean; env?: Record<string, string>; deps?: Partial<Deps> } = {},
) {
  let app = "";
  const forwarder = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    // A webhook still on its way while a test stops the app is answered, not thrown between tests.
    fetch: (r) =>
      fetch(`${app}/webhooks/upstream`, { method: "POST", headers: r.headers, body: r.body }).catch(
        () => new Response(null, { status: 502 }),
      ),
  });
  const enabled = options.signup ?? true;
  const world: World = await startWorld({
    env: (sim) => ({
      DEV_MODE: "1",
      ...(enabled
        ? {
            EMBEDDED_SIGNUP_APP_ID: SIGNUP_APP.id,
            EMBEDDED_SIGNUP_CONFIG_ID: SIGNUP_CONFIG_ID,
            EMBEDDED_SIGNUP_SDK_URL: `${sim.url}/_sim/signup/sdk.js`,
          }
        : {}),
      ...options.env,
    }),
    deps: options.deps,
    sim: {
      signupApp: SIGNUP_APP,
      webhooks: { url: `http://127.0.0.1:${forwarder.port}/`, schedule: (_ms, run) => run() },
    },
  });
  app = world.url;
  let serial = 0;
  return {
    world,
    sim: world.sim,
    url: world.url,
    /** An account with a dashboard user, and `api` calling the dashboard API as that user. */
    async account(options: { maxNumbers?: number } = {}) {
      const account: TestAccount = await createAccount(
        world.url,
        `Signup ${Date.now().toString(36)}${serial++}`,
        options,
      );
      let cookie = await signInCookie(world.url, account);
      const send = (method: string, path: string, body?: unknown) =>
        fetch(`${world.url}${path}`, {
          method,
          headers: { cookie, origin: world.url, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
        let r = await send(method, path, body);
        // Tests move the clock by a day; sessions last 12 hours, so sign in again when one expired.
        if (r.status === 401) {
          cookie = await signInCookie(world.url, account);
          r = await send(method, path, body);
        }
        const text = await r.text();
        return { status: r.status, headers: r.headers, body: (text ? JSON.parse(text) : null) as T };
      };
      return { ...account, cookie: () => cookie, api };
    },
    async stop() {
      await world.sim.webhooksIdle();
      await world.stop();
      forwarder.stop(true);
    },
  };
}

export type SignupWorld = Awaited<ReturnType<typeof signupWorld>>;
