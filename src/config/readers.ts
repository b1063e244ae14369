import { Cron } from "croner";
import { PLATFORM_WORD } from "../platform/names.ts";
import { parseDuration } from "./duration.ts";
import { type BackupLocation, parseBackupLocation } from "./backup-config.ts";
import { ConfigError } from "./errors.ts";
import { type Cidr, parseCidr } from "../ip/cidr.ts";

/** How the settings table (settings.ts) reads a variable's text: each throws ConfigError naming it. */
type Reader<T> = (raw: string, name: string) => T;

export const text: Reader<string> = (raw) => raw;

export function integer(min: number, max: number): Reader<number> {
  return (raw, name) => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  };
}

export const flag: Reader<boolean> = (raw, name) => {
  if (raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(name, `must be 0 or 1, got "${raw}"`);
};

export function oneOf<const T extends string>(values: readonly T[]): Reader<T> {
  return (raw, name) => {
    if ((values as readonly string[]).includes(raw)) return raw as T;
    throw new ConfigError(name, `must be one of ${values.join(", ")}, got "${raw}"`);
  };
}

export function prefixed(prefixes: readonly string[]): Reader<string> {
  return (raw, name) => {
    if (prefixes.some((p) => raw.startsWith(p))) return raw;
    throw new ConfigError(name, `must start with ${prefixes.join(" or ")}`);
  };
}

/** An http:// or https:// URL. */
export const httpUrl: Reader<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a URL: "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(name, "must start with http:// or https://");
  return raw;
};

export const upstreamUrl: Reader<string> = (raw, name) => {
  httpUrl(raw, name);
  if (raw.endsWith("/")) throw new ConfigError(name, "must not end with a slash");
  return raw;
};

/** A PostgreSQL URL without its user and password, for messages. */
export function postgresName(postgresUrl: string): string {
  const url = new URL(postgresUrl);
  return `postgres://${url.host}${url.pathname}`;
}

/** A postgres:// or postgresql:// URL. */
export const postgresUrl: Reader<string> = (raw, name) => {
  const problem = !/^postgres(ql)?:\/\//.test(raw)
    ? "must start with postgres://"
    : URL.canParse(raw)
      ? null
      : "is not a valid postgres:// URL";
  if (problem) throw new ConfigError(name, problem);
  return raw;
};

/** Where state lives: one SQLite file (":memory:" allowed in tests), or PostgreSQL for the scale-out mode. */
export type DatabaseConfig =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string };

