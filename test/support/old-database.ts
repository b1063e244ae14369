import { Database } from "bun:sqlite";
import { embeddedMigrations } from "../../db/migrations.gen.ts";

/**
 * A database file as an older build left it: the migrations before `tag` applied and recorded as
 * drizzle's migrator records them, none from `tag` on. The caller fills it and closes it.
 */
export function databaseBefore(path: string, tag: string): Database {
  const upTo = embeddedMigrations.findIndex((m) => m.tag === tag);
  if (upTo < 1) throw new Error(`no migration before ${tag}`);
  const db = new Database(path, { create: true });
  // As drizzle's migrator declares it (a backup's schema is compared with what the migrator makes).
  db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)');
  for (const migration of embeddedMigrations.slice(0, upTo)) {
    for (const statement of migration.sql.split("--> statement-breakpoint")) db.run(statement);
    db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)", [
      new Bun.CryptoHasher("sha256").update(migration.sql).digest("hex"),
      migration.when,
    ]);
  }
  return db;
}
