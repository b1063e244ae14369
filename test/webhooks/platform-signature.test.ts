import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { eventBody, messageChange, relayApp, type RelayAccount, type RelayApp } from "./support.ts";
import { ALL_RECEIVERS, type BotReceiver, pywaStrict, whatsappApiJs } from "./platform-receivers.ts";
import type { DeliveryDetailJson, EndpointJson } from "../support/api-json.ts";

// docs/webhooks.md#signature-schemes, CONTRACT 9: published receivers as endpoints, only their
// app secret set to the endpoint's; on both backends (SWITCHBOARD_TEST_BACKEND).

let app: RelayApp;
let a: RelayAccount;
const bots: BotReceiver[] = [];

beforeAll(async () => {
  app = await relayApp();
  app.deps.clock.set(Date.now());
  a = await app.account();
});
afterAll(async () => {
  for (const bot of bots.splice(0)) await bot.stop();
  await app.close();
});

/** A receiver made by `make`, behind a platform-signed endpoint for `fields`, its secret set (or `wrong`). */
async function botEndpoint(make: () => Promise<BotReceiver>, options: { wrong?: boolean; fields?: string[] } = {}) {
  const bot = await make();
  bots.push(bot);
  const r = await a.api<EndpointJson & { secret: string }>("POST", "/api/endpoints", {
    url: bot.url,
    fields: options.fields ?? ["messages"],
    signature: "platform",
  });
  expect(r.status).toBe(201);
  expect(r.body.signature).toBe("platform");
  bot.configure(options.wrong ? `whsec_${Buffer.alloc(32, 7).toString("base64")}` : r.body.secret);
  return { bot, endpoint: r.body };
}

const TEXTS = ["héllo café", "🎉 déjà vu 👍🏽", "plain \u007f ascii"];

/** One entry with three `messages` changes, in the platform's own (compact, unescaped) writing. */
function threeChanges(): string {
  return eventBody([{ id: a.wabaId, changes: TEXTS.map((t) => messageChange(a.numbers[0]!, t)) }]);
}

