import { afterEach, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { blockedReason, canonicalAddresses, type AddressPolicy } from "../../src/net/address-policy.ts";
import { formatIp, parseIp } from "../../src/ip/ip.ts";
import { safePost, type SafePostOptions } from "../../src/net/safe-post.ts";
import { checkWebhookUrl, urlChecker } from "../../src/net/url-rules.ts";
import type { Resolver } from "../../src/runtime/resolver.ts";
import { staticResolver } from "../../src/runtime/resolver.ts";
import { relayApp } from "./support.ts";
import type { ErrorEnvelope } from "../../src/errors/catalog.ts";

const TLS = join(import.meta.dir, "fixtures", "tls");
const production: AddressPolicy = { allowLoopback: false, selfAddresses: new Set(["203.0.113.9"]) };
const development: AddressPolicy = { allowLoopback: true, selfAddresses: new Set(["203.0.113.9"]) };

const stops: (() => unknown)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe("IP literals in every spelling", () => {
  test.each([
    ["127.0.0.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["0x7F.0.0.1", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["017700000001", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["10.1", "10.0.0.1"],
    ["192.168.257", "192.168.1.1"],
    ["0", "0.0.0.0"],
    ["::ffff:10.0.0.7", "::ffff:a00:7"],
    ["[::ffff:7f00:1]", "::ffff:7f00:1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["fe80::1%eth0", "fe80::1"],
  ])("%s is %s", (text, canonical) => {
    expect(formatIp(parseIp(text)!)).toBe(canonical);
  });

  test("hostnames and impossible numbers are not addresses", () => {
    for (const text of ["example.com", "256.1.1.1", "1.2.3.4.5", "0x1g", "1::2::3", "12345::1"])
      expect(parseIp(text)).toBeNull();
  });
});

describe("blocked ranges (docs/webhooks.md#url-rules)", () => {
  const blocked = [
    "0.1.2.3",
    "10.0.0.7",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.0.9",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "224.0.0.1",
    "239.1.1.1",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "febf::1",
    "ff02::1",
    "::ffff:10.0.0.7",
    "::ffff:127.0.0.1",
    "::ffff:a9fe:a9fe",
    "::10.0.0.7",
    "64:ff9b::a00:7",
    // Issue 34, item 10: NAT64 for local use, site-local, 6to4 and Teredo, each as a whole range.
    "64:ff9b:1::808:808",
    "64:ff9b:1:ffff::1",
    "fec0::1",
    "feff:ffff::1",
    "2002:a00:7::1",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001::1",
    // The outside review's: IPv4-translated, reserved fe00::/9, discard-only.
    "::ffff:0:7f00:1",
    "::ffff:0:a00:7",
    "fe00::1",
    "fe7f::1",
    "100::1",
    "0x0a000007",
    "167772167",
    "012.0.0.7",
    "10.7",
    "0xa9.0xfe.0xa9.0xfe",
  ];
  test.each(blocked)("%s is blocked", (address) => {
    expect(blockedReason(address, production)).not.toBeNull();
  });

  test.each([
    "8.8.8.8",
    "100.128.0.1",
    "172.32.0.1",
    "192.0.1.1",
    "198.20.0.1",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2001:1::1",
    "2003::1",
    "64:ff9b:2::1",
    "::ffff:8.8.8.8",
    "223.255.255.255",
  ])("%s is allowed", (address) => {
    expect(blockedReason(address, production)).toBeNull();
  });

  test("the service's own address is blocked, in any spelling", () => {
    expect(blockedReason("203.0.113.9", production)).toContain("own address");
    expect(blockedReason("::ffff:203.0.113.9", production)).toContain("own address");
    expect(blockedReason("3405803785", production)).toContain("own address");
  });

  test("DEV_MODE opens loopback and nothing else", () => {
    for (const a of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "0x7f000001"]) {
      expect(blockedReason(a, development)).toBeNull();
      expect(blockedReason(a, production)).not.toBeNull();
    }
    for (const a of ["10.0.0.7", "192.168.0.1", "169.254.169.254", "0.0.0.0", "::", "fc00::1", "203.0.113.9"]) {
      expect(blockedReason(a, development)).not.toBeNull();
    }
  });
});

describe("URL rules at save", () => {
  const rules = { allowHttp: false, policy: production };
  test.each([
    ["http://example.com/hook", "https://"],
    ["https://user:pw@example.com/hook", "credentials"],
    ["https://token@example.com/hook", "credentials"],
    [`https://example.com/${"a".repeat(2040)}`, "2048"],
    ["https://10.0.0.7/hook", "blocked"],
    ["https://0x7f000001/hook", "blocked"],
    ["https://2130706433/hook", "blocked"],
    ["https://0177.0.0.1/hook", "blocked"],
    ["https://127.1/hook", "blocked"],
    ["https://[::ffff:10.0.0.7]/hook", "blocked"],
    ["https://[::1]/hook", "blocked"],
    ["https://[fe80::1]/hook", "blocked"],
    ["ftp://example.com/", "https://"],
    ["not a url", "not a valid URL"],
  ])("%s is refused (%s)", (url, why) => {
    const result = checkWebhookUrl(url, rules);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(why);
  });

  test("an https URL of a public name or address is accepted; exactly 2048 characters is fine", () => {
    expect(checkWebhookUrl("https://hooks.example.com:8443/in?x=1", rules).ok).toBe(true);
    expect(checkWebhookUrl("https://8.8.8.8/hook", rules).ok).toBe(true);
    const long = `https://example.com/${"a".repeat(2048 - "https://example.com/".length)}`;
    expect(long.length).toBe(2048);
    expect(checkWebhookUrl(long, rules).ok).toBe(true);
  });

  test("DEV_MODE allows http and loopback, never private ranges", () => {
    const dev = { allowHttp: true, policy: development };
    expect(checkWebhookUrl("http://127.0.0.1:3000/hook", dev).ok).toBe(true);
    expect(checkWebhookUrl("http://[::1]:3000/hook", dev).ok).toBe(true);
    expect(checkWebhookUrl("http://10.0.0.7/hook", dev).ok).toBe(false);
    expect(checkWebhookUrl("http://127.0.0.1:3000/hook", rules).ok).toBe(false);
  });

  test("an attempt's checker keeps its answers, each the rules' own, and forgets them all past its capacity", () => {
    const checker = urlChecker(rules, 2);
    for (const url of [
      "https://10.0.0.7/hook",
      "https://0x7f000001/hook",
      "https://8.8.8.8/hook",
      "https://hooks.example.com/in",
    ]) {
      expect(checker.check(url)).toEqual(checkWebhookUrl(url, rules));
      expect(checker.check(url)).toEqual(checkWebhookUrl(url, rules));
    }
    expect(checker.check("https://[2001:4860:4860::8888]/hook")).toMatchObject({
      ok: true,
      address: "2001:4860:4860::8888",
    });
    expect(checker.check("https://hooks.example.com/in")).toMatchObject({ ok: true, address: null });
    const first = checker.check("https://8.8.8.8/hook");
    expect(checker.check("https://8.8.8.8/hook")).toBe(first);
    checker.check("https://1.1.1.1/hook");
    checker.check("https://9.9.9.9/hook");
    expect(checker.check("https://8.8.8.8/hook")).not.toBe(first);
  });
});

/** A TLS receiver for `receiver.test` on 127.0.0.1, with the test CA's certificate. */
function tlsReceiver(answer: (req: Request) => Response | Promise<Response> = () => new Response("ok")) {
  const hits: { host: string | null; path: string }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: Bun.file(join(TLS, "receiver.crt")), key: Bun.file(join(TLS, "receiver.key")) },
    fetch(req) {
      hits.push({ host: req.headers.get("host"), path: new URL(req.url).pathname });
      return answer(req);
    },
  });
  stops.push(() => server.stop(true));
  return { hits, port: server.port! };
}

