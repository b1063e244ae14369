import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { admin, startApp, testDeps, TEST_ADMIN_TOKEN } from "../support/harness.ts";

let deps: Awaited<ReturnType<typeof testDeps>>;
let server: ReturnType<typeof startApp>;
let url: string;

beforeEach(async () => {
  deps = await testDeps();
  server = startApp(deps);
  url = server.url;
});
afterEach(async () => {
  await server.stop();
  await deps.cleanup();
});

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

async function expectError(response: Response, status: number, code: string): Promise<string> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: { code: string; type: string; message: string; trace_id: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.trace_id).toBe(response.headers.get("x-proxy-request-id")!);
  expect(typeof body.error.message).toBe("string");
  return body.error.message;
}

async function newAccount(extra: Record<string, unknown> = {}): Promise<string> {
  const response = await admin(url, "POST", "/admin/accounts", { name: "Acme", email: "ops@acme.example", ...extra });
  expect(response.status).toBe(201);
  return (await json(response)).id as string;
}

async function newWaba(accountId: string, wabaId = "1001", extra: Record<string, unknown> = {}): Promise<void> {
  const response = await admin(url, "POST", `/admin/accounts/${accountId}/wabas`, {
    waba_id: wabaId,
    access_token: "EAAG-token",
    ...extra,
  });
  expect(response.status).toBe(201);
}

describe("admin token", () => {
  const calls: [string, string][] = [
    ["POST", "/admin/accounts"],
    ["PATCH", "/admin/accounts/acc_x"],
    ["POST", "/admin/accounts/acc_x/users"],
    ["POST", "/admin/accounts/acc_x/api-keys"],
    ["DELETE", "/admin/api-keys/key_x"],
    ["POST", "/admin/accounts/acc_x/wabas"],
    ["PATCH", "/admin/wabas/1"],
    ["POST", "/admin/accounts/acc_x/numbers"],
    ["PATCH", "/admin/numbers/1"],
    ["POST", "/admin/numbers/1/sync"],
    ["GET", "/admin/numbers/1"],
    ["GET", "/admin/wabas/1"],
  ];
  test.each(calls)("%s %s without a token is 401", async (method, path) => {
    await expectError(await fetch(`${url}${path}`, { method }), 401, "unauthorized");
  });
  test.each(calls)("%s %s with a wrong token is 401", async (method, path) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` },
    });
    await expectError(response, 401, "unauthorized");
  });
  test("a Basic credential is not a bearer token", async () => {
    const response = await fetch(`${url}/admin/wabas/1`, { headers: { authorization: `Basic ${TEST_ADMIN_TOKEN}` } });
    await expectError(response, 401, "unauthorized");
  });
  test("without ADMIN_TOKEN the operator API is off", async () => {
    const off = await testDeps({ env: { ADMIN_TOKEN: "" } });
    const offServer = startApp(off);
    try {
      const response = await fetch(`${offServer.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer " },
      });
      expect(await expectError(response, 404, "not_found")).toContain("ADMIN_TOKEN");
    } finally {
      await offServer.stop();
      await off.cleanup();
    }
  });
});

