// Issue 34 (CONTRACT 2, TRUSTED_PROXIES): behind a reverse proxy the client's address comes from
// X-Forwarded-For, the right-most address in it that is not itself a trusted proxy, and only when
// the connection comes from one; the audit log's `ip` and the request log use it. The tests'
// connections come from 127.0.0.1, which each server below trusts or not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount, type TestAccount } from "../dashboard/support.ts";
import { allEntries } from "../audit/support.ts";
import { startApp, testDeps, type TestDeps } from "../support/harness.ts";

interface Server {
  deps: TestDeps;
  url: string;
  acme: TestAccount;
  stop(): Promise<void>;
}

async function server(trustedProxies?: string): Promise<Server> {
  const deps = await testDeps({ env: trustedProxies === undefined ? {} : { TRUSTED_PROXIES: trustedProxies } });
  const { url, stop } = startApp(deps);
  const acme = await createAccount(url, "Acme");
  return {
    deps,
    url,
    acme,
    async stop() {
      await stop();
      await deps.cleanup();
    },
  };
}

/**
 * Signs in with `forwardedFor` (none when null) and gives the address the sign-in's audit entry and
 * its request log line recorded; they must agree.
 */
async function addressOf(s: Server, forwardedFor: string | null): Promise<string | null> {
  // The newest entry is the one of this sign-in.
  s.deps.clock.advance(1);
  const res = await fetch(`${s.url}/api/session`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(forwardedFor === null ? {} : { "x-forwarded-for": forwardedFor }),
    },
    body: JSON.stringify({ email: s.acme.email, password: s.acme.password }),
  });
  expect(res.status).toBe(204);
  const [entry] = await allEntries(s.url, { action: "session.create", account_id: s.acme.id });
  const logged = s.deps.logger.lines.filter((l) => l.msg === "request" && l.path === "/api/session").at(-1);
  expect(logged?.request_id).toBe(res.headers.get("x-proxy-request-id") ?? "");
  expect(logged?.ip).toBe(entry?.ip);
  return entry?.ip ?? null;
}

let behind: Server;
let open: Server;
let elsewhere: Server;

beforeAll(async () => {
  [behind, open, elsewhere] = await Promise.all([
    server("127.0.0.1, 10.0.0.0/8, 2001:db8:ffff::/48"),
    server(),
    server("10.0.0.1"),
  ]);
});
afterAll(async () => {
  await Promise.all([behind.stop(), open.stop(), elsewhere.stop()]);
});

describe("from a trusted proxy", () => {
  test("the client is X-Forwarded-For's address; without one, the proxy itself", async () => {
    expect(await addressOf(behind, "203.0.113.9")).toBe("203.0.113.9");
    expect(await addressOf(behind, null)).toBe("127.0.0.1");
    expect(await addressOf(behind, "")).toBe("127.0.0.1");
  });

  test("in a chain, the right-most address that is not a trusted proxy: what a client wrote to the left is not believed", async () => {
    expect(await addressOf(behind, "198.51.100.1, 203.0.113.9")).toBe("203.0.113.9");
    expect(await addressOf(behind, "198.51.100.1, 203.0.113.9, 10.1.2.3")).toBe("203.0.113.9");
    expect(await addressOf(behind, "198.51.100.1,203.0.113.9,10.1.2.3,10.4.5.6")).toBe("203.0.113.9");
    expect(await addressOf(behind, "2001:db8::7, 2001:db8:ffff::1")).toBe("2001:db8::7");
    // Every hop a trusted proxy: the first of them.
    expect(await addressOf(behind, "10.9.9.9, 10.1.2.3")).toBe("10.9.9.9");
  });

  test("addresses in the forms proxies write them; a hop that is not an address stops at the proxy that wrote it", async () => {
    expect(await addressOf(behind, "[2001:db8::7]:4430")).toBe("2001:db8::7");
    expect(await addressOf(behind, "203.0.113.9:51234")).toBe("203.0.113.9");
    expect(await addressOf(behind, "::ffff:203.0.113.5")).toBe("203.0.113.5");
    expect(await addressOf(behind, "2001:DB8:0:0::7")).toBe("2001:db8::7");
    expect(await addressOf(behind, "not-an-address, 203.0.113.9")).toBe("203.0.113.9");
    expect(await addressOf(behind, "203.0.113.9, unknown")).toBe("127.0.0.1");
    expect(await addressOf(behind, "203.0.113.9, 10.1.2.3, 127.1")).toBe("127.0.0.1");
  });

  test("two X-Forwarded-For headers read as one list, in order", async () => {
    const headers = new Headers({ "content-type": "application/json" });
    headers.append("x-forwarded-for", "198.51.100.1");
    headers.append("x-forwarded-for", "203.0.113.77");
    behind.deps.clock.advance(1);
    const res = await fetch(`${behind.url}/api/session`, {
      method: "POST",
      headers,
      body: JSON.stringify({ email: behind.acme.email, password: behind.acme.password }),
    });
    expect(res.status).toBe(204);
    const [entry] = await allEntries(behind.url, { action: "session.create", account_id: behind.acme.id });
    expect(entry?.ip).toBe("203.0.113.77");
  });
});

describe("not from a trusted proxy", () => {
  test("X-Forwarded-For is ignored without TRUSTED_PROXIES", async () => {
    expect(await addressOf(open, "203.0.113.9")).toBe("127.0.0.1");
    expect(await addressOf(open, "10.0.0.1, 203.0.113.9")).toBe("127.0.0.1");
  });

  test("X-Forwarded-For is ignored when the connection comes from an address the list does not hold", async () => {
    expect(await addressOf(elsewhere, "203.0.113.9")).toBe("127.0.0.1");
    expect(await addressOf(elsewhere, "203.0.113.9, 10.0.0.1")).toBe("127.0.0.1");
  });
});
