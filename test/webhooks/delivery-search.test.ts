import { afterEach, describe, expect, test } from "bun:test";
import { eventBody, messageChange, relayApp, type RelayApp } from "./support.ts";

// Issue 19, item 5: the deliveries list searched by field, number, message id, time and last
// attempt's status code, each row saying what its event is.

let app: RelayApp;
afterEach(() => app?.close());

const statusChange = (phoneNumberId: string, messageId: string, status: string, errorCode?: number) => ({
  field: "messages",
  value: {
    messaging_product: "whatsapp",
    metadata: { display_phone_number: "15550001111", phone_number_id: phoneNumberId },
    statuses: [
      {
        id: messageId,
        status,
        timestamp: "1767225600",
        recipient_id: "15550002222",
        ...(errorCode ? { errors: [{ code: errorCode, title: "Message undeliverable" }] } : {}),
      },
    ],
  },
});

interface Row {
  id: string;
  about: string;
  event_fields: string[];
  status: string;
}

describe("GET /api/deliveries: search", () => {
  test("by field, number, message id, time and last status code; each row says what its event is", async () => {
    app = await relayApp();
    app.deps.clock.set(Date.now());
    const a = await app.account({ numbers: 2 });
    const [one, two] = a.numbers as [string, string];
    const rx = app.receiver();
    const endpoint = await a.endpoint(rx.url, ["messages", "account_update"]);
    const post = async (changes: unknown[]) =>
      expect((await app.post(eventBody([{ id: a.wabaId, changes }]))).status).toBe(200);

    const t0 = app.deps.clock.now();
    await post([statusChange(one, "wamid.AAA", "delivered")]);
    app.deps.clock.advance(60_000);
    await post([messageChange(two, "hello")]);
    app.deps.clock.advance(60_000);
    await post([statusChange(one, "wamid.BBB", "failed", 131026)]);
    app.deps.clock.advance(1);
    await post([{ field: "account_update", value: { event: "VERIFIED_ACCOUNT" } }]);
    await app.tick();

    const list = async (query: string) => {
      const r = await a.api("GET", `/api/deliveries?${query}`);
      expect(r.status).toBe(200);
      return (r.body as { data: Row[] }).data;
    };
    const all = await list("");
    expect(all.map((d) => d.about)).toEqual([
      "account_update",
      "messages: status failed (131026)",
      "messages: message received",
      "messages: status delivered",
    ]);
    expect((await list("field=account_update")).map((d) => d.about)).toEqual(["account_update"]);
    expect((await list("field=messages")).map((d) => d.about)).toHaveLength(3);
    expect((await list(`number=${one}`)).map((d) => d.about)).toEqual([
      "messages: status failed (131026)",
      "messages: status delivered",
    ]);
    expect((await list(`number=${two}`)).map((d) => d.about)).toEqual(["messages: message received"]);
    expect((await list("message_id=wamid.AAA")).map((d) => d.about)).toEqual(["messages: status delivered"]);
    expect(await list("message_id=wamid.none")).toEqual([]);
    const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    expect((await list(`from=${at(t0 + 60_000)}&to=${at(t0 + 120_000)}`)).map((d) => d.about)).toEqual([
      "messages: message received",
    ]);
    expect(await list("last_status=200")).toHaveLength(4);
    expect(await list("last_status=500")).toEqual([]);
    // Combined with the endpoint and status filters, and paged.
    const first = (await a.api("GET", "/api/deliveries?field=messages&status=succeeded&limit=2")).body as {
      data: Row[];
      next_cursor: string;
    };
    expect(first.data).toHaveLength(2);
    const rest = (
      await a.api("GET", `/api/deliveries?field=messages&status=succeeded&limit=2&cursor=${first.next_cursor}`)
    ).body as { data: Row[]; next_cursor: string | null };
    expect(rest.data).toHaveLength(1);
    expect(rest.next_cursor).toBeNull();
    expect((await a.api("GET", "/api/deliveries?from=yesterday")).status).toBe(400);
    // Whole numbers only: a fraction reached the LIMIT (or an integer column) and answered 500.
    for (const bad of ["limit=1.5", "last_status=200.5"])
      expect((await a.api("GET", `/api/deliveries?${bad}`)).status).toBe(400);
    expect((await a.api("GET", `/api/endpoints/${endpoint.id}/stats?hours=1.5`)).status).toBe(400);

    // Another account sees none of it.
    const other = await app.account();
    expect(((await other.api("GET", "/api/deliveries?message_id=wamid.AAA")).body as { data: Row[] }).data).toEqual([]);
  });

  test("the last attempt's status code, after a retry answered differently", async () => {
    app = await relayApp();
    app.deps.clock.set(Date.now());
    const a = await app.account();
    let answer = 503;
    const rx = app.receiver(() => new Response("", { status: answer }));
    await a.endpoint(rx.url, ["messages"]);
    expect((await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]))).status).toBe(200);
    await app.tick();
    const list = async (code: number) =>
      ((await a.api("GET", `/api/deliveries?last_status=${code}`)).body as { data: Row[] }).data.length;
    expect([await list(503), await list(200)]).toEqual([1, 0]);
    answer = 200;
    app.deps.clock.advance(5_000);
    await app.tick();
    expect([await list(503), await list(200)]).toEqual([0, 1]);
  });
});
