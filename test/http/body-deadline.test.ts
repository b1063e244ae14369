import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { rawRequest } from "../support/raw-http.ts";
import { relayApp, type RelayApp } from "../webhooks/support.ts";

// Issue 26, item 8: a body that has not arrived whole within REQUEST_BODY_TIMEOUT_MS (30 s by
// default; 300 ms here) is answered 408 in the catalog's envelope, its connection is closed and
// it is counted in /metrics, however steadily its bytes trickle in. The deadline runs on the
// injected clock: the tests move it once the server has set it.

const DEADLINE_MS = 300;
let app: RelayApp;
beforeAll(async () => {
  app = await relayApp({ env: { REQUEST_BODY_TIMEOUT_MS: String(DEADLINE_MS), ADMIN_TOKEN: "t" } });
});
afterAll(() => app.close());

/**
 * A body that trickles in (a byte every 20 ms) while the clock stands still; once the server has
 * set its deadline, the clock is moved to 1 ms short of it (no answer yet), then past it.
 */
async function trickle(head: string) {
  let answered = false;
  const answer = rawRequest(app.url, head, "", { dripEveryMs: 20 }).finally(() => (answered = true));
  expect(await eventually(async () => app.deps.clock.waiting, 1)).toBe(1);
  app.deps.clock.advance(DEADLINE_MS - 1);
  expect(app.deps.clock.waiting).toBe(1);
  expect(answered).toBe(false);
  app.deps.clock.advance(1);
  return answer;
}

describe("the body deadline", () => {
  test.each([
    [
      "an upstream event",
      "webhooks",
      "POST /webhooks/upstream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=00\r\nContent-Length: 5000000",
    ],
    [
      "a chunked upstream event",
      "webhooks",
      "POST /webhooks/upstream HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000",
    ],
    [
      "a sign-in",
      "api",
      "POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000",
    ],
    [
      "an operator call",
      "admin",
      "POST /admin/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Type: application/json\r\nContent-Length: 5000",
    ],
    [
      "a dashboard form",
      "dashboard",
      "POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000",
    ],
  ])("%s whose body trickles is 408 at the deadline and its connection closed", async (_, group, head) => {
    const before = await timeouts(group);
    const r = await trickle(head);
    expect(r.status).toBe(408);
    expect(r.headers.connection).toBe("close");
    const envelope = JSON.parse(r.body) as { error: Record<string, string> };
    expect(envelope.error).toMatchObject({
      code: "body_timeout",
      type: "InvalidRequestException",
      message: "The request body did not arrive whole within 0.3 s.",
    });
    expect(envelope.error.trace_id).toBe(r.headers["x-proxy-request-id"]!);
    expect(await timeouts(group)).toBe(before + 1);
  });

  test("a GET that declares a body (Bun gives it none to read) is a 400 and its connection closed", async () => {
    for (const head of [
      "GET /api/numbers HTTP/1.1\r\nHost: x\r\nContent-Length: 5000",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked",
    ]) {
      // Answered at once: the clock does not move.
      const r = await rawRequest(app.url, head, "", { dripEveryMs: 20 });
      expect(r.status).toBe(400);
      expect(r.headers.connection).toBe("close");
      expect(JSON.parse(r.body).error).toMatchObject({
        code: "invalid_request",
        message: "A GET or HEAD request carries no body; send it without one.",
      });
    }
  });

  test("a body that arrives in time is served as before", async () => {
    const event = JSON.stringify({ object: "whatsapp_business_account", entry: [] });
    const unsigned = await rawRequest(
      app.url,
      `POST /webhooks/upstream HTTP/1.1\r\nHost: x\r\nContent-Length: ${event.length}`,
      event,
    );
    expect(unsigned.status).toBe(401);
    const signIn = JSON.stringify({ email: "nobody@example.com", password: "x" });
    const wrong = await rawRequest(
      app.url,
      `POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${signIn.length}`,
      signIn,
    );
    expect(wrong.status).toBe(401);
  });
});

/** switchboard_http_body_timeouts_total of a route group, from /metrics. */
async function timeouts(group: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`switchboard_http_body_timeouts_total{group="${group}"}`));
  return line ? Number(line.split(" ")[1]) : 0;
}
