import { afterEach, expect, test } from "bun:test";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { numericId } from "../../src/simulator/world.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { onSqlite } from "../support/backend.ts";
import { admin, TEST_APP_SECRET } from "../support/harness.ts";
import { bearer, startWorld, type World } from "../support/world.ts";

let world: World;
afterEach(() => world.stop());

interface NumberView {
  status: string;
  throughput_level: string;
  display_phone_number: string | null;
  verified_name: string | null;
  sync_error: string | null;
  synced_at: string | null;
}
const readNumber = async (id: string) =>
  (await (await admin(world.url, "GET", `/admin/numbers/${id}`)).json()) as NumberView;

test("adding a number reads its details from upstream with the WABA's token and proof", async () => {
  world = await startWorld();
  const accountId = await world.account();
  const { wabaId, token } = await world.waba(accountId);
  const phoneNumberId = numericId(cryptoRandom);
  world.sim.addNumber(wabaId, {
    phoneNumberId,
    throughputLevel: "HIGH",
    displayPhoneNumber: "+1 555 0199",
    verifiedName: "Acme",
  });
  const r = await admin(world.url, "POST", `/admin/accounts/${accountId}/numbers`, {
    phone_number_id: phoneNumberId,
    waba_id: wabaId,
    kind: "embedded",
  });
  expect(r.status).toBe(201);
  expect(await r.json()).toMatchObject({
    throughput_level: "HIGH",
    display_phone_number: "+1 555 0199",
    verified_name: "Acme",
    sync_error: null,
    status: "connected",
  });
  const call = world.sim.requests.at(-1)!;
  expect(call.path).toBe(`/v21.0/${phoneNumberId}`);
  expect(call.headers.authorization).toBe(`Bearer ${token}`);
  expect(new URLSearchParams(call.query).get("appsecret_proof")).toBe(appsecretProof(token, TEST_APP_SECRET));
});

test("a BYO WABA's number is synced with a proof made from its own app secret", async () => {
  world = await startWorld();
  const accountId = await world.account();
  const { wabaId } = await world.waba(accountId, { appSecret: "customer-app-secret" });
  const phoneNumberId = await world.number(accountId, wabaId, { kind: "byo", throughput: "HIGH" });
  // The simulator refuses a proof made with any other secret, so a good sync shows the right one.
  expect(await readNumber(phoneNumberId)).toMatchObject({ throughput_level: "HIGH", sync_error: null });
});

test("a failed sync keeps the number (standard level) and says why", async () => {
  world = await startWorld({ env: { UPSTREAM_TIMEOUT_MS: "100" } });
  const accountId = await world.account();
  const { wabaId } = await world.waba(accountId);
  const cases: [Parameters<World["sim"]["fault"]>[1], RegExp][] = [
    [{ error: 190 }, /^upstream answered 401 \(code 190\)/],
    [{ delayMs: 300 }, /did not answer in time/],
    [{ drop: true }, /could not be reached/],
  ];
  for (const [fault, reason] of cases) {
    const phoneNumberId = numericId(cryptoRandom);
    world.sim.addNumber(wabaId, { phoneNumberId, throughputLevel: "HIGH" });
    world.sim.fault(phoneNumberId, fault);
    const r = await admin(world.url, "POST", `/admin/accounts/${accountId}/numbers`, {
      phone_number_id: phoneNumberId,
      waba_id: wabaId,
      kind: "embedded",
    });
    expect(r.status).toBe(201);
    const view = (await r.json()) as NumberView;
    expect(view.throughput_level).toBe("STANDARD");
    expect(view.sync_error).toMatch(reason);
    expect(view.synced_at).toBeNull();
  }
});

test("a later sync that changes throughput.level changes the number's bucket capacity", async () => {
  world = await startWorld();
  const biz = await world.business();
  const send = () =>
    world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
      method: "POST",
      headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
    });
  expect((await send()).headers.get("ratelimit-limit")).toBe("80");

  world.sim.setThroughput(biz.phoneNumberId, "HIGH");
  const synced = await admin(world.url, "POST", `/admin/numbers/${biz.phoneNumberId}/sync`);
  expect(((await synced.json()) as NumberView).throughput_level).toBe("HIGH");
  const high = await send();
  expect(high.headers.get("ratelimit-limit")).toBe("1000");
  // The bucket keeps its tokens and refills toward the new capacity: a second by the injected
  // clock, which moves the in-memory limiter's buckets (Redis's follow its own clock).
  if (onSqlite) {
    world.deps.clock.advance(1000);
    expect((await send()).headers.get("ratelimit-remaining")).toBe("999");
  }

  world.sim.setThroughput(biz.phoneNumberId, "STANDARD");
  await admin(world.url, "POST", `/admin/numbers/${biz.phoneNumberId}/sync`);
  const standard = await send();
  expect(standard.headers.get("ratelimit-limit")).toBe("80");
  // Full: it held more than the new capacity.
  expect(standard.headers.get("ratelimit-remaining")).toBe("79");
});
