import { platformNames, type PlatformNames } from "../platform/names.ts";
import { ConfigError } from "./errors.ts";
import { dirname } from "node:path";
import { type BackupConfig, requireS3Keys, resolveLocation, type S3Settings } from "./backup-config.ts";
import type { Cidr } from "../ip/cidr.ts";
import type { DatabaseConfig, SamplerName, SpanDetail } from "./readers.ts";
import { DEFAULT_SIGNUP_SDK_URL, readSetting, type SettingName, type SettingValue } from "./settings.ts";

export { ConfigError } from "./errors.ts";
export type { DatabaseConfig, SamplerName, SpanDetail } from "./readers.ts";
export { DEFAULT_SIGNUP_SDK_URL, DEFAULT_UPSTREAM_URL } from "./settings.ts";

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  /** The scale-out mode's connections (DATABASE_POOL_SIZE, DATABASE_DIRECT_URL, DATABASE_START_TIMEOUT); unused with SQLite. */
  readonly postgres: PostgresConfig;
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
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client (src/http/client-ip.ts); empty: nobody's. */
  readonly trustedProxies: readonly Cidr[];
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
  /** The platform's own words (PLATFORM_NAME), the neutral ones by default. */
  readonly platform: PlatformNames;
  /** The request log of proxied calls (REQUEST_LOG, REQUEST_LOG_BUFFER): null when off. */
  readonly requestLog: { readonly buffer: number } | null;
  /** Embedded Signup on the Numbers page (EMBEDDED_SIGNUP_*): null when off. */
  readonly embeddedSignup: EmbeddedSignupConfig | null;
  /** Backups of the SQLite file (BACKUP_*, S3_*). */
  readonly backup: BackupConfig;
  /** How instances know who is alive (INSTANCE_*; src/instances/). */
  readonly instances: InstancesConfig;
  /** How long the audit log keeps an entry (AUDIT_RETENTION). */
  readonly auditRetentionMs: number;
}

