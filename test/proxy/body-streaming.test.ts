import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { errorResponse } from "../../src/errors/catalog.ts";
import { forward } from "../../src/proxy/forward.ts";
import { systemClock } from "../../src/runtime/clock.ts";

/**
 * Which request bodies stream and which are read first (forward, step 9): a body is held back only
 * when it declares at most `bufferBytes`. Shown over real HTTP: a caller sends part of a body and
 * waits until upstream has seen those bytes, which happens only if they were passed on unheld.
 */
const servers: { stop(force: boolean): unknown }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop(true);
});

/** An upstream that reports the first bytes of each body as they arrive, and the hash of the whole. */
function upstream() {
  let firstBytes = Promise.withResolvers<number>();
  const bodies: { length: string | null; sha256: string; size: number }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const hash = createHash("sha256");
      let size = 0;
      const reader = request.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        if (size === 0) firstBytes.resolve(read.value.length);
        hash.update(read.value);
        size += read.value.length;
      }
      bodies.push({ length: request.headers.get("content-length"), sha256: hash.digest("hex"), size });
      firstBytes = Promise.withResolvers<number>();
      return Response.json({ ok: true });
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, bodies, firstBytes: () => firstBytes.promise };
}

/** A front server that forwards every request the way the proxy's step 9 does. */
function front(upstreamUrl: string, bufferBytes: number): string {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) =>
      forward((input, init) => fetch(input, init), request, request.headers.get("content-length"), {
        url: `${upstreamUrl}/v21.0/1/media`,
        token: "upstream-token",
        timeoutMs: 10_000,
        bufferBytes,
        bodyDeadline: { clock: systemClock, ms: 10_000, missed: () => undefined },
        headers: {},
        fail: (name) => errorResponse(name, "req_test"),
        inspectError: () => () => undefined,
      }),
  });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

/** Fails instead of hanging when upstream never sees the first part (it was held back). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen`)), 5_000)),
  ]);
}

/** Sends `first`, waits until upstream has seen bytes, then sends `rest`: completes only if the body streamed. */
async function sendInTwoParts(url: string, first: Uint8Array, rest: Uint8Array, seen: () => Promise<number>) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
  const answer = fetch(url, {
    method: "POST",
    headers: { "content-type": "application/octet-stream", "content-length": String(first.length + rest.length) },
    body,
    duplex: "half",
  } as RequestInit);
  controller.enqueue(first);
  const seenBytes = await within(seen(), "upstream receiving the first part");
  controller.enqueue(rest);
  controller.close();
  return { response: await answer, seenBytes };
}

const bytes = (n: number, seed: number) => new Uint8Array(n).map((_, i) => (i * 31 + seed) % 251);

describe("request bodies: streamed, or read first when small", () => {
  test("a body declaring more than the buffer streams: upstream has its first part before the caller sends the rest", async () => {
    const up = upstream();
    const url = front(up.url, 64 * 1024);
    const first = bytes(48 * 1024, 1);
    const rest = bytes(80 * 1024, 2);
    const { response, seenBytes } = await sendInTwoParts(url, first, rest, up.firstBytes);
    expect(response.status).toBe(200);
    expect(seenBytes).toBeGreaterThan(0);
    expect(seenBytes).toBeLessThanOrEqual(first.length);
    expect(up.bodies).toEqual([
      {
        length: String(128 * 1024),
        size: 128 * 1024,
        sha256: createHash("sha256").update(first).update(rest).digest("hex"),
      },
    ]);
  });

  test("with a buffer of 0 even a small declared body streams", async () => {
    const up = upstream();
    const url = front(up.url, 0);
    const { response } = await sendInTwoParts(url, bytes(10, 3), bytes(20, 4), up.firstBytes);
    expect(response.status).toBe(200);
    expect(up.bodies[0]).toMatchObject({ length: "30", size: 30 });
  });

  test("a small declared body goes upstream byte for byte, with its Content-Length", async () => {
    const up = upstream();
    const url = front(up.url, 64 * 1024);
    const body = bytes(64 * 1024, 5);
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body,
    });
    expect(response.status).toBe(200);
    expect(up.bodies).toEqual([
      { length: String(64 * 1024), size: 64 * 1024, sha256: createHash("sha256").update(body).digest("hex") },
    ]);
  });
});
