import { createHash } from "node:crypto";
import type { MigrationMeta } from "drizzle-orm/migrator";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "../../../db/migrations.gen.ts";

/** What drizzle's migrator records of a migration it applied (its `hash` in __drizzle_migrations). */
export const migrationHash = (sql: string): string => createHash("sha256").update(sql).digest("hex");

/**
 * drizzle's own migrate() reads a folder at run time, which a compiled binary does not have; the
 * migrations are embedded as text instead and handed to the same migration engine, so the
 * bookkeeping table (__drizzle_migrations) is exactly what drizzle-kit expects. `count`: only the
 * first this many (a database as an older release made it: what a backup's schema is checked against).
 */
export function applyMigrations(
  db: BunSQLiteDatabase<Record<string, unknown>>,
  count: number = embeddedMigrations.length,
): void {
  const migrations: MigrationMeta[] = embeddedMigrations.slice(0, count).map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: migrationHash(m.sql),
  }));
  // `dialect` and `session` are what drizzle's bun-sqlite migrator itself uses.
  const internal = db as unknown as {
    dialect: { migrate(m: MigrationMeta[], session: unknown, config: { migrationsFolder: string }): void };
    session: unknown;
  };
  internal.dialect.migrate(migrations, internal.session, { migrationsFolder: "db/migrations" });
}
