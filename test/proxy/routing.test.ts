import { describe, expect, test } from "bun:test";
import { headerRecord } from "../../src/simulator/recorder.ts";
import { bearer, useWorld } from "../support/world.ts";

const t = useWorld();

const V = "/v21.0";
const jsonHeaders = (key: string) => ({ ...bearer(key), "content-type": "application/json" });

async function expect404(response: Response) {
  expect(response.status).toBe(404);
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(body).toEqual({
    error: {
      message: "Unknown route or object.",
      type: "ProxyRoutingException",
      code: 1003,
      trace_id: response.headers.get("x-proxy-request-id"),
    },
  });
  // docs/proxy.md#rate-limits: a 404 never reached the rate-limit step.
  expect(response.headers.has("ratelimit-limit")).toBe(false);
  return body;
}

async function upload(phoneNumberId: string): Promise<string> {
  const form = new FormData();
  form.set("messaging_product", "chat");
  form.set("type", "image/png");
  form.set("file", new Blob([new Uint8Array([137, 80, 78, 71, 0, 255])], { type: "image/png" }), "a.png");
  const r = await t.world.call(`${V}/${phoneNumberId}/media`, {
    method: "POST",
    headers: bearer(t.biz.liveKey),
    body: form,
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { id: string }).id;
}

describe("docs/proxy.md#the-allow-list: every allow-listed call is forwarded", () => {
  test("POST /{number}/messages sends a message", async () => {
    const r = await t.world.call(`${V}/${t.biz.phoneNumberId}/messages`, {
      method: "POST",
      headers: jsonHeaders(t.biz.liveKey),
      body: JSON.stringify({ messaging_product: "chat", to: "+1 555 0100", type: "text", text: { body: "hi" } }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { messages: { id: string }[] };
    expect(body.messages[0]!.id).toStartWith("wamid.");
    expect(t.world.sim.accepted.map((m) => m.messageId)).toEqual([body.messages[0]!.id]);
    expect(t.world.sim.requests.at(-1)).toMatchObject({ method: "POST", path: `${V}/${t.biz.phoneNumberId}/messages` });
  });

  test("PUT /{number}/messages marks a message read", async () => {
    const r = await t.world.call(`${V}/${t.biz.phoneNumberId}/messages`, {
      method: "PUT",
      headers: jsonHeaders(t.biz.liveKey),
      body: JSON.stringify({ messaging_product: "chat", status: "read", message_id: "wamid.abc" }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ success: true });
    expect(t.world.sim.requests.at(-1)!.method).toBe("PUT");
  });

  test("POST /{number}/media uploads; GET and DELETE /{media_id}?phone_number_id read and delete it", async () => {
    const mediaId = await upload(t.biz.phoneNumberId);
    const read = await t.world.call(`${V}/${mediaId}?phone_number_id=${t.biz.phoneNumberId}`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: mediaId, mime_type: "image/png", file_size: expect.any(Number) });
    const del = await t.world.call(`${V}/${mediaId}?phone_number_id=${t.biz.phoneNumberId}`, {
      method: "DELETE",
      headers: bearer(t.biz.liveKey),
    });
    expect(del.status).toBe(200);
    const again = await t.world.call(`${V}/${mediaId}?phone_number_id=${t.biz.phoneNumberId}`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(again.status).toBe(400); // upstream's own answer, passed through
    expect(((await again.json()) as { error: { code: number } }).error.code).toBe(100);
  });

  test("GET, POST and DELETE /{waba}/message_templates", async () => {
    const create = await t.world.call(`${V}/${t.biz.wabaId}/message_templates`, {
      method: "POST",
      headers: jsonHeaders(t.biz.liveKey),
      body: JSON.stringify({ name: "order_update", category: "UTILITY", language: "en_US", components: [] }),
    });
    expect(create.status).toBe(200);
    expect(await create.json()).toMatchObject({ status: "PENDING", category: "UTILITY" });
    const list = await t.world.call(`${V}/${t.biz.wabaId}/message_templates?limit=10`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((t) => t.name)).toEqual(["order_update"]);
    const del = await t.world.call(`${V}/${t.biz.wabaId}/message_templates?name=order_update`, {
      method: "DELETE",
      headers: bearer(t.biz.liveKey),
    });
    expect(await del.json()).toEqual({ success: true });
  });

  test("GET /{number} and GET /{number}/chat_business_profile", async () => {
    const number = await t.world.call(`${V}/${t.biz.phoneNumberId}?fields=throughput,verified_name`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(await number.json()).toEqual({
      throughput: { level: "STANDARD" },
      verified_name: "Simulated Business",
      id: t.biz.phoneNumberId,
    });
    const profile = await t.world.call(`${V}/${t.biz.phoneNumberId}/chat_business_profile`, {
      headers: bearer(t.biz.liveKey),
    });
    expect(profile.status).toBe(200);
    expect(((await profile.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  test("{version} is sent upstream exactly as written", async () => {
    const r = await t.world.call(`/v3.0/${t.biz.phoneNumberId}`, { headers: bearer(t.biz.liveKey) });
    expect(r.status).toBe(200);
    expect(t.world.sim.requests.at(-1)!.path).toBe(`/v3.0/${t.biz.phoneNumberId}`);
  });
});

describe("docs/proxy.md#requests-that-match-no-row: unmatched requests get 404 ProxyRoutingException 1003", () => {
  test("paths that are not /{version}/{id} or /{version}/{id}/{edge}, even without a key", async () => {
    for (const path of [
      "/",
      "/v21.0",
      `/v21.0/${t.biz.phoneNumberId}/messages/extra`,
      `/21.0/${t.biz.phoneNumberId}/messages`,
      `/v21.1/${t.biz.phoneNumberId}/messages`,
      `/v21.0//messages`,
      `/v21.0/${t.biz.phoneNumberId}/messages/`,
      "/favicon.ico",
      `/v21.0/a%2Fb/messages`,
      `/v21.0/..%2F${t.biz.phoneNumberId}/messages`,
    ]) {
      await expect404(await t.world.call(path, { method: "POST" }));
    }
    expect(t.world.sim.requests).toHaveLength(0 + 1); // only the number sync made when the number was added
  });

  test("a method other than GET, POST, PUT, DELETE", async () => {
    for (const method of ["PATCH", "OPTIONS", "HEAD"]) {
      for (const headers of [bearer(t.biz.liveKey), {}]) {
        const r = await t.world.call(`${V}/${t.biz.phoneNumberId}/messages`, { method, headers });
        if (method === "HEAD") {
          expect(r.status).toBe(404);
          expect(r.headers.get("x-proxy-request-id")).toStartWith("req_");
        } else {
          await expect404(r);
        }
      }
    }
  });

  test("an edge or method not in the table, even with a valid key", async () => {
    const cases: [string, string][] = [
      ["POST", `${V}/${t.biz.wabaId}/messages`],
      ["GET", `${V}/${t.biz.phoneNumberId}/media`],
      ["GET", `${V}/${t.biz.phoneNumberId}/messages`],
      ["POST", `${V}/${t.biz.phoneNumberId}/chat_business_profile`],
      ["PUT", `${V}/${t.biz.wabaId}/message_templates`],
      ["GET", `${V}/${t.biz.phoneNumberId}/phone_numbers`],
      ["GET", `${V}/${t.biz.wabaId}`],
      ["POST", `${V}/${t.biz.phoneNumberId}`],
      ["GET", `${V}/${t.biz.wabaId}/message_templates/extra`],
    ];
    for (const [method, path] of cases)
      await expect404(await t.world.call(path, { method, headers: bearer(t.biz.liveKey) }));
    // An edge or method no row has fails step 1, before the key (docs/proxy.md#order-of-checks): the same 404 without
    // any Authorization header. A WABA id where a number id belongs (or the reverse) is step 4, after it.
    const idKindOnly = new Set([cases[0]!, cases[6]!]);
    for (const [method, path] of cases.filter((c) => !idKindOnly.has(c)))
      await expect404(await t.world.call(path, { method }));
    for (const [method, path] of idKindOnly) expect((await t.world.call(path, { method })).status).toBe(401);
  });

  test("a media GET or DELETE without phone_number_id (or with it twice)", async () => {
    const mediaId = await upload(t.biz.phoneNumberId);
    await expect404(await t.world.call(`${V}/${mediaId}`, { headers: bearer(t.biz.liveKey) }));
    await expect404(await t.world.call(`${V}/${mediaId}`, { method: "DELETE", headers: bearer(t.biz.liveKey) }));
    await expect404(
      await t.world.call(
        `${V}/${mediaId}?phone_number_id=${t.biz.phoneNumberId}&phone_number_id=${t.biz.phoneNumberId}`,
        { headers: bearer(t.biz.liveKey) },
      ),
    );
    // A media call scoped by a number of another account, or aimed at a known number or WABA id.
    const other = await t.world.business();
    await expect404(
      await t.world.call(`${V}/${mediaId}?phone_number_id=${other.phoneNumberId}`, { headers: bearer(t.biz.liveKey) }),
    );
    await expect404(
      await t.world.call(`${V}/${other.wabaId}?phone_number_id=${t.biz.phoneNumberId}`, {
        headers: bearer(t.biz.liveKey),
      }),
    );
    await expect404(
      await t.world.call(`${V}/${t.biz.wabaId}?phone_number_id=${t.biz.phoneNumberId}`, {
        method: "DELETE",
        headers: bearer(t.biz.liveKey),
      }),
    );
  });

  test("ids of another account answer exactly what unknown ids answer (but for the trace id)", async () => {
    const other = await t.world.business();
    const before = t.world.sim.requests.length;
    const pairs: [string, string, string][] = [
      ["POST", `${V}/${other.phoneNumberId}/messages`, `${V}/123456789012345/messages`],
      ["GET", `${V}/${other.phoneNumberId}`, `${V}/123456789012345`],
      ["GET", `${V}/${other.wabaId}/message_templates`, `${V}/123456789012345/message_templates`],
      ["GET", `${V}/${other.phoneNumberId}/chat_business_profile`, `${V}/123456789012345/chat_business_profile`],
    ];
    for (const [method, theirs, unknown] of pairs) {
      const a = await t.world.call(theirs, { method, headers: bearer(t.biz.liveKey) });
      const b = await t.world.call(unknown, { method, headers: bearer(t.biz.liveKey) });
      const strip = async (r: Response) => {
        const id = r.headers.get("x-proxy-request-id")!;
        const headers = Object.entries(headerRecord(r.headers)).filter(
          ([k]) => k !== "x-proxy-request-id" && k !== "date",
        );
        return { status: r.status, headers, body: (await r.text()).replace(id, "TRACE") };
      };
      expect(await strip(a)).toEqual(await strip(b));
      expect(a.status).toBe(404);
    }
    expect(t.world.sim.requests.length).toBe(before);
  });
});
