import { describe, expect, test } from "bun:test";
import { appWithAccount } from "../webhooks/support.ts";

// Issue 26, item 10: CSRF rests on more than the cookie. /api/* refuses a state-changing request
// whose body is not JSON (the types a cross-site form can send) with 415, and a request a page of
// another site made without Origin (Sec-Fetch-Site: cross-site) with 403; the dashboard's own
// HTML forms, under /dashboard, keep working. Issue 34, item 10: a state-changing request without
// Origin that the browser marks cross-site or same-site (another origin of the site) is 403 on the
// API and on the dashboard's forms alike.

const my = appWithAccount();

const keys = async () => (await my.app.deps.query(`SELECT id FROM api_keys WHERE account_id = '${my.a.id}'`)).length;
const endpoints = async () =>
  (await my.app.deps.query(`SELECT id FROM endpoints WHERE account_id = '${my.a.id}'`)).length;

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: Record<string, string> };
  expect(body.error.code).toBe(code);
  expect(body.error.trace_id).toBe(response.headers.get("x-proxy-request-id")!);
}

describe("/api/* takes JSON only", () => {
  const endpoint = { url: "https://hooks.example.com/in", fields: "messages" };
  test.each([
    ["application/x-www-form-urlencoded", new URLSearchParams(endpoint).toString()],
    [
      "multipart/form-data; boundary=x",
      `--x\r\nContent-Disposition: form-data; name="url"\r\n\r\n${endpoint.url}\r\n--x--\r\n`,
    ],
    ["text/plain", JSON.stringify({ ...endpoint, fields: ["messages"] })],
  ])("a %s body is 415 and changes nothing", async (type, body) => {
    await expectError(
      await fetch(`${my.app.url}/api/endpoints`, {
        method: "POST",
        headers: { cookie: my.a.sessionCookie(), "content-type": type },
        body,
      }),
      415,
      "unsupported_media_type",
    );
    expect(await endpoints()).toBe(0);
  });

  test("so is a body with no type, a form with no fields, and a sign-in or sign-out posted as a form", async () => {
    await expectError(
      await fetch(`${my.app.url}/api/endpoints`, {
        method: "POST",
        headers: { cookie: my.a.sessionCookie() },
        body: new Uint8Array([123, 125]),
      }),
      415,
      "unsupported_media_type",
    );
    const ep = await my.a.endpoint("https://hooks.example.com/one");
    await expectError(
      await fetch(`${my.app.url}/api/endpoints/${ep.id}`, {
        method: "DELETE",
        headers: { cookie: my.a.sessionCookie(), "content-type": "application/x-www-form-urlencoded" },
        body: "",
      }),
      415,
      "unsupported_media_type",
    );
    expect(await endpoints()).toBe(1);
    const form = new URLSearchParams(my.a.user).toString();
    const signIn = await fetch(`${my.app.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    await expectError(signIn, 415, "unsupported_media_type");
    expect(signIn.headers.get("set-cookie")).toBeNull();
    await expectError(
      await fetch(`${my.app.url}/api/session`, {
        method: "DELETE",
        headers: { cookie: my.a.sessionCookie(), "content-type": "text/plain" },
        body: "x",
      }),
      415,
      "unsupported_media_type",
    );
    expect((await fetch(`${my.app.url}/api/numbers`, { headers: { cookie: my.a.sessionCookie() } })).status).toBe(200);
  });

  test("JSON (with a charset) and bodiless calls pass", async () => {
    const created = await fetch(`${my.app.url}/api/endpoints`, {
      method: "POST",
      headers: { cookie: my.a.sessionCookie(), "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ url: "https://hooks.example.com/two", fields: ["messages"] }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(
      (
        await fetch(`${my.app.url}/api/endpoints/${id}/rotate-secret`, {
          method: "POST",
          headers: { cookie: my.a.sessionCookie() },
        })
      ).status,
    ).toBe(200);
  });
});

describe("a request another site made", () => {
  test("without Origin but with Sec-Fetch-Site: cross-site is 403, whatever its method", async () => {
    const before = await endpoints();
    const post = await fetch(`${my.app.url}/api/endpoints`, {
      method: "POST",
      headers: { cookie: my.a.sessionCookie(), "content-type": "application/json", "sec-fetch-site": "cross-site" },
      body: JSON.stringify({ url: "https://hooks.example.com/three", fields: ["messages"] }),
    });
    await expectError(post, 403, "forbidden");
    expect(await endpoints()).toBe(before);
    await expectError(
      await fetch(`${my.app.url}/api/numbers`, {
        headers: { cookie: my.a.sessionCookie(), "sec-fetch-site": "cross-site" },
      }),
      403,
      "forbidden",
    );
  });

  test("from another Origin, or marked same-site without one, is 403; same-origin requests, and tools that send neither header, pass", async () => {
    const before = await endpoints();
    const post = (headers: Record<string, string>) =>
      fetch(`${my.app.url}/api/endpoints`, {
        method: "POST",
        headers: { cookie: my.a.sessionCookie(), "content-type": "application/json", ...headers },
        body: JSON.stringify({ url: `https://hooks.example.com/${crypto.randomUUID()}`, fields: ["messages"] }),
      });
    await expectError(await post({ origin: "https://evil.example", "sec-fetch-site": "cross-site" }), 403, "forbidden");
    expect(await endpoints()).toBe(before);
    expect((await post({ origin: my.app.url, "sec-fetch-site": "same-origin" })).status).toBe(201);
    // Another origin of the same site (a sibling subdomain's page): SameSite cookies go along.
    await expectError(await post({ "sec-fetch-site": "same-site" }), 403, "forbidden");
    expect(await endpoints()).toBe(before + 1);
    expect((await post({ "sec-fetch-site": "same-origin" })).status).toBe(201);
    expect((await post({})).status).toBe(201);
  });
});

