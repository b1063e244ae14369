import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Random } from "../runtime/random.ts";
import type { Config, DatabaseConfig } from "../config/config.ts";

/**
 * In DEV_MODE without ENCRYPTION_KEY, secrets are sealed with a key kept beside the SQLite file
 * (in ./data with PostgreSQL), so a development database still opens after a restart. Production
 * always names its key.
 */
export function devEncryptionKey(database: DatabaseConfig, random: Random): Uint8Array {
  if (database.kind === "sqlite" && database.path === ":memory:") return random.bytes(32);
  const file = join(database.kind === "sqlite" ? dirname(database.path) : "./data", "dev-encryption.key");
  if (existsSync(file)) return new Uint8Array(Buffer.from(readFileSync(file, "utf8").trim(), "base64"));
  const key = random.bytes(32);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${Buffer.from(key).toString("base64")}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

/** The deployment's ENCRYPTION_KEY, or in DEV_MODE without one the key kept beside the database. */
export function deploymentKey(config: Pick<Config, "encryptionKey" | "database">, random: Random): Uint8Array {
  return config.encryptionKey ?? devEncryptionKey(config.database, random);
}
