/**
 * Vitest global setup for the PostgreSQL run of the suite (TEST_STORE=postgres): one throwaway test server
 * for the whole run (scripts/pg-test-server.mjs), or the one TEST_PG_ADMIN_URL names. Each test file then
 * creates its own database in it (lib/testing/vitest-setup.ts), as each SQLite run gets its own file.
 */
import { startPgTestServer, type PgTestServer } from "@/scripts/pg-test-server.mjs";

let server: PgTestServer | undefined;

export async function setup(): Promise<void> {
  if (process.env.TEST_STORE !== "postgres" || process.env.TEST_PG_ADMIN_URL) return;
  server = await startPgTestServer();
  // Inherited by the forked test workers.
  process.env.TEST_PG_ADMIN_URL = server.url;
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
