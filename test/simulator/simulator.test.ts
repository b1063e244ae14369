import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { seededRandom } from "../../src/runtime/random.ts";
import type { AcceptedMessage } from "../../src/simulator/call.ts";
import { startSimulator, type Simulator } from "../../src/simulator/server.ts";

const SECRET = "app-secret";
let sim: Simulator;
beforeEach(() => {
  sim = startSimulator({
    random: seededRandom(1),
    wabas: [
      {
        wabaId: "100",
        accessToken: "token-a",
        appSecret: SECRET,
        numbers: [{ phoneNumberId: "200", throughputLevel: "HIGH" }],
      },
      { wabaId: "101", accessToken: "token-b", appSecret: SECRET, numbers: [{ phoneNumberId: "201" }] },
    ],
  });
});
afterEach(() => sim.stop());

const proof = (token: string) => appsecretProof(token, SECRET);
function call(path: string, init: RequestInit & { token?: string | null; proof?: string | null } = {}) {
  const token = init.token === undefined ? "token-a" : init.token;
  const p = init.proof === undefined ? (token ? proof(token) : null) : init.proof;
  const sep = path.includes("?") ? "&" : "?";
  return fetch(`${sim.url}${path}${p ? `${sep}appsecret_proof=${p}` : ""}`, {
    ...init,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      "content-type": "application/json",
      ...(init.headers as Record<string, string>),
    },
  });
}
const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: number; trace_id: string; message: string } }).error;

describe("credentials", () => {
  test("a missing or unknown token is 401 code 190; a bad or missing proof is code 100", async () => {
    expect(await errorOf(await call("/v21.0/200", { token: null }))).toMatchObject({ code: 190 });
    const unknown = await call("/v21.0/200", { token: "nope", proof: proof("nope") });
    expect(unknown.status).toBe(401);
    expect((await errorOf(unknown)).code).toBe(190);
    expect(await errorOf(await call("/v21.0/200", { proof: "00" }))).toMatchObject({
      code: 100,
      message: expect.stringContaining("appsecret_proof"),
    });
    expect(await errorOf(await call("/v21.0/200", { proof: null }))).toMatchObject({ code: 100 });
    expect((await call("/v21.0/200")).status).toBe(200);
  });

  test("another WABA's token cannot see a number: it looks like it does not exist", async () => {
    const r = await call("/v21.0/201", { token: "token-a" });
    expect(r.status).toBe(400);
    expect((await errorOf(r)).code).toBe(100);
  });
});