describe("accounts", () => {
  test("create with defaults, read, and patch every field", async () => {
    const created = await admin(url, "POST", "/admin/accounts", { name: "Acme", email: "ops@acme.example" });
    expect(created.status).toBe(201);
    const account = await json(created);
    expect(account).toMatchObject({
      name: "Acme",
      email: "ops@acme.example",
      billing_status: "active",
      retention: "24h",
      max_numbers: null,
    });
    expect(account.id).toMatch(/^acc_/);

    const patched = await admin(url, "PATCH", `/admin/accounts/${account.id}`, {
      name: "Acme Ltd",
      email: "billing@acme.example",
      billing_status: "overdue",
      retention: "7d",
      max_numbers: 3,
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({
      id: account.id,
      name: "Acme Ltd",
      billing_status: "overdue",
      retention: "7d",
      max_numbers: 3,
    });
    expect(await json(await admin(url, "GET", `/admin/accounts/${account.id}`))).toMatchObject({
      name: "Acme Ltd",
      max_numbers: 3,
    });

    const uncapped = await admin(url, "PATCH", `/admin/accounts/${account.id}`, { max_numbers: null });
    expect((await json(uncapped)).max_numbers).toBeNull();
  });

  test.each([
    [{ email: "ops@acme.example" }],
    [{ name: "Acme", email: "not-an-email" }],
    [{ name: "Acme", email: "ops@acme.example", billing_status: "free" }],
    [{ name: "Acme", email: "ops@acme.example", retention: "30d" }],
    [{ name: "Acme", email: "ops@acme.example", max_numbers: -1 }],
    [{ name: "Acme", email: "ops@acme.example", max_numbers: 2 ** 31 }],
    [{ name: "Acme", email: "ops@acme.example", surprise: true }],
  ])("create rejects %j with 400 invalid_request", async (body) => {
    await expectError(await admin(url, "POST", "/admin/accounts", body), 400, "invalid_request");
  });

  test("a path no route serves is 404 not_found in the envelope, its trace id in X-Proxy-Request-Id", async () => {
    await expectError(await admin(url, "GET", "/admin/no-such-thing"), 404, "not_found");
    await expectError(await fetch(`${url}/api/no-such-thing`), 404, "not_found");
  });

  test("a body that is not JSON is 400", async () => {
    const response = await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: "{nope",
    });
    await expectError(response, 400, "invalid_request");
  });

  test("a NUL character anywhere in a body is 400, on every backend (PostgreSQL's text holds none: it answered 500)", async () => {
    for (const body of [
      { name: "Ac\u0000me", email: "ops@acme.example" },
      { name: "Acme", email: "ops@acme.example", "x\u0000": 1 },
    ]) {
      expect(await expectError(await admin(url, "POST", "/admin/accounts", body), 400, "invalid_request")).toContain(
        "NUL",
      );
    }
    const id = await newAccount();
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/api-keys`, { mode: "live", name: ["a", ["b\u0000"]] }),
      400,
      "invalid_request",
    );
    expect((await admin(url, "GET", `/admin/accounts/${id}`)).status).toBe(200);
  });

  test("patch validates and 404s unknown ids", async () => {
    const id = await newAccount();
    await expectError(
      await admin(url, "PATCH", `/admin/accounts/${id}`, { billing_status: "gold" }),
      400,
      "invalid_request",
    );
    await expectError(await admin(url, "PATCH", "/admin/accounts/acc_missing", { name: "x" }), 404, "not_found");
    await expectError(await admin(url, "GET", "/admin/accounts/acc_missing"), 404, "not_found");
  });
});

describe("dashboard users", () => {
  test("create a login; the password is never echoed", async () => {
    const id = await newAccount();
    const response = await admin(url, "POST", `/admin/accounts/${id}/users`, {
      email: "Me@Acme.example",
      password: "correct horse battery",
    });
    expect(response.status).toBe(201);
    const text = await response.text();
    expect(text).not.toContain("correct horse");
    expect(JSON.parse(text)).toMatchObject({ account_id: id, email: "me@acme.example" });
    const stored = await deps.store.users.byEmail("me@acme.example");
    expect(stored!.passwordHash).toStartWith("$argon2id$");
  });
  test("validation, unknown account, duplicate email", async () => {
    const id = await newAccount();
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/users`, { email: "a@b.example", password: "short" }),
      400,
      "invalid_request",
    );
    await expectError(
      await admin(url, "POST", "/admin/accounts/acc_missing/users", {
        email: "a@b.example",
        password: "long enough pw",
      }),
      404,
      "not_found",
    );
    expect(
      (await admin(url, "POST", `/admin/accounts/${id}/users`, { email: "a@b.example", password: "long enough pw" }))
        .status,
    ).toBe(201);
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/users`, { email: "A@b.example", password: "long enough pw" }),
      409,
      "conflict",
    );
  });
  test("one email created five times at once: one 201, the others 409 conflict (not a 500 from the unique index)", async () => {
    const id = await newAccount();
    const create = () =>
      admin(url, "POST", `/admin/accounts/${id}/users`, { email: "race@b.example", password: "long enough pw" });
    const answers = await Promise.all(Array.from({ length: 5 }, create));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of answers.filter((r) => r.status === 409)) await expectError(r, 409, "conflict");
  });
  test("a body that is a JSON string is refused as not an object, and max_numbers takes a JSON integer only", async () => {
    // Elysia's t.Integer coerced strings, walking a string body character by character (6 s for 1 MB).
    const response = await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify("x".repeat(100_000)),
    });
    expect(await expectError(response, 400, "invalid_request")).toBe("body: must be an object");
    const message = await expectError(
      await admin(url, "POST", "/admin/accounts", { name: "Acme", email: "ops@acme.example", max_numbers: "3" }),
      400,
      "invalid_request",
    );
    expect(message).toStartWith("body field max_numbers:");
  });
});

describe("API keys", () => {
  test("create live and test keys, shown once; revoke", async () => {
    const id = await newAccount();
    const live = await json(
      await admin(url, "POST", `/admin/accounts/${id}/api-keys`, { mode: "live", name: "server" }),
    );
    expect(live.key).toMatch(/^px_live_[A-Za-z0-9_-]{32}$/);
    expect(live).toMatchObject({ mode: "live", name: "server", revoked_at: null });
    const test_ = await json(await admin(url, "POST", `/admin/accounts/${id}/api-keys`, { mode: "test" }));
    expect(test_.key).toMatch(/^px_test_/);
    expect(test_.prefix).toBe((test_.key as string).slice(0, 12));

    const revoked = await admin(url, "DELETE", `/admin/api-keys/${live.id}`);
    expect(revoked.status).toBe(204);
    expect(deps.store.directory.apiKey(live.id as string)!.revokedAt).toBe(deps.clock.now());
    // Revoking twice is harmless.
    expect((await admin(url, "DELETE", `/admin/api-keys/${live.id}`)).status).toBe(204);
  });
  test("validation and unknown ids", async () => {
    const id = await newAccount();
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/api-keys`, { mode: "prod" }),
      400,
      "invalid_request",
    );
    await expectError(
      await admin(url, "POST", "/admin/accounts/acc_missing/api-keys", { mode: "live" }),
      404,
      "not_found",
    );
    await expectError(await admin(url, "DELETE", "/admin/api-keys/key_missing"), 404, "not_found");
  });
});

