import { afterEach, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { bearer, startWorld, type World } from "../support/world.ts";
import { createAccount, signInCookie } from "../dashboard/support.ts";

// Issue 19, item 3: a message's timeline. A send through Switchboard to the simulator, which then
// posts the message's sent, delivered and read statuses to Switchboard's ingress; the timeline has
// the call that sent it and the three status events, each with its delivery to the endpoint and
// the delivery's attempts.

let world: World | undefined;
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await world?.stop();
});

test("a send and its three status webhooks, each delivered, in one timeline; another account's view of it is 404", async () => {
  // The simulator starts before the app it posts to: its webhooks go through a forwarder that learns the app's URL after.
  let app = "";
  const forwarder = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => fetch(`${app}/webhooks/upstream`, { method: "POST", headers: r.headers, body: r.body }),
  });
  stops.push(() => forwarder.stop(true));
  world = await startWorld({
    env: { DEV_MODE: "1" },
    sim: { webhooks: { url: `http://127.0.0.1:${forwarder.port}/`, schedule: (_ms, run) => run() } },
  });
  app = world.url;
  const account = await createAccount(world.url, "Timeline");
  const cookie = await signInCookie(world.url, account);
  const key = await world.key(account.id, "live");
  const { wabaId } = await world.waba(account.id);
  const phoneNumberId = await world.number(account.id, wabaId);
  const received: string[] = [];
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (r) => {
      received.push(await r.text());
      return new Response("ok");
    },
  });
  stops.push(() => receiver.stop(true));
  const api = (method: string, path: string, body?: unknown, c = cookie) =>
    fetch(`${world!.url}${path}`, {
      method,
      headers: { cookie: c, "content-type": "application/json", origin: world!.url },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  expect(
    (await api("POST", "/api/endpoints", { url: `http://127.0.0.1:${receiver.port}/hook`, fields: ["messages"] }))
      .status,
  ).toBe(201);

  const sent = await world.call(`/v21.0/${phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
  const wamid = ((await sent.json()) as { messages: { id: string }[] }).messages[0]!.id;
  await world.sim.webhooksIdle();
  expect(await eventually(async () => received.length, 3, 5_000)).toBe(3);
  await world.app().requestLog!.flush();

  type Timeline = {
    message_id: string;
    sent_by: { id: string; status: number; message_id: string }[];
    events: {
      kind: string;
      status: string;
      phone_number_id: string;
      deliveries: { status: string; attempts: { status_code: number }[] }[];
    }[];
  };
  const read = async () => {
    const r = await api("GET", `/api/messages/${encodeURIComponent(wamid)}`);
    expect(r.status).toBe(200);
    return (await r.json()) as Timeline;
  };
  // The receiver has the events before their attempts are recorded: wait for the records too.
  const settled = (t: Timeline) =>
    t.events.length === 3 && t.events.every((e) => e.deliveries[0]?.status === "succeeded");
  expect(await eventually(async () => settled(await read()), true, 5_000)).toBe(true);
  const timeline = await read();
  expect(timeline.message_id).toBe(wamid);
  expect(timeline.sent_by).toEqual([
    expect.objectContaining({ id: sent.headers.get("x-proxy-request-id"), status: 200, message_id: wamid }),
  ]);
  expect(timeline.events.map((e) => [e.kind, e.status, e.phone_number_id])).toEqual([
    ["status", "sent", phoneNumberId],
    ["status", "delivered", phoneNumberId],
    ["status", "read", phoneNumberId],
  ]);
  for (const e of timeline.events) {
    expect(e.deliveries).toHaveLength(1);
    expect(e.deliveries[0]!.status).toBe("succeeded");
    expect(e.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([200]);
  }

  // The dashboard's page of it: every step with its delivery.
  const html = await (
    await fetch(`${world.url}/dashboard/messages/${encodeURIComponent(wamid)}`, { headers: { cookie } })
  ).text();
  for (const step of ["Sent", "sent", "delivered", "read", sent.headers.get("x-proxy-request-id")!])
    expect(html).toContain(step);
  expect(html.match(/\/dashboard\/deliveries\/msg_/g) ?? []).toHaveLength(3);

  // Pasted with quotes; unknown ids and another account's view: 404.
  expect((await api("GET", `/api/messages/${encodeURIComponent(` "${wamid}" `)}`)).status).toBe(200);
  expect((await api("GET", "/api/messages/wamid.nothing")).status).toBe(404);
  const stranger = await createAccount(world.url, "Stranger");
  expect(
    (await api("GET", `/api/messages/${encodeURIComponent(wamid)}`, undefined, await signInCookie(world.url, stranger)))
      .status,
  ).toBe(404);
});
