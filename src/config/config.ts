import { isIP } from "node:net";
import { PLATFORM_WORD, platformNames, type PlatformNames } from "../platform/names.ts";
import { parseDuration } from "./duration.ts";

/** Where state lives: one SQLite file (":memory:" allowed in tests), or PostgreSQL for the scale-out mode (CONTRACT 6). */
export type DatabaseConfig =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  /** The scale-out mode's shared token buckets; required with PostgreSQL, unused with SQLite. */
  readonly redis: { readonly url: string; readonly keyPrefix: string } | null;
  readonly upstreamUrl: string;
  /** Version used for the service's own calls upstream (number sync). Proxied calls keep the caller's. */
  readonly upstreamApiVersion: string;
  readonly appSecret: string;
  readonly webhookVerifyToken: string | null;
  readonly adminToken: string | null;
  /** 32 bytes; null only in DEV_MODE, where main.ts supplies a key kept beside the database. */
  readonly encryptionKey: Uint8Array | null;
  readonly devMode: boolean;
  readonly upstreamTimeoutMs: number;
  readonly upstreamMediaTimeoutMs: number;
  /** A proxied body that declares at most this many bytes is read before it is forwarded; 0 streams every body. */
  readonly proxyBodyBufferBytes: number;
  /** How long a body outside the proxy may take to arrive whole, from its request's headers; then 408 and the connection is closed. */
  readonly requestBodyTimeoutMs: number;
  readonly webhookTimeoutMs: number;
  /** Waits between attempts: N waits = N + 1 attempts. */
  readonly webhookRetrySchedule: readonly number[];
  /** Where warning and disable emails go and who they come from; null: they are logged and kept as notifications. */
  readonly mail: { readonly smtpUrl: string; readonly from: string } | null;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  /** OpenTelemetry traces: the OTLP/HTTP collector's traces URL, this service's name and which traces to keep; null: off. */
  readonly tracing: TracingConfig | null;
  /** The platform's own words (PLATFORM_NAME), SPEC's neutral ones by default. */
  readonly platform: PlatformNames;
  /** The request log of proxied calls (REQUEST_LOG, REQUEST_LOG_BUFFER): null when off. */
  readonly requestLog: { readonly buffer: number } | null;
  /** Embedded Signup on the Numbers page (EMBEDDED_SIGNUP_*): null when off. */
  readonly embeddedSignup: EmbeddedSignupConfig | null;
  /** How instances know who is alive (INSTANCE_*; src/instances/). */
  readonly instances: InstancesConfig;
}

export interface InstancesConfig {
  /**
   * What this instance's leases name as their holder, the same across its restarts (so that a
   * restart takes back its own leases at once); null: the server derives it from the host name
   * and PORT, which no two live servers on one machine share.
   */
  readonly id: string | null;
  /** How often each instance beats. */
  readonly heartbeatMs: number;
  /** An instance whose beats stopped this long is taken for dead, and its leases are taken back. */
  readonly deadAfterMs: number;
}

export interface EmbeddedSignupConfig {
  /** The service's app on the platform, whose APP_SECRET exchanges the popup's code. */
  readonly appId: string;
  /** The Embedded Signup configuration made for that app in the platform's developer console. */
  readonly configId: string;
  /** The platform's JavaScript SDK, which opens the signup popup. */
  readonly sdkUrl: string;
  /**
   * Where the SDK's script, frames and popup messages come from: the page's policy allows them and
   * the page's script takes session information only from them.
   */
  readonly origins: readonly string[];
  /**
   * How long a signup that has not finished keeps its number and its sealed code, token and PIN
   * (EMBEDDED_SIGNUP_EXPIRY): about an authorization code's lifetime.
   */
  readonly expiryMs: number;
  /** Signup starts and retries per account per hour, a token bucket (EMBEDDED_SIGNUP_STARTS_PER_HOUR). */
  readonly startsPerHour: number;
  /** Unfinished signups an account may have at once (EMBEDDED_SIGNUP_MAX_UNFINISHED). */
  readonly maxUnfinished: number;
}

/** OTEL_TRACES_SAMPLER's values (the OpenTelemetry specification's names). */
export const SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  readonly url: string;
  readonly serviceName: string;
  readonly sampler: SamplerName;
  /** The share of traces kept by the ratio samplers, 0 to 1. */
  readonly ratio: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`${variable}: ${detail}`);
  }
}