export interface PostgresConfig {
  /** Connections in the pool; the instance opens at most this many plus 2 (see connectionBudget). */
  readonly poolSize: number;
  /** Where the LISTEN connection and the migrations go when DATABASE_URL is a PgBouncer in transaction mode; null: DATABASE_URL. */
  readonly directUrl: string | null;
  /** How long a starting server keeps trying a server that refuses its connections. */
  readonly startTimeoutMs: number;
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

export interface TracingConfig {
  readonly url: string;
  readonly serviceName: string;
  readonly sampler: SamplerName;
  /** The share of traces kept by the ratio samplers, 0 to 1. */
  readonly ratio: number;
  readonly detail: SpanDetail;
}

/** Used only when DEV_MODE=1 and APP_SECRET is unset, so a development server starts with no setup. */
export const DEV_APP_SECRET = "switchboard-dev-app-secret";

type Env = Record<string, string | undefined>;

/** The real SDK is served from one host and opens its popup and frames on the platform's web hosts. */
const DEFAULT_SIGNUP_ORIGINS = ["https://connect.facebook.net", "https://www.facebook.com", "https://web.facebook.com"];

/** PLATFORM_NAME, read alone too by `switchboard simulate`, which speaks the same words. */
export function platformSetting(env: Env): PlatformNames {
  return platformNames(readSetting(env, "PLATFORM_NAME"));
}

/**
 * Reads the environment once, every variable through its row of the settings table (settings.ts),
 * into a frozen, typed configuration; the rules between variables are here. Throws ConfigError
 * naming the variable to change.
 */
export function parseConfig(env: Env): Config {
  const get = <K extends SettingName>(name: K): SettingValue<K> => readSetting(env, name);
  const devMode = get("DEV_MODE");
  const appSecret = get("APP_SECRET") ?? (devMode ? DEV_APP_SECRET : null);
  if (appSecret === null) throw new ConfigError("APP_SECRET", "is required unless DEV_MODE=1");
  const encryptionKey = get("ENCRYPTION_KEY");
  if (encryptionKey === null && !devMode) {
    throw new ConfigError("ENCRYPTION_KEY", "is required (32 bytes, base64; make one with `openssl rand -base64 32`)");
  }
  const database = Object.freeze(get("DATABASE_URL"));
  return Object.freeze({
    port: get("PORT"),
    host: get("HOST"),
    database,
    redis: redis(get, database),
    postgres: Object.freeze({
      poolSize: get("DATABASE_POOL_SIZE"),
      directUrl: get("DATABASE_DIRECT_URL"),
      startTimeoutMs: get("DATABASE_START_TIMEOUT"),
    }),
    upstreamUrl: get("UPSTREAM_URL"),
    upstreamApiVersion: get("UPSTREAM_API_VERSION"),
    appSecret,
    webhookVerifyToken: get("WEBHOOK_VERIFY_TOKEN"),
    adminToken: get("ADMIN_TOKEN"),
    encryptionKey,
    devMode,
    trustedProxies: get("TRUSTED_PROXIES") ?? [],
    upstreamTimeoutMs: get("UPSTREAM_TIMEOUT_MS"),
    upstreamMediaTimeoutMs: get("UPSTREAM_MEDIA_TIMEOUT_MS"),
    proxyBodyBufferBytes: get("PROXY_BODY_BUFFER_BYTES"),
    requestBodyTimeoutMs: get("REQUEST_BODY_TIMEOUT_MS"),
    webhookTimeoutMs: get("WEBHOOK_TIMEOUT_MS"),
    webhookRetrySchedule: get("WEBHOOK_RETRY_SCHEDULE"),
    mail: mail(get),
    logLevel: get("LOG_LEVEL"),
    tracing: tracing(get),
    platform: platformNames(get("PLATFORM_NAME")),
    requestLog: get("REQUEST_LOG") ? Object.freeze({ buffer: get("REQUEST_LOG_BUFFER") }) : null,
    embeddedSignup: embeddedSignup(get),
    backup: backup(get, env, database),
    instances: instances(get),
    auditRetentionMs: get("AUDIT_RETENTION"),
  });
}

type Get = <K extends SettingName>(name: K) => SettingValue<K>;

function redis(get: Get, db: DatabaseConfig): Config["redis"] {
  const url = get("REDIS_URL");
  if (url === null) {
    if (db.kind === "postgres") {
      throw new ConfigError(
        "REDIS_URL",
        "is required with a postgres:// DATABASE_URL: it holds the rate limits every instance shares",
      );
    }
    return null;
  }
  return Object.freeze({ url, keyPrefix: get("REDIS_KEY_PREFIX") });
}

/**
 * No default sender: a made-up address (say, at localhost) is refused or marked as spam by most
 * mail servers, and the account would never hear of it. Without SMTP_URL, MAIL_FROM is unused.
 */
function mail(get: Get): Config["mail"] {
  const from = get("MAIL_FROM");
  const smtpUrl = get("SMTP_URL");
  if (smtpUrl === null) return null;
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
 */
function tracing(get: Get): Config["tracing"] {
  const endpoint = get("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (endpoint === null) return null;
  return Object.freeze({
    url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
    serviceName: get("OTEL_SERVICE_NAME"),
    sampler: get("OTEL_TRACES_SAMPLER"),
    ratio: get("OTEL_TRACES_SAMPLER_ARG"),
    detail: get("OTEL_SPAN_DETAIL"),
  });
}

function embeddedSignup(get: Get): EmbeddedSignupConfig | null {
  const appId = get("EMBEDDED_SIGNUP_APP_ID");
  const configId = get("EMBEDDED_SIGNUP_CONFIG_ID");
  if (appId === null && configId === null) return null;
  if (appId === null) {
    throw new ConfigError(
      "EMBEDDED_SIGNUP_APP_ID",
      "is required with EMBEDDED_SIGNUP_CONFIG_ID: the id of the service's app on the platform",
    );
  }
  if (configId === null) {
    throw new ConfigError(
      "EMBEDDED_SIGNUP_CONFIG_ID",
      "is required with EMBEDDED_SIGNUP_APP_ID: the id of the Embedded Signup configuration",
    );
  }
  const sdkUrl = get("EMBEDDED_SIGNUP_SDK_URL");
  const origins = sdkUrl === DEFAULT_SIGNUP_SDK_URL ? DEFAULT_SIGNUP_ORIGINS : [new URL(sdkUrl).origin];
  return Object.freeze({
    appId,
    configId,
    sdkUrl,
    origins: Object.freeze(origins),
    expiryMs: get("EMBEDDED_SIGNUP_EXPIRY"),
    startsPerHour: get("EMBEDDED_SIGNUP_STARTS_PER_HOUR"),
    maxUnfinished: get("EMBEDDED_SIGNUP_MAX_UNFINISHED"),
  });
}

function backup(get: Get, env: Env, database: DatabaseConfig): BackupConfig {
  const schedule = get("BACKUP_SCHEDULE");
  if (schedule !== null && (database.kind !== "sqlite" || database.path === ":memory:")) {
    const how = "back up PostgreSQL with its own tools (pg_dump, point-in-time recovery)";
    throw new ConfigError("BACKUP_SCHEDULE", `backs up the SQLite file; ${how}`);
  }
  // The S3_* settings, each else the standard AWS_* variable of the same name.
  const either = (name: "ENDPOINT" | "REGION" | "ACCESS_KEY_ID" | "SECRET_ACCESS_KEY" | "SESSION_TOKEN") =>
    get(`S3_${name}`) ?? (env[`AWS_${name}`]?.trim() || undefined);
  const s3: S3Settings = Object.freeze(
    Object.fromEntries(
      Object.entries({
        endpoint: either("ENDPOINT"),
        region: either("REGION"),
        accessKeyId: either("ACCESS_KEY_ID"),
        secretAccessKey: either("SECRET_ACCESS_KEY"),
        sessionToken: either("SESSION_TOKEN"),
      }).filter(([, value]) => value !== undefined),
    ),
  );
  // A relative directory is taken from the SQLite file's directory, not from wherever a command
  // runs (`backups` beside ./data/switchboard.db is ./data/backups, for the server and for
  // `switchboard admin backups list` run elsewhere).
  const beside = database.kind === "sqlite" && database.path !== ":memory:" ? dirname(database.path) : ".";
  const to = resolveLocation(get("BACKUP_TO"), beside);
  if (to.kind === "s3") requireS3Keys(s3);
  return Object.freeze({ schedule, to: Object.freeze(to), keep: get("BACKUP_KEEP"), s3 });
}

function instances(get: Get): InstancesConfig {
  const heartbeatMs = get("INSTANCE_HEARTBEAT_MS");
  const deadAfterMs = get("INSTANCE_DEAD_AFTER_MS");
  // Fewer than three missed beats would take an instance that was only a little late for dead.
  if (deadAfterMs < 3 * heartbeatMs)
    throw new ConfigError(
      "INSTANCE_DEAD_AFTER_MS",
      `must be at least 3 × INSTANCE_HEARTBEAT_MS (${3 * heartbeatMs}), got ${deadAfterMs}`,
    );
  return Object.freeze({ id: get("INSTANCE_ID"), heartbeatMs, deadAfterMs });
}
