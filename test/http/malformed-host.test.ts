import { describe, expect, test } from "bun:test";
import { rawRequest } from "../support/raw-http.ts";
import { appWithAccount } from "../webhooks/support.ts";

// Issue 34, item 5: a request outside the proxy whose Host is missing or is no host answered 500
// and logged an error (the routes read `request.url`, which Bun then gives as no URL). It is a 400
// in the catalog's envelope, logged at info like any refused request; the proxy is unchanged.

const my = appWithAccount();

/** The ways a request line and Host can leave a request without a host. */
const HOSTLESS: [string, (target: string) => string][] = [
  ["Host: a b", (target) => `GET ${target} HTTP/1.1\r\nHost: a b`],
  ["Host: [::1", (target) => `GET ${target} HTTP/1.1\r\nHost: [::1`],
  ["an empty Host", (target) => `GET ${target} HTTP/1.1\r\nHost:`],
  ["Host: a:99999", (target) => `GET ${target} HTTP/1.1\r\nHost: a:99999`],
  ["HTTP/1.0 without Host", (target) => `GET ${target} HTTP/1.0`],
];

const TARGETS = ["/api/numbers", "/admin/accounts", "/dashboard", "/operator", "/healthz", "/metrics", "/docs"];

const errorLines = () => my.app.deps.logger.lines.filter((line) => line.level === "error");

describe("a request without a usable Host", () => {
  test.each(HOSTLESS)("%s is a 400 in the envelope on every route group, and logs no error", async (_, head) => {
    for (const target of TARGETS) {
      const r = await rawRequest(my.app.url, `${head(target)}\r\nCookie: ${my.a.sessionCookie()}`);
      expect({ target, status: r.status }).toEqual({ target, status: 400 });
      expect(JSON.parse(r.body).error).toMatchObject({
        code: "invalid_request",
        type: "InvalidRequestException",
        message: "The Host header is missing or is not a host; send the host (and port) the service was reached at.",
        trace_id: r.headers["x-proxy-request-id"],
      });
    }
    const event =
      "POST /webhooks/upstream HTTP/1.1\r\nHost: [::1\r\nContent-Type: application/json\r\nContent-Length: 2";
    expect((await rawRequest(my.app.url, event, "{}")).status).toBe(400);
    expect(errorLines()).toEqual([]);
  });

  test("HTTP/1.1 without Host is Bun's own bare 400, before the app", async () => {
    for (const target of TARGETS) {
      expect((await rawRequest(my.app.url, `GET ${target} HTTP/1.1`)).status).toBe(400);
    }
    expect(errorLines()).toEqual([]);
  });

  test("HTTP/1.0 with a Host, and HTTP/1.1 with one, are served as before", async () => {
    const host = new URL(my.app.url).host;
    const old = await rawRequest(
      my.app.url,
      `GET /api/numbers HTTP/1.0\r\nHost: ${host}\r\nCookie: ${my.a.sessionCookie()}`,
    );
    expect(old.status).toBe(200);
    expect((await rawRequest(my.app.url, `GET /healthz HTTP/1.0\r\nHost: ${host}`)).status).toBe(200);
    expect((await rawRequest(my.app.url, `GET /dashboard HTTP/1.1\r\nHost: ${host}`)).status).toBe(303);
  });

  test("the proxy judges such a call by its key, as before", async () => {
    const r = await rawRequest(my.app.url, "GET /v21.0/me HTTP/1.1\r\nHost: a b");
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).error.code).toBe(1001);
    expect(errorLines()).toEqual([]);
  });
});
