import { Cron } from "croner";
import { ConfigError, type DatabaseConfig } from "./config.ts";

type Env = Record<string, string | undefined>;

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

export const DEFAULT_BACKUP_DIRECTORY = "./data/backups";
export const DEFAULT_BACKUP_KEEP = 7;

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

/** A backup to S3 signs its requests: without keys it could only fail later, at the first backup. */
export function requireS3Keys(s3: S3Settings): void {
  for (const [name, value] of [
    ["ACCESS_KEY_ID", s3.accessKeyId],
    ["SECRET_ACCESS_KEY", s3.secretAccessKey],
  ] as const) {
    if (!value) throw new ConfigError(`S3_${name}`, `is required for backups to s3:// (or AWS_${name})`);
  }
}

function s3Settings(env: Env): S3Settings {
  const read = (name: string) => [env[`S3_${name}`], env[`AWS_${name}`]].map((v) => v?.trim()).find((value) => value);
  const settings = {
    endpoint: read("ENDPOINT"),
    region: read("REGION"),
    accessKeyId: read("ACCESS_KEY_ID"),
    secretAccessKey: read("SECRET_ACCESS_KEY"),
    sessionToken: read("SESSION_TOKEN"),
  };
  return Object.freeze(Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)));
}

function schedule(raw: string | null, database: DatabaseConfig): string | null {
  if (raw === null) return null;
  if (database.kind !== "sqlite" || database.path === ":memory:") {
    const how = "back up PostgreSQL with its own tools (pg_dump, point-in-time recovery)";
    throw new ConfigError("BACKUP_SCHEDULE", `backs up the SQLite file; ${how}`);
  }
  try {
    new Cron(raw, { paused: true }).stop();
  } catch (error) {
    throw new ConfigError("BACKUP_SCHEDULE", `is not a cron expression ("${raw}"): ${(error as Error).message}`);
  }
  return raw;
}

/** BACKUP_SCHEDULE, BACKUP_TO and the S3 variables (CONTRACT 7); BACKUP_KEEP is read as config.ts reads numbers. */
export function backupConfig(
  env: Env,
  database: DatabaseConfig,
  raw: { schedule: string | null; to: string | null; keep: number },
): BackupConfig {
  const to = parseBackupLocation("BACKUP_TO", raw.to ?? DEFAULT_BACKUP_DIRECTORY);
  const s3 = s3Settings(env);
  if (to.kind === "s3") requireS3Keys(s3);
  return Object.freeze({ schedule: schedule(raw.schedule, database), to: Object.freeze(to), keep: raw.keep, s3 });
}
