import { defineConfig } from "drizzle-kit";

// The scale-out mode's migrations (DATABASE_URL=postgres://…); SQLite's are in drizzle.config.ts.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/schema.ts",
  out: "./db/postgres",
});
