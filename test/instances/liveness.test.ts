import { describe, expect, test } from "bun:test";
import { Liveness } from "../../src/instances/liveness.ts";
import type { InstanceRecord } from "../../src/store/instances.ts";

// How one instance judges the others from the beats it reads each round (src/instances/liveness.ts).

const BEAT = 1_000;
const DEAD_AFTER = 5_000;
const record = (id: string, beats: number, beatAt = 0): InstanceRecord => ({ id, startedAt: 0, beatAt, beats });

describe("liveness", () => {
  test("another instance is taken for dead once its beats have not moved for the threshold, by this instance's rounds", () => {
    const liveness = new Liveness(DEAD_AFTER, BEAT);
    let beats = 0;
    for (let now = 0; now <= 10_000; now += BEAT) {
      const { live, stopped } = liveness.observe([record("a", ++beats), record("b", 7)], now);
      // a beats every round; b's count stopped at 7 from the first round on.
      expect(live.map((r) => r.id)).toEqual(now < DEAD_AFTER ? ["a", "b"] : ["a"]);
      expect(stopped).toEqual(now < DEAD_AFTER ? [] : [{ id: "b", beats: 7 }]);
    }
  });

  test("its clock is never compared with this one's: a beat stamped an hour off is still a beat", () => {
    const liveness = new Liveness(DEAD_AFTER, BEAT);
    for (let now = 0, beats = 1; now <= 10_000; now += BEAT, beats++) {
      const { stopped } = liveness.observe([record("ahead", beats, now + 3_600_000), record("behind", beats, 0)], now);
      expect(stopped).toEqual([]);
    }
  });

  test("a beat that moves again makes it live again, counted anew", () => {
    const liveness = new Liveness(DEAD_AFTER, BEAT);
    for (let now = 0; now <= 4_000; now += BEAT) liveness.observe([record("b", 3)], now);
    expect(liveness.observe([record("b", 4)], 5_000).stopped).toEqual([]);
    for (let now = 6_000; now < 10_000; now += BEAT)
      expect(liveness.observe([record("b", 4)], now).stopped).toEqual([]);
    expect(liveness.observe([record("b", 4)], 10_000).stopped).toEqual([{ id: "b", beats: 4 }]);
  });

  test("a round of its own that comes late proves nothing of the others: their counts start again", () => {
    const liveness = new Liveness(DEAD_AFTER, BEAT);
    for (let now = 0; now <= 4_000; now += BEAT) liveness.observe([record("b", 3)], now);
    // This instance was paused (or could not read the database) for 30 s: b did not move either.
    expect(liveness.observe([record("b", 3)], 34_000).stopped).toEqual([]);
    for (let now = 35_000; now < 39_000; now += BEAT)
      expect(liveness.observe([record("b", 3)], now).stopped).toEqual([]);
    expect(liveness.observe([record("b", 3)], 39_000).stopped).toEqual([{ id: "b", beats: 3 }]);
  });

  test("an instance seen for the first time is watched from then on, and one gone from the records is forgotten", () => {
    const liveness = new Liveness(DEAD_AFTER, BEAT);
    for (let now = 0; now < 4_000; now += BEAT) liveness.observe([], now);
    for (let now = 4_000; now < 9_000; now += BEAT)
      expect(liveness.observe([record("new", 1)], now).stopped).toEqual([]);
    expect(liveness.observe([record("new", 1)], 9_000).stopped).toEqual([{ id: "new", beats: 1 }]);
    expect(liveness.observe([], 10_000)).toEqual({ live: [], stopped: [] });
    expect(liveness.observe([record("new", 1)], 11_000).stopped).toEqual([]);
  });
});
