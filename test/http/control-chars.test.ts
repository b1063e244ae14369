import { describe, expect, test } from "bun:test";
import { admin } from "../support/harness.ts";
import { appWithAccount } from "../webhooks/support.ts";
import type { ErrorEnvelope } from "../../src/errors/catalog.ts";

// Issue 26, item 6: a control character (NUL, the other C0 characters, DEL) in a query or path
// parameter is a 400 naming the parameter, on every backend (PostgreSQL answered 500 to a NUL);
// in a body string, a 400 naming the field. Validation messages say which part of the request
// was wrong.

const my = appWithAccount();

function expectInvalid(answer: { status: number; body: ErrorEnvelope }, words: string) {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: "invalid_request", type: "InvalidRequestException" });
  expect(answer.body.error.message).toContain(words);
}

describe("control characters", () => {
  test.each([
    ["/api/requests?number=1%00", "query parameter number"],
    ["/api/requests/req_%00", "path parameter id"],
    ["/api/messages/wamid.%00x", "path parameter message_id"],
    ["/api/deliveries?field=mess%00ages", "query parameter field"],
    ["/api/deliveries?number=a%01b", "query parameter number"],
    ["/api/deliveries?message_id=wamid.%1F", "query parameter message_id"],
    ["/api/deliveries?number=a%7F", "query parameter number"],
    ["/api/deliveries?number=a%0Ab", "query parameter number"],
    ["/api/deliveries/dlv_%00", "path parameter id"],
    ["/api/deliveries?nu%00mber=1", "query parameter"],
  ])("%s is a 400 naming the parameter", async (path, words) => {
    const answer = await my.a.api<ErrorEnvelope>("GET", path);
    expectInvalid(answer, words);
    expect(answer.body.error.message).toContain("control character");
  });

  test("the operator API and the dashboard refuse them the same way", async () => {
    const usage = await admin(my.app.url, "GET", "/admin/usage?from=0&account_id=acc_%00");
    expectInvalid({ status: usage.status, body: await usage.json() }, "query parameter account_id");
    const wabas = await admin(my.app.url, "GET", "/admin/wabas/1%002");
    expectInvalid({ status: wabas.status, body: await wabas.json() }, "path parameter");
    const page = await fetch(`${my.app.url}/dashboard/requests?number=1%00`);
    expect(page.status).toBe(400);
  });

  test("a body string with a control character is a 400 naming its field; tab and new line pass", async () => {
    const create = (name: string) => admin(my.app.url, "POST", "/admin/accounts", { name, email: "ctl@example.com" });
    const refused = await create("Acme\u0000");
    expectInvalid({ status: refused.status, body: await refused.json() }, "body field name");
    const nested = await my.a.api<ErrorEnvelope>("POST", "/api/endpoints", {
      url: "http://127.0.0.1:9/x",
      fields: ["messages", "mess\u0007ages"],
    });
    expectInvalid(nested, "body field fields[1]");
    expect((await create("Acme\tTabs\nand lines")).status).toBe(201);
    expect(await my.app.deps.query("SELECT name FROM accounts WHERE email = 'ctl@example.com'")).toEqual([
      { name: "Acme\tTabs\nand lines" },
    ]);
  });

  test("a form body to the dashboard with a control character is a 400", async () => {
    const form = await fetch(`${my.app.url}/dashboard/api-keys`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: my.a.sessionCookie(),
        origin: my.app.url,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "mode=live&name=key%00one",
    });
    expect(form.status).toBe(400);
    expect(await my.app.deps.query(`SELECT id FROM api_keys WHERE account_id = '${my.a.id}'`)).toEqual([]);
  });
});

describe("validation messages say where the problem is", () => {
  test("a query parameter is named as a query parameter", async () => {
    const limit = await my.a.api<ErrorEnvelope>("GET", "/api/deliveries?limit=abc");
    expectInvalid(limit, "query parameter limit");
    expect(limit.body.error.message).not.toContain("body");
    expectInvalid(await my.a.api("GET", "/api/requests?colour=red"), "query parameter colour");
    // Elysia's numeric types report the value alone; it is found by where it was.
    for (const [path, name] of [
      ["/api/requests?error_code=1e400", "error_code"],
      ["/api/requests?limit=Infinity", "limit"],
      ["/api/deliveries?last_status=1e3", "last_status"],
    ]) {
      const answer = await my.a.api<ErrorEnvelope>("GET", path!);
      expectInvalid(answer, `query parameter ${name}`);
      expect(answer.body.error.message).not.toContain("body");
    }
  });

  test("a body field is named as a body field", async () => {
    expectInvalid(await my.a.api("POST", "/api/endpoints", { url: 42, fields: ["messages"] }), "body field url");
    expectInvalid(await my.a.api("PATCH", "/api/settings", { retention: "1y" }), "body field retention");
  });
});
