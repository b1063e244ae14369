import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SESSION_TTL_MS } from "../../src/auth/sign-in.ts";
import { SIGN_IN_WINDOW_MS } from "../../src/auth/throttle.ts";
import { admin, TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { routeTable, type Route } from "../isolation/route-table.ts";
import { consoleWorld, operatorCookie, type ConsoleWorld, type TestOperator } from "./support.ts";

// Issue 29 (docs/operations.md#the-operator-console): operators sign in with their own cookie and
// sessions, under the dashboard's throttling and CSRF rules; an account user's session opens no /operator route and an operator's
// no /dashboard or /api route; /admin/* takes an operator session beside ADMIN_TOKEN.

let world: ConsoleWorld;
let op: TestOperator;
/** A new session of `op` (tests move the clock past sessions' 12 hours). */
const opCookie = () => operatorCookie(world.url, op.email, op.password);
let acme: TestAccount;

beforeAll(async () => {
  world = await consoleWorld();
  op = await world.operator("ops@service.example", "operator password 1");
  acme = await createAccount(world.url, "Acme");
});
afterAll(() => world.close());

const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
  fetch(`${world.url}/operator/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email, password }),
  });

const errorCode = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

describe("operator sessions", () => {
  test("POST /operator/session sets its own HttpOnly, SameSite=Strict cookie; DELETE ends the session", async () => {
    const res = await signIn(op.email, op.password);
    expect(res.status).toBe(204);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^sb_operator=[A-Za-z0-9_-]{43}; /);
    for (const part of ["HttpOnly", "SameSite=Strict", "Path=/", `Max-Age=${SESSION_TTL_MS / 1000}`])
      expect(setCookie).toContain(part);
    const cookie = setCookie.split(";")[0] ?? "";
    expect((await world.get(cookie, "/operator")).status).toBe(200);

    const out = await fetch(`${world.url}/operator/session`, { method: "DELETE", headers: { cookie } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toBe("sb_operator=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    const after = await world.get(cookie, "/operator");
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toBe("/operator/sign-in?next=%2Foperator");
  });

  test("a session lasts 12 hours", async () => {
    const cookie = await operatorCookie(world.url, op.email, op.password);
    world.deps.clock.advance(SESSION_TTL_MS - 1);
    expect((await world.get(cookie, "/operator/accounts")).status).toBe(200);
    world.deps.clock.advance(1);
    expect((await world.get(cookie, "/operator/accounts")).status).toBe(303);
  });

  test("the sign-in form signs in and goes back to the page asked for, never elsewhere", async () => {
    const form = (fields: Record<string, string>) =>
      fetch(`${world.url}/operator/sign-in`, {
        method: "POST",
        headers: { origin: world.url, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
    const page = await fetch(`${world.url}/operator/sign-in?next=%2Foperator%2Fnumbers`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('action="/operator/sign-in"');
    const ok = await form({ email: op.email, password: op.password, next: "/operator/numbers" });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/operator/numbers");
    expect(ok.headers.get("set-cookie")).toStartWith("sb_operator=");
    for (const next of ["//evil.example/x", "https://evil.example/", "/dashboard", "/\\evil.example"]) {
      expect((await form({ email: op.email, password: op.password, next })).headers.get("location")).toBe("/operator");
    }
    const wrong = await form({ email: op.email, password: "wrong password" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong email or password.");
    // Five wrong passwords lock; one was just used above: forget it by a correct sign-in.
    await form({ email: op.email, password: op.password });
  });
});

describe("failed operator sign-ins", () => {
  test("are refused after five, for known and unknown emails alike, apart from the dashboard's", async () => {
    // A dashboard user with the operator's email: its failures and the operator's are counted apart.
    const twin = await world.operator("twin@acme.example", "operator password 2");
    expect(
      (
        await admin(world.url, "POST", `/admin/accounts/${acme.id}/users`, {
          email: twin.email,
          password: "user password 22",
        })
      ).status,
    ).toBe(201);
    for (const email of [twin.email, "nobody@ops.example"]) {
      for (let i = 0; i < 5; i++) expect((await signIn(email, "wrong password")).status).toBe(401);
      const locked = await signIn(email, email === twin.email ? twin.password : "x");
      expect(locked.status).toBe(429);
      expect(await errorCode(locked)).toBe("too_many_attempts");
    }
    // The dashboard's sign-in of the same email is not locked by the operator's failures.
    expect(await signInCookie(world.url, { id: acme.id, email: twin.email, password: "user password 22" })).toStartWith(
      "sb_session=",
    );
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    expect((await signIn(twin.email, twin.password)).status).toBe(204);
  });
});

describe("CSRF", () => {
  test("another Origin, or a cross-site request without one, is refused: sign-in, console forms, /admin with the cookie", async () => {
    expect((await signIn(op.email, op.password, { origin: "https://evil.example" })).status).toBe(403);
    expect((await signIn(op.email, op.password, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await signIn(op.email, op.password, { "sec-fetch-site": "same-site" })).status).toBe(403);
    const textPlain = await fetch(`${world.url}/operator/session`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ email: op.email, password: op.password }),
    });
    expect(textPlain.status).toBe(415);

    const cookie = await opCookie();
    const billing = `/operator/accounts/${acme.id}/billing`;
    const evil = await fetch(`${world.url}${billing}`, {
      method: "POST",
      headers: {
        cookie,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "billing_status=suspended",
      redirect: "manual",
    });
    expect(evil.status).toBe(403);
    // Issue 34, item 10: without Origin, a post the browser marks as another site's, or another
    // origin's of the same site, is refused as well.
    for (const site of ["cross-site", "same-site"]) {
      const forged = await fetch(`${world.url}${billing}`, {
        method: "POST",
        headers: { cookie, "sec-fetch-site": site, "content-type": "application/x-www-form-urlencoded" },
        body: "billing_status=suspended",
        redirect: "manual",
      });
      expect({ site, status: forged.status }).toEqual({ site, status: 403 });
    }
    const plain = await fetch(`${world.url}${billing}`, {
      method: "POST",
      headers: { cookie, origin: world.url, "content-type": "text/plain" },
      body: "billing_status=suspended",
      redirect: "manual",
    });
    expect(plain.status).toBe(415);
    expect(world.deps.store.directory.account(acme.id)?.billingStatus).toBe("active");
    // From the console itself, the same post goes through.
    const own = await world.post(cookie, billing, { billing_status: "overdue" });
    expect(own.status).toBe(303);
    expect(world.deps.store.directory.account(acme.id)?.billingStatus).toBe("overdue");
    await world.post(cookie, billing, { billing_status: "active" });

    const adminCall = (headers: Record<string, string>, body: unknown = { name: "Evil", email: "e@evil.example" }) =>
      fetch(`${world.url}/admin/accounts`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const accounts = () => world.deps.store.directory.accounts().length;
    const before = accounts();
    expect((await adminCall({ origin: "https://evil.example" })).status).toBe(403);
    expect((await adminCall({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await adminCall({ "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await adminCall({ origin: world.url, "content-type": "text/plain" })).status).toBe(415);
    expect(accounts()).toBe(before);
    expect((await adminCall({ origin: world.url })).status).toBe(201);
    expect(accounts()).toBe(before + 1);
  });
});

describe("/admin/* with an operator session", () => {
  test("answers as with ADMIN_TOKEN; a cookie that is no operator session is 401; a script's bearer token still works", async () => {
    const cookie = await opCookie();
    const read = (headers: Record<string, string>) => fetch(`${world.url}/admin/accounts/${acme.id}`, { headers });
    expect((await read({ cookie })).status).toBe(200);
    expect((await read({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })).status).toBe(200);
    const user = await signInCookie(world.url, acme);
    const asUser = await read({ cookie: user });
    expect(asUser.status).toBe(401);
    // The user's session token under the operator cookie's name is no operator session either.
    const stolen = await read({ cookie: user.replace("sb_session=", "sb_operator=") });
    expect(stolen.status).toBe(401);
    expect(await errorCode(stolen)).toBe("unauthorized");
    // And the operator's session token under the dashboard cookie's name opens no dashboard API.
    expect(
      (await fetch(`${world.url}/api/numbers`, { headers: { cookie: cookie.replace("sb_operator=", "sb_session=") } }))
        .status,
    ).toBe(401);
    // A bearer token decides when both are sent: a wrong one is refused even beside a good cookie.
    expect((await read({ cookie, authorization: "Bearer wrong" })).status).toBe(401);
  });

  test("with no ADMIN_TOKEN the operator API is off for scripts, and on for a signed-in operator", async () => {
    const off = await consoleWorld({ ADMIN_TOKEN: "" });
    try {
      const someone = await off.operator();
      expect((await fetch(`${off.url}/admin/onboardings`)).status).toBe(404);
      expect((await fetch(`${off.url}/admin/onboardings`, { headers: { authorization: "Bearer x" } })).status).toBe(
        404,
      );
      expect((await fetch(`${off.url}/admin/onboardings`, { headers: { cookie: someone.cookie } })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

/** Reads that need no session: sign-in pages, the event field list, static files, and the dashboard's redirect to its first page. */
const OPEN_READS = new Set([
  "GET /operator/sign-in",
  "GET /dashboard/sign-in",
  "GET /api/webhooks/fields",
  "GET /dashboard/assets/:name",
  "GET /dashboard",
  "GET /dashboard/",
]);

/** What a request tells its sender, for comparing two: status and where it redirects. */
async function answer(r: Response) {
  await r.arrayBuffer();
  return { status: r.status, location: r.headers.get("location") };
}

/** Each route with its parameters filled, requested with `cookie` (or none) as a browser of ours sends it. */
function call(route: Route, cookie: string | null): Promise<Response> {
  const path = route.path.replace(/:[a-z_]+/g, "x").replace("*", "x");
  const unsafe = route.method !== "GET";
  return fetch(`${world.url}${path}`, {
    method: route.method,
    redirect: "manual",
    headers: {
      ...(cookie ? { cookie } : {}),
      origin: world.url,
      ...(unsafe
        ? { "content-type": path.startsWith("/api/") ? "application/json" : "application/x-www-form-urlencoded" }
        : {}),
    },
    body: unsafe ? (path.startsWith("/api/") ? "{}" : "") : undefined,
  });
}

describe("one kind of session never opens the other's pages", () => {
  test("an account user's cookie gets what no cookie gets on every /operator route; an operator's on every /dashboard and /api route", async () => {
    const routes = routeTable(world.app);
    const user = await signInCookie(world.url, acme);
    const cookie = await opCookie();
    const cases: [Route, string][] = [
      ...routes
        .filter((r) => r.path === "/operator" || r.path.startsWith("/operator/"))
        .map((r) => [r, user] as [Route, string]),
      ...routes
        .filter((r) => r.path.startsWith("/dashboard") || r.path.startsWith("/api/"))
        .map((r) => [r, cookie] as [Route, string]),
    ];
    for (const [route, cookie] of cases) {
      const anonymous = await answer(await call(route, null));
      expect({ route: route.key, ...(await answer(await call(route, cookie))) }).toEqual({
        route: route.key,
        ...anonymous,
      });
      // Every page and read needs its kind of session (a post may be refused for its body first).
      if (route.method === "GET" && !OPEN_READS.has(route.key)) {
        const toSignIn = anonymous.status === 303 && /^\/(operator|dashboard)\/sign-in/.test(anonymous.location ?? "");
        expect({ route: route.key, refused: anonymous.status === 401 || toSignIn }).toEqual({
          route: route.key,
          refused: true,
        });
      }
    }
    // And the operator's session still works, as the user's does.
    expect((await world.get(cookie, "/operator/accounts")).status).toBe(200);
    expect((await fetch(`${world.url}/api/numbers`, { headers: { cookie: user } })).status).toBe(200);
  });
});