async function options(
  resolver: Resolver,
  policy: AddressPolicy,
  extra: Partial<SafePostOptions> = {},
): Promise<SafePostOptions> {
  return {
    resolver,
    fetch: (input, init) => fetch(input, init),
    urls: urlChecker({ allowHttp: false, policy }),
    timeoutMs: 2000,
    ca: await Bun.file(join(TLS, "ca.crt")).text(),
    ...extra,
  };
}

const request = { headers: { "content-type": "application/json" }, body: new TextEncoder().encode("{}") };

describe("the service's own addresses (docs/webhooks.md#url-rules)", () => {
  test("are the listen address (HOST) when it is a specific one, and every address of the machine's interfaces", async () => {
    const listening = await relayApp({ env: { DEV_MODE: "0", HOST: "8.8.4.4" } });
    stops.push(() => listening.close());
    const a = await listening.account();
    const refused = await a.api<ErrorEnvelope>("POST", "/api/endpoints", {
      url: "https://8.8.4.4/in",
      fields: ["messages"],
    });
    expect([refused.status, refused.body.error.code]).toEqual([422, "invalid_url"]);
    expect(refused.body.error.message).toContain("own address");
    const policy = listening.relay.urlRules.policy;
    // Counted as its own even where a private range would block them anyway.
    const interfaces = Object.values(networkInterfaces())
      .flat()
      .map((i) => i!.address);
    expect(interfaces.length).toBeGreaterThan(0);
    for (const own of canonicalAddresses(interfaces)) expect([own, policy.selfAddresses.has(own)]).toEqual([own, true]);

    // Listening on every address, that one is anyone's.
    const anywhere = await relayApp({ env: { DEV_MODE: "0" } });
    stops.push(() => anywhere.close());
    const b = await anywhere.account();
    expect((await b.api("POST", "/api/endpoints", { url: "https://8.8.4.4/in", fields: ["messages"] })).status).toBe(
      201,
    );
  });
});

