import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { TEST_APP_SECRET } from "../support/harness.ts";
import { headerRecord } from "../../src/simulator/recorder.ts";
import { bearer, useWorld } from "../support/world.ts";

const t = useWorld();

const messages = () => `/v21.0/${t.biz.phoneNumberId}/messages`;
const last = () => t.world.sim.requests.at(-1)!;

describe("docs/proxy.md#what-goes-upstream: what is sent upstream", () => {
  test("the caller's key is replaced by the WABA's token; only Content-Type and Accept go along", async () => {
    const r = await t.world.call(messages(), {
      method: "POST",
      headers: {
        ...bearer(t.biz.liveKey),
        "content-type": "application/json; charset=utf-8",
        accept: "application/json",
        "accept-encoding": "gzip, br",
        cookie: "a=b",
        "x-forwarded-for": "203.0.113.9",
        "user-agent": "caller/1.0",
        "x-custom": "1",
      },
      body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
    });
    expect(r.status).toBe(200);
    const sent = last().headers;
    expect(sent.authorization).toBe(`Bearer ${t.biz.token}`);
    expect(sent["content-type"]).toBe("application/json; charset=utf-8");
    expect(sent.accept).toBe("application/json");
    for (const name of ["accept-encoding", "cookie", "x-forwarded-for", "x-custom"]) expect(sent[name]).toBeUndefined();
    expect(sent["user-agent"]).not.toBe("caller/1.0");
    expect(JSON.stringify(sent)).not.toContain(t.biz.liveKey);
  });

  test("the query is kept as written minus the caller's credentials, with our appsecret_proof appended", async () => {
    const query =
      "fields=throughput%2Cverified_name&access_token=stolen&x=1&&appsecret_proof=forged&access%5Ftoken=sneaky&y=a+b";
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}?${query}`, { headers: bearer(t.biz.liveKey) });
    expect(r.status).toBe(200);
    expect(last().query).toBe(
      `fields=throughput%2Cverified_name&x=1&&y=a+b&appsecret_proof=${appsecretProof(t.biz.token, TEST_APP_SECRET)}`,
    );
  });

  test("a BYO WABA's proof is keyed with its own app secret", async () => {
    const { wabaId, token } = await t.world.waba(t.biz.accountId, { appSecret: "byo-app-secret" });
    const number = await t.world.number(t.biz.accountId, wabaId, { kind: "byo" });
    const r = await t.world.call(`/v21.0/${number}`, { headers: bearer(t.biz.liveKey) });
    expect(r.status).toBe(200);
    expect(last().query).toBe(`appsecret_proof=${appsecretProof(token, "byo-app-secret")}`);
    expect(last().headers.authorization).toBe(`Bearer ${token}`);
  });

  test("oddly formatted JSON goes upstream byte for byte", async () => {
    const odd =
      '{  "to" :"15550100","messaging_product":"chat",\n\t"text":{"body":"caf\\u00e9 \u00e9 \ud83d\ude00"}, "type":"text" ,"n":1.50e+2, "dup":1, "dup":2 }\r\n';
    const r = await t.world.call(messages(), {
      method: "POST",
      headers: { ...bearer(t.biz.liveKey), "content-type": "application/json" },
      body: odd,
    });
    expect(r.status).toBe(200);
    expect(Buffer.from(last().body).equals(Buffer.from(odd))).toBe(true);
  });

  test("a binary multipart upload keeps its boundary and every byte", async () => {
    const file = new Uint8Array(70_000).map((_, i) => (i * 7919) % 256);
    const boundary = "----switchboard-test-Boundary7MA4YWxkTrZu0gW";
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="messaging_product"\r\n\r\nchat\r\n`),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}/media`, {
      method: "POST",
      headers: { ...bearer(t.biz.liveKey), "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(r.status).toBe(200);
    expect(last().headers["content-type"]).toBe(`multipart/form-data; boundary=${boundary}`);
    expect(last().headers["content-length"]).toBe(String(body.length));
    expect(last().bodySha256).toBe(createHash("sha256").update(body).digest("hex"));
  });
});

describe("docs/proxy.md#what-comes-back: what comes back", () => {
  // A send's answer is read whole for its message id and answered anew; any other passes on as it is.
  const answers: {
    what: string;
    status: number;
    body: string;
    headers: Record<string, string>;
    messageId: string | null;
  }[] = [
    {
      what: "an error answer",
      status: 400,
      body: '{"error" : {"message":"x",  "code":131047,"trace_id":"AbC"}}\n',
      headers: { "content-disposition": "inline", "set-cookie": "s=1", "content-encoding": "identity" },
      messageId: null,
    },
    {
      what: "a send's answer, read whole for its message id",
      status: 200,
      body: '{"messaging_product":"chat", "contacts":[{"input":"15550100","wa_id":"15550100"}],\n "messages":[{"id" : "wamid.Odd=="}]}',
      headers: { "content-disposition": "inline", "set-cookie": "s=1", "x-fb-debug": "abc", vary: "Origin" },
      messageId: "wamid.Odd==",
    },
  ];
  test.each(answers)(
    "$what: upstream's status and body unchanged, only the listed headers, plus ours",
    async (answer) => {
      t.world.sim.fault(t.biz.phoneNumberId, {
        reply: { status: answer.status, body: answer.body, headers: answer.headers },
      });
      const r = await t.world.call(messages(), { method: "POST", headers: bearer(t.biz.liveKey), body: "{}" });
      expect(r.status).toBe(answer.status);
      expect(await r.text()).toBe(answer.body);
      const headers = headerRecord(r.headers);
      const id = headers["x-proxy-request-id"];
      expect(id).toMatch(/^req_/);
      expect(headers).toEqual({
        "content-type": "application/json; charset=UTF-8",
        "content-length": String(answer.body.length),
        "content-disposition": "inline",
        "x-upstream-trace-id": expect.any(String),
        "x-upstream-rev": expect.any(String),
        "x-app-usage": expect.any(String),
        "x-business-use-case-usage": expect.any(String),
        "ratelimit-limit": "80",
        "ratelimit-remaining": "79",
        "ratelimit-reset": "1",
        "x-proxy-request-id": id!,
        date: expect.any(String),
      });
      // The send's row took the read-whole path: its message id is on the call's record.
      await t.world.app().requestLog!.flush();
      const logged = await t.world.deps.store.requests.get(t.biz.accountId, id!);
      expect(logged).toMatchObject({ messageId: answer.messageId, responseBytes: answer.body.length });
    },
  );

  test("a binary answer passes byte for byte; nothing is decompressed or re-encoded", async () => {
    const gzipped = Bun.gzipSync(Buffer.from(JSON.stringify({ data: [] })));
    t.world.sim.fault(t.biz.wabaId, {
      reply: {
        status: 200,
        body: new Uint8Array(gzipped),
        headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" },
      },
    });
    const r = await t.world.call(`/v21.0/${t.biz.wabaId}/message_templates`, {
      headers: { ...bearer(t.biz.liveKey), "accept-encoding": "gzip" },
      decompress: false,
    } as RequestInit);
    expect(Buffer.from(await r.arrayBuffer()).equals(Buffer.from(gzipped))).toBe(true);
    expect(last().headers["accept-encoding"]).toBeUndefined();
  });

  test("redirects are passed back, not followed", async () => {
    t.world.sim.fault(t.biz.phoneNumberId, {
      reply: { status: 302, body: "", headers: { location: "http://127.0.0.1:9/elsewhere" } },
    });
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}`, {
      headers: bearer(t.biz.liveKey),
      redirect: "manual",
    });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBeNull();
  });

  test("every response carries X-Proxy-Request-Id, equal to trace_id on our errors; ids differ", async () => {
    const ok = await t.world.call(`/v21.0/${t.biz.phoneNumberId}`, { headers: bearer(t.biz.liveKey) });
    const notFound = await t.world.call("/nowhere");
    const ids = [ok.headers.get("x-proxy-request-id"), notFound.headers.get("x-proxy-request-id")];
    expect(ids.every((id) => /^req_[0-9a-z]{20}$/.test(id ?? ""))).toBe(true);
    expect(ids[0]).not.toBe(ids[1]);
    expect(((await notFound.json()) as { error: { trace_id: string } }).error.trace_id).toBe(ids[1]!);
  });

  test("the operator API, health and metrics keep their own routes", async () => {
    expect((await t.world.call("/healthz")).status).toBe(200);
    expect(await (await t.world.call("/metrics")).text()).toContain("switchboard_proxy_requests_total");
    const r = await t.world.call("/admin/accounts/nope", { headers: { authorization: "Bearer test-admin-token" } });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("docs/proxy.md#what-goes-upstream, docs/proxy.md#order-of-checks: 100 MB bodies", () => {
  const MB = 1024 * 1024;
  /** A chunked body of `total` bytes made of one reused 1 MB chunk: nothing here holds it whole. */
  function chunked(total: number): { stream: ReadableStream<Uint8Array>; sha256: string } {
    const chunk = new Uint8Array(MB).map((_, i) => (i * 31) % 251);
    const hash = createHash("sha256");
    let sent = 0;
    while (sent < total) {
      const n = Math.min(MB, total - sent);
      hash.update(chunk.subarray(0, n));
      sent += n;
    }
    sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const n = Math.min(MB, total - sent);
        sent += n;
        controller.enqueue(chunk.slice(0, n));
      },
    });
    return { stream, sha256: hash.digest("hex") };
  }
  const uploadInit = (body: ReadableStream<Uint8Array> | Blob) =>
    ({
      method: "POST",
      headers: { ...bearer(t.biz.liveKey), "content-type": "application/octet-stream" },
      body,
      duplex: "half",
    }) as RequestInit;

  test("a chunked upload of exactly 100 MB streams through intact", async () => {
    const { stream, sha256 } = chunked(100 * MB);
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}/media`, uploadInit(stream));
    expect(r.status).toBe(200);
    expect(last().bodyLength).toBe(100 * MB);
    expect(last().bodySha256).toBe(sha256);
    expect(last().headers["transfer-encoding"]).toBe("chunked");
  });

  test("a chunked upload past 100 MB is cut off with 413 and no RateLimit headers", async () => {
    const { stream } = chunked(100 * MB + 1);
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}/media`, uploadInit(stream));
    expect(r.status).toBe(413);
    const body = (await r.json()) as { error: { code: number; trace_id: string } };
    expect(body.error.code).toBe(1004);
    expect(body.error.trace_id).toBe(r.headers.get("x-proxy-request-id")!);
    expect(r.headers.has("ratelimit-limit")).toBe(false);
    // Upstream saw an aborted request, never a complete 100 MB + 1 body.
    expect(t.world.sim.requests.filter((q) => q.path.endsWith("/media") && q.bodyLength > 100 * MB)).toHaveLength(0);
  });

  test("a declared 100 MB body passes with its Content-Length", async () => {
    const blob = new Blob([new Uint8Array(100 * MB)]);
    const r = await t.world.call(`/v21.0/${t.biz.phoneNumberId}/media`, uploadInit(blob));
    expect(r.status).toBe(200);
    expect(last().headers["content-length"]).toBe(String(100 * MB));
    expect(last().bodyLength).toBe(100 * MB);
  });
});
