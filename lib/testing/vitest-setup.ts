/**
 * Each test file gets its own temporary SQLite file — or, when the suite runs on PostgreSQL
 * (TEST_STORE=postgres, see lib/testing/pg-global-setup.ts), its own database in the run's cluster —
 * so files run in parallel without sharing state.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-test-"));
process.env.DATABASE_PATH = path.join(dir, "test.db");
process.env.LOG_LEVEL ??= "silent";
// Never reach a real provider from tests: judge tests start the judge test double and set these.
delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
delete process.env.API_TOKEN;

let pgDatabase: { admin: string; name: string } | undefined;
const adminUrl = process.env.TEST_STORE === "postgres" ? process.env.TEST_PG_ADMIN_URL : undefined;
if (process.env.TEST_STORE === "postgres" && !adminUrl) throw new Error("TEST_STORE=postgres needs the cluster of lib/testing/pg-global-setup.ts");
if (adminUrl) {
  const { default: pg } = await import("pg");
  const name = `test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // Read through lib/config by db/dialect when the first repository is imported, which happens after this file.
  process.env.DATABASE_URL = url.toString();
  pgDatabase = { admin: adminUrl, name };
}

afterAll(async () => {
  const { closeDb } = await import("@/db/sqlite-database");
  closeDb();
  fs.rmSync(dir, { recursive: true, force: true });
  if (pgDatabase) {
    // Queued runs: this file's in-process worker, its queue client and notification connections.
    const { stopQueue } = await import("@/lib/cluster/queue");
    await stopQueue({ graceMs: 0 });
    const { closeNotifiers } = await import("@/lib/cluster/notify");
    await closeNotifiers();
    const { closeClusterPools } = await import("@/lib/cluster/pool");
    await closeClusterPools();
    const { closePgDb } = await import("@/db/pg");
    await closePgDb();
    const { default: pg } = await import("pg");
    const admin = new pg.Client({ connectionString: pgDatabase.admin });
    await admin.connect();
    await admin.query(`drop database if exists ${pgDatabase.name} with (force)`);
    await admin.end();
  }
});
