import { beforeAll, describe, expect, test } from "bun:test";
import { newRecovery } from "../../src/store/recoveries.ts";
import { testBackend } from "../support/backend.ts";
import { admin } from "../support/harness.ts";
import { appWithAccount } from "../webhooks/support.ts";
import type { ErrorEnvelope } from "../support/api-json.ts";

// Issue 26, item 5: a time past a JavaScript date's range (±8.64e15 ms) is refused with 400 naming
// the parameter wherever a time is read, and nothing is stored.

/** Past the range of a date, and the first millisecond past it. */
const FAR = "9999999999999999999999999999999999999";
const JUST_PAST = "8640000000000001";

const my = appWithAccount();
let endpointId: string;
beforeAll(async () => {
  endpointId = (await my.a.endpoint("http://127.0.0.1:9/hook")).id;
});

function expectRefused(answer: { status: number; body: ErrorEnvelope }, parameter: string) {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: "invalid_request", type: "InvalidRequestException" });
  expect(answer.body.error.message).toContain(parameter);
  expect(answer.body.error.message).toContain("ISO 8601");
}

describe("time parameters", () => {
  test.each([FAR, JUST_PAST])("the request log, delivery search and usage refuse %s", async (value) => {
    for (const name of ["from", "to"]) {
      expectRefused(await my.a.api("GET", `/api/requests?${name}=${value}`), name);
      expectRefused(await my.a.api("GET", `/api/deliveries?${name}=${value}`), name);
      const usage = await admin(
        my.app.url,
        "GET",
        `/admin/usage?from=${name === "from" ? value : "0"}${name === "to" ? `&to=${value}` : ""}`,
      );
      expectRefused({ status: usage.status, body: await usage.json() }, name);
    }
  });

  test("the edge of the range is still a time", async () => {
    expect((await my.a.api("GET", "/api/requests?from=0&to=8640000000000000")).status).toBe(200);
    expect((await my.a.api("GET", "/api/deliveries?to=8640000000000000")).status).toBe(200);
    expect((await admin(my.app.url, "GET", "/admin/usage?from=0&to=8640000000000000")).status).toBe(200);
  });

  test("usage with an empty from (required) is a 400 naming it", async () => {
    const usage = await admin(my.app.url, "GET", "/admin/usage?from=");
    expect(usage.status).toBe(400);
    expect(await usage.json()).toMatchObject({
      error: { code: "invalid_request", message: expect.stringContaining("from is required") },
    });
  });

  test("a recover since a time past the range is a 400 and stores nothing; the endpoint still reads", async () => {
    for (const since of [FAR, JUST_PAST]) {
      expectRefused(await my.a.api("POST", `/api/endpoints/${endpointId}/recover`, { since }), "since");
    }
    expect(await my.app.deps.query("SELECT id FROM recoveries")).toEqual([]);
    const latest = await my.a.api("GET", `/api/endpoints/${endpointId}/recover`);
    expect(latest.status).toBe(200);
    expect(latest.body).toBeNull();
    expect((await my.a.api("GET", `/api/endpoints/${endpointId}`)).status).toBe(200);
    expect(await my.a.page(`/dashboard/endpoints/${endpointId}`)).toContain("Recover");
  });

  test("a recover stored before times were checked, since a time past the range, reads as no time: its API and pages answer", async () => {
    // PostgreSQL's bigint holds the first millisecond past the range; SQLite also kept the far one (as a REAL).
    const stored = testBackend() === "sqlite" ? [JUST_PAST, FAR] : [JUST_PAST];
    const endpoint = (await my.a.endpoint("http://127.0.0.1:9/old")).id;
    const now = my.app.deps.clock.now();
    for (const [i, since] of stored.entries()) {
      const stale = newRecovery(
        { id: `rcv_old_${i}`, accountId: my.a.id, endpointId: endpoint, since: Number(since) },
        now + i,
      );
      await my.app.deps.store.recoveries.start({ ...stale, status: "done" });
      const latest = await my.a.api("GET", `/api/endpoints/${endpoint}/recover`);
      expect(latest.status).toBe(200);
      expect(latest.body).toMatchObject({ id: `rcv_old_${i}`, since: null, status: "done" });
      for (const path of [`/dashboard/endpoints/${endpoint}`, `/dashboard/endpoints/${endpoint}/recover`]) {
        const page = await fetch(`${my.app.url}${path}`, { headers: { cookie: my.a.sessionCookie() } });
        expect(page.status).toBe(200);
        const text = await page.text();
        expect(
          text.includes('for deliveries since <span class="muted">a time past the last date there is</span>'),
        ).toBe(true);
      }
    }
  });
});