export const database: Reader<DatabaseConfig> = (raw, name) => {
  if (raw === ":memory:" || raw === "file::memory:") return { kind: "sqlite", path: ":memory:" };
  if (raw.startsWith("file:")) return { kind: "sqlite", path: raw.slice("file:".length) };
  if (/^postgres(ql)?:\/\//.test(raw)) return { kind: "postgres", url: postgresUrl(raw, name) };
  throw new ConfigError(
    name,
    `must look like file:./data/switchboard.db or postgres://user:pass@host:5432/db, got "${raw}"`,
  );
};

/** A name's labels (RFC 1123); a text of digits and dots only is an IPv4 address or nothing. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * A dotted quad (no other inet_aton spelling), or IPv6 without brackets (a zone id allowed): what
 * node:net's isIP takes, without loading node:net at start-up (about 10 ms of it).
 */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const isIpLiteral = (raw: string) =>
  IPV4.test(raw) || (/^[0-9a-f:.]+(%[\w.-]+)?$/i.test(raw) && URL.canParse(`http://[${raw.split("%")[0]}]/`));

export const host: Reader<string> = (raw, name) => {
  if (isIpLiteral(raw) || (HOST_NAME.test(raw) && !/^[\d.]+$/.test(raw))) return raw;
  throw new ConfigError(name, `must be an IP address or a host name to listen on, got "${raw}"`);
};

export const apiVersion: Reader<string> = (raw, name) => {
  if (!/^v\d+\.0$/.test(raw)) throw new ConfigError(name, `must look like v21.0, got "${raw}"`);
  return raw;
};

export const platformWord: Reader<string> = (raw, name) => {
  if (!PLATFORM_WORD.test(raw)) {
    throw new ConfigError(
      name,
      `must be the platform's product word in lower case (letters, digits, _), as its API writes messaging_product, got "${raw}"`,
    );
  }
  return raw;
};

export const platformId: Reader<string> = (raw, name) => {
  if (!/^[0-9A-Za-z_-]{1,64}$/.test(raw))
    throw new ConfigError(name, `must be the platform's id (digits), got "${raw}"`);
  return raw;
};

export const encryptionKey: Reader<Uint8Array> = (raw, name) => {
  const bytes = Buffer.from(raw, "base64");
  if (bytes.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) {
    throw new ConfigError(name, `must be 32 bytes in base64, got ${bytes.length} bytes`);
  }
  return new Uint8Array(bytes);
};

/** An instance's id is shown by /healthz and /metrics and kept in the database: printable, and short. */
export const instanceId: Reader<string> = (raw, name) => {
  if (!/^[\x21-\x7e]{1,200}$/.test(raw))
    throw new ConfigError(name, "must be 1 to 200 printable ASCII characters, without spaces");
  return raw;
};

const DAY_MS = 86_400_000;

/** A duration such as `90s`, `10m`, `1h` or `90d`, in milliseconds, from `min` to `max`. */
export function duration(min: number, max: number, example = "1h"): Reader<number> {
  // Days only past one: a day's bound reads `24h`, as the hour-long settings always said.
  const words = (ms: number) =>
    ms > DAY_MS && ms % DAY_MS === 0
      ? `${ms / DAY_MS}d`
      : ms % 3_600_000 === 0
        ? `${ms / 3_600_000}h`
        : `${ms / 60_000}m`;
  return (raw, name) => {
    const ms = parseDuration(raw);
    if (ms === null || ms < min || ms > max) {
      throw new ConfigError(
        name,
        `must be a duration from ${words(min)} to ${words(max)}, such as ${example}, got "${raw}"`,
      );
    }
    return ms;
  };
}

/** Comma-separated durations such as `5s,1m,2h`, in milliseconds. */
export const durations: Reader<readonly number[]> = (raw, name) => {
  const parts = raw.split(",");
  const waits = parts.map(parseDuration);
  const bad = parts.find((_, i) => waits[i] === null);
  if (bad !== undefined) throw new ConfigError(name, `"${bad.trim()}" is not a duration like 5s, 1m or 2h`);
  return Object.freeze(waits as number[]);
};

/** An address to send mail from: `alerts@example.com` or `Switchboard <alerts@example.com>`. */
export const mailbox: Reader<string> = (raw, name) => {
  if (!/[^\s@<>]+@[^\s@<>]+/.test(raw)) {
    throw new ConfigError(
      name,
      `must be an email address, such as alerts@example.com or "Switchboard <alerts@example.com>", got "${raw}"`,
    );
  }
  return raw;
};

export const ratio: Reader<number> = (raw, name) => {
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || value > 1) throw new ConfigError(name, `must be a ratio from 0 to 1, got "${raw}"`);
  return value;
};

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

/** OTEL_SPAN_DETAIL's values: one span per proxied call (`call`), or also its steps as children (`full`). */
export const SPAN_DETAILS = ["call", "full"] as const;
export type SpanDetail = (typeof SPAN_DETAILS)[number];

/** A cron expression as croner reads it (5 fields, or 6 with seconds first). */
export const cron: Reader<string> = (raw, name) => {
  try {
    new Cron(raw, { paused: true }).stop();
  } catch (error) {
    throw new ConfigError(name, `is not a cron expression ("${raw}"): ${(error as Error).message}`);
  }
  return raw;
};

/** `s3://bucket/prefix` or a directory. */
export const backupLocation: Reader<BackupLocation> = (raw, name) => parseBackupLocation(name, raw);

/** Comma-separated addresses or CIDR ranges, IPv4 or IPv6: `127.0.0.1,::1`, `10.0.0.0/8`. */
export const addressRanges: Reader<readonly Cidr[]> = (raw, name) => {
  const ranges = raw.split(",").map((part) => {
    const range = parseCidr(part.trim());
    if (!range)
      throw new ConfigError(
        name,
        `"${part.trim()}" is not an IP address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32`,
      );
    return Object.freeze(range);
  });
  return Object.freeze(ranges);
};
