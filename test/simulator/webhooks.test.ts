import { afterEach, describe, expect, test } from "bun:test";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { parseSimulateArgs } from "../../src/cli/simulate-args.ts";
import { UsageError } from "../../src/cli/admin-commands.ts";
import { platformNames } from "../../src/platform/names.ts";

const { product: PRODUCT, webhookObject: WEBHOOK_OBJECT } = platformNames();
import { startSimulator, type Simulator } from "../../src/simulator/server.ts";
import { hubSignatureMatches } from "../../src/webhooks/hub-signature.ts";

const SECRET = "service-app-secret";
const BYO_SECRET = "byo-app-secret";

interface Received {
  body: string;
  signedWith: string | null;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stand-in for Switchboard's ingress: records each body and which app secret signed it. */
function ingress(status = 200): { url: string; received: Received[] } {
  const received: Received[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const header = request.headers.get("x-hub-signature-256");
      const signedWith = [SECRET, BYO_SECRET].find((s) => hubSignatureMatches(header, s, bytes)) ?? null;
      received.push({ body: new TextDecoder().decode(bytes), signedWith });
      return new Response("ok", { status });
    },
  });
  cleanups.push(() => server.stop(true));
  return { url: `http://127.0.0.1:${server.port}/webhooks/upstream`, received };
}

/** Runs every scheduled status at once, so no test waits for real time. */
const immediately = (_ms: number, run: () => void) => run();

function simulator(url: string, results: unknown[] = []): Simulator {
  const sim = startSimulator({
    now: () => Date.UTC(2026, 10, 21, 12, 0, 0),
    webhooks: { url, schedule: immediately, onResult: (r) => results.push(r) },
    wabas: [
      { wabaId: "100", accessToken: "token-a", appSecret: SECRET, numbers: [{ phoneNumberId: "200" }] },
      { wabaId: "101", accessToken: "token-b", appSecret: BYO_SECRET, numbers: [{ phoneNumberId: "201" }] },
    ],
  });
  cleanups.push(() => sim.stop());
  return sim;
}

