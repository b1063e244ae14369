import { afterEach, expect, test } from "bun:test";
import type { Fetch } from "../../src/runtime/fetch.ts";
import { eventually } from "../support/eventually.ts";
import { bearer, startWorld, type World } from "../support/world.ts";

// Issue 40, item 3: a call's record is complete before it is handed to the log's writer. An
// upstream answer whose body is still passing when a batch goes (500 records, or the second's
// tick) must not lose what that body tells: an error's code, a send's message id, and with the id
// the message's timeline.

let world: World;
afterEach(() => world.stop());

/** An upstream answer whose body the test releases: the first bytes at once, the rest on `finish()`. */
function heldAnswer(status: number, body: string, declared: boolean) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const bytes = new TextEncoder().encode(body);
  const split = Math.floor(bytes.length / 2);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(bytes.slice(0, split));
    },
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (declared) headers["content-length"] = String(bytes.length);
  return {
    response: new Response(stream, { status, headers }),
    finish() {
      controller.enqueue(bytes.slice(split));
      controller.close();
    },
  };
}

/**
 * A world whose upstream answers the next send with `answer` (held), every other call as the
 * simulator does; returns the send's answer (a promise: the proxy may wait for the whole body) and
 * the hook to finish it, once upstream's headers have reached the proxy.
 */
async function slowSend(answer: () => ReturnType<typeof heldAnswer>) {
  let held: ReturnType<typeof heldAnswer> | null = null;
  const { promise: asked, resolve: ask } = Promise.withResolvers<void>();
  const fetchThrough: Fetch = (input, init) => {
    if (String(input).includes("/messages?") && held === null) {
      held = answer();
      ask();
      return Promise.resolve(held.response);
    }
    return fetch(input, init);
  };
  world = await startWorld({ deps: { fetch: fetchThrough } });
  const biz = await world.business();
  const answered = world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
  await asked;
  return { biz, answered, finish: () => held!.finish() };
}

/** The answer's headers and its first bytes, while the rest is held upstream. */
async function firstBytes(answered: Promise<Response>) {
  const r = await answered;
  const reader = r.body!.getReader();
  expect((await reader.read()).done).toBe(false);
  return { r, reader };
}

async function rest(reader: ReadableStreamDefaultReader<Uint8Array>) {
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
}

test("an upstream error whose body ends after a batch went to the writer keeps its code and subcode", async () => {
  const error = JSON.stringify({
    error: { message: "blocked", type: "OAuthException", code: 368, error_subcode: 1390008, fbtrace_id: "AbC" },
  });
  const call = await slowSend(() => heldAnswer(400, error, false));
  const { r, reader } = await firstBytes(call.answered);
  const log = world.app().requestLog!;
  // A flush while the error's body is still on its way: what the log has so far goes to the writer.
  await log.flush();
  call.finish();
  await rest(reader);
  await log.flush();
  const record = await world.deps.store.requests.get(call.biz.accountId, r.headers.get("x-proxy-request-id")!);
  expect(record).toMatchObject({
    status: 400,
    upstreamStatus: 400,
    upstreamErrorCode: 368,
    upstreamErrorSubcode: 1390008,
  });
  // Usage counts the call once, under upstream's code.
  const hour = Math.floor(world.deps.clock.now() / 3_600_000) * 3_600_000;
  const usage = await world.deps.store.requests.usage(call.biz.accountId, hour, hour + 3_600_000);
  expect(usage.map((u) => [u.kind, u.label, u.count])).toEqual([["upstream_error", "368", 1]]);
});

test("a send whose answer is slow across a flush keeps its message id (what the message's timeline finds the call by)", async () => {
  const messageId = "wamid.HBgLMTU1NTAxMDAVAgARGBJBQkNERUYwMTIzNDU2Nzg5AA==";
  const answer = JSON.stringify({
    messaging_product: "chat",
    contacts: [{ input: "15550100", wa_id: "15550100" }],
    messages: [{ id: messageId }],
  });
  const call = await slowSend(() => heldAnswer(200, answer, true));
  const log = world.app().requestLog!;
  await log.flush();
  call.finish();
  const r = await call.answered;
  expect(await r.text()).toBe(answer);
  await log.flush();
  const found = await world.deps.store.requests.byMessageId(call.biz.accountId, messageId);
  expect(found.map((f) => f.id)).toEqual([r.headers.get("x-proxy-request-id")!]);
});

test("a caller that goes away before an upstream error's body has passed still leaves the call's record", async () => {
  const error = JSON.stringify({ error: { message: "blocked", type: "OAuthException", code: 368 } });
  const call = await slowSend(() => heldAnswer(400, error, false));
  const { r, reader } = await firstBytes(call.answered);
  await reader.cancel();
  const log = world.app().requestLog!;
  const id = r.headers.get("x-proxy-request-id")!;
  // The cancel reaches the proxy's side a moment later: the record is handed over then.
  const logged = () => log.flush().then(() => world.deps.store.requests.get(call.biz.accountId, id).then(Boolean));
  expect(await eventually(logged, true)).toBe(true);
  expect(await world.deps.store.requests.get(call.biz.accountId, id)).toMatchObject({
    status: 400,
    upstreamStatus: 400,
  });
});
