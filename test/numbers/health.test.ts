import { afterEach, describe, expect, test } from "bun:test";
import { UPSTREAM_ERRORS } from "../../src/simulator/upstream-errors.ts";
import { admin } from "../support/harness.ts";
import { bearer, startWorld, type World } from "../support/world.ts";
import { createAccount, signInCookie } from "../dashboard/support.ts";

// Issue 20, item 3: a number or WABA that is not connected says why, as it happened: the upstream
// error that set its state (docs/proxy.md#upstream-errors-that-change-a-state), when, the request id of the call that
// got it, and what to do; "Check again" re-reads the number upstream and connects it again once the platform serves it.

let world: World;
afterEach(() => world.stop());

interface NumberJson {
  usable: boolean;
  status: string;
  waba_status: string;
  status_text: string;
  action: string | null;
  cause: { of: string; code: number; message: string; at: string; request_id: string | null; text: string } | null;
}

/** An account with a dashboard login, a live key, a WABA and a number, both known to the simulator. */
async function setUp() {
  world = await startWorld();
  const account = await createAccount(world.url, `Health ${Math.random().toString(36).slice(2, 8)}`);
  const cookie = await signInCookie(world.url, account);
  const key = await world.key(account.id, "live");
  const { wabaId } = await world.waba(account.id);
  const phoneNumberId = await world.number(account.id, wabaId);
  const number = async () => {
    const { data } = (await (await fetch(`${world.url}/api/numbers`, { headers: { cookie } })).json()) as {
      data: (NumberJson & { phone_number_id: string })[];
    };
    return data.find((n) => n.phone_number_id === phoneNumberId)!;
  };
  const checkAgain = async () => {
    const r = await fetch(`${world.url}/api/numbers/${phoneNumberId}/sync`, { method: "POST", headers: { cookie } });
    expect(r.status).toBe(200);
    return (await r.json()) as NumberJson;
  };
  const send = () =>
    world.call(`/v21.0/${phoneNumberId}/messages`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
    });
  return { accountId: account.id, cookie, wabaId, phoneNumberId, number, checkAgain, send };
}

/** The state write follows the caller's answer; wait for it. */
async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (done(value)) return value;
    await Bun.sleep(10);
  }
  return read();
}

const CAUSES = [
  { code: 190, of: "waba", statusText: "WABA token revoked", action: "access token was revoked or expired" },
  { code: 131031, of: "number", statusText: "Number restricted", action: "locked this business account or number" },
  {
    code: 133010,
    of: "number",
    statusText: "Number not registered",
    action: "not registered with the platform's cloud API",
  },
  { code: 368, of: "number", statusText: "Number flagged", action: "blocked this number for a while" },
] as const;

describe("number health in words (GET /api/numbers)", () => {
  test.each(CAUSES)(
    "upstream error $code: the state, what to do, and the cause as it happened",
    async ({ code, of, statusText, action }) => {
      const t = await setUp();
      expect(await t.number()).toMatchObject({ usable: true, status_text: "Connected", cause: null });
      world.sim.fault(t.phoneNumberId, { error: code });
      const answer = await t.send();
      // The caller gets the platform's own answer, unchanged (docs/proxy.md#upstream-errors-that-change-a-state).
      expect(((await answer.json()) as { error: { code: number } }).error.code).toBe(code);
      const requestId = answer.headers.get("x-proxy-request-id")!;

      const n = await settled(t.number, (x) => !x.usable);
      expect(n).toMatchObject({ usable: false, status_text: statusText });
      expect(n.action).toContain(action);
      expect(n.cause).toMatchObject({ of, code, message: UPSTREAM_ERRORS[code].message, request_id: requestId });
      expect(n.cause!.at).toBe(new Date(world.deps.clock.now()).toISOString());
      expect(n.cause!.text).toContain(`error ${code} ("${UPSTREAM_ERRORS[code].message}")`);
      expect(n.cause!.text).toContain(`to the proxied call ${requestId}`);

      // Check again while the platform still answers the error: the state stays, the cause is the check's.
      const still = await t.checkAgain();
      expect(still).toMatchObject({ usable: false, status_text: statusText });
      expect(still.cause).toMatchObject({ code, request_id: null });
      expect(still.cause!.text).toContain("when the number was checked");

      // Once the platform serves the number again, Check again connects it and forgets the cause.
      world.sim.clearFaults(t.phoneNumberId);
      expect(await t.checkAgain()).toMatchObject({
        usable: true,
        status: "connected",
        waba_status: "connected",
        status_text: "Connected",
        cause: null,
      });
      expect((await t.send()).status).toBe(200);
    },
  );

  test("a state the operator sets by hand has no upstream cause; the dashboard shows the cause and Check again", async () => {
    const t = await setUp();
    world.sim.fault(t.phoneNumberId, { error: 131031 });
    await t.send();
    await settled(t.number, (x) => !x.usable);
    const page = await (await fetch(`${world.url}/dashboard/numbers`, { headers: { cookie: t.cookie } })).text();
    expect(page).toContain("The platform answered error 131031");
    expect(page).toContain(">Check again<");

    expect(
      (await admin(world.url, "PATCH", `/admin/numbers/${t.phoneNumberId}`, { status: "disconnected" })).status,
    ).toBe(200);
    expect(await t.number()).toMatchObject({ usable: false, status_text: "Number disconnected", cause: null });
  });

  test("another account's number cannot be checked: 404", async () => {
    const t = await setUp();
    const other = await createAccount(world.url, "Other Health");
    const cookie = await signInCookie(world.url, other);
    const r = await fetch(`${world.url}/api/numbers/${t.phoneNumberId}/sync`, { method: "POST", headers: { cookie } });
    expect(r.status).toBe(404);
  });
});
