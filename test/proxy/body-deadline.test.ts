import { describe, expect, test } from "bun:test";
import { platformNames } from "../../src/platform/names.ts";
import { eventually } from "../support/eventually.ts";
import { rawConnection } from "../support/raw-http.ts";
import { useWorld } from "../support/world.ts";

// Issue 34, item 6: a proxied body small enough to be read before it is forwarded
// (PROXY_BODY_BUFFER_BYTES) trickled in for ever with a valid key; five such connections were
// still open after 200 s. It has REQUEST_BODY_TIMEOUT_MS (30 s) from its headers to arrive
// whole: then 408 `body_timeout`, the connection is closed, and nothing goes upstream. The
// deadline runs on the injected clock: these tests move it rather than wait.

const t = useWorld();
const DEADLINE_MS = 30_000;

const message = JSON.stringify({
  messaging_product: platformNames().product,
  to: "15550100",
  type: "text",
  text: { body: "hi" },
});

/** A send whose headers and first `sent` body bytes are written at once; the rest is the test's to write. */
async function slowSend(sent: number) {
  const connection = await rawConnection(t.world.url);
  const host = new URL(t.world.url).host;
  connection.write(
    `POST /v21.0/${t.biz.phoneNumberId}/messages HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t.biz.liveKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${message.length}\r\n\r\n${message.slice(0, sent)}`,
  );
  return connection;
}

/** Waits (no time passes on the clock) until the server has set the body's deadline. */
async function deadlineSet() {
  expect(await eventually(async () => t.world.deps.clock.waiting, 1)).toBe(1);
}

async function timeouts(): Promise<number> {
  const text = await (await fetch(`${t.world.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('switchboard_http_body_timeouts_total{group="proxy"}'));
  return line ? Number(line.split(" ")[1]) : 0;
}

describe("a proxied body under the buffer size", () => {
  test("that trickles is 408 at the deadline, its connection closed, and nothing goes upstream", async () => {
    const upstreamBefore = t.world.sim.requests.length;
    const before = await timeouts();
    const connection = await slowSend(1);
    await deadlineSet();
    for (let i = 1; i < 10; i++) {
      t.world.deps.clock.advance(DEADLINE_MS / 10);
      connection.write(message[i]!);
    }
    t.world.deps.clock.advance(DEADLINE_MS / 10 - 1);
    expect(t.world.deps.clock.waiting).toBe(1);
    t.world.deps.clock.advance(1);
    const r = await connection.answer;
    expect(r.status).toBe(408);
    expect(r.headers.connection).toBe("close");
    expect(JSON.parse(r.body).error).toMatchObject({
      code: "body_timeout",
      type: "InvalidRequestException",
      trace_id: r.headers["x-proxy-request-id"],
    });
    await connection.closed;
    expect(t.world.sim.requests.length).toBe(upstreamBefore);
    expect(await timeouts()).toBe(before + 1);
  });

  test("that arrives slowly but whole before the deadline is forwarded", async () => {
    const connection = await slowSend(10);
    await deadlineSet();
    t.world.deps.clock.advance(DEADLINE_MS - 1);
    connection.write(message.slice(10));
    const r = await connection.answer;
    expect(r.status).toBe(200);
    expect(new TextDecoder().decode(t.world.sim.requests.at(-1)!.body)).toBe(message);
    expect(t.world.deps.clock.waiting).toBe(0);
    connection.end();
  });
});