export const DEFAULT_UPSTREAM_URL = "https://graph.facebook.com";
/** Used only when DEV_MODE=1 and APP_SECRET is unset, so a development server starts with no setup. */
export const DEV_APP_SECRET = "switchboard-dev-app-secret";

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === "" ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A 0/1 setting that is on unless set to 0. */
function flagOn(env: Env, name: string): boolean {
  return text(env, name) === null || flag(env, name);
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name);
  if (raw === null || raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(name, `must be 0 or 1, got "${raw}"`);
}

function database(raw: string): DatabaseConfig {
  if (raw === ":memory:" || raw === "file::memory:") return { kind: "sqlite", path: ":memory:" };
  if (raw.startsWith("file:")) return { kind: "sqlite", path: raw.slice("file:".length) };
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError("DATABASE_URL", "is not a valid postgres:// URL");
    }
    return { kind: "postgres", url: raw };
  }
  throw new ConfigError(
    "DATABASE_URL",
    `must look like file:./data/switchboard.db or postgres://user:pass@host:5432/db, got "${raw}"`,
  );
}

function redis(env: Env, db: DatabaseConfig): Config["redis"] {
  const url = text(env, "REDIS_URL");
  const keyPrefix = text(env, "REDIS_KEY_PREFIX") ?? "switchboard:";
  if (url === null) {
    if (db.kind === "postgres")
      throw new ConfigError(
        "REDIS_URL",
        "is required with a postgres:// DATABASE_URL: it holds the rate limits every instance shares",
      );
    return null;
  }
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError("REDIS_URL", "must start with redis:// or rediss://");
  return Object.freeze({ url, keyPrefix });
}

