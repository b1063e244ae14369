import { describe, expect, test } from "bun:test";
import { DatabaseRefusedError } from "../../src/store/errors.ts";
import { patiently, type Refusal } from "../../src/store/postgres/patience.ts";

// How a starting server waits for a PostgreSQL server that refuses it (docs/operations.md#connections),
// on an injected clock: the waits are told, never slept.

/** Bun's error for a server at max_connections, as the driver throws it. */
const tooMany = () =>
  Object.assign(new Error("sorry, too many clients already"), { name: "PostgresError", errno: "53300" });

function patience(timeoutMs = 10_000) {
  let now = 0;
  const refusals: Refusal[] = [];
  const slept: number[] = [];
  return {
    refusals,
    slept,
    patience: {
      database: "postgres://db.internal:5432/switchboard",
      timeoutMs,
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
      onRefused: (refusal: Refusal) => refusals.push(refusal),
    },
  };
}

describe("a refused connection at start", () => {
  test("is tried again after 0.25 s, then twice as long each time up to 5 s, each refusal told once with the server's words", async () => {
    const { patience: p, refusals, slept } = patience(60_000);
    let calls = 0;
    const opened = await patiently(async () => {
      if (++calls <= 7)
        throw calls % 2
          ? tooMany()
          : Object.assign(new Error("Failed to connect"), { code: "ERR_POSTGRES_CONNECTION_REFUSED" });
      return "store";
    }, p);
    expect(opened).toBe("store");
    expect(slept).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(refusals.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(refusals[0]!.reason).toBe("sorry, too many clients already (53300)");
    expect(refusals[1]!.reason).toBe("Failed to connect (ERR_POSTGRES_CONNECTION_REFUSED)");
  });

  test("gives up after the time allowed with one line naming the database, the last reason and what to change", async () => {
    const { patience: p, slept } = patience(3_000);
    const failed = await patiently(async () => Promise.reject(tooMany()), p).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(DatabaseRefusedError);
    const message = (failed as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain("postgres://db.internal:5432/switchboard refused every connection for 3 s");
    expect(message).toContain("the last: sorry, too many clients already (53300)");
    expect(message).toContain("DATABASE_POOL_SIZE");
    // The last wait is cut to what is left: it never waits past the time allowed.
    expect(slept.reduce((a, b) => a + b, 0)).toBe(3_000);
  });

  test("any other failure (a wrong password, a fault of the schema) is thrown at once, untouched", async () => {
    const { patience: p, refusals } = patience();
    const denied = Object.assign(new Error('password authentication failed for user "sb"'), { errno: "28P01" });
    expect(await patiently(async () => Promise.reject(denied), p).catch((e: unknown) => e)).toBe(denied);
    expect(refusals).toEqual([]);
  });
});
