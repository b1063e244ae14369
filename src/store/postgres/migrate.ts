import { createHash } from "node:crypto";
import type { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "../../../db/postgres.gen.ts";

/** pg_advisory_lock's key for migrating: several instances starting together migrate one at a time. */
const MIGRATION_LOCK = 5_391_826_455_101_337n;

/**
 * Brings the schema up to date, once even when several instances start together: each takes a
 * session-level advisory lock on one connection first, so the second finds the migrations already
 * recorded and applies none. The migrations are embedded in the binary (db/postgres.gen.ts) and
 * handed to drizzle's own engine, so its bookkeeping (drizzle.__drizzle_migrations) is what
 * drizzle-kit expects.
 */
export async function applyMigrations(client: SQL): Promise<void> {
  const migrations: MigrationMeta[] = embeddedMigrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));
  const connection = await client.reserve();
  try {
    await connection.unsafe("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK.toString()]);
    try {
      const db = drizzle({ client: connection as unknown as SQL });
      // `dialect` and `session` are what drizzle's bun-sql migrator itself uses.
      const internal = db as unknown as {
        dialect: { migrate(m: MigrationMeta[], session: unknown, config: { migrationsFolder: string }): Promise<void> };
        session: unknown;
      };
      await internal.dialect.migrate(migrations, internal.session, { migrationsFolder: "db/postgres" });
    } finally {
      await connection.unsafe("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]);
    }
  } finally {
    connection.release();
  }
}