describe("IPv6 ranges that reach IPv4 or local networks (issue 34, item 10)", () => {
  test("a webhook URL in NAT64 for local use, site-local, 6to4 or Teredo is refused when saved", async () => {
    const app = await relayApp({ env: { DEV_MODE: "0" } });
    stops.push(() => app.close());
    const a = await app.account();
    for (const host of ["64:ff9b:1::a00:7", "fec0::1", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"]) {
      const refused = await a.api<ErrorEnvelope>("POST", "/api/endpoints", {
        url: `https://[${host}]/in`,
        fields: ["messages"],
      });
      expect([host, refused.status, refused.body.error.code]).toEqual([host, 422, "invalid_url"]);
      expect(refused.body.error.message).toContain("blocked range");
    }
    expect(
      (await a.api("POST", "/api/endpoints", { url: "https://[2606:4700::1111]/in", fields: ["messages"] })).status,
    ).toBe(201);
    expect(await app.deps.query(`SELECT url FROM endpoints WHERE account_id = '${a.id}'`)).toEqual([
      { url: "https://[2606:4700::1111]/in" },
    ]);
  });
});

describe("the delivery client connects only to the address it checked", () => {
  test("TLS with SNI and certificate verification for the hostname, connected to the resolved address", async () => {
    const rx = tlsReceiver();
    const resolver = staticResolver({ "receiver.test": ["127.0.0.1"] });
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(resolver, development),
    );
    expect(outcome).toMatchObject({ kind: "response", status: 200, excerpt: "ok" });
    // Host carries the name; the system resolver does not know receiver.test, so reaching the
    // server at all proves the connection went to the address our resolver gave.
    expect(rx.hits).toEqual([{ host: `receiver.test:${rx.port}`, path: "/hook" }]);
  });

  test("a certificate for another name fails, and so does one from an untrusted CA", async () => {
    const rx = tlsReceiver();
    const resolver = staticResolver({ "receiver.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    const wrongName = await safePost(
      `https://other.test:${rx.port}/hook`,
      request,
      await options(resolver, development),
    );
    expect(wrongName).toMatchObject({ kind: "failed", error: "TLS error: ERR_TLS_CERT_ALTNAME_INVALID" });
    const untrusted = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(resolver, development, { ca: undefined }),
    );
    expect(untrusted.kind).toBe("failed");
    expect((untrusted as { error: string }).error).toStartWith("TLS error");
    expect(rx.hits).toHaveLength(0);
  });

  test("a rebinding resolver: the second answer is private and is refused; the name is resolved once per attempt", async () => {
    const rx = tlsReceiver();
    let calls = 0;
    const rebinding: Resolver = async (name) => {
      expect(name).toBe("receiver.test");
      return ++calls === 1 ? ["127.0.0.1"] : ["10.0.0.7"];
    };
    const opts = await options(rebinding, development);
    const first = await safePost(`https://receiver.test:${rx.port}/hook`, request, opts);
    expect(first).toMatchObject({ kind: "response", status: 200 });
    expect(calls).toBe(1);
    const second = await safePost(`https://receiver.test:${rx.port}/hook`, request, opts);
    expect(second).toMatchObject({ kind: "blocked", error: "blocked: resolved to 10.0.0.7" });
    expect(calls).toBe(2);
    expect(rx.hits).toHaveLength(1);
  });

  test("any blocked address among several answers blocks the attempt", async () => {
    const rx = tlsReceiver();
    const resolver = staticResolver({ "receiver.test": ["127.0.0.1", "169.254.169.254"] });
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(resolver, development),
    );
    expect(outcome).toMatchObject({ kind: "blocked", error: "blocked: resolved to 169.254.169.254" });
    expect(rx.hits).toHaveLength(0);
  });

  test("without the DEV_MODE allowance, a name resolving to loopback is blocked; with it, it is delivered", async () => {
    const rx = tlsReceiver();
    const resolver = staticResolver({ "receiver.test": ["127.0.0.1"] });
    const url = `https://receiver.test:${rx.port}/hook`;
    expect(await safePost(url, request, await options(resolver, production))).toMatchObject({
      kind: "blocked",
      error: "blocked: resolved to 127.0.0.1",
    });
    expect(
      await safePost(
        url,
        request,
        await options(staticResolver({ "receiver.test": ["::ffff:127.0.0.1"] }), production),
      ),
    ).toMatchObject({ kind: "blocked", error: "blocked: resolved to ::ffff:7f00:1" });
    expect(rx.hits).toHaveLength(0);
    expect(await safePost(url, request, await options(resolver, development))).toMatchObject({
      kind: "response",
      status: 200,
    });
  });

  test("plain http is refused unless allowed (DEV_MODE)", async () => {
    const resolver = staticResolver({});
    const outcome = await safePost("http://127.0.0.1:9/hook", request, await options(resolver, development));
    expect(outcome).toMatchObject({ kind: "blocked", error: "blocked: the URL must start with https://" });
  });

  test("redirects are returned, never followed", async () => {
    let followed = false;
    const rx = tlsReceiver((req) => {
      if (new URL(req.url).pathname === "/elsewhere") followed = true;
      return new Response(null, { status: 302, headers: { location: "/elsewhere" } });
    });
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(staticResolver({ "receiver.test": ["127.0.0.1"] }), development),
    );
    expect(outcome).toMatchObject({ kind: "response", status: 302 });
    expect(followed).toBe(false);
  });

  test("only the first 1 KB of the answer is read", async () => {
    const rx = tlsReceiver(() => new Response(`${"x".repeat(5000)}END`));
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(staticResolver({ "receiver.test": ["127.0.0.1"] }), development),
    );
    expect(outcome.kind).toBe("response");
    expect((outcome as { excerpt: string }).excerpt).toBe("x".repeat(1024));
  });

  test("a short answer of declared length is read whole, up to exactly 1 KB", async () => {
    const rx = tlsReceiver(() => new Response("y".repeat(1024)));
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(staticResolver({ "receiver.test": ["127.0.0.1"] }), development),
    );
    expect(outcome).toMatchObject({ kind: "response", status: 200, excerpt: "y".repeat(1024) });
  });

  test("a compressed answer is cut at 1 KB of its text, however short its declared length", async () => {
    const rx = tlsReceiver(
      () =>
        new Response(Bun.gzipSync(new TextEncoder().encode("z".repeat(5000))), {
          headers: { "content-encoding": "gzip" },
        }),
    );
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(staticResolver({ "receiver.test": ["127.0.0.1"] }), development),
    );
    expect(outcome).toMatchObject({ kind: "response", status: 200, excerpt: "z".repeat(1024) });
  });

  test("the time budget covers the answer's body: one that stops short of its declared length times out", async () => {
    const listener = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: { data: (socket) => void socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial") },
    });
    stops.push(() => listener.stop(true));
    const opts = {
      ...(await options(staticResolver({}), development, { timeoutMs: 50 })),
      urls: urlChecker({ allowHttp: true, policy: development }),
    };
    expect(await safePost(`http://127.0.0.1:${listener.port}/hook`, request, opts)).toMatchObject({
      kind: "failed",
      error: "timed out after 50 ms",
    });
  });

  test("the time budget covers DNS: a resolver that never answers times out", async () => {
    const never: Resolver = () => new Promise(() => undefined);
    const outcome = await safePost(
      "https://receiver.test/hook",
      request,
      await options(never, development, { timeoutMs: 30 }),
    );
    expect(outcome).toMatchObject({ kind: "failed", error: "timed out after 30 ms" });
  });

  test("the time budget covers the response: a receiver that does not answer times out", async () => {
    const rx = tlsReceiver(() => new Promise<Response>(() => undefined));
    const outcome = await safePost(
      `https://receiver.test:${rx.port}/hook`,
      request,
      await options(staticResolver({ "receiver.test": ["127.0.0.1"] }), development, { timeoutMs: 50 }),
    );
    expect(outcome).toMatchObject({ kind: "failed", error: "timed out after 50 ms" });
  });

  test("an unknown name and a refused connection are failures with a readable reason", async () => {
    const opts = await options(staticResolver({ "down.test": ["127.0.0.1"] }), development);
    expect(await safePost("https://nowhere.test/hook", request, opts)).toMatchObject({
      kind: "failed",
      error: "DNS lookup failed (ENOTFOUND)",
    });
    expect(await safePost("https://down.test:9/hook", request, opts)).toMatchObject({
      kind: "failed",
      error: "connection refused",
    });
  });
});
