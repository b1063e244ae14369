import { expect, test } from "bun:test";
import { seededRandom } from "../../src/runtime/random.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";

test("event and delivery ids keep their length and sort by the time they were made", () => {
  const random = seededRandom(42);
  const times = [0, 1, 999, 1_000, 1_767_225_600_000, 1_767_225_600_001, 1_767_225_660_000, 95_000_000_000_000];
  const ids = times.map((t) => newDeliveryId(random, t));
  for (const id of ids) expect(id).toMatch(/^msg_[0-9a-z]{24}$/);
  expect([...ids].sort()).toEqual(ids);
  expect(newEventId(random, times[4]!)).toMatch(/^evt_[0-9a-z]{20}$/);
});

test("ids made in the same millisecond still differ", () => {
  const random = seededRandom(7);
  const ids = new Set(Array.from({ length: 1_000 }, () => newDeliveryId(random, 1_767_225_600_000)));
  expect(ids.size).toBe(1_000);
});