/** An http:// or https:// URL, or a ConfigError naming `variable`. */
function httpUrl(variable: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, `is not a URL: "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(variable, "must start with http:// or https://");
  return url;
}

function upstreamUrl(raw: string): string {
  httpUrl("UPSTREAM_URL", raw);
  if (raw.endsWith("/")) throw new ConfigError("UPSTREAM_URL", "must not end with a slash");
  return raw;
}

function encryptionKey(raw: string | null, devMode: boolean): Uint8Array | null {
  if (raw === null) {
    if (devMode) return null;
    throw new ConfigError("ENCRYPTION_KEY", "is required (32 bytes, base64; make one with `openssl rand -base64 32`)");
  }
  const bytes = Buffer.from(raw, "base64");
  if (bytes.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) {
    throw new ConfigError("ENCRYPTION_KEY", `must be 32 bytes in base64, got ${bytes.length} bytes`);
  }
  return new Uint8Array(bytes);
}

function retrySchedule(raw: string | null): number[] {
  if (raw === null) return [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000];
  const parts = raw.split(",");
  const waits = parts.map(parseDuration);
  const bad = parts.find((_, i) => waits[i] === null);
  if (bad !== undefined) {
    throw new ConfigError("WEBHOOK_RETRY_SCHEDULE", `"${bad.trim()}" is not a duration like 5s, 1m or 2h`);
  }
  return waits as number[];
}

/** A name's labels (RFC 1123); a text of digits and dots only is an IPv4 address or nothing. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function host(raw: string | null): string {
  if (raw === null) return "0.0.0.0";
  if (isIP(raw) !== 0 || (HOST_NAME.test(raw) && !/^[\d.]+$/.test(raw))) return raw;
  throw new ConfigError("HOST", `must be an IP address or a host name to listen on, got "${raw}"`);
}

function logLevel(raw: string | null): Config["logLevel"] {
  if (raw === null) return "info";
  if (raw === "debug" || raw === "info" || raw === "warn" || raw === "error") return raw;
  throw new ConfigError("LOG_LEVEL", `must be debug, info, warn or error, got "${raw}"`);
}

/**
 * SMTP_URL and the sender it needs. No default sender: a made-up address (say, at localhost) is
 * refused or marked as spam by most mail servers, and the account would never hear of it. Without
 * SMTP_URL, MAIL_FROM is unused: notifications are logged and kept (CONTRACT 2).
 */
function mail(smtpUrl: string | null, from: string | null): Config["mail"] {
  if (from !== null && !/[^\s@<>]+@[^\s@<>]+/.test(from)) {
    throw new ConfigError(
      "MAIL_FROM",
      `must be an email address, such as alerts@example.com or "Switchboard <alerts@example.com>", got "${from}"`,
    );
  }
  if (smtpUrl === null) return null;
  if (!/^smtps?:\/\//.test(smtpUrl)) throw new ConfigError("SMTP_URL", "must start with smtp:// or smtps://");
  if (from === null)
    throw new ConfigError(
      "MAIL_FROM",
      "is required with SMTP_URL: the address warning and disable emails are sent from",
    );
  return Object.freeze({ smtpUrl, from });
}

/**
 * OTEL_EXPORTER_OTLP_ENDPOINT is the collector's base URL (OTLP/HTTP, port 4318 by convention);
 * traces go to its /v1/traces, as the OpenTelemetry specification says for this variable.
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG choose which traces are kept, as that
 * specification names them; by default every one (a caller's "not sampled" is honoured).
 */
function tracing(env: Env): Config["tracing"] {
  const endpoint = text(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (endpoint === null) return null;
  httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
  const sampler = text(env, "OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  if (!(SAMPLERS as readonly string[]).includes(sampler))
    throw new ConfigError("OTEL_TRACES_SAMPLER", `must be one of ${SAMPLERS.join(", ")}, got "${sampler}"`);
  const arg = text(env, "OTEL_TRACES_SAMPLER_ARG");
  const ratio = arg === null ? 1 : Number(arg);
  if (arg !== null && (!/^\d*\.?\d+$/.test(arg) || ratio > 1))
    throw new ConfigError("OTEL_TRACES_SAMPLER_ARG", `must be a ratio from 0 to 1, got "${arg}"`);
  return Object.freeze({
    url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
    serviceName: text(env, "OTEL_SERVICE_NAME") ?? "switchboard",
    sampler: sampler as SamplerName,
    ratio,
  });
}

export const DEFAULT_SIGNUP_SDK_URL = "https://connect.facebook.net/en_US/sdk.js";
/** The real SDK is served from one host and opens its popup and frames on the platform's web hosts. */
const DEFAULT_SIGNUP_ORIGINS = ["https://connect.facebook.net", "https://www.facebook.com", "https://web.facebook.com"];

function embeddedSignup(env: Env): EmbeddedSignupConfig | null {
  const appId = text(env, "EMBEDDED_SIGNUP_APP_ID");
  const configId = text(env, "EMBEDDED_SIGNUP_CONFIG_ID");
  if (appId === null && configId === null) return null;
  if (appId === null)
    throw new ConfigError(
      "EMBEDDED_SIGNUP_APP_ID",
      "is required with EMBEDDED_SIGNUP_CONFIG_ID: the id of the service's app on the platform",
    );
  if (configId === null)
    throw new ConfigError(
      "EMBEDDED_SIGNUP_CONFIG_ID",
      "is required with EMBEDDED_SIGNUP_APP_ID: the id of the Embedded Signup configuration",
    );
  for (const [name, value] of [
    ["EMBEDDED_SIGNUP_APP_ID", appId],
    ["EMBEDDED_SIGNUP_CONFIG_ID", configId],
  ] as const) {
    if (!/^[0-9A-Za-z_-]{1,64}$/.test(value))
      throw new ConfigError(name, `must be the platform's id (digits), got "${value}"`);
  }
  const sdkUrl = text(env, "EMBEDDED_SIGNUP_SDK_URL") ?? DEFAULT_SIGNUP_SDK_URL;
  const origins =
    sdkUrl === DEFAULT_SIGNUP_SDK_URL ? DEFAULT_SIGNUP_ORIGINS : [httpUrl("EMBEDDED_SIGNUP_SDK_URL", sdkUrl).origin];
  return Object.freeze({
    appId,
    configId,
    sdkUrl,
    origins: Object.freeze(origins),
    expiryMs: signupExpiry(text(env, "EMBEDDED_SIGNUP_EXPIRY")),
    startsPerHour: integer(env, "EMBEDDED_SIGNUP_STARTS_PER_HOUR", 10, 1, 10_000),
    maxUnfinished: integer(env, "EMBEDDED_SIGNUP_MAX_UNFINISHED", 5, 1, 1_000),
  });
}

/**
 * At least 10 minutes, so that a run's five upstream calls (each bounded by UPSTREAM_TIMEOUT_MS)
 * end well within it; at most a day, so that a number is never held for long by a signup nobody finishes.
 */
function signupExpiry(raw: string | null): number {
  if (raw === null) return 3_600_000;
  const ms = parseDuration(raw);
  if (ms === null || ms < 600_000 || ms > 86_400_000) {
    throw new ConfigError("EMBEDDED_SIGNUP_EXPIRY", `must be a duration from 10m to 24h, such as 1h, got "${raw}"`);
  }
  return ms;
}