describe("the dashboard's own forms", () => {
  test("post form bodies under /dashboard as before", async () => {
    const before = await keys();
    const created = await fetch(`${my.app.url}/dashboard/api-keys`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: my.a.sessionCookie(),
        origin: my.app.url,
        "sec-fetch-site": "same-origin",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ mode: "live", name: "from the form" }).toString(),
    });
    expect(created.status).toBe(201);
    expect(await keys()).toBe(before + 1);
    const signedIn = await fetch(`${my.app.url}/dashboard/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: my.app.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(my.a.user).toString(),
    });
    expect(signedIn.status).toBe(303);
  });
});

describe("a form post another site, or another origin of the site, made without Origin", () => {
  const post = (path: string, form: Record<string, string>, headers: Record<string, string>) =>
    fetch(`${my.app.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form).toString(),
    });

  test.each(["cross-site", "same-site"])(
    "marked %s is 403 on the dashboard's forms and changes nothing",
    async (site) => {
      const cookie = my.a.sessionCookie();
      const before = await keys();
      const created = await post(
        "/dashboard/api-keys",
        { mode: "live", name: "forged" },
        { cookie, "sec-fetch-site": site },
      );
      expect(created.status).toBe(403);
      expect(await created.text()).toContain("another site");
      expect(await keys()).toBe(before);
      const signIn = await post("/dashboard/sign-in", my.a.user, { "sec-fetch-site": site });
      expect(signIn.status).toBe(403);
      expect(signIn.headers.get("set-cookie")).toBeNull();
      expect((await post("/dashboard/sign-out", {}, { cookie, "sec-fetch-site": site })).status).toBe(403);
      expect((await fetch(`${my.app.url}/api/numbers`, { headers: { cookie } })).status).toBe(200);
    },
  );

  test("from the dashboard itself (same-origin), or from a tool that sends neither header, it passes", async () => {
    const before = await keys();
    const headers = { cookie: my.a.sessionCookie() };
    expect(
      (await post("/dashboard/api-keys", { mode: "live" }, { ...headers, "sec-fetch-site": "same-origin" })).status,
    ).toBe(201);
    expect((await post("/dashboard/api-keys", { mode: "live" }, headers)).status).toBe(201);
    expect(await keys()).toBe(before + 2);
    // A page opened from a link of another site is still shown (SameSite keeps the cookie back).
    expect(
      (await fetch(`${my.app.url}/dashboard/sign-in`, { headers: { "sec-fetch-site": "cross-site" } })).status,
    ).toBe(200);
  });
});
