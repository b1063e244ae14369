import * as read from "./readers.ts";

/**
 * One environment variable: what it is called, what it is when unset, how its text is read, and
 * what it means in one line. parseConfig reads every value through this table, and
 * docs/configuration.md's table is written from it (`bun docs/generate.ts`), so the two cannot
 * drift apart (test/docs/generated.test.ts).
 */
export interface Setting<T, F extends string | null = string | null> {
  /** The value used when the variable is unset or blank, read like a given one; null: no value. */
  readonly fallback: F;
  /** The default as the tables show it, when it is not the fallback itself (a URL shortened, a consequence). */
  readonly shown?: string;
  readonly meaning: string;
  /** Reads the trimmed, non-empty text (or the fallback); throws ConfigError naming the variable. */
  readonly read: (raw: string, name: string) => T;
}

function setting<T, F extends string | null>(
  fallback: F,
  meaning: string,
  reader: (raw: string, name: string) => T,
  shown?: string,
): Setting<T, F> {
  return { fallback, meaning, read: reader, shown };
}

export const DEFAULT_UPSTREAM_URL = "https://graph.facebook.com";
export const DEFAULT_SIGNUP_SDK_URL = "https://connect.facebook.net/en_US/sdk.js";

export const SETTINGS = {
  PORT: setting("8080", "port to listen on", read.integer(0, 65535)),
  HOST: setting("0.0.0.0", "address to listen on (an IP address or a host name)", read.host),
  DATABASE_URL: setting(
    "file:./data/switchboard.db",
    "the SQLite file (`file:…`), or `postgres://user:pass@host:5432/db` for the scale-out mode",
    read.database,
  ),
  DATABASE_POOL_SIZE: setting(
    "10",
    "connections in each instance's PostgreSQL pool; an instance opens at most this many plus 2 (the request log's writer and the `LISTEN` connection)",
    read.integer(1, 1_000),
  ),
  DATABASE_DIRECT_URL: setting(
    null,
    "a direct `postgres://` URL to the same database, for what needs a session of its own (`LISTEN`, the migrations' lock) when `DATABASE_URL` goes through PgBouncer in transaction mode",
    read.postgresUrl,
  ),
  DATABASE_START_TIMEOUT: setting(
    "60s",
    "how long a starting server keeps trying a PostgreSQL server that refuses it (too many clients, not up yet) before it exits",
    read.duration(1_000, 3_600_000, "60s"),
  ),
  REDIS_URL: setting(
    null,
    "Redis (`redis://` or `rediss://`) for the rate limits instances share; required with PostgreSQL",
    read.prefixed(["redis://", "rediss://"]),
  ),
  REDIS_KEY_PREFIX: setting("switchboard:", "every Redis key the service writes starts with it", read.text),
  UPSTREAM_URL: setting(DEFAULT_UPSTREAM_URL, "the platform's API base URL, no trailing slash", read.upstreamUrl),
  PLATFORM_NAME: setting(
    "chat",
    "the platform's own product word, as its API writes `messaging_product`",
    read.platformWord,
  ),
  UPSTREAM_API_VERSION: setting(
    "v21.0",
    "API version of the service's own upstream calls; proxied calls keep the caller's",
    read.apiVersion,
  ),
  APP_SECRET: setting(
    null,
    "the service's app secret: `appsecret_proof` and inbound webhook signatures",
    read.text,
    "required unless `DEV_MODE=1`",
  ),
  WEBHOOK_VERIFY_TOKEN: setting(null, "answers the platform's webhook subscription handshake", read.text),
  EMBEDDED_SIGNUP_APP_ID: setting(
    null,
    "the service's app id on the platform; with the configuration id, turns Embedded Signup on",
    read.platformId,
  ),
  EMBEDDED_SIGNUP_CONFIG_ID: setting(
    null,
    "the Embedded Signup configuration made for that app; both or neither",
    read.platformId,
  ),
  EMBEDDED_SIGNUP_SDK_URL: setting(
    DEFAULT_SIGNUP_SDK_URL,
    "the platform's JavaScript SDK, which opens the signup popup",
    read.httpUrl,
  ),
  EMBEDDED_SIGNUP_EXPIRY: setting(
    "1h",
    "how long an unfinished signup holds its number and keeps its sealed code, token and PIN (`10m` to `24h`)",
    // At least 10 minutes, so that a run's five upstream calls end well within it; at most a day,
    // so that a number is never held for long by a signup nobody finishes.
    read.duration(600_000, 86_400_000),
  ),
  EMBEDDED_SIGNUP_STARTS_PER_HOUR: setting(
    "10",
    "signup starts and retries per account per hour (429 `signup_rate_limited`)",
    read.integer(1, 10_000),
  ),
  EMBEDDED_SIGNUP_MAX_UNFINISHED: setting(
    "5",
    "unfinished signups an account may have at once (409 `too_many_signups`)",
    read.integer(1, 1_000),
  ),
  ADMIN_TOKEN: setting(
    null,
    "bearer token of the operator API (`/admin/*`); unset: the operator API is off",
    read.text,
  ),
  ENCRYPTION_KEY: setting(
    null,
    "32 bytes in base64: seals upstream tokens, app secrets and signing secrets at rest",
    read.encryptionKey,
    "required unless `DEV_MODE=1`",
  ),
  TRUSTED_PROXIES: setting(
    null,
    "comma-separated addresses or CIDR ranges of the reverse proxies in front; a request from one takes its client address from `X-Forwarded-For` (the right-most address that is not itself one of them), which sign-in throttling, the audit log's `ip` and each request's log line use; unset: `X-Forwarded-For` is ignored",
    read.addressRanges,
  ),
  DEV_MODE: setting("0", "`1`: a development deployment (webhook URLs may be `http://` and loopback)", read.flag),
  UPSTREAM_TIMEOUT_MS: setting("30000", "upstream time-out of proxied calls", read.integer(1, 600_000)),
  UPSTREAM_MEDIA_TIMEOUT_MS: setting(
    "120000",
    "upstream time-out of media uploads and media id calls",
    read.integer(1, 600_000),
  ),
  PROXY_BODY_BUFFER_BYTES: setting(
    "65536",
    "a proxied body declaring at most this many bytes is read before it is forwarded; `0` streams all",
    read.integer(0, 1024 * 1024),
  ),
  REQUEST_BODY_TIMEOUT_MS: setting(
    "30000",
    "how long a request body may take to arrive whole (outside the proxy, and a proxied body read before it is forwarded); then 408 `body_timeout` and the connection is closed",
    read.integer(1, 600_000),
  ),
  WEBHOOK_TIMEOUT_MS: setting(
    "10000",
    "webhook receiver time-out (DNS, connect and response)",
    read.integer(1, 120_000),
  ),
  INSTANCE_ID: setting(
    null,
    "what this instance's delivery leases name as their holder (scale-out mode), shown by `/healthz` and `/metrics`; keep it across restarts, and give no two live instances the same",
    read.instanceId,
    "the host name and `PORT`",
  ),
  INSTANCE_HEARTBEAT_MS: setting("1000", "how often each instance beats in the database", read.integer(50, 10_000)),
  INSTANCE_DEAD_AFTER_MS: setting(
    "5000",
    "how long another instance's beats must stop before it is taken for dead and its leases are taken back (at least 3 beats)",
    read.integer(150, 600_000),
  ),
  WEBHOOK_RETRY_SCHEDULE: setting(
    "5s,1m,5m,30m,2h,6h,12h",
    "waits between delivery attempts (N waits = N+1 attempts)",
    read.durations,
  ),
  SMTP_URL: setting(
    null,
    "where warning and disable emails go (`smtp://` or `smtps://`); unset: logged and kept as notifications",
    read.prefixed(["smtp://", "smtps://"]),
  ),
  MAIL_FROM: setting(null, "the address those emails come from; required with `SMTP_URL`", read.mailbox),
  LOG_LEVEL: setting("info", "`debug`, `info`, `warn` or `error`", read.oneOf(["debug", "info", "warn", "error"])),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting(
    null,
    "an OpenTelemetry collector's OTLP/HTTP base URL; unset: no traces",
    read.httpUrl,
  ),
  OTEL_SERVICE_NAME: setting("switchboard", "the traces' `service.name`", read.text),
  OTEL_TRACES_SAMPLER: setting(
    "parentbased_always_on",
    "which traces are kept (the OpenTelemetry specification's names)",
    read.oneOf(read.SAMPLERS),
  ),
  OTEL_TRACES_SAMPLER_ARG: setting("1", "the share of traces the ratio samplers keep, 0 to 1", read.ratio),
  OTEL_SPAN_DETAIL: setting(
    "call",
    "`call`: one span per proxied call, its checks, limit and upstream call as attributes; `full`: also as child spans",
    read.oneOf(read.SPAN_DETAILS),
  ),
  REQUEST_LOG: setting("1", "the request log of proxied calls; `0` keeps none", read.flag),
  REQUEST_LOG_BUFFER: setting(
    "10000",
    "records waiting to be written; past it they are dropped and counted",
    read.integer(100, 1_000_000),
  ),
  AUDIT_RETENTION: setting(
    "90d",
    "how long the audit log keeps an entry (`1d` to `3650d`); older ones are purged with retention (an account's entries but the operator's go sooner, with its retention setting, when that is shorter)",
    read.duration(86_400_000, 3650 * 86_400_000, "90d"),
  ),
  BACKUP_SCHEDULE: setting(
    null,
    "a cron expression: when the server takes a verified backup (SQLite mode only); unset: none",
    read.cron,
  ),
  BACKUP_TO: setting(
    "backups",
    "where backups go: a directory (a relative one is taken from the database's directory), or `s3://bucket/prefix` on any S3-compatible store",
    read.backupLocation,
  ),
  BACKUP_KEEP: setting(
    "7",
    "the newest this many backups are kept, and the newest of each of the last 7 days; older ones go once a new one is verified",
    read.integer(1, 10_000),
  ),
  S3_ENDPOINT: setting(null, "the S3 store of an `s3://` backup location (else `AWS_ENDPOINT`)", read.httpUrl),
  S3_REGION: setting(null, "its region (else `AWS_REGION`)", read.text),
  S3_ACCESS_KEY_ID: setting(null, "its access key id (else `AWS_ACCESS_KEY_ID`); required with `s3://`", read.text),
  S3_SECRET_ACCESS_KEY: setting(
    null,
    "its secret access key (else `AWS_SECRET_ACCESS_KEY`); required with `s3://`",
    read.text,
  ),
  S3_SESSION_TOKEN: setting(null, "a session token for temporary keys (else `AWS_SESSION_TOKEN`)", read.text),
} as const;

export type SettingName = keyof typeof SETTINGS;
/** A setting's value: what its reader gives, or null for one that has no fallback and is unset. */
export type SettingValue<K extends SettingName> =
  | ReturnType<(typeof SETTINGS)[K]["read"]>
  | ((typeof SETTINGS)[K]["fallback"] extends null ? null : never);

/** One variable read through its row of the table (also alone, as `switchboard simulate` reads PLATFORM_NAME). */
export function readSetting<K extends SettingName>(env: Record<string, string | undefined>, name: K): SettingValue<K> {
  const s: Setting<unknown> = SETTINGS[name];
  const given = env[name]?.trim();
  const raw = given ? given : s.fallback;
  return (raw === null ? null : s.read(raw, name)) as SettingValue<K>;
}
