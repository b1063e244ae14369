import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { ConfigError, parseConfig } from "../../src/config/config.ts";
import { TEST_ENCRYPTION_KEY } from "../support/harness.ts";

const base = { APP_SECRET: "s", ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };

function errorOf(env: Record<string, string>): string {
  try {
    parseConfig({ ...base, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("parseConfig accepted the environment");
}

describe("backup settings (docs/backups.md)", () => {
  test("defaults: no schedule, backups beside the database (./data/backups), the newest 7 kept", () => {
    expect(parseConfig(base).backup).toEqual({
      schedule: null,
      to: { kind: "directory", path: resolve("data", "backups") },
      keep: 7,
      s3: {},
    });
  });

  test("a relative BACKUP_TO is taken from the database's directory, not the working directory", () => {
    const at = (env: Record<string, string>) => parseConfig({ ...base, ...env }).backup.to;
    expect(at({ DATABASE_URL: "file:/srv/sb/switchboard.db", BACKUP_TO: "nightly" })).toEqual({
      kind: "directory",
      path: "/srv/sb/nightly",
    });
    expect(at({ DATABASE_URL: "file:/srv/sb/switchboard.db", BACKUP_TO: "../elsewhere/backups" })).toEqual({
      kind: "directory",
      path: "/srv/elsewhere/backups",
    });
    expect(at({ DATABASE_URL: "file:/srv/sb/switchboard.db" })).toEqual({ kind: "directory", path: "/srv/sb/backups" });
    expect(at({ DATABASE_URL: "file:/srv/sb/switchboard.db", BACKUP_TO: "/mnt/b" })).toEqual({
      kind: "directory",
      path: "/mnt/b",
    });
  });

  test("BACKUP_SCHEDULE, BACKUP_TO (a directory or s3://bucket/prefix), BACKUP_KEEP and the S3 variables, S3_* before AWS_*", () => {
    const config = parseConfig({
      ...base,
      BACKUP_SCHEDULE: "0 3 * * *",
      BACKUP_TO: "s3://sb-backups/eu/prod/",
      BACKUP_KEEP: "30",
      S3_ENDPOINT: "https://s3.example",
      AWS_ENDPOINT: "https://ignored.example",
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "AKIA",
      S3_SECRET_ACCESS_KEY: "secret",
      AWS_SESSION_TOKEN: "session",
    });
    expect(config.backup).toEqual({
      schedule: "0 3 * * *",
      to: { kind: "s3", bucket: "sb-backups", prefix: "eu/prod" },
      keep: 30,
      s3: {
        endpoint: "https://s3.example",
        region: "eu-west-1",
        accessKeyId: "AKIA",
        secretAccessKey: "secret",
        sessionToken: "session",
      },
    });
    expect(parseConfig({ ...base, BACKUP_TO: "/var/backups/sb" }).backup.to).toEqual({
      kind: "directory",
      path: "/var/backups/sb",
    });
    expect(parseConfig({ ...base, BACKUP_SCHEDULE: "*/30 * * * * *" }).backup.schedule).toBe("*/30 * * * * *");
  });

  test("a bad value names its variable", () => {
    expect(errorOf({ BACKUP_SCHEDULE: "every night" })).toStartWith(
      'BACKUP_SCHEDULE: is not a cron expression ("every night")',
    );
    expect(errorOf({ BACKUP_KEEP: "0" })).toBe("BACKUP_KEEP: must be between 1 and 10000, got 0");
    expect(errorOf({ BACKUP_KEEP: "seven" })).toBe('BACKUP_KEEP: must be a whole number, got "seven"');
    expect(errorOf({ BACKUP_TO: "s3://Not_A_Bucket/x" })).toStartWith("BACKUP_TO: must look like s3://bucket/prefix");
    expect(errorOf({ BACKUP_TO: "s3://sb-backups" })).toBe(
      "S3_ACCESS_KEY_ID: is required for backups to s3:// (or AWS_ACCESS_KEY_ID)",
    );
    expect(errorOf({ BACKUP_TO: "s3://sb-backups", S3_ACCESS_KEY_ID: "a" })).toBe(
      "S3_SECRET_ACCESS_KEY: is required for backups to s3:// (or AWS_SECRET_ACCESS_KEY)",
    );
    expect(errorOf({ DATABASE_URL: ":memory:", BACKUP_SCHEDULE: "0 3 * * *" })).toStartWith(
      "BACKUP_SCHEDULE: backs up the SQLite file",
    );
  });
});
