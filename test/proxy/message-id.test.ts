import { expect, test } from "bun:test";
import { messageIdIn } from "../../src/proxy/capture.ts";
import { seededRandom } from "../../src/runtime/random.ts";

// A send's message id is found by scanning the answer's bytes (issue 30): it must find exactly what
// the pattern it replaced found, `"id"`, a colon and `"wamid.` with 1-200 characters, no escapes.
const PATTERN = /"id"\s*:\s*"(wamid\.[^"\\]{1,200})"/;
const bytes = (text: string) => new TextEncoder().encode(text);
const agree = (text: string) =>
  expect([text, messageIdIn(bytes(text))]).toEqual([text, PATTERN.exec(text)?.[1] ?? null]);

test("a send's answer, spaced or not, and what is not a message id", () => {
  expect(
    messageIdIn(
      bytes(
        '{"messaging_product":"chat","contacts":[{"input":"1555","wa_id":"1555"}],"messages":[{"id":"wamid.HBgLMTU1"}]}',
      ),
    ),
  ).toBe("wamid.HBgLMTU1");
  for (const text of [
    '{"messages":[{"id" : \n "wamid.abc"}]}',
    '{"id":"wamid."}',
    '{"id":"wamid.a\\"b"}',
    '{"xid":"wamid.abc"}',
    '{"wa_id":"wamid.abc"}',
    `{"id":"wamid.${"x".repeat(200)}"}`,
    `{"id":"wamid.${"x".repeat(201)}"}`,
    '"wamid.x"',
    '{"id":"wamid.abc',
    '{"id":"nope","o":{"id":"wamid.z"}}',
    "",
    '{"id":1,"wamid.":"id"}',
    '{"id":"wamid.é"}',
  ])
    agree(text);
});

test("on any mix of the pieces that matter, the same answer as the pattern", () => {
  const random = seededRandom(30);
  const pieces = ['"id"', '"wamid.', ": ", '"', "i", "d", ":", " ", "\n", "w", "a", "m", "\\", ".", "x", "{", "}"];
  for (let i = 0; i < 5_000; i++) {
    const picks = random.bytes(1 + (random.bytes(1)[0]! % 40));
    agree(Array.from(picks, (b) => pieces[b % pieces.length]).join(""));
  }
});
