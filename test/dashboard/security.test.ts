import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SESSION_TTL_MS } from "../../src/auth/sign-in.ts";
import { SIGN_IN_WINDOW_MS } from "../../src/auth/throttle.ts";
import { createAccount, dashboardWorld, operatorNumber, signInCookie, type TestAccount } from "./support.ts";

const world = await dashboardWorld();
let acme: TestAccount;
let guessed: TestAccount;

beforeAll(async () => {
  world.upstream.numbers.set("1001", {});
  acme = await createAccount(world.url, "Secure Acme");
  guessed = await createAccount(world.url, "Guessed Acme");
  await operatorNumber(world.url, acme.id, "waba-s", "1001");
});
afterAll(() => world.close());

const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${world.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: world.url, ...headers },
    body: new URLSearchParams(fields).toString(),
  });

const PAGES = [
  "/dashboard/endpoints",
  "/dashboard/endpoints/new",
  "/dashboard/deliveries",
  "/dashboard/numbers",
  "/dashboard/api-keys",
  "/dashboard/settings",
  "/dashboard/notifications",
  "/dashboard/activity",
];

describe("Content-Security-Policy and page hygiene", () => {
  test("every page is sent with a strict CSP, no caching, no framing, and no inline script or style", async () => {
    const cookie = await signInCookie(world.url, acme);
    for (const path of ["/dashboard/sign-in", ...PAGES]) {
      const res = await fetch(`${world.url}${path}`, { headers: path.endsWith("sign-in") ? {} : { cookie } });
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
      expect(csp).not.toContain("unsafe");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-proxy-request-id")).toMatch(/^req_/);
      const html = await res.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // every script has a src
      expect(html).not.toMatch(/\sstyle=/);
      expect(html).not.toMatch(/\s(hx-on|on[a-z]+)=/);
      expect(html).not.toMatch(/(src|href)="https?:/); // nothing from another origin
      expect(html).toContain('"includeIndicatorStyles":false'.replaceAll('"', "&#34;"));
    }
  });

  test("assets are served from the binary with their types", async () => {
    for (const [name, type] of [
      ["htmx.min.js", "text/javascript"],
      ["dashboard.js", "text/javascript"],
      ["dashboard.css", "text/css"],
      ["favicon.svg", "image/svg+xml"],
    ]) {
      const res = await fetch(`${world.url}/dashboard/assets/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith(type!);
      expect((await res.text()).length).toBeGreaterThan(100);
    }
    expect((await fetch(`${world.url}/dashboard/assets/../../package.json`)).status).toBe(404);
    expect((await fetch(`${world.url}/dashboard/assets/nope.js`)).status).toBe(404);
  });

  test("text from the account (a key's name) is escaped, never markup", async () => {
    const cookie = await signInCookie(world.url, acme);
    const res = await form("/dashboard/api-keys", { mode: "live", name: `<script>alert(1)</script>"'` }, { cookie });
    expect(res.status).toBe(201);
    const html = await res.text();
    // Inside a quoted attribute only the quote and & matter (and are escaped); outside, < must be.
    const attributes = [...html.matchAll(/="([^"]*)"/g)].map((m) => m[1]!);
    expect(attributes.some((v) => v.includes("<script>alert(1)</script>&#34;"))).toBe(true);
    expect(html.replace(/="[^"]*"/g, "")).not.toContain("<script>alert(1)");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});

describe("session cookie", () => {
  test("is HttpOnly, SameSite=Strict, expires with the session, and Secure behind https", async () => {
    const plain = await form("/dashboard/sign-in", {
      email: acme.email,
      password: acme.password,
      next: "/dashboard/settings",
    });
    expect(plain.status).toBe(303);
    expect(plain.headers.get("location")).toBe("/dashboard/settings");
    const cookie = plain.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^sb_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain(`Max-Age=${SESSION_TTL_MS / 1000}`);
    expect(cookie).not.toContain("Secure");
    const https = await form(
      "/dashboard/sign-in",
      { email: acme.email, password: acme.password },
      { "x-forwarded-proto": "https" },
    );
    expect(https.headers.get("set-cookie")).toContain("; Secure");
  });

  test("a session ends at its expiry (pages go to sign-in, the API answers 401) and expired rows are purged", async () => {
    const cookie = await signInCookie(world.url, acme);
    expect((await fetch(`${world.url}/dashboard/numbers`, { headers: { cookie }, redirect: "manual" })).status).toBe(
      200,
    );
    world.deps.clock.advance(SESSION_TTL_MS);
    const page = await fetch(`${world.url}/dashboard/numbers?x=1`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe(
      `/dashboard/sign-in?next=${encodeURIComponent("/dashboard/numbers?x=1")}`,
    );
    expect((await fetch(`${world.url}/api/numbers`, { headers: { cookie } })).status).toBe(401);
    const htmx = await fetch(`${world.url}/dashboard/numbers`, { headers: { cookie, "hx-request": "true" } });
    expect(htmx.status).toBe(401);
    expect(htmx.headers.get("hx-redirect")).toStartWith("/dashboard/sign-in");

    const count = async () => (await world.deps.query("SELECT COUNT(*) AS n FROM sessions"))[0]!.n;
    expect(await count()).toBeGreaterThan(0);
    await world.purge();
    expect(await count()).toBe(0);
  });

  test("signing out ends the session on the server, not just in the browser", async () => {
    const cookie = await signInCookie(world.url, acme);
    const out = await form("/dashboard/sign-out", {}, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(`${world.url}/api/numbers`, { headers: { cookie } })).status).toBe(401);
  });

  test("the dashboard API: POST /api/session sets the same cookie, a wrong password is 401, DELETE ends the session", async () => {
    const signIn = (password: string) =>
      fetch(`${world.url}/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: acme.email, password }),
      });
    const wrong = await signIn("not the password");
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect(wrong.headers.get("set-cookie")).toBeNull();

    const ok = await signIn(acme.password);
    expect(ok.status).toBe(204);
    const setCookie = ok.headers.get("set-cookie")!;
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).not.toContain("Secure");
    const cookie = setCookie.split(";")[0]!;
    expect((await fetch(`${world.url}/api/numbers`, { headers: { cookie } })).status).toBe(200);

    const out = await fetch(`${world.url}/api/session`, { method: "DELETE", headers: { cookie } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    const after = await fetch(`${world.url}/api/numbers`, { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  test("after sign-in only dashboard paths are followed", async () => {
    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/api/numbers"]) {
      const res = await form("/dashboard/sign-in", { email: acme.email, password: acme.password, next });
      expect(res.headers.get("location")).toBe("/dashboard");
    }
  });
});

describe("failed sign-ins", () => {
  // Throttling in depth, both doors, at once and one at a time: test/sign-in/throttle.test.ts.
  test("are refused after five, for known and unknown emails alike, the page saying when; their counts are purged", async () => {
    for (const email of [guessed.email, "nobody@example.test"]) {
      for (let i = 0; i < 5; i++) {
        const res = await form("/dashboard/sign-in", { email, password: "wrong" });
        expect(res.status).toBe(401);
        expect(await res.text()).toContain("Wrong email or password.");
      }
      const locked = await form("/dashboard/sign-in", {
        email,
        password: email === guessed.email ? guessed.password : "x",
      });
      expect(locked.status).toBe(429);
      expect(locked.headers.get("retry-after")).toBe("900");
      expect(await locked.text()).toContain("Too many failed sign-ins; try again in 900 s.");
      const api = await fetch(`${world.url}/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "x" }),
      });
      expect(api.status).toBe(429);
    }
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    expect((await form("/dashboard/sign-in", { email: guessed.email, password: guessed.password })).status).toBe(303);
    const rows = async () => (await world.deps.query("SELECT COUNT(*) AS n FROM sign_in_counts"))[0]!.n;
    expect(await rows()).toBeGreaterThan(0);
    world.deps.clock.advance(SIGN_IN_WINDOW_MS + 1);
    await world.purge();
    expect(await rows()).toBe(0);
  });
});

describe("cross-site form posts", () => {
  test("a post from another Origin is refused with 403 and changes nothing", async () => {
    const cookie = await signInCookie(world.url, acme);
    const before = world.deps.store.directory.apiKeys(acme.id).length;
    const res = await form("/dashboard/api-keys", { mode: "live" }, { cookie, origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(world.deps.store.directory.apiKeys(acme.id).length).toBe(before);
    expect(
      (
        await form(
          "/dashboard/sign-in",
          { email: acme.email, password: acme.password },
          { origin: "https://evil.example" },
        )
      ).status,
    ).toBe(403);
    expect((await form("/dashboard/sign-out", {}, { cookie, origin: "https://evil.example" })).status).toBe(403);
    expect((await fetch(`${world.url}/api/numbers`, { headers: { cookie } })).status).toBe(200);
  });
});

describe("posts that are not forms", () => {
  test("a JSON body that is a string, an array or a number has no fields: refused at once, not spread into a million", async () => {
    const cookie = await signInCookie(world.url, acme);
    const post = (path: string, body: string) =>
      fetch(`${world.url}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: world.url, "content-type": "application/json" },
        body,
      });
    for (const path of [
      "/dashboard/numbers/signup",
      "/dashboard/numbers/1001/smb-sync",
      "/dashboard/endpoints/ep_x/recover",
      "/dashboard/sign-in",
    ]) {
      for (const body of [JSON.stringify("x".repeat(1_000_000)), '["a"]', "12"]) {
        const started = performance.now();
        const res = await post(path, body);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        // Spread, the 1 MB string was a million fields, each checked against the form's schema: minutes.
        expect(performance.now() - started).toBeLessThan(5_000);
      }
    }
  });
});
