import { describe, expect, test } from "bun:test";
import { bytesWithin } from "../../src/http/read-body.ts";
import { ManualClock } from "../../src/runtime/clock.ts";

// The proxy's small bodies are read whole within the body deadline (src/http/read-body.ts): one
// promise settles with whichever comes first, and the deadline never outlives the read.

/** A request whose body the test ends, or breaks off, when it chooses. */
function heldRequest() {
  let body!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      body = controller;
    },
  });
  const request = new Request("http://proxy/v21.0/1/messages", {
    method: "POST",
    body: stream,
    duplex: "half",
  } as RequestInit);
  return { request, body };
}

describe("bytesWithin: a body whole, or late", () => {
  test("the body arrives in time: its bytes, and no deadline left waiting", async () => {
    const clock = new ManualClock();
    const { request, body } = heldRequest();
    const read = bytesWithin(request, 300, clock);
    expect(clock.waiting).toBe(1);
    body.enqueue(new TextEncoder().encode("hello"));
    body.close();
    expect(new TextDecoder().decode((await read) as Uint8Array)).toBe("hello");
    expect(clock.waiting).toBe(0);
  });

  test("the deadline passes first: late; the body breaking off afterwards is heard by nobody", async () => {
    const clock = new ManualClock();
    const { request, body } = heldRequest();
    const read = bytesWithin(request, 300, clock);
    clock.advance(299);
    body.enqueue(new Uint8Array(3));
    clock.advance(1);
    expect(await read).toBe("late");
    expect(clock.waiting).toBe(0);
    body.error(new Error("caller went away"));
    // A rejection nobody handled would fail this test (bun test reports it).
    await Bun.sleep(0);
  });

  test("the caller breaks off before the deadline: the read fails, and no deadline is left waiting", async () => {
    const clock = new ManualClock();
    const { request, body } = heldRequest();
    const read = bytesWithin(request, 300, clock);
    body.error(new Error("caller went away"));
    await expect(read).rejects.toThrow("caller went away");
    expect(clock.waiting).toBe(0);
  });
});
