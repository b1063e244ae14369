import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../src/http/json-depth.ts";
import { eventually } from "../support/eventually.ts";
import { admin, TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { appWithAccount } from "../webhooks/support.ts";

// Issue 26, item 7: JSON nested past MAX_JSON_DEPTH is a 400 before it is parsed and validated,
// on every API body (it overflowed the stack in validation: 500); and the access log records
// the status the client was sent (it logged Elysia's 422 for the validation that failed).

const my = appWithAccount();

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** The access log's line for the request an answer carries the id of. */
function logged(response: Response): Record<string, unknown> | undefined {
  const id = response.headers.get("x-proxy-request-id");
  return my.app.deps.logger.lines.find((line) => line.msg === "request" && line.request_id === id);
}

/** The access log's status for an answer: its line is written just after the answer is sent. */
async function loggedStatus(response: Response): Promise<unknown> {
  return eventually(async () => logged(response)?.status, response.status);
}

async function expectTooDeep(response: Response) {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: Record<string, string> };
  expect(body.error).toMatchObject({ code: "invalid_request", type: "InvalidRequestException" });
  expect(body.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  expect(body.error.trace_id).toBe(response.headers.get("x-proxy-request-id")!);
  expect(await loggedStatus(response)).toBe(400);
}

describe("JSON nesting", () => {
  test("500,000 nested arrays in an endpoint's fields (1 MB) is a 400, logged as 400", async () => {
    const body = `{"url":"http://127.0.0.1:9/x","fields":${nested(500_000)}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const response = await fetch(`${my.app.url}/api/endpoints`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: my.a.sessionCookie() },
      body,
    });
    await expectTooDeep(response);
    expect(await my.app.deps.query(`SELECT id FROM endpoints WHERE account_id = '${my.a.id}'`)).toEqual([]);
  });

  test("the operator API and the dashboard refuse it the same way, before authentication", async () => {
    const body = `{"name":${nested(MAX_JSON_DEPTH + 1)}}`;
    await expectTooDeep(
      await fetch(`${my.app.url}/admin/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        body,
      }),
    );
    await expectTooDeep(
      await fetch(`${my.app.url}/admin/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    await expectTooDeep(
      await fetch(`${my.app.url}/dashboard/api-keys`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: my.a.sessionCookie(), origin: my.app.url },
        body,
      }),
    );
  });

  test(`${MAX_JSON_DEPTH} levels pass on to validation; brackets inside strings do not count`, async () => {
    const deepest = await admin(my.app.url, "POST", "/admin/accounts", {
      name: JSON.parse(nested(MAX_JSON_DEPTH - 1)),
      email: "d@example.com",
    });
    expect(deepest.status).toBe(400);
    expect(((await deepest.json()) as { error: { message: string } }).error.message).toStartWith("body field name:");
    const brackets = await admin(my.app.url, "POST", "/admin/accounts", {
      name: "[{".repeat(100),
      email: "brackets@example.com",
    });
    expect(brackets.status).toBe(201);
  });
});

describe("the access log records the status sent", () => {
  test("a failed validation: 400 sent, 400 logged (not Elysia's 422)", async () => {
    const response = await admin(my.app.url, "POST", "/admin/accounts", {});
    expect(response.status).toBe(400);
    expect(await loggedStatus(response)).toBe(400);
  });

  test("a handler's own Response (an HTML page's 404, ingress's 401) is logged with its status", async () => {
    const page = await fetch(`${my.app.url}/dashboard/endpoints/ep_nope`, {
      headers: { cookie: my.a.sessionCookie() },
    });
    expect(page.status).toBe(404);
    expect(await loggedStatus(page)).toBe(404);
    const unsigned = await my.app.post("{}", null);
    expect(unsigned.status).toBe(401);
    expect(await loggedStatus(unsigned)).toBe(401);
  });

  test("a request refused before routing (a body over 1 MB declared) is logged under the id it was answered with", async () => {
    const response = await admin(my.app.url, "POST", "/admin/accounts", {
      name: "x".repeat(1024 * 1024),
      email: "big@example.com",
    });
    expect(response.status).toBe(413);
    expect(await loggedStatus(response)).toBe(413);
  });
});
