import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, MessageType } from "@great-detail/whatsapp";
import type { HTTPError } from "ky";
import { platformNames } from "../../src/platform/names.ts";
import { startWorld, type Business, type World } from "../support/world.ts";

// Issue 22: a published TypeScript client of the platform's API (@great-detail/whatsapp 9.2.0, a
// dev dependency), pointed at Switchboard by its base URL and a px_ key alone, drives every
// allow-listed call it can make through the proxy to the simulator, with the platform's own words
// configured (PLATFORM_NAME), as an operator in front of the real platform would.
//
// Two things about the client, both its own: it has no call for `PUT /{number}/messages` (it marks
// messages read with POST, as the platform documents; that row is driven by tests/proxy/routing),
// and with ky 2 its base URL loses the version unless the version ends with "/" (ky resolves
// "{id}/messages" against ".../v21.0" as a sibling path; the real platform then uses the app's
// default version, while docs/proxy.md#requests-that-match-no-row refuses a path without one). So `graphVersion` is
// "v21.0/".

const WORD = "whatsapp";
let world: World;
let biz: Business;
let client: Client;

beforeAll(async () => {
  world = await startWorld({ env: { PLATFORM_NAME: WORD }, sim: { names: platformNames(WORD) } });
  biz = await world.business();
  client = new Client({
    baseUrl: world.url,
    graphVersion: "v21.0/",
    request: { headers: { Authorization: `Bearer ${biz.liveKey}` } },
  });
});
afterAll(() => world.stop());

/** The request the simulator received last: what Switchboard forwarded. */
const forwarded = () => {
  const last = world.sim.requests.at(-1)!;
  const json = last.headers["content-type"]?.startsWith("application/json") && last.body.byteLength > 0;
  return {
    method: last.method,
    path: last.path,
    body: json ? (JSON.parse(new TextDecoder().decode(last.body)) as Record<string, unknown>) : null,
  };
};

/** A client call's answer, read as JSON; its shape is what the assertions say (the client's own types describe the platform's answers loosely). */
const read = (call: { json(): Promise<unknown> }) => call.json() as Promise<unknown>;

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

