import { afterEach, beforeEach } from "bun:test";
import type { App } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { startSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/server.ts";
import { numericId, type ThroughputLevel } from "../../src/simulator/world.ts";
import type { BillingStatus, NumberKind } from "../../src/store/types.ts";
import { admin, startApp, testDeps, TEST_APP_SECRET, type TestDeps } from "./harness.ts";

/** One business as the proxy's tests need it: an account with keys, a WABA and a number, known to both sides. */
export interface Business {
  accountId: string;
  liveKey: string;
  testKey: string;
  wabaId: string;
  token: string;
  phoneNumberId: string;
}

export interface World {
  sim: Simulator;
  deps: TestDeps;
  url: string;
  /** fetch against the proxy. */
  call(path: string, init?: RequestInit): Promise<Response>;
  account(billing?: BillingStatus): Promise<string>;
  key(accountId: string, mode: "live" | "test"): Promise<string>;
  waba(accountId: string, options?: { appSecret?: string }): Promise<{ wabaId: string; token: string }>;
  number(
    accountId: string,
    wabaId: string,
    options?: { kind?: NumberKind; throughput?: ThroughputLevel },
  ): Promise<string>;
  business(options?: { kind?: NumberKind; throughput?: ThroughputLevel; billing?: BillingStatus }): Promise<Business>;
  /** The running app (its request log, to flush it rather than wait for its second). */
  app(): App;
  /** Shuts the app down (its workers flush) and starts a new one over the same database file, same clock. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function json<T>(response: Promise<Response>): Promise<T> {
  const r = await response;
  if (r.status >= 300) throw new Error(`operator API answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

/**
 * The simulator as upstream, Switchboard on a fresh database in front of it, and helpers that
 * create accounts, keys, WABAs and numbers through the operator API (and the matching objects in
 * the simulator), so no test depends on seeded ids.
 */
export async function startWorld(
  options: {
    /** The app's environment; a function gets the running simulator (for settings that point at it). */
    env?: Record<string, string> | ((sim: Simulator) => Record<string, string>);
    deps?: Partial<Deps>;
    sim?: SimulatorOptions;
  } = {},
): Promise<World> {
  const sim = startSimulator(options.sim);
  const env = typeof options.env === "function" ? options.env(sim) : options.env;
  const deps = await testDeps({ env: { UPSTREAM_URL: sim.url, ...env }, deps: options.deps });
  let server = startApp(deps);
  const newId = () => numericId(cryptoRandom);
  let serial = 0;

  const world: World = {
    sim,
    deps,
    url: server.url,
    call: (path, init) => fetch(`${world.url}${path}`, init),
    app: () => server.app,
    async account(billing = "active") {
      serial++;
      const body = { name: `Business ${serial}`, email: `owner${serial}@example.com`, billing_status: billing };
      return (await json<{ id: string }>(admin(world.url, "POST", "/admin/accounts", body))).id;
    },
    async key(accountId, mode) {
      return (await json<{ key: string }>(admin(world.url, "POST", `/admin/accounts/${accountId}/api-keys`, { mode })))
        .key;
    },
    async waba(accountId, opts = {}) {
      const wabaId = newId();
      const token = `EAAG${newId()}`;
      sim.addWaba({ wabaId, accessToken: token, appSecret: opts.appSecret ?? TEST_APP_SECRET });
      const body = { waba_id: wabaId, access_token: token, ...(opts.appSecret ? { app_secret: opts.appSecret } : {}) };
      await json(admin(world.url, "POST", `/admin/accounts/${accountId}/wabas`, body));
      return { wabaId, token };
    },
    async number(accountId, wabaId, opts = {}) {
      const phoneNumberId = newId();
      sim.addNumber(wabaId, { phoneNumberId, throughputLevel: opts.throughput ?? "STANDARD" });
      const body = { phone_number_id: phoneNumberId, waba_id: wabaId, kind: opts.kind ?? "embedded" };
      await json(admin(world.url, "POST", `/admin/accounts/${accountId}/numbers`, body));
      return phoneNumberId;
    },
    async business(opts = {}) {
      const accountId = await world.account();
      const liveKey = await world.key(accountId, "live");
      const testKey = await world.key(accountId, "test");
      const { wabaId, token } = await world.waba(accountId);
      const phoneNumberId = await world.number(accountId, wabaId, opts);
      // Billing last: the operator API itself works whatever the billing state.
      if (opts.billing)
        await json(admin(world.url, "PATCH", `/admin/accounts/${accountId}`, { billing_status: opts.billing }));
      return { accountId, liveKey, testKey, wabaId, token, phoneNumberId };
    },
    async restart() {
      await server.stop();
      await deps.reopenStore();
      server = startApp(deps);
      world.url = server.url;
    },
    async stop() {
      await server.stop();
      await sim.stop();
      await deps.cleanup();
    },
  };
  return world;
}

/** Authorization header for a key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Registers hooks giving each test a fresh world with one business in it; read them from the result. */
export function useWorld(): { world: World; biz: Business } {
  const current = {} as { world: World; biz: Business };
  beforeEach(async () => {
    current.world = await startWorld();
    current.biz = await current.world.business();
  });
  afterEach(() => current.world.stop());
  return current;
}