describe("WABAs", () => {
  test("connect, read (never the token), change state and token", async () => {
    const id = await newAccount();
    const created = await admin(url, "POST", `/admin/accounts/${id}/wabas`, {
      waba_id: "1001",
      access_token: "EAAG-secret",
      app_secret: "byo-secret",
    });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toContain("EAAG-secret");
    expect(text).not.toContain("byo-secret");
    expect(JSON.parse(text)).toMatchObject({ waba_id: "1001", account_id: id, status: "connected", byo_app: true });

    const patched = await admin(url, "PATCH", "/admin/wabas/1001", { status: "token_revoked" });
    expect(await json(patched)).toMatchObject({ status: "token_revoked" });
    await admin(url, "PATCH", "/admin/wabas/1001", { status: "connected", access_token: "EAAG-new" });
    expect(deps.store.directory.waba("1001")).toMatchObject({
      status: "connected",
      accessToken: "EAAG-new",
      appSecret: "byo-secret",
    });
    expect(await json(await admin(url, "GET", "/admin/wabas/1001"))).toMatchObject({ status: "connected" });
  });
  test("validation, unknown ids and duplicates", async () => {
    const id = await newAccount();
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/wabas`, { waba_id: "10 01", access_token: "t" }),
      400,
      "invalid_request",
    );
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/wabas`, { waba_id: "1001" }),
      400,
      "invalid_request",
    );
    await expectError(
      await admin(url, "POST", "/admin/accounts/acc_missing/wabas", { waba_id: "1001", access_token: "t" }),
      404,
      "not_found",
    );
    await newWaba(id);
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/wabas`, { waba_id: "1001", access_token: "t" }),
      409,
      "conflict",
    );
    await expectError(await admin(url, "PATCH", "/admin/wabas/1001", { status: "gone" }), 400, "invalid_request");
    await expectError(await admin(url, "PATCH", "/admin/wabas/9999", { status: "connected" }), 404, "not_found");
    await expectError(await admin(url, "GET", "/admin/wabas/9999"), 404, "not_found");
  });
  test("one WABA id connected eight times at once, to two accounts: one 201 and its token kept, the others 409 conflict (not a 500 from the unique index)", async () => {
    const accounts = [await newAccount(), await newAccount()];
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        admin(url, "POST", `/admin/accounts/${accounts[i % 2]}/wabas`, {
          waba_id: "1001",
          access_token: `EAAG-token-${i}`,
        }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const winner = answers.findIndex((r) => r.status === 201);
    for (const r of answers.filter((r) => r.status === 409))
      expect(await expectError(r, 409, "conflict")).toBe("WABA 1001 is already connected.");
    expect(deps.store.directory.waba("1001")).toMatchObject({
      accountId: accounts[winner % 2],
      accessToken: `EAAG-token-${winner}`,
    });
  });
});

describe("numbers", () => {
  test("connect while upstream is unreachable: standard level and the reason kept", async () => {
    const id = await newAccount();
    await newWaba(id);
    const created = await admin(url, "POST", `/admin/accounts/${id}/numbers`, {
      phone_number_id: "2001",
      waba_id: "1001",
      kind: "byo",
    });
    expect(created.status).toBe(201);
    const number = await json(created);
    expect(number).toMatchObject({
      phone_number_id: "2001",
      waba_id: "1001",
      kind: "byo",
      status: "connected",
      throughput_level: "STANDARD",
      synced_at: null,
    });
    expect(number.sync_error).toContain("could not be reached");
    expect(await json(await admin(url, "GET", "/admin/numbers/2001"))).toMatchObject({
      status: "connected",
      throughput_level: "STANDARD",
      kind: "byo",
    });

    const patched = await admin(url, "PATCH", "/admin/numbers/2001", { status: "flagged" });
    expect(await json(patched)).toMatchObject({ status: "flagged" });
    const synced = await admin(url, "POST", "/admin/numbers/2001/sync");
    expect(synced.status).toBe(200);
    expect((await json(synced)).sync_error).toContain("could not be reached");
  });

  test("the plan's allowance is enforced with 409 plan_limit", async () => {
    const id = await newAccount({ max_numbers: 1 });
    await newWaba(id);
    expect(
      (
        await admin(url, "POST", `/admin/accounts/${id}/numbers`, {
          phone_number_id: "2001",
          waba_id: "1001",
          kind: "embedded",
        })
      ).status,
    ).toBe(201);
    await expectError(
      await admin(url, "POST", `/admin/accounts/${id}/numbers`, {
        phone_number_id: "2002",
        waba_id: "1001",
        kind: "embedded",
      }),
      409,
      "plan_limit",
    );
    // A disconnected number frees its place.
    await admin(url, "PATCH", "/admin/numbers/2001", { status: "disconnected" });
    expect(
      (
        await admin(url, "POST", `/admin/accounts/${id}/numbers`, {
          phone_number_id: "2002",
          waba_id: "1001",
          kind: "embedded",
        })
      ).status,
    ).toBe(201);
  });

  test("validation, unknown ids, foreign WABAs and duplicates", async () => {
    const id = await newAccount();
    const other = await newAccount();
    await newWaba(id);
    await newWaba(other, "1002");
    const add = (accountId: string, body: Record<string, unknown>) =>
      admin(url, "POST", `/admin/accounts/${accountId}/numbers`, body);
    await expectError(
      await add(id, { phone_number_id: "2001", waba_id: "1001", kind: "personal" }),
      400,
      "invalid_request",
    );
    await expectError(await add(id, { phone_number_id: "2001", kind: "byo" }), 400, "invalid_request");
    await expectError(
      await add("acc_missing", { phone_number_id: "2001", waba_id: "1001", kind: "byo" }),
      404,
      "not_found",
    );
    await expectError(await add(id, { phone_number_id: "2001", waba_id: "1002", kind: "byo" }), 400, "invalid_request");
    expect((await add(id, { phone_number_id: "2001", waba_id: "1001", kind: "byo" })).status).toBe(201);
    await expectError(await add(id, { phone_number_id: "2001", waba_id: "1001", kind: "byo" }), 409, "conflict");
    await expectError(await admin(url, "PATCH", "/admin/numbers/2001", { status: "paused" }), 400, "invalid_request");
    await expectError(await admin(url, "PATCH", "/admin/numbers/9999", { status: "connected" }), 404, "not_found");
    await expectError(await admin(url, "POST", "/admin/numbers/9999/sync"), 404, "not_found");
    await expectError(await admin(url, "GET", "/admin/numbers/9999"), 404, "not_found");
  });
  test("one number connected eight times at once, to two accounts: one 201, the others 409 conflict (not a 500 from the unique index)", async () => {
    const accounts = [await newAccount(), await newAccount()];
    await newWaba(accounts[0]!, "1001");
    await newWaba(accounts[1]!, "1002");
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        admin(url, "POST", `/admin/accounts/${accounts[i % 2]}/numbers`, {
          phone_number_id: "2001",
          waba_id: i % 2 ? "1002" : "1001",
          kind: "byo",
        }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const winner = answers.findIndex((r) => r.status === 201);
    for (const r of answers.filter((r) => r.status === 409))
      expect(await expectError(r, 409, "conflict")).toBe("Number 2001 is already connected.");
    expect(deps.store.directory.number("2001")).toMatchObject({ accountId: accounts[winner % 2] });
  });
});
