import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { eventBody, messageChange, relayApp, type RelayApp, type Received } from "../webhooks/support.ts";

// docs/webhooks.md shows receivers how to check a signature without a library. Its example is
// taken from the page as written and run against deliveries the relay really sent.

type Verify = (
  secret: string,
  headers: Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>,
  rawBody: Uint8Array,
  nowSeconds?: number,
) => boolean;

/** The page's example, loaded as a module. */
async function docsExample(dir: string): Promise<Verify> {
  const page = await Bun.file(new URL("../../docs/webhooks.md", import.meta.url)).text();
  const marker = page.indexOf("<!-- example: verify-delivery");
  const start = page.indexOf("```ts\n", marker) + "```ts\n".length;
  const code = page.slice(start, page.indexOf("\n```", start));
  expect(marker).toBeGreaterThan(0);
  const file = join(dir, "verify.ts");
  await Bun.write(file, code);
  return ((await import(file)) as { verifyDelivery: Verify }).verifyDelivery;
}

let app: RelayApp;
const dir = tempDir();
afterEach(async () => {
  await app?.close();
});
afterAll(() => dir.cleanup());

const HOUR = 3_600_000;
const headersOf = (got: Received) => ({
  "webhook-id": got.headers["webhook-id"]!,
  "webhook-timestamp": got.headers["webhook-timestamp"]!,
  "webhook-signature": got.headers["webhook-signature"]!,
});

describe("the signature example of docs/webhooks.md", () => {
  test("accepts real deliveries, before and during a rotation's overlap, and nothing altered, stale or signed with another secret", async () => {
    const verify = await docsExample(dir.path);
    app = await relayApp();
    const a = await app.account();
    const rx = app.receiver();
    const ep = await a.endpoint(rx.url);
    const deliver = async (text: string) => {
      expect(
        (await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!, text)] }]))).status,
      ).toBe(200);
      await app.tick();
      const got = rx.received.at(-1)!;
      return {
        headers: headersOf(got),
        text: got.body,
        body: new TextEncoder().encode(got.body),
        now: Math.floor(app.deps.clock.now() / 1000),
      };
    };

    const first = await deliver("first");
    expect(verify(ep.secret, first.headers, first.body, first.now)).toBe(true);
    expect(
      verify(ep.secret, first.headers, new TextEncoder().encode(first.text.replace("first", "forst")), first.now),
    ).toBe(false);
    expect(verify(`whsec_${Buffer.alloc(32, 9).toString("base64")}`, first.headers, first.body, first.now)).toBe(false);
    expect(verify(ep.secret, { ...first.headers, "webhook-id": "msg_other" }, first.body, first.now)).toBe(false);
    // Five minutes either way is accepted; a second more is not.
    expect(verify(ep.secret, first.headers, first.body, first.now + 300)).toBe(true);
    expect(verify(ep.secret, first.headers, first.body, first.now + 301)).toBe(false);
    expect(verify(ep.secret, first.headers, first.body, first.now - 301)).toBe(false);

    const rotated = (await a.api<{ secret: string }>("POST", `/api/endpoints/${ep.id}/rotate-secret`)).body.secret;
    const during = await deliver("during the overlap");
    expect(during.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect([
      verify(rotated, during.headers, during.body, during.now),
      verify(ep.secret, during.headers, during.body, during.now),
    ]).toEqual([true, true]);

    app.deps.clock.advance(24 * HOUR + 1);
    const after = await deliver("after the overlap");
    expect([
      verify(rotated, after.headers, after.body, after.now),
      verify(ep.secret, after.headers, after.body, after.now),
    ]).toEqual([true, false]);
  });
});
