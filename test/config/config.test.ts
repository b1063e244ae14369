import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, DEFAULT_UPSTREAM_URL, parseConfig } from "../../src/config/config.ts";
import { tempDir, TEST_ENCRYPTION_KEY } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, runMain, waitForOk } from "../support/process.ts";

const base = { APP_SECRET: "s", ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("parseConfig accepted the environment");
}

describe("parseConfig", () => {
  test("defaults follow the documented settings (docs/operations.md#configuration)", () => {
    const config = parseConfig(base);
    expect(config.port).toBe(8080);
    expect(config.host).toBe("0.0.0.0");
    expect(config.database).toEqual({ kind: "sqlite", path: "./data/switchboard.db" });
    expect(config.redis).toBeNull();
    expect(config.upstreamUrl).toBe(DEFAULT_UPSTREAM_URL);
    expect(config.adminToken).toBeNull();
    expect(config.webhookVerifyToken).toBeNull();
    expect(config.devMode).toBe(false);
    expect(config.upstreamTimeoutMs).toBe(30_000);
    expect(config.upstreamMediaTimeoutMs).toBe(120_000);
    expect(config.proxyBodyBufferBytes).toBe(65_536);
    expect(config.requestBodyTimeoutMs).toBe(30_000);
    expect(config.webhookTimeoutMs).toBe(10_000);
    expect(config.webhookRetrySchedule).toEqual([5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000]);
    expect(config.mail).toBeNull();
    expect(config.auditRetentionMs).toBe(90 * 86_400_000);
    expect(config.instances).toEqual({ id: null, heartbeatMs: 1_000, deadAfterMs: 5_000 });
    expect(config.trustedProxies).toEqual([]);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test("reads every variable", () => {
    const config = parseConfig({
      ...base,
      PORT: "9090",
      HOST: "127.0.0.1",
      DATABASE_URL: "file:/tmp/x.db",
      UPSTREAM_URL: "http://127.0.0.1:7000",
      WEBHOOK_VERIFY_TOKEN: "vt",
      ADMIN_TOKEN: "at",
      DEV_MODE: "1",
      UPSTREAM_TIMEOUT_MS: "100",
      UPSTREAM_MEDIA_TIMEOUT_MS: "200",
      WEBHOOK_TIMEOUT_MS: "300",
      WEBHOOK_RETRY_SCHEDULE: "250ms, 2s,1m,1h",
      SMTP_URL: "smtp://127.0.0.1:2525",
      MAIL_FROM: "ops@example.com",
      PROXY_BODY_BUFFER_BYTES: "0",
      REQUEST_BODY_TIMEOUT_MS: "400",
      AUDIT_RETENTION: "30d",
      INSTANCE_ID: "eu-1.example:8080",
      INSTANCE_HEARTBEAT_MS: "200",
      INSTANCE_DEAD_AFTER_MS: "600",
    });
    expect(config).toMatchObject({
      auditRetentionMs: 30 * 86_400_000,
      port: 9090,
      host: "127.0.0.1",
      database: { kind: "sqlite", path: "/tmp/x.db" },
      upstreamUrl: "http://127.0.0.1:7000",
      webhookVerifyToken: "vt",
      adminToken: "at",
      devMode: true,
      upstreamTimeoutMs: 100,
      upstreamMediaTimeoutMs: 200,
      webhookTimeoutMs: 300,
      webhookRetrySchedule: [250, 2000, 60_000, 3_600_000],
      mail: { smtpUrl: "smtp://127.0.0.1:2525", from: "ops@example.com" },
      proxyBodyBufferBytes: 0,
      requestBodyTimeoutMs: 400,
      instances: { id: "eu-1.example:8080", heartbeatMs: 200, deadAfterMs: 600 },
    });
  });

  test("the scale-out mode: a postgres:// DATABASE_URL with REDIS_URL, keys under REDIS_KEY_PREFIX (docs/operations.md#scale-out)", () => {
    const scaled = parseConfig({
      ...base,
      DATABASE_URL: "postgres://sb:pw@db.internal:5432/switchboard",
      REDIS_URL: "redis://cache.internal:6379",
    });
    expect(scaled.database).toEqual({ kind: "postgres", url: "postgres://sb:pw@db.internal:5432/switchboard" });
    expect(scaled.redis).toEqual({ url: "redis://cache.internal:6379", keyPrefix: "switchboard:" });
    expect(scaled.postgres).toEqual({ poolSize: 10, directUrl: null, startTimeoutMs: 60_000 });
    expect(
      parseConfig({
        ...base,
        DATABASE_URL: "postgres://sb@pgbouncer.internal:6432/switchboard",
        DATABASE_DIRECT_URL: "postgres://sb@db.internal:5432/switchboard",
        DATABASE_POOL_SIZE: "4",
        DATABASE_START_TIMEOUT: "5m",
        REDIS_URL: "redis://cache.internal:6379",
      }).postgres,
    ).toEqual({ poolSize: 4, directUrl: "postgres://sb@db.internal:5432/switchboard", startTimeoutMs: 300_000 });
    expect(
      parseConfig({
        ...base,
        DATABASE_URL: "postgresql://db/x",
        REDIS_URL: "rediss://c:6380",
        REDIS_KEY_PREFIX: "sb-eu:",
      }).redis,
    ).toEqual({ url: "rediss://c:6380", keyPrefix: "sb-eu:" });
  });

  test("MAIL_FROM may name the sender; without SMTP_URL nothing is emailed", () => {
    expect(
      parseConfig({ ...base, SMTP_URL: "smtps://u:p@mail.example.com", MAIL_FROM: "Switchboard <alerts@example.com>" })
        .mail,
    ).toEqual({ smtpUrl: "smtps://u:p@mail.example.com", from: "Switchboard <alerts@example.com>" });
    expect(parseConfig({ ...base, MAIL_FROM: "alerts@example.com" }).mail).toBeNull();
  });

  test("traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then they go to its /v1/traces, one span per call unless OTEL_SPAN_DETAIL=full", () => {
    expect(parseConfig(base).tracing).toBeNull();
    expect(parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).tracing).toEqual({
      url: "http://collector:4318/v1/traces",
      serviceName: "switchboard",
      sampler: "parentbased_always_on",
      ratio: 1,
      detail: "call",
    });
    expect(
      parseConfig({
        ...base,
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com/otlp/",
        OTEL_SERVICE_NAME: "gateway-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_SPAN_DETAIL: "full",
      }).tracing,
    ).toEqual({
      url: "https://otel.example.com/otlp/v1/traces",
      serviceName: "gateway-eu",
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      detail: "full",
    });
  });

  test("Embedded Signup is off unless its app and configuration ids are set; the SDK's origins are what the page allows", () => {
    expect(parseConfig(base).embeddedSignup).toBeNull();
    expect(
      parseConfig({ ...base, EMBEDDED_SIGNUP_APP_ID: "1234", EMBEDDED_SIGNUP_CONFIG_ID: "5678" }).embeddedSignup,
    ).toEqual({
      appId: "1234",
      configId: "5678",
      sdkUrl: "https://connect.facebook.net/en_US/sdk.js",
      origins: ["https://connect.facebook.net", "https://www.facebook.com", "https://web.facebook.com"],
      expiryMs: 3_600_000,
      startsPerHour: 10,
      maxUnfinished: 5,
    });
    expect(
      parseConfig({
        ...base,
        EMBEDDED_SIGNUP_APP_ID: "1",
        EMBEDDED_SIGNUP_CONFIG_ID: "2",
        EMBEDDED_SIGNUP_EXPIRY: "30m",
        EMBEDDED_SIGNUP_STARTS_PER_HOUR: "3",
        EMBEDDED_SIGNUP_MAX_UNFINISHED: "1",
      }).embeddedSignup,
    ).toMatchObject({ expiryMs: 1_800_000, startsPerHour: 3, maxUnfinished: 1 });
    expect(
      parseConfig({
        ...base,
        EMBEDDED_SIGNUP_APP_ID: "1",
        EMBEDDED_SIGNUP_CONFIG_ID: "2",
        EMBEDDED_SIGNUP_SDK_URL: "http://127.0.0.1:8090/_sim/signup/sdk.js",
      }).embeddedSignup,
    ).toMatchObject({ sdkUrl: "http://127.0.0.1:8090/_sim/signup/sdk.js", origins: ["http://127.0.0.1:8090"] });
  });

  test("DEV_MODE needs neither APP_SECRET nor ENCRYPTION_KEY", () => {
    const config = parseConfig({ DEV_MODE: "1" });
    expect(config.appSecret.length).toBeGreaterThan(0);
    expect(config.encryptionKey).toBeNull();
  });

  test.each([
    [{ ENCRYPTION_KEY: TEST_ENCRYPTION_KEY }, "APP_SECRET"],
    [{ APP_SECRET: "s" }, "ENCRYPTION_KEY"],
    [{ ...base, ENCRYPTION_KEY: Buffer.alloc(16).toString("base64") }, "ENCRYPTION_KEY"],
    [{ ...base, ENCRYPTION_KEY: "not base64 at all!!" }, "ENCRYPTION_KEY"],
    [{ ...base, PORT: "eighty" }, "PORT"],
    [{ ...base, PORT: "70000" }, "PORT"],
    [{ ...base, DEV_MODE: "yes" }, "DEV_MODE"],
    [{ ...base, DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ ...base, DATABASE_URL: "postgres://127.0.0.1/test" }, "REDIS_URL"],
    [{ ...base, DATABASE_URL: "postgres://127.0.0.1/test", REDIS_URL: "127.0.0.1:6379" }, "REDIS_URL"],
    [{ ...base, UPSTREAM_URL: "ftp://x" }, "UPSTREAM_URL"],
    [{ ...base, EMBEDDED_SIGNUP_APP_ID: "1234" }, "EMBEDDED_SIGNUP_CONFIG_ID"],
    [{ ...base, EMBEDDED_SIGNUP_CONFIG_ID: "5678" }, "EMBEDDED_SIGNUP_APP_ID"],
    [{ ...base, EMBEDDED_SIGNUP_APP_ID: "12 34", EMBEDDED_SIGNUP_CONFIG_ID: "5678" }, "EMBEDDED_SIGNUP_APP_ID"],
    [
      {
        ...base,
        EMBEDDED_SIGNUP_APP_ID: "1",
        EMBEDDED_SIGNUP_CONFIG_ID: "2",
        EMBEDDED_SIGNUP_SDK_URL: "javascript:alert(1)",
      },
      "EMBEDDED_SIGNUP_SDK_URL",
    ],
    [
      { ...base, EMBEDDED_SIGNUP_APP_ID: "1", EMBEDDED_SIGNUP_CONFIG_ID: "2", EMBEDDED_SIGNUP_EXPIRY: "5m" },
      "EMBEDDED_SIGNUP_EXPIRY",
    ],
    [
      { ...base, EMBEDDED_SIGNUP_APP_ID: "1", EMBEDDED_SIGNUP_CONFIG_ID: "2", EMBEDDED_SIGNUP_EXPIRY: "2d" },
      "EMBEDDED_SIGNUP_EXPIRY",
    ],
    [
      { ...base, EMBEDDED_SIGNUP_APP_ID: "1", EMBEDDED_SIGNUP_CONFIG_ID: "2", EMBEDDED_SIGNUP_STARTS_PER_HOUR: "0" },
      "EMBEDDED_SIGNUP_STARTS_PER_HOUR",
    ],
    [
      { ...base, EMBEDDED_SIGNUP_APP_ID: "1", EMBEDDED_SIGNUP_CONFIG_ID: "2", EMBEDDED_SIGNUP_MAX_UNFINISHED: "many" },
      "EMBEDDED_SIGNUP_MAX_UNFINISHED",
    ],
    [{ ...base, UPSTREAM_URL: "http://x/" }, "UPSTREAM_URL"],
    [{ ...base, UPSTREAM_URL: "nonsense" }, "UPSTREAM_URL"],
    [{ ...base, UPSTREAM_TIMEOUT_MS: "-1" }, "UPSTREAM_TIMEOUT_MS"],
    [{ ...base, UPSTREAM_MEDIA_TIMEOUT_MS: "1.5" }, "UPSTREAM_MEDIA_TIMEOUT_MS"],
    [{ ...base, WEBHOOK_TIMEOUT_MS: "0" }, "WEBHOOK_TIMEOUT_MS"],
    [{ ...base, PROXY_BODY_BUFFER_BYTES: "2097152" }, "PROXY_BODY_BUFFER_BYTES"],
    [{ ...base, WEBHOOK_RETRY_SCHEDULE: "5s,soon" }, "WEBHOOK_RETRY_SCHEDULE"],
    [{ ...base, WEBHOOK_RETRY_SCHEDULE: "5 s" }, "WEBHOOK_RETRY_SCHEDULE"],
    [{ ...base, SMTP_URL: "mail.example.com", MAIL_FROM: "ops@example.com" }, "SMTP_URL"],
    // No made-up sender: mail from an address nobody owns is refused or lost as spam.
    [{ ...base, SMTP_URL: "smtp://127.0.0.1:2525" }, "MAIL_FROM"],
    [{ ...base, SMTP_URL: "smtp://127.0.0.1:2525", MAIL_FROM: "ops" }, "MAIL_FROM"],
    [{ ...base, MAIL_FROM: "Switchboard <ops>" }, "MAIL_FROM"],
    [{ ...base, LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ ...base, AUDIT_RETENTION: "12h" }, "AUDIT_RETENTION"],
    [{ ...base, AUDIT_RETENTION: "forever" }, "AUDIT_RETENTION"],
    [{ ...base, INSTANCE_ID: "two words" }, "INSTANCE_ID"],
    [{ ...base, INSTANCE_ID: "x".repeat(201) }, "INSTANCE_ID"],
    [{ ...base, INSTANCE_HEARTBEAT_MS: "10" }, "INSTANCE_HEARTBEAT_MS"],
    [{ ...base, DATABASE_POOL_SIZE: "0" }, "DATABASE_POOL_SIZE"],
    [{ ...base, DATABASE_POOL_SIZE: "ten" }, "DATABASE_POOL_SIZE"],
    [{ ...base, DATABASE_DIRECT_URL: "db.internal:5432/switchboard" }, "DATABASE_DIRECT_URL"],
    [{ ...base, DATABASE_START_TIMEOUT: "500ms" }, "DATABASE_START_TIMEOUT"],
    // Fewer than three missed beats would take an instance that was only a little late for dead.
    [{ ...base, INSTANCE_HEARTBEAT_MS: "1000", INSTANCE_DEAD_AFTER_MS: "2999" }, "INSTANCE_DEAD_AFTER_MS"],
    [{ ...base, HOST: "999.1.1.1" }, "HOST"],
    [{ ...base, HOST: "not a host" }, "HOST"],
    [{ ...base, HOST: "http://example.com" }, "HOST"],
    [{ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
    [{ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector:4317" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
    [
      { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER: "sometimes" },
      "OTEL_TRACES_SAMPLER",
    ],
    [
      { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER_ARG: "1.5" },
      "OTEL_TRACES_SAMPLER_ARG",
    ],
    [
      { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER_ARG: "10%" },
      "OTEL_TRACES_SAMPLER_ARG",
    ],
    [{ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SPAN_DETAIL: "all" }, "OTEL_SPAN_DETAIL"],
    [{ ...base, TRUSTED_PROXIES: "nginx" }, "TRUSTED_PROXIES"],
    [{ ...base, TRUSTED_PROXIES: "10.0.0.0/33" }, "TRUSTED_PROXIES"],
    [{ ...base, TRUSTED_PROXIES: "127.0.0.1,,::1" }, "TRUSTED_PROXIES"],
    [{ ...base, TRUSTED_PROXIES: "127.1" }, "TRUSTED_PROXIES"],
    [{ ...base, TRUSTED_PROXIES: "2001:db8::/129" }, "TRUSTED_PROXIES"],
  ])("a bad value names its variable: %j", (env, variable) => {
    const error = errorOf(env as Record<string, string>);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
  });
});

test("TRUSTED_PROXIES takes IPv4 and IPv6 addresses and ranges, spaces around commas allowed", () => {
  const { trustedProxies } = parseConfig({ ...base, TRUSTED_PROXIES: "127.0.0.1, ::1 ,10.0.0.0/8,2001:db8::/32" });
  expect(trustedProxies.map((r) => `${r.family}/${r.bits}`)).toEqual(["4/32", "6/128", "4/8", "6/32"]);
});

describe("switchboard serve with a bad configuration", () => {
  // Each case gets a fresh directory; `env` builds the variables from it.
  test.each([
    ["ENCRYPTION_KEY", (dir: string) => ({ ENCRYPTION_KEY: "short", DATABASE_URL: `file:${dir}/db.sqlite` })],
    // The database's directory would have to be made inside a file.
    [
      "DATABASE_URL",
      (dir: string) => {
        writeFileSync(join(dir, "a-file"), "");
        return { DATABASE_URL: `file:${dir}/a-file/db.sqlite` };
      },
    ],
    [
      "DATABASE_URL",
      (dir: string) => {
        writeFileSync(
          join(dir, "notes.db"),
          "these are notes, not a SQLite database, and long enough to have a header",
        );
        return { DATABASE_URL: `file:${dir}/notes.db` };
      },
    ],
    // An address of no interface of this machine.
    [
      "HOST",
      (dir: string) => ({ HOST: "203.0.113.77", PORT: String(freePort()), DATABASE_URL: `file:${dir}/db.sqlite` }),
    ],
    ["TRUSTED_PROXIES", (dir: string) => ({ TRUSTED_PROXIES: "10.0.0.1/8/8", DATABASE_URL: `file:${dir}/db.sqlite` })],
    ["MAIL_FROM", (dir: string) => ({ SMTP_URL: "smtp://127.0.0.1:2525", DATABASE_URL: `file:${dir}/db.sqlite` })],
  ] as const)("stops with one line naming %s and exit code 2", async (variable, env) => {
    const dir = tempDir();
    try {
      const { code, stdout, stderr } = await runMain(["serve"], {
        PATH: process.env.PATH ?? "",
        APP_SECRET: "s",
        ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        ...env(dir.path),
      });
      expect(code).toBe(2);
      expect(stdout).toBe("");
      const lines = stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`switchboard: configuration error: ${variable}:`);
    } finally {
      dir.cleanup();
    }
  });

  test("a second server on the port of a running one stops with one line naming PORT", async () => {
    const dir = tempDir();
    const port = String(freePort());
    const first = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: processEnv(join(dir.path, "first.sqlite"), { PORT: port, HOST: "127.0.0.1" }),
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      await waitForOk(`http://127.0.0.1:${port}/healthz`);
      const second = await runMain(
        ["serve"],
        processEnv(join(dir.path, "second.sqlite"), { PORT: port, HOST: "127.0.0.1" }),
      );
      expect(second.code).toBe(2);
      expect(second.stderr.trim().split("\n")).toEqual([
        `switchboard: configuration error: PORT: ${port} is in use on 127.0.0.1`,
      ]);
    } finally {
      first.kill();
      await first.exited;
      dir.cleanup();
    }
  });

  test("a second server on the database of a running one stops with one line naming DATABASE_URL; once the first dies, a server starts", async () => {
    const dir = tempDir();
    const dbPath = join(dir.path, "db.sqlite");
    const serverOn = (port: string) => processEnv(dbPath, { PORT: port, HOST: "127.0.0.1" });
    const firstPort = String(freePort());
    const first = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: serverOn(firstPort),
      stdout: "ignore",
      stderr: "ignore",
    });
    let third: ReturnType<typeof Bun.spawn> | null = null;
    try {
      await waitForOk(`http://127.0.0.1:${firstPort}/healthz`);
      const second = await runMain(["serve"], serverOn(String(freePort())));
      expect(second.code).toBe(2);
      expect(second.stderr.trim().split("\n")).toEqual([
        `switchboard: configuration error: DATABASE_URL: ${dbPath} is in use by another switchboard server (it holds ${dbPath}-lock)`,
      ]);
      // The CLI works beside the server.
      const cli = await runMain(
        ["admin", "accounts", "create", "--name", "Beside", "--email", "b@example.com"],
        serverOn(firstPort),
      );
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.stdout)).toMatchObject({ name: "Beside" });
      expect((await fetch(`http://127.0.0.1:${firstPort}/healthz`)).status).toBe(200);
      // Killed outright, the first leaves nothing behind that would refuse its successor.
      first.kill("SIGKILL");
      await first.exited;
      const thirdPort = String(freePort());
      third = Bun.spawn([process.execPath, MAIN, "serve"], {
        cwd: ROOT,
        env: serverOn(thirdPort),
        stdout: "ignore",
        stderr: "ignore",
      });
      await waitForOk(`http://127.0.0.1:${thirdPort}/healthz`);
    } finally {
      first.kill();
      await first.exited;
      third?.kill();
      await third?.exited;
      dir.cleanup();
    }
  });

  test("a host name or an IP address of either family is a HOST", () => {
    for (const host of ["localhost", "switchboard.internal", "127.0.0.1", "::", "::1", "0.0.0.0"]) {
      expect(parseConfig({ ...base, HOST: host }).host).toBe(host);
    }
  });
});