describe("answers and headers", () => {
  test("number details with throughput.level, filtered by fields", async () => {
    expect(await (await call("/v21.0/200?fields=throughput")).json()).toEqual({
      throughput: { level: "HIGH" },
      id: "200",
    });
    sim.setThroughput("200", "STANDARD");
    expect(((await (await call("/v21.0/200")).json()) as { throughput: { level: string } }).throughput.level).toBe(
      "STANDARD",
    );
  });

  test("trace and usage headers on every answer; an error's trace id is in its body too", async () => {
    const r = await call("/v21.0/200/messages", { method: "POST", body: "not json" });
    const trace = r.headers.get("x-upstream-trace-id");
    expect(trace).toBeTruthy();
    expect(r.headers.get("x-app-usage")).toContain("call_count");
    expect(JSON.parse(r.headers.get("x-business-use-case-usage")!)).toHaveProperty("100");
    expect((await errorOf(r)).trace_id).toBe(trace!);
  });

  test("accepted messages get wamid ids and reach every listener; the request is recorded exactly", async () => {
    const heard: AcceptedMessage[] = [];
    const unsubscribe = sim.onMessageAccepted((m) => heard.push(m));
    const body = '{"messaging_product":"chat", "to":"+1 555 0100","type":"text","text":{"body":"hi"}}';
    const r = await call("/v21.0/200/messages?x=%2F&y", { method: "POST", body });
    const id = ((await r.json()) as { messages: { id: string }[] }).messages[0]!.id;
    expect(id).toStartWith("wamid.");
    expect(heard).toEqual([{ messageId: id, wabaId: "100", phoneNumberId: "200", to: "+1 555 0100", type: "text" }]);
    expect(sim.accepted).toEqual(heard);
    unsubscribe();
    await call("/v21.0/200/messages", { method: "POST", body });
    expect(heard).toHaveLength(1);
    const recorded = sim.requests[0]!;
    expect(recorded).toMatchObject({ method: "POST", path: "/v21.0/200/messages", bodyLength: body.length });
    expect(recorded.query).toBe(`x=%2F&y&appsecret_proof=${proof("token-a")}`);
    expect(new TextDecoder().decode(recorded.body)).toBe(body);
    expect(recorded.headers.authorization).toBe("Bearer token-a");
  });

  test("messages are checked as the platform checks them: what each type needs, a status update needs no recipient", async () => {
    const post = async (body: unknown) => {
      const r = await call("/v21.0/200/messages", { method: "POST", body: JSON.stringify(body) });
      return {
        status: r.status,
        body: (await r.json()) as { success?: boolean; error?: { code: number; message: string } },
      };
    };
    const product = { messaging_product: "chat" };
    expect(await post({ ...product, status: "read", message_id: "wamid.x" })).toEqual({
      status: 200,
      body: { success: true },
    });
    expect(
      (await post({ ...product, status: "read", message_id: "wamid.x", typing_indicator: { type: "text" } })).body,
    ).toEqual({ success: true });
    const refused: [unknown, string][] = [
      [{ to: "1", type: "text", text: { body: "hi" } }, "The parameter messaging_product is required."],
      [{ ...product, status: "read" }, "The parameter message_id is required."],
      [{ ...product, status: "delivered", message_id: "wamid.x" }, "Param status must be one of {READ}"],
      [{ ...product, type: "text", text: { body: "hi" } }, "The parameter to is required."],
      [{ ...product, to: "1", type: "text", text: {} }, "The parameter text['body'] is required."],
      [
        { ...product, to: "1", type: "image", image: { caption: "no file" } },
        "The parameter image['id'] or image['link'] is required.",
      ],
      [
        { ...product, to: "1", type: "reaction", reaction: { emoji: "x" } },
        "The parameter reaction['message_id'] is required.",
      ],
      [{ ...product, to: "1", type: "hologram" }, "Param type must be one of"],
      [
        { ...product, to: "1", type: "template", template: { name: "nope", language: { code: "en" } } },
        "Template name does not exist in the translation",
      ],
    ];
    for (const [body, message] of refused) {
      const answer = await post(body);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body.error!.message).toContain(message);
    }
    expect(sim.accepted).toHaveLength(0);
  });

  test("templates can be created, listed and deleted", async () => {
    await call("/v21.0/100/message_templates", {
      method: "POST",
      body: JSON.stringify({ name: "t1", category: "MARKETING", language: "en" }),
    });
    const list = (await (await call("/v21.0/100/message_templates")).json()) as { data: { name: string }[] };
    expect(list.data.map((t) => t.name)).toEqual(["t1"]);
    expect((await call("/v21.0/100/message_templates?name=t1", { method: "DELETE" })).status).toBe(200);
    expect((await call("/v21.0/100/message_templates?name=t1", { method: "DELETE" })).status).toBe(400);
  });
});

describe("faults", () => {
  test("an error code for an id, a given number of times", async () => {
    sim.fault("200", { error: 131031 }, 1);
    const r = await call("/v21.0/200");
    expect(r.status).toBe(400);
    expect((await errorOf(r)).code).toBe(131031);
    expect((await call("/v21.0/200")).status).toBe(200);
  });

  test("a fault on a number applies to media calls scoped by it; '*' to everything", async () => {
    sim.fault("200", { error: 368 });
    expect((await errorOf(await call("/v21.0/999?phone_number_id=200"))).code).toBe(368);
    sim.clearFaults();
    sim.fault("*", { error: 130429 });
    expect((await errorOf(await call("/v21.0/100/message_templates"))).code).toBe(130429);
  });

  test("slow answers and dropped connections", async () => {
    sim.fault("200", { delayMs: 60 }, 1);
    const started = performance.now();
    expect((await call("/v21.0/200")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    sim.fault("200", { drop: true }, 1);
    // A POST: Bun's fetch re-sends a GET once when a pooled connection closes without an answer.
    await expect(call("/v21.0/200/messages", { method: "POST", body: "{}" })).rejects.toThrow();
    expect(sim.requests.at(-1)!.path).toBe("/v21.0/200/messages");
  });
});
