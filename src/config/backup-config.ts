import { resolve } from "node:path";
import { ConfigError } from "./errors.ts";

/** Where backups go: a directory, or a bucket and a key prefix of an S3-compatible store. */
export type BackupLocation =
  | { readonly kind: "directory"; readonly path: string }
  | { readonly kind: "s3"; readonly bucket: string; readonly prefix: string };

/** The standard S3 variables (S3_* first, then AWS_*); any unset one is left to the store's default. */
export interface S3Settings {
  readonly endpoint?: string;
  readonly region?: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  readonly sessionToken?: string;
}

export interface BackupConfig {
  /** A cron expression (croner's: 5 fields, or 6 with seconds first); null: no scheduled backups. */
  readonly schedule: string | null;
  readonly to: BackupLocation;
  /** The newest this many are kept; older ones are deleted once a new one is verified. */
  readonly keep: number;
  readonly s3: S3Settings;
}

/** An S3 bucket's name as the S3 rules allow it. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/prefix` (prefix optional) or a directory path. */
export function parseBackupLocation(variable: string, raw: string): BackupLocation {
  if (!raw.startsWith("s3://")) return { kind: "directory", path: raw };
  const [bucket = "", ...rest] = raw.slice("s3://".length).split("/");
  if (!BUCKET.test(bucket)) {
    throw new ConfigError(variable, `must look like s3://bucket/prefix with a valid bucket name, got "${raw}"`);
  }
  return { kind: "s3", bucket, prefix: rest.filter((part) => part !== "").join("/") };
}

/** A directory location as an absolute path, a relative one taken from `base`. */
export function resolveLocation(location: BackupLocation, base: string): BackupLocation {
  return location.kind === "directory" ? { kind: "directory", path: resolve(base, location.path) } : location;
}

/** A backup to S3 signs its requests: without keys it could only fail later, at the first backup. */
export function requireS3Keys(s3: S3Settings): void {
  for (const [name, value] of [
    ["ACCESS_KEY_ID", s3.accessKeyId],
    ["SECRET_ACCESS_KEY", s3.secretAccessKey],
  ] as const) {
    if (!value) throw new ConfigError(`S3_${name}`, `is required for backups to s3:// (or AWS_${name})`);
  }
}