/** PLATFORM_NAME, read alone too by `switchboard simulate`, which speaks the same words. */
export function platformSetting(env: Env): PlatformNames {
  const raw = text(env, "PLATFORM_NAME");
  if (raw === null) return platformNames();
  if (!PLATFORM_WORD.test(raw))
    throw new ConfigError(
      "PLATFORM_NAME",
      `must be the platform's product word in lower case (letters, digits, _), as its API writes messaging_product, got "${raw}"`,
    );
  return platformNames(raw);
}

/** An instance's id is shown by /healthz and /metrics and kept in the database: printable, and short. */
const INSTANCE_ID = /^[\x21-\x7e]{1,200}$/;

function instances(env: Env): InstancesConfig {
  const id = text(env, "INSTANCE_ID");
  if (id !== null && !INSTANCE_ID.test(id))
    throw new ConfigError("INSTANCE_ID", "must be 1 to 200 printable ASCII characters, without spaces");
  const heartbeatMs = integer(env, "INSTANCE_HEARTBEAT_MS", 1_000, 50, 10_000);
  const deadAfterMs = integer(env, "INSTANCE_DEAD_AFTER_MS", 5_000, 150, 600_000);
  // Fewer than three missed beats would take an instance that was only a little late for dead.
  if (deadAfterMs < 3 * heartbeatMs)
    throw new ConfigError(
      "INSTANCE_DEAD_AFTER_MS",
      `must be at least 3 × INSTANCE_HEARTBEAT_MS (${3 * heartbeatMs}), got ${deadAfterMs}`,
    );
  return Object.freeze({ id, heartbeatMs, deadAfterMs });
}

/** Reads the environment once into a frozen, typed configuration; throws ConfigError naming the variable. */
export function parseConfig(env: Env): Config {
  const devMode = flag(env, "DEV_MODE");
  const appSecret = text(env, "APP_SECRET") ?? (devMode ? DEV_APP_SECRET : null);
  if (appSecret === null) throw new ConfigError("APP_SECRET", "is required unless DEV_MODE=1");
  const version = text(env, "UPSTREAM_API_VERSION") ?? "v21.0";
  if (!/^v\d+\.0$/.test(version))
    throw new ConfigError("UPSTREAM_API_VERSION", `must look like v21.0, got "${version}"`);
  const db = database(text(env, "DATABASE_URL") ?? "file:./data/switchboard.db");
  return Object.freeze({
    port: integer(env, "PORT", 8080, 0, 65535),
    host: host(text(env, "HOST")),
    database: Object.freeze(db),
    redis: redis(env, db),
    upstreamUrl: upstreamUrl(text(env, "UPSTREAM_URL") ?? DEFAULT_UPSTREAM_URL),
    upstreamApiVersion: version,
    appSecret,
    webhookVerifyToken: text(env, "WEBHOOK_VERIFY_TOKEN"),
    adminToken: text(env, "ADMIN_TOKEN"),
    encryptionKey: encryptionKey(text(env, "ENCRYPTION_KEY"), devMode),
    devMode,
    upstreamTimeoutMs: integer(env, "UPSTREAM_TIMEOUT_MS", 30_000, 1, 600_000),
    upstreamMediaTimeoutMs: integer(env, "UPSTREAM_MEDIA_TIMEOUT_MS", 120_000, 1, 600_000),
    proxyBodyBufferBytes: integer(env, "PROXY_BODY_BUFFER_BYTES", 64 * 1024, 0, 1024 * 1024),
    requestBodyTimeoutMs: integer(env, "REQUEST_BODY_TIMEOUT_MS", 30_000, 1, 600_000),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 1, 120_000),
    webhookRetrySchedule: Object.freeze(retrySchedule(text(env, "WEBHOOK_RETRY_SCHEDULE"))),
    mail: mail(text(env, "SMTP_URL"), text(env, "MAIL_FROM")),
    logLevel: logLevel(text(env, "LOG_LEVEL")),
    tracing: tracing(env),
    platform: platformSetting(env),
    requestLog: flagOn(env, "REQUEST_LOG")
      ? Object.freeze({ buffer: integer(env, "REQUEST_LOG_BUFFER", 10_000, 100, 1_000_000) })
      : null,
    embeddedSignup: embeddedSignup(env),
    instances: instances(env),
  });
}
