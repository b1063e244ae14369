import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SCALAR_BUNDLE_PATH, SCALAR_VERSION } from "../../src/http/api-docs.ts";
import { createLogger, redact } from "../../src/observability/logger.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { admin, startApp, tempDir, TEST_APP_SECRET, testDeps } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { rawRequest } from "../support/raw-http.ts";
import { API_BODY_LIMIT } from "../../src/http/request-body.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { messageChange, postUpstream, relayAccount } from "../webhooks/support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function running() {
  const deps = await testDeps();
  const server = startApp(deps);
  cleanups.push(deps.cleanup, server.stop);
  return { deps, url: server.url };
}

describe("operations endpoints", () => {
  test("/healthz checks the database, and names the instance that answered and the instances alive", async () => {
    const { deps, url } = await running();
    const ok = await fetch(`${url}/healthz`);
    expect(ok.status).toBe(200);
    const at = new Date(deps.clock.now()).toISOString();
    const self = deps.store.instances.self;
    expect(await ok.json()).toEqual({
      status: "ok",
      instance: self,
      instances: [{ id: self, started_at: at, last_beat_at: at }],
    });
    expect(await (await fetch(`${url}/metrics`)).text()).toContain(`switchboard_instance_live{id="${self}"} 1`);
    await deps.store.close();
    const down = await fetch(`${url}/healthz`);
    expect(down.status).toBe(503);
  });

  test("/metrics speaks Prometheus text and counts requests", async () => {
    const { url } = await running();
    await admin(url, "POST", "/admin/accounts", { name: "A", email: "a@example.com" });
    const response = await fetch(`${url}/metrics`);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toContain("# TYPE switchboard_http_requests_total counter");
    expect(text).toMatch(/switchboard_http_requests_total\{group="admin",status="2xx"\} 1/);
    expect(text).toContain("switchboard_process_resident_memory_bytes");
    expect(text).toContain("switchboard_nodejs_heap_size_used_bytes");
    // Not the heap's spaces: Bun counts them by walking the whole heap, and a scrape would stall
    // every request meanwhile.
    expect(text).not.toContain("heap_space");
  });

  test("/docs serves OpenAPI covering the operator and dashboard APIs", async () => {
    const { url } = await running();
    const page = await fetch(`${url}/docs`);
    expect(page.headers.get("content-type")).toContain("text/html");
    // Scalar's bundle from this service, told to send nothing to Scalar's own services.
    const html = await page.text();
    expect(html).toContain(`<script src="${SCALAR_BUNDLE_PATH}"></script>`);
    expect(SCALAR_BUNDLE_PATH).toContain(SCALAR_VERSION);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const configuration = JSON.parse(
      html
        .match(/data-configuration="([^"]*)"/)![1]!
        .replaceAll("&quot;", '"')
        .replaceAll("&amp;", "&"),
    );
    expect(configuration).toMatchObject({
      url: "/docs/json",
      telemetry: false,
      withDefaultFonts: false,
      agent: { disabled: true },
      mcp: { disabled: true },
    });
    const spec = (await (await fetch(`${url}/docs/json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(spec.openapi).toStartWith("3.");
    for (const path of ["/admin/accounts", "/admin/accounts/{id}/numbers", "/admin/wabas/{waba_id}", "/api/session"]) {
      expect(Object.keys(spec.paths)).toContain(path);
    }
    expect(Object.keys(spec.paths).some((p) => p.startsWith("/healthz") || p.startsWith("/docs"))).toBe(false);
  });

  test("/docs is sent with the dashboard's CSP family: scripts only from this origin, nothing from another", async () => {
    const { url } = await running();
    const page = await fetch(`${url}/docs`);
    const csp = page.headers.get("content-security-policy")!;
    const directives = Object.fromEntries(
      csp.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]),
    );
    expect(directives).toEqual({
      "default-src": "'none'",
      "script-src": "'self'",
      "style-src": "'self' 'unsafe-inline'",
      "img-src": "'self'",
      "connect-src": "'self'",
      "form-action": "'self'",
      "frame-ancestors": "'none'",
      "base-uri": "'none'",
    });
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("x-proxy-request-id")).toMatch(/^req_/);
  });

  test("Scalar's bundle is the npm package's file, gzipped for browsers that accept it", async () => {
    const { url } = await running();
    const original = await Bun.file(
      join(ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js"),
    ).bytes();
    const plain = await fetch(`${url}${SCALAR_BUNDLE_PATH}`, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toStartWith("text/javascript");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await plain.bytes()).equals(Buffer.from(original))).toBe(true);
    const compressed = await fetch(`${url}${SCALAR_BUNDLE_PATH}`, {
      headers: { "accept-encoding": "gzip, deflate" },
      decompress: false,
    } as RequestInit);
    expect(compressed.headers.get("content-encoding")).toBe("gzip");
    expect(compressed.headers.get("cache-control")).toContain("immutable");
    const body = await compressed.bytes();
    expect(body.length).toBeLessThan(original.length / 2);
    expect(Buffer.from(Bun.gunzipSync(body)).equals(Buffer.from(original))).toBe(true);
  });

  test("every response carries X-Proxy-Request-Id, equal to the trace_id of an error", async () => {
    const { url } = await running();
    const ids = new Set<string>();
    for (const path of ["/healthz", "/metrics", "/docs/json", "/admin/accounts", "/v21.0/1/messages", "/nowhere"]) {
      const response = await fetch(`${url}${path}`);
      const id = response.headers.get("x-proxy-request-id");
      expect(id).toMatch(/^req_[0-9a-z]{20}$/);
      ids.add(id!);
      if (response.status >= 400)
        expect(((await response.json()) as { error: { trace_id: string } }).error.trace_id).toBe(id!);
    }
    expect(ids.size).toBe(6);
  });

  test("requests are logged as JSON with their request id and no credentials", async () => {
    const { deps, url } = await running();
    await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer px_live_abcdefghijklmnopqrstuvwxyzABCDEF" },
    });
    // The request line is written after the response has gone out.
    const find = () => deps.logger.lines.find((l) => l.msg === "request" && l.path === "/admin/accounts");
    for (let i = 0; i < 100 && !find(); i++) await Bun.sleep(5);
    const line = find();
    expect(line).toMatchObject({ method: "POST", status: 401, level: "info" });
    expect(line!.request_id).toMatch(/^req_/);
    expect(JSON.stringify(deps.logger.lines)).not.toContain("abcdefghijklmnop");
  });
});

describe("log redaction", () => {
  test("secret-named fields and secret-looking values never reach the log", () => {
    const lines: string[] = [];
    const logger = createLogger("debug", (line) => lines.push(line));
    logger.info("x", {
      access_token: "EAAG-1",
      headers: { Authorization: "Bearer t", cookie: "sb_session=1" },
      password: "p",
      app_secret: "s",
      note: "key px_live_abcdEFGHijklMNOPqrstUVWXyz012345 and whsec_c2VjcmV0c2VjcmV0",
      error: new Error("bad whsec_QUJDRA=="),
    });
    const text = lines.join("\n");
    for (const secret of ["EAAG-1", "Bearer t", "sb_session=1", '"p"', '"s"', "EFGHijkl", "c2VjcmV0", "QUJDRA"])
      expect(text).not.toContain(secret);
    expect(text).toContain("px_live_abcd…");
    expect(redact({ nested: [{ token: "t" }] })).toEqual({ nested: [{ token: "[redacted]" }] });
  });
  test("levels below the configured one are dropped", () => {
    const lines: string[] = [];
    const logger = createLogger("warn", (line) => lines.push(line));
    logger.info("quiet");
    logger.warn("loud");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["loud"]);
  });
});

describe("the server process", () => {
  test("starts from source, answers /healthz and stops cleanly on SIGTERM", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = freePort();
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: processEnv(join(dir.path, "db.sqlite"), { PORT: String(port), HOST: "127.0.0.1" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    await waitForOk(`http://127.0.0.1:${port}/healthz`);
    const check = Bun.spawnSync([process.execPath, MAIN, "healthcheck"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    });
    expect(check.exitCode).toBe(0);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const log = await new Response(proc.stdout).text();
    expect(log).toContain('"msg":"listening"');
    expect(log).toContain('"msg":"no accounts yet: create one on the console\'s Accounts page, or with"');
    expect(log).toContain('"msg":"shutting down","signal":"SIGTERM"');
    const stopped = Bun.spawnSync([process.execPath, MAIN, "healthcheck"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    });
    expect(stopped.exitCode).toBe(1);
  });
});

describe("the first start", () => {
  test("on an empty database the log prints the command that makes the first operator; run as printed, from another directory, its operator signs in to this server's console", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = freePort();
    const env = processEnv(join(dir.path, "data", "switchboard.db"), { PORT: String(port), HOST: "127.0.0.1" });
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env,
      stdout: "pipe",
      stderr: "inherit",
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    let log = "";
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    while (!log.includes("no operator yet")) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the server stopped:\n${log}`);
      log += decoder.decode(value, { stream: true });
    }
    while (!log.slice(log.indexOf("no operator yet")).includes("\n")) {
      const { value } = await reader.read();
      log += decoder.decode(value, { stream: true });
    }
    const line = JSON.parse(log.split("\n").find((l) => l.includes("no operator yet"))!) as {
      command: string;
      console: string;
    };
    expect(line.console).toBe(`http://127.0.0.1:${port}/operator`);
    const command = line.command
      .replace(" switchboard admin ", ` '${process.execPath}' '${MAIN}' admin `)
      .replace("you@example.com", "first@ops.example")
      .replace("'<at least 10 characters>'", "'first operator pw'");
    expect(command).toStartWith(`DATABASE_URL=file:${join(dir.path, "data", "switchboard.db")} `);
    // From another directory, with no DATABASE_URL of its own: the printed one says where.
    const { DATABASE_URL: _, ...elsewhere } = env;
    const made = Bun.spawnSync(["sh", "-c", command], { cwd: dir.path, env: elsewhere });
    expect(made.exitCode).toBe(0);
    const signIn = await fetch(`${line.console}/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "first@ops.example", password: "first operator pw" }),
    });
    expect(signIn.status).toBe(204);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    expect((await fetch(line.console, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    reader.releaseLock();
    proc.kill("SIGTERM");
    await proc.exited;
  });
});

describe("the server's disk", () => {
  test("/metrics times each flush of the write-ahead log, which an accepted event waits for", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      stdout: "ignore",
      stderr: "inherit",
      env: processEnv(join(dir.path, "db.sqlite"), {
        PORT: String(port),
        HOST: "127.0.0.1",
        DEV_MODE: "1",
        LOG_LEVEL: "warn",
      }),
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    await waitForOk(`${url}/healthz`);
    const flushes = async () =>
      Number(/^switchboard_wal_sync_seconds_count (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
    const a = await relayAccount(url);
    // Nothing listens there: the delivery fails, and a failed attempt's record waits for no flush.
    await a.endpoint("http://127.0.0.1:9/hook");
    expect(await flushes()).toBe(0);

    const event = {
      object: "whatsapp_business_account",
      entry: [{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }],
    };
    expect((await postUpstream(url, JSON.stringify(event))).status).toBe(200);
    expect(await flushes()).toBe(1);
  });
});

describe("graceful shutdown", () => {
  test("SIGTERM lets a proxied call that is in flight finish, then exits 0", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const sim = startSimulator({
      wabas: [
        { wabaId: "1001", accessToken: "EAAG-slow", appSecret: TEST_APP_SECRET, numbers: [{ phoneNumberId: "2001" }] },
      ],
    });
    cleanups.push(() => sim.stop());
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
      env: processEnv(join(dir.path, "db.sqlite"), { PORT: String(port), HOST: "127.0.0.1", UPSTREAM_URL: sim.url }),
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    await waitForOk(`${url}/healthz`);
    const account = (await (
      await admin(url, "POST", "/admin/accounts", { name: "A", email: "a@example.com" })
    ).json()) as { id: string };
    await admin(url, "POST", `/admin/accounts/${account.id}/wabas`, { waba_id: "1001", access_token: "EAAG-slow" });
    await admin(url, "POST", `/admin/accounts/${account.id}/numbers`, {
      phone_number_id: "2001",
      waba_id: "1001",
      kind: "embedded",
    });
    const { key } = (await (
      await admin(url, "POST", `/admin/accounts/${account.id}/api-keys`, { mode: "live" })
    ).json()) as { key: string };

    sim.fault("2001", { delayMs: 1500 });
    const inFlight = fetch(`${url}/v21.0/2001/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "slow" } }),
    });
    // Wait until the call has reached upstream, then ask the server to stop.
    while (sim.requests.filter((r) => r.path.endsWith("/messages")).length === 0) await Bun.sleep(10);
    proc.kill("SIGTERM");
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { messages: { id: string }[] }).messages[0]!.id).toStartWith("wamid.");
    expect(await proc.exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe("request bodies outside the proxy", () => {
  test("a declared body over 1 MB to the operator API, the dashboard or its API gets 413 before it is read, one of undeclared length 411; ingress keeps its 10 MB", async () => {
    const { url } = await running();
    // The length is declared and never sent: the answer comes without waiting for it.
    for (const [path, auth] of [
      ["/api/session", ""],
      ["/admin/accounts", "Authorization: Bearer test-admin-token\r\n"],
      ["/dashboard/sign-in", ""],
    ]) {
      const r = await rawRequest(
        url,
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}`,
        "{",
      );
      expect([path, r.status, JSON.parse(r.body).error.code]).toEqual([path, 413, "body_too_large"]);
      expect(r.headers["x-proxy-request-id"]).toStartWith("req_");
    }
    // A body that declares no length is refused too, before any of it is read.
    for (const path of ["/api/session", "/admin/accounts", "/dashboard/sign-in"]) {
      const r = await rawRequest(
        url,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`,
        "1\r\n{\r\n",
      );
      expect([path, r.status, JSON.parse(r.body).error.code]).toEqual([path, 411, "length_required"]);
    }
    const oneTooMany = await admin(url, "POST", "/admin/accounts", {
      name: "x".repeat(API_BODY_LIMIT),
      email: "a@example.com",
    });
    expect(oneTooMany.status).toBe(413);
    expect((await admin(url, "POST", "/admin/accounts", { name: "A", email: "a@example.com" })).status).toBe(201);

    // An upstream event of 2 MB is read by ingress itself (an unknown WABA: accepted, nothing kept).
    const event = new TextEncoder().encode(
      JSON.stringify({
        object: "whatsapp_business_account",
        entry: [{ id: "1", changes: [{ field: "messages", value: { pad: "p".repeat(2 * 1024 * 1024) } }] }],
      }),
    );
    const ingress = await fetch(`${url}/webhooks/upstream`, {
      method: "POST",
      headers: { "x-hub-signature-256": hubSignature(TEST_APP_SECRET, event) },
      body: event,
    });
    expect(ingress.status).toBe(200);
  });
});
