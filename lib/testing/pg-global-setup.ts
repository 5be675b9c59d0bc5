/**
 * Vitest global setup for the PostgreSQL run of the suite (TEST_STORE=postgres): one throwaway cluster
 * for the whole run (scripts/pg-cluster.mjs), or the one TEST_PG_ADMIN_URL names. Each test file then
 * creates its own database in it (lib/testing/vitest-setup.ts), as each SQLite run gets its own file.
 */
import { startPgCluster, type PgCluster } from "@/scripts/pg-cluster.mjs";

let cluster: PgCluster | undefined;

export async function setup(): Promise<void> {
  if (process.env.TEST_STORE !== "postgres" || process.env.TEST_PG_ADMIN_URL) return;
  cluster = await startPgCluster();
  // Inherited by the forked test workers.
  process.env.TEST_PG_ADMIN_URL = cluster.url;
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
