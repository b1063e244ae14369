import { describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { admin } from "../support/harness.ts";
import { bearer, useWorld } from "../support/world.ts";

const t = useWorld();

const send = (phoneNumberId = t.biz.phoneNumberId) =>
  t.world.call(`/v21.0/${phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(t.biz.liveKey), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
const templates = () => t.world.call(`/v21.0/${t.biz.wabaId}/message_templates`, { headers: bearer(t.biz.liveKey) });
const numberStatus = async (id = t.biz.phoneNumberId) =>
  ((await (await admin(t.world.url, "GET", `/admin/numbers/${id}`)).json()) as { status: string }).status;
const wabaStatus = async () =>
  ((await (await admin(t.world.url, "GET", `/admin/wabas/${t.biz.wabaId}`)).json()) as { status: string }).status;
const message = async (r: Response) => ((await r.json()) as { error: { message: string } }).error.message;

describe("docs/proxy.md#upstream-errors-that-change-a-state: upstream errors that change stored state", () => {
  test("190 on a number call revokes the WABA's token: the caller sees upstream's answer, every number then gets 422", async () => {
    const second = await t.world.number(t.biz.accountId, t.biz.wabaId);
    t.world.sim.fault(t.biz.phoneNumberId, { error: 190 }, 1);
    const r = await send();
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { code: number; type: string } }).error).toMatchObject({
      code: 190,
      type: "OAuthException",
    });
    expect(await eventually(wabaStatus, "token_revoked")).toBe("token_revoked");
    for (const id of [t.biz.phoneNumberId, second]) {
      const next = await send(id);
      expect(next.status).toBe(422);
      expect(await message(next)).toBe("WABA token revoked.");
    }
    expect((await templates()).status).toBe(422);
  });

  test("190 on a WABA call revokes the token too", async () => {
    t.world.sim.fault(t.biz.wabaId, { error: 190 }, 1);
    expect((await templates()).status).toBe(401);
    expect(await eventually(wabaStatus, "token_revoked")).toBe("token_revoked");
  });

  test("190 on a call at a media id changes nothing (docs/proxy.md#upstream-errors-that-change-a-state: number or WABA id)", async () => {
    const mediaId = "880000000000001";
    t.world.sim.fault(mediaId, { error: 190 }, 1);
    const r = await t.world.call(`/v21.0/${mediaId}?phone_number_id=${t.biz.phoneNumberId}`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(190);
    expect(await wabaStatus()).toBe("connected");
    expect((await send()).status).toBe(200);
  });

  for (const [code, status, text] of [
    [131031, "restricted", "Number restricted."],
    [133010, "not_registered", "Number not registered."],
    [368, "flagged", "Number flagged."],
  ] as const) {
    test(`${code} on a number call marks the number ${status}`, async () => {
      t.world.sim.fault(t.biz.phoneNumberId, { error: code }, 1);
      const r = await send();
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(code);
      expect(await eventually(numberStatus, status)).toBe(status);
      const next = await send();
      expect(next.status).toBe(422);
      expect(await message(next)).toBe(text);
      expect(await wabaStatus()).toBe("connected");
    });

    test(`${code} on a WABA call changes nothing`, async () => {
      t.world.sim.fault(t.biz.wabaId, { error: code }, 1);
      expect((await templates()).status).toBe(400);
      expect(await numberStatus()).toBe("connected");
      expect(await wabaStatus()).toBe("connected");
      expect((await send()).status).toBe(200);
    });
  }

  test("bodies that are not JSON, larger than 64 KB, or successes change nothing", async () => {
    const big = JSON.stringify({ error: { code: 368, message: "x".repeat(70 * 1024) } });
    t.world.sim.fault(t.biz.phoneNumberId, { reply: { status: 400, body: big } }, 1);
    const r = await send();
    expect((await r.text()).length).toBe(big.length);
    t.world.sim.fault(
      t.biz.phoneNumberId,
      { reply: { status: 400, body: "error code 368", headers: { "content-type": "text/plain" } } },
      1,
    );
    await (await send()).text();
    t.world.sim.fault(
      t.biz.phoneNumberId,
      { reply: { status: 200, body: JSON.stringify({ error: { code: 190 } }) } },
      1,
    );
    await (await send()).text();
    expect(await numberStatus()).toBe("connected");
    expect(await wabaStatus()).toBe("connected");
  });

  test("a chunked JSON error body under 64 KB is examined too, and passed on unchanged", async () => {
    const body = JSON.stringify({ error: { code: 368, message: "blocked" } });
    t.world.sim.fault(t.biz.phoneNumberId, { reply: { status: 400, body, chunked: true } }, 1);
    const r = await send();
    expect(r.headers.get("content-length")).toBeNull();
    expect(await r.text()).toBe(body);
    expect(await eventually(numberStatus, "flagged")).toBe("flagged");
  });
});