/** `text` with every character outside U+0000–U+007E as \\uXXXX of each UTF-16 unit, lowercase. */
const escaped = (text: string) =>
  text.replace(/[^\0-~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

describe("platform signature: the published receivers accept every delivery", () => {
  test("an event with three changes and non-ASCII text is three deliveries, each accepted by every receiver", async () => {
    const endpoints = await Promise.all(ALL_RECEIVERS.map((make) => botEndpoint(make)));
    const body = threeChanges();
    expect((await app.post(body)).status).toBe(200);
    await app.tick();
    for (const { bot } of endpoints)
      expect({ bot: bot.name, answers: bot.answers }).toEqual({
        bot: bot.name,
        answers: [200, 200, 200],
      });
    // whatsapp-api-js handed the bot's code the very texts sent, so the escapes are right.
    expect(endpoints[0]!.bot.texts.toSorted()).toEqual(TEXTS.toSorted());
    // The bytes: one entry, one change, copied from upstream with only non-ASCII escaped.
    const upstream = JSON.parse(body) as { entry: { changes: unknown[] }[] };
    const expected = upstream.entry[0]!.changes.map((c) =>
      escaped(`{"object":"whatsapp_business_account","entry":[{"id":"${a.wabaId}","changes":[${JSON.stringify(c)}]}]}`),
    );
    const kapsoBot = endpoints[1]!.bot;
    expect(kapsoBot.requests.map((r) => r.body.toString("latin1")).toSorted()).toEqual(expected.toSorted());
    for (const r of kapsoBot.requests) {
      expect(r.headers["content-length"]).toBe(String(r.body.length));
      expect(r.headers["transfer-encoding"]).toBeUndefined();
      expect(r.headers["x-hub-signature-256"]).toMatch(/^sha256=[0-9a-f]{64}$/);
      // The Standard Webhooks headers are still sent, and verify.
      expect(() =>
        new Webhook(endpoints[1]!.endpoint.secret).verify(r.body.toString(), {
          "webhook-id": r.headers["webhook-id"] as string,
          "webhook-timestamp": r.headers["webhook-timestamp"] as string,
          "webhook-signature": r.headers["webhook-signature"] as string,
        }),
      ).not.toThrow();
    }
    const id = kapsoBot.requests[0]!.headers["webhook-id"] as string;
    const detail = await a.api<DeliveryDetailJson & { signature: string }>("GET", `/api/deliveries/${id}`);
    expect(detail.body).toMatchObject({ status: "succeeded", signature: "platform", fields: ["messages"] });
    expect(await a.page(`/dashboard/deliveries/${id}`)).toContain("Platform: X-Hub-Signature-256 over one change");
  });

  test("only the changes an endpoint's fields and number match are delivered to it", async () => {
    const { bot } = await botEndpoint(pywaStrict, { fields: ["account_update"] });
    const change = { field: "account_update", value: { phone_number: "15550001111", event: "VERIFIED_ACCOUNT" } };
    const body = eventBody([
      { id: a.wabaId, changes: [messageChange(a.numbers[0]!, "x"), change, messageChange(a.numbers[0]!, "y")] },
    ]);
    expect((await app.post(body)).status).toBe(200);
    await app.tick();
    expect(bot.answers).toEqual([200]);
    expect(JSON.parse(bot.requests[0]!.body.toString())).toEqual({
      object: "whatsapp_business_account",
      entry: [{ id: a.wabaId, changes: [change] }],
    });
  });

  test("a receiver with the wrong app secret rejects every delivery", async () => {
    const rejecting = await Promise.all(ALL_RECEIVERS.map((make) => botEndpoint(make, { wrong: true })));
    expect((await app.post(threeChanges())).status).toBe(200);
    await app.tick();
    for (const { bot } of rejecting) {
      expect(bot.answers).toHaveLength(3);
      for (const status of bot.answers) expect(status).toBeGreaterThanOrEqual(400);
    }
  });

  test("after a rotation the header is computed with the newest secret only", async () => {
    const { bot, endpoint } = await botEndpoint(whatsappApiJs);
    const rotated = await a.api<{ secret: string }>("POST", `/api/endpoints/${endpoint.id}/rotate-secret`);
    bot.configure(rotated.body.secret);
    expect((await app.post(threeChanges())).status).toBe(200);
    await app.tick();
    expect(bot.answers).toEqual([200, 200, 200]);
  });

  test("Send test and a replay take the same shape and are accepted", async () => {
    const { bot, endpoint } = await botEndpoint(whatsappApiJs);
    const sent = await a.api<{ delivery_id: string }>("POST", `/api/endpoints/${endpoint.id}/test`);
    expect(sent.status).toBe(202);
    await app.tick();
    const replay = await a.api<{ id: string; signature: string }>(
      "POST",
      `/api/deliveries/${sent.body.delivery_id}/replay`,
    );
    expect(replay.status).toBe(201);
    expect(replay.body.signature).toBe("platform");
    await app.tick();
    expect(bot.answers).toEqual([200, 200]);
  });

  test("Send test of a chosen field is the platform shape with that one change, accepted", async () => {
    const { bot, endpoint } = await botEndpoint(pywaStrict);
    const fields = ["message_template_status_update", "smb_message_echoes"];
    for (const field of fields) {
      const sent = await a.api("POST", `/api/endpoints/${endpoint.id}/test`, { field });
      expect(sent.status).toBe(202);
    }
    await app.tick();
    expect(bot.answers).toEqual([200, 200]);
    const bodies = bot.requests.map((r) => JSON.parse(r.body.toString()));
    for (const [i, body] of bodies.entries()) {
      // Only `object` and one entry: the platform's shape has no room for the top-level proxy_test.
      expect(Object.keys(body)).toEqual(["object", "entry"]);
      expect(body.entry).toHaveLength(1);
      expect(body.entry[0].id).toBe(a.wabaId);
      expect(body.entry[0].changes).toHaveLength(1);
      expect(body.entry[0].changes[0].field).toBe(fields[i]);
    }
  });

  test("a standard delivery replayed to an endpoint since set to platform is split into its changes", async () => {
    const bot = await pywaStrict();
    bots.push(bot);
    const created = await a.api<EndpointJson & { secret: string }>("POST", "/api/endpoints", {
      url: bot.url,
      fields: ["messages"],
    });
    expect(created.body.signature).toBe("standard");
    bot.configure(created.body.secret);
    expect((await app.post(threeChanges())).status).toBe(200);
    await app.tick();
    expect(bot.answers).toEqual([422]);
    const patched = await a.api<EndpointJson>("PATCH", `/api/endpoints/${created.body.id}`, { signature: "platform" });
    expect(patched.body.signature).toBe("platform");
    const id = bot.requests[0]!.headers["webhook-id"] as string;
    expect((await a.api("POST", `/api/deliveries/${id}/replay`)).status).toBe(201);
    await app.tick();
    expect(bot.answers).toEqual([422, 200, 200, 200]);
  });
});
