import { afterEach, describe, expect, test } from "bun:test";
import { parseConfig } from "../../src/config/config.ts";
import { platformNames } from "../../src/platform/names.ts";
import { statusEvent } from "../../src/simulator/webhooks.ts";
import { relayApp, type RelayApp } from "../webhooks/support.ts";
import { bearer, startWorld, type World } from "../support/world.ts";

// Issue 22: the repository writes the platform's words neutrally ("chat", docs/operations.md#the-platforms-words);
// PLATFORM_NAME gives the real platform's own word, and every place Switchboard matches or writes one follows it.

const WORD = "whatsapp";
let world: World | undefined;
let app: RelayApp | undefined;
afterEach(async () => {
  await world?.stop();
  await app?.close();
  world = app = undefined;
});

async function expect404(response: Response) {
  expect(response.status).toBe(404);
  expect(((await response.json()) as { error: { code: number } }).error.code).toBe(1003);
}

describe("PLATFORM_NAME", () => {
  test("is the neutral word by default; a word that is not one is refused naming the variable", () => {
    const base = { APP_SECRET: "s", ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(parseConfig(base).platform).toEqual(platformNames("chat"));
    expect(parseConfig({ ...base, PLATFORM_NAME: WORD }).platform).toEqual({
      word: WORD,
      product: WORD,
      webhookObject: `${WORD}_business_account`,
      businessProfileEdge: `${WORD}_business_profile`,
      businessManagement: `${WORD}_business_management`,
    });
    for (const bad of ["Chat", "chat/x", "1chat", "chat business"]) {
      expect(() => parseConfig({ ...base, PLATFORM_NAME: bad })).toThrow(/^PLATFORM_NAME: /);
    }
  });

  test("with the platform's word, its business-profile edge is forwarded as written and the neutral one is our 404 1003", async () => {
    world = await startWorld({ env: { PLATFORM_NAME: WORD }, sim: { names: platformNames(WORD) } });
    const biz = await world.business();
    const real = await world.call(`/v21.0/${biz.phoneNumberId}/${WORD}_business_profile?fields=about`, {
      headers: bearer(biz.liveKey),
    });
    expect(real.status).toBe(200);
    expect(((await real.json()) as { data: { messaging_product: string }[] }).data[0]!.messaging_product).toBe(WORD);
    expect(world.sim.requests.at(-1)!.path).toBe(`/v21.0/${biz.phoneNumberId}/${WORD}_business_profile`);
    const before = world.sim.requests.length;
    await expect404(
      await world.call(`/v21.0/${biz.phoneNumberId}/chat_business_profile`, { headers: bearer(biz.liveKey) }),
    );
    expect(world.sim.requests.length).toBe(before);
  });

  test("without it nothing changes: the neutral edge is forwarded and the platform's is our 404", async () => {
    world = await startWorld();
    const biz = await world.business();
    expect(
      (await world.call(`/v21.0/${biz.phoneNumberId}/chat_business_profile`, { headers: bearer(biz.liveKey) })).status,
    ).toBe(200);
    await expect404(
      await world.call(`/v21.0/${biz.phoneNumberId}/${WORD}_business_profile`, { headers: bearer(biz.liveKey) }),
    );
  });

  test("Send test's event carries the configured product marker and object name", async () => {
    for (const [env, word] of [
      [{ PLATFORM_NAME: WORD }, WORD],
      [{}, "chat"],
    ] as const) {
      app = await relayApp({ env });
      app.deps.clock.set(Date.now());
      const a = await app.account();
      const rx = app.receiver();
      const ep = await a.endpoint(rx.url, ["messages"]);
      expect((await a.api("POST", `/api/endpoints/${ep.id}/test`)).status).toBe(202);
      await app.tick();
      const body = JSON.parse(rx.received[0]!.body);
      expect(body.object).toBe(`${word}_business_account`);
      expect(body.entry[0].changes[0].value.messaging_product).toBe(word);
      await app.close();
      app = undefined;
    }
  });

  test("the simulator speaks the configured words: its answers and status webhooks, and it refuses another product marker as the platform does", async () => {
    world = await startWorld({ env: { PLATFORM_NAME: WORD }, sim: { names: platformNames(WORD) } });
    const biz = await world.business();
    const sent = await world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
      method: "POST",
      headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: WORD, to: "15550100", type: "text", text: { body: "hi" } }),
    });
    expect(sent.status).toBe(200);
    expect(((await sent.json()) as { messaging_product: string }).messaging_product).toBe(WORD);
    const wrong = await world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
      method: "POST",
      headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toContain(`{${WORD.toUpperCase()}}`);
    const status = JSON.parse(
      statusEvent(world.sim.world, platformNames(WORD), world.sim.accepted[0]!, "sent", 1).body,
    );
    expect(status.object).toBe(`${WORD}_business_account`);
    expect(status.entry[0].changes[0].value.messaging_product).toBe(WORD);
  });
});
