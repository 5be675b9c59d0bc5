import { defineConfig } from "drizzle-kit";

/**
 * The PostgreSQL store's migrations (db/migrations-pg), generated from db/schema.pg.ts with
 * `npx drizzle-kit generate --config drizzle.pg.config.ts --name <short_name>`, next to every
 * SQLite migration made from db/schema.ts. db/pg.ts applies them on start.
 */
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/schema.pg.ts",
  out: "./db/migrations-pg",
  // Only `drizzle-kit push/studio` connect; generating needs no database.
  dbCredentials: { url: process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/turnscope" },
  strict: true,
  verbose: true,
});