describe("a published client through Switchboard, every allow-listed row", () => {
  let mediaId = "";
  let received = "";

  test("POST /{number}/messages: text, reaction, interactive, media by link and by id, template", async () => {
    const text = await read(
      client.message.createMessage({
        phoneNumberID: biz.phoneNumberId,
        to: "+1 555 0100",
        type: MessageType.Text,
        text: { body: "hi" },
      }),
    );
    expect(text).toMatchObject({ messaging_product: WORD, contacts: [{ input: "+1 555 0100", wa_id: "15550100" }] });
    received = (text as { messages: { id: string }[] }).messages[0]!.id;
    expect(received).toStartWith("wamid.");
    expect(forwarded()).toMatchObject({
      method: "POST",
      path: `/v21.0/${biz.phoneNumberId}/messages`,
      body: { messaging_product: WORD, recipient_type: "individual" },
    });

    const sends = [
      { type: "reaction", reaction: { message_id: received, emoji: "👍" } },
      {
        type: "interactive",
        interactive: {
          type: "button",
          body: { text: "Pick" },
          action: { buttons: [{ type: "reply", reply: { id: "a", title: "A" } }] },
        },
      },
      { type: "image", image: { link: "https://example.com/cat.png", caption: "a cat" } },
      { type: "location", location: { latitude: 51.5, longitude: -0.12, name: "Office" } },
    ];
    for (const send of sends) {
      const answer = await read(
        client.message.createMessage({ phoneNumberID: biz.phoneNumberId, to: "15550100", ...send } as never),
      );
      expect((answer as { messages: { id: string }[] }).messages[0]!.id).toStartWith("wamid.");
      expect(forwarded().body).toMatchObject(send);
    }
    expect(world.sim.accepted.map((m) => m.type)).toEqual(["text", "reaction", "interactive", "image", "location"]);
  });

  test("POST /{number}/messages: mark as read, with and without a typing indicator", async () => {
    expect(
      await read(
        client.message.createStatus({ phoneNumberID: biz.phoneNumberId, status: "read", message_id: received }),
      ),
    ).toEqual({ success: true });
    expect(forwarded().body).toEqual({ messaging_product: WORD, status: "read", message_id: received });
    const typing = { status: "read", message_id: received, typing_indicator: { type: "text" } } as const;
    expect(await read(client.message.createStatus({ phoneNumberID: biz.phoneNumberId, ...typing }))).toEqual({
      success: true,
    });
  });

  test("POST /{number}/media, GET /{media}?phone_number_id, then a message by media id, then DELETE /{media}", async () => {
    const uploaded = (await read(
      client.media.upload({
        phoneNumberID: biz.phoneNumberId,
        file: new Blob([PNG], { type: "image/png" }),
        filename: "cat.png",
        mimeType: "image/png",
      }),
    )) as { id: string };
    mediaId = uploaded.id;
    expect(mediaId).toMatch(/^\d+$/);
    expect(forwarded()).toMatchObject({ method: "POST", path: `/v21.0/${biz.phoneNumberId}/media` });

    const url = await read(client.media.getURL({ mediaID: mediaId, phoneNumberID: biz.phoneNumberId }));
    expect(url).toMatchObject({ messaging_product: WORD, id: mediaId, mime_type: "image/png", file_size: PNG.length });
    expect(forwarded()).toMatchObject({ method: "GET", path: `/v21.0/${mediaId}` });

    const byId = await read(
      client.message.createMessage({
        phoneNumberID: biz.phoneNumberId,
        to: "15550100",
        type: "image",
        image: { id: mediaId },
      } as never),
    );
    expect((byId as { messages: { id: string }[] }).messages[0]!.id).toStartWith("wamid.");

    expect(await read(client.media.delete({ mediaID: mediaId, phoneNumberID: biz.phoneNumberId }))).toEqual({
      success: true,
    });
    expect(forwarded()).toMatchObject({ method: "DELETE", path: `/v21.0/${mediaId}` });
  });

  test("GET /{number} and GET /{number}/{platform}_business_profile", async () => {
    const number = await read(
      client.phoneNumbers.getPhoneNumber({
        phoneNumberID: biz.phoneNumberId,
        fields: ["verified_name", "throughput"] as never,
      }),
    );
    expect(number).toEqual({
      verified_name: "Simulated Business",
      throughput: { level: "STANDARD" },
      id: biz.phoneNumberId,
    });
    const profile = await read(
      client.businessProfile.getBusinessProfile({
        phoneNumberID: biz.phoneNumberId,
        fields: ["about", "vertical"] as never,
      }),
    );
    expect((profile as { data: { messaging_product: string }[] }).data[0]!.messaging_product).toBe(WORD);
    expect(forwarded()).toMatchObject({ method: "GET", path: `/v21.0/${biz.phoneNumberId}/${WORD}_business_profile` });
  });

  test("POST, GET and DELETE /{waba}/message_templates, and a template message", async () => {
    const template = {
      name: "order_update",
      category: "UTILITY",
      language: "en_US",
      components: [{ type: "BODY", text: "Your order {{1}} is on its way." }],
    };
    expect(await read(client.template.create(biz.wabaId, template as never))).toMatchObject({
      status: "PENDING",
      category: "UTILITY",
    });
    const list = (await read(client.template.list(biz.wabaId, { limit: 10 } as never))) as { data: { name: string }[] };
    expect(list.data.map((t) => t.name)).toEqual(["order_update"]);
    expect(forwarded()).toMatchObject({ method: "GET", path: `/v21.0/${biz.wabaId}/message_templates` });

    const send = {
      type: "template",
      template: {
        name: "order_update",
        language: { code: "en_US" },
        components: [{ type: "body", parameters: [{ type: "text", text: "#42" }] }],
      },
    };
    const sent = await read(
      client.message.createMessage({ phoneNumberID: biz.phoneNumberId, to: "15550100", ...send } as never),
    );
    expect((sent as { messages: { message_status: string }[] }).messages[0]!.message_status).toBe("accepted");

    expect(await read(client.template.delete(biz.wabaId, { name: "order_update" } as never))).toEqual({
      success: true,
    });
    expect(forwarded()).toMatchObject({ method: "DELETE", path: `/v21.0/${biz.wabaId}/message_templates` });
    // A template the WABA does not have is the platform's own error, passed back unchanged
    // (docs/proxy.md#what-comes-back).
    const gone = (await client.message
      .createMessage({ phoneNumberID: biz.phoneNumberId, to: "15550100", ...send } as never)
      .then(
        () => null,
        (e: HTTPError) => e,
      ))!;
    expect(gone.response.status).toBe(404);
    expect((gone.data as { error: { code: number } }).error.code).toBe(132001);
  });
});