async function send(sim: Simulator, number: string, token: string, secret: string): Promise<string> {
  const response = await fetch(`${sim.url}/v21.0/${number}/messages?appsecret_proof=${appsecretProof(token, secret)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: PRODUCT, to: "+1 555 123 4567", type: "text", text: { body: "hi" } }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: { id: string }[] }).messages[0]!.id;
}

describe("status webhooks after an accepted send", () => {
  test("sent, delivered and read arrive in order, in the platform's shape, signed with the WABA's app secret", async () => {
    const target = ingress();
    const sim = simulator(target.url);
    const messageId = await send(sim, "200", "token-a", SECRET);
    await sim.webhooksIdle();
    expect(target.received.map((r) => r.signedWith)).toEqual([SECRET, SECRET, SECRET]);
    const events = target.received.map((r) => JSON.parse(r.body));
    expect(events.map((e) => e.entry[0].changes[0].value.statuses[0].status)).toEqual(["sent", "delivered", "read"]);
    expect(events[0]).toEqual({
      object: WEBHOOK_OBJECT,
      entry: [
        {
          id: "100",
          changes: [
            {
              field: "messages",
              value: {
                messaging_product: PRODUCT,
                metadata: { display_phone_number: expect.stringMatching(/^\d+$/), phone_number_id: "200" },
                statuses: [
                  {
                    id: messageId,
                    status: "sent",
                    timestamp: String(Date.UTC(2026, 10, 21, 12) / 1000),
                    recipient_id: "15551234567",
                  },
                ],
              },
            },
          ],
        },
      ],
    });
  });

  test("a bring-your-own WABA's events are signed with its own app secret", async () => {
    const target = ingress();
    const sim = simulator(target.url);
    await send(sim, "201", "token-b", BYO_SECRET);
    await sim.webhooksIdle();
    expect(target.received.map((r) => r.signedWith)).toEqual([BYO_SECRET, BYO_SECRET, BYO_SECRET]);
  });

  test("a refused webhook is reported, not retried", async () => {
    const target = ingress(401);
    const results: { status: number | null }[] = [];
    const sim = simulator(target.url, results);
    await send(sim, "200", "token-a", SECRET);
    await sim.webhooksIdle();
    expect(results.map((r) => r.status)).toEqual([401, 401, 401]);
    expect(target.received).toHaveLength(3);
  });

  test("statuses wait for the schedule: nothing is sent before it runs", async () => {
    const target = ingress();
    const pending: (() => void)[] = [];
    const sim = startSimulator({
      webhooks: { url: target.url, statusDelayMs: 1000, schedule: (_ms, run) => pending.push(run) },
      wabas: [{ wabaId: "100", accessToken: "token-a", appSecret: SECRET, numbers: [{ phoneNumberId: "200" }] }],
    });
    cleanups.push(() => sim.stop());
    await send(sim, "200", "token-a", SECRET);
    expect(pending).toHaveLength(3);
    expect(target.received).toHaveLength(0);
    pending.shift()!();
    pending.shift()!();
    pending.shift()!();
    await sim.webhooksIdle();
    expect(target.received).toHaveLength(3);
  });
});

describe("the control API", () => {
  const post = (sim: Simulator, path: string, body: unknown, method = "POST") =>
    fetch(`${sim.url}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  test("POST /_sim/inbound sends an inbound text message webhook", async () => {
    const target = ingress();
    const sim = simulator(target.url);
    const response = await post(sim, "/_sim/inbound", {
      phone_number_id: "200",
      from: "15550009999",
      text: "Where is my order?",
    });
    expect(response.status).toBe(202);
    const { message_id } = (await response.json()) as { message_id: string };
    expect(target.received).toHaveLength(1);
    const value = JSON.parse(target.received[0]!.body).entry[0].changes[0].value;
    expect(value.messages).toEqual([
      {
        from: "15550009999",
        id: message_id,
        timestamp: expect.stringMatching(/^\d+$/),
        type: "text",
        text: { body: "Where is my order?" },
      },
    ]);
    expect(value.contacts[0].wa_id).toBe("15550009999");
    expect((await post(sim, "/_sim/inbound", { phone_number_id: "999" })).status).toBe(404);
  });

  test("WABAs and numbers registered over HTTP are served; faults are set and cleared", async () => {
    const sim = simulator(ingress().url);
    expect((await post(sim, "/_sim/numbers", { waba_id: "300", phone_number_id: "400" })).status).toBe(404);
    expect(
      (await post(sim, "/_sim/wabas", { waba_id: "300", access_token: "token-c", app_secret: SECRET })).status,
    ).toBe(201);
    expect(
      (await post(sim, "/_sim/numbers", { waba_id: "300", phone_number_id: "400", throughput_level: "HIGH" })).status,
    ).toBe(201);
    const read = () =>
      fetch(`${sim.url}/v21.0/400?fields=throughput&appsecret_proof=${appsecretProof("token-c", SECRET)}`, {
        headers: { authorization: "Bearer token-c" },
      });
    expect(await (await read()).json()).toMatchObject({ throughput: { level: "HIGH" } });

    expect((await post(sim, "/_sim/faults", { id: "400", error: 131031, times: 1 })).status).toBe(204);
    expect(((await (await read()).json()) as { error: { code: number } }).error.code).toBe(131031);
    expect((await read()).status).toBe(200);
    expect((await post(sim, "/_sim/faults", { id: "400", error: 368 })).status).toBe(204);
    expect((await fetch(`${sim.url}/_sim/faults`, { method: "DELETE" })).status).toBe(204);
    expect((await read()).status).toBe(200);
  });

  test.each([
    ["/_sim/wabas", { waba_id: "1" }],
    ["/_sim/faults", { id: "1", error: 12345 }],
    ["/_sim/faults", { id: "1" }],
    ["/_sim/inbound", { phone_number_id: "200", from: "not a number" }],
  ])("%s rejects %j with 400", async (path, body) => {
    const sim = simulator(ingress().url);
    expect((await post(sim, path, body)).status).toBe(400);
  });

  test("an unknown control route is 404 and is not recorded as a platform call", async () => {
    const sim = simulator(ingress().url);
    expect((await fetch(`${sim.url}/_sim/nothing`)).status).toBe(404);
    expect(sim.requests).toHaveLength(0);
  });
});

describe("switchboard simulate flags", () => {
  test("WABAs, numbers, port and webhook URL", () => {
    const args = parseSimulateArgs(
      [
        "--port",
        "9000",
        "--webhook-url",
        "http://127.0.0.1:8080/webhooks/upstream",
        "--waba",
        "1:tok",
        "--waba",
        "2:tok2:byo",
        "--number",
        "1:10",
        "--number",
        "2:20:HIGH",
      ],
      "default-secret",
    );
    expect(args).toEqual({
      port: 9000,
      webhookUrl: "http://127.0.0.1:8080/webhooks/upstream",
      wabas: [
        {
          wabaId: "1",
          accessToken: "tok",
          appSecret: "default-secret",
          numbers: [{ phoneNumberId: "10", throughputLevel: "STANDARD" }],
        },
        {
          wabaId: "2",
          accessToken: "tok2",
          appSecret: "byo",
          numbers: [{ phoneNumberId: "20", throughputLevel: "HIGH" }],
        },
      ],
    });
  });
  test.each([
    [["--port", "http"]],
    [["--waba", "1"]],
    [["--number", "9:10"]],
    [["--waba", "1:t", "--number", "1:10:LOW"]],
    [["--webhook-url", "ftp://x"]],
    [["--bogus"]],
  ])("%j is a usage error", (argv) => {
    expect(() => parseSimulateArgs(argv, "s")).toThrow(UsageError);
  });
});
