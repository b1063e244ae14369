import { afterAll, describe, expect, test } from "bun:test";
import type { ErrorEnvelope } from "../support/api-json.ts";
import { type BotReceiver, chatSdk, pywaStrict, whatsappApiJs } from "./platform-receivers.ts";
import { appWithAccount } from "./support.ts";

// Verify (docs/webhooks.md#verify): the platform's subscription check, answered by the receivers'
// own GET handlers.

const shared = appWithAccount();
const bots: BotReceiver[] = [];
afterAll(async () => {
  for (const bot of bots.splice(0)) await bot.stop();
});

type VerifyJson = { verified: boolean; status_code: number | null; error: string | null };

async function botWithToken(make: () => Promise<BotReceiver>, token: string, botToken = token) {
  const bot = await make();
  bots.push(bot);
  const r = await shared.a.api<{ id: string; secret: string }>("POST", "/api/endpoints", {
    url: bot.url,
    fields: ["messages"],
    signature: "platform",
    verify_token: token,
  });
  bot.configure(r.body.secret, botToken);
  return { bot, id: r.body.id };
}

describe("Verify", () => {
  test("each receiver's own GET handler answers the challenge when the tokens match", async () => {
    for (const make of [whatsappApiJs, chatSdk, pywaStrict]) {
      const { bot, id } = await botWithToken(make, "tok-123");
      const r = await shared.a.api<VerifyJson>("POST", `/api/endpoints/${id}/verify`);
      expect({ bot: bot.name, status: r.status, body: r.body }).toMatchObject({
        bot: bot.name,
        status: 200,
        body: { verified: true, status_code: 200, error: null },
      });
    }
  });

  test("a token the bot does not expect is not verified", async () => {
    for (const make of [whatsappApiJs, chatSdk, pywaStrict]) {
      const { bot, id } = await botWithToken(make, "tok-123", "another-token");
      const r = await shared.a.api<VerifyJson>("POST", `/api/endpoints/${id}/verify`);
      expect({ bot: bot.name, verified: r.body.verified }).toEqual({ bot: bot.name, verified: false });
      expect(r.body.status_code).toBeGreaterThanOrEqual(400);
    }
  });

  test("a receiver that cannot be reached is reported, not an error of ours", async () => {
    const { bot, id } = await botWithToken(pywaStrict, "tok");
    await bot.stop();
    bots.splice(bots.indexOf(bot), 1);
    const r = await shared.a.api<VerifyJson>("POST", `/api/endpoints/${id}/verify`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verified: false, status_code: null, error: "connection refused" });
  });

  test("without a verify token: 400 saying to set one; another account's endpoint: 404", async () => {
    const { app, a } = shared;
    const ep = await a.endpoint(app.receiver().url);
    const none = await a.api<ErrorEnvelope>("POST", `/api/endpoints/${ep.id}/verify`);
    expect(none.status).toBe(400);
    expect(none.body.error.message).toContain("verify token");
    const other = await app.account();
    const theirs = await other.endpoint(app.receiver().url);
    await other.api("PATCH", `/api/endpoints/${theirs.id}`, { verify_token: "x" });
    expect((await a.api("POST", `/api/endpoints/${theirs.id}/verify`)).status).toBe(404);
  });

  test("the dashboard's Verify button says whether the challenge came back", async () => {
    const { app, a } = shared;
    const { id } = await botWithToken(whatsappApiJs, "tok-dash");
    const page = await a.page(`/dashboard/endpoints/${id}`);
    expect(page).toContain(`action="/dashboard/endpoints/${id}/verify"`);
    const r = await fetch(`${app.url}/dashboard/endpoints/${id}/verify`, {
      method: "POST",
      headers: { cookie: a.sessionCookie(), origin: app.url, "hx-request": "true" },
    });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("Verified: the receiver answered the challenge");
  });
});
