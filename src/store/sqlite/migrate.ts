import { createHash } from "node:crypto";
import type { MigrationMeta } from "drizzle-orm/migrator";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "../../../db/migrations.gen.ts";

/**
 * drizzle's own migrate() reads a folder at run time, which a compiled binary does not have; the
 * migrations are embedded as text instead and handed to the same migration engine, so the
 * bookkeeping table (__drizzle_migrations) is exactly what drizzle-kit expects.
 */
export function applyMigrations(db: BunSQLiteDatabase<Record<string, unknown>>): void {
  const migrations: MigrationMeta[] = embeddedMigrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));
  // `dialect` and `session` are what drizzle's bun-sqlite migrator itself uses.
  const internal = db as unknown as {
    dialect: { migrate(m: MigrationMeta[], session: unknown, config: { migrationsFolder: string }): void };
    session: unknown;
  };
  internal.dialect.migrate(migrations, internal.session, { migrationsFolder: "db/migrations" });
}
