/**
 * The PostgreSQL store (DATABASE_URL=postgres://…): a node-postgres pool of DATABASE_POOL_SIZE
 * connections, drizzle over db/schema.pg.ts, and the drizzle-kit migrations of db/migrations-pg
 * applied once per process before the first query. Like db/sqlite-database.ts, only db/repositories import it.
 */
import "server-only";
import path from "node:path";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { sessionClient } from "@/lib/pg-session";
import * as schema from "./schema.pg";

export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };
export type OpenPg = { db: PgDb; pool: pg.Pool; url: string; close(): Promise<void> };

// count(*) and sum() of integers come back as int8, avg() of integers as numeric; node-postgres gives
// both as strings to be safe from precision loss. Our counts and sums are far below 2^53 and our
// averages are scores, so numbers are what the code (written against SQLite) expects. Set on the
// global parsers because drizzle's queries fall back to them, not to a pool's own `types`.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value: string) => Number(value));
// json columns come back as their text, as SQLite gives them: hand-written queries parse them the same
// way on both stores, and drizzle's json columns parse text themselves.
pg.types.setTypeParser(pg.types.builtins.JSON, (value: string) => value);

/**
 * Key of the advisory lock migrators take, so processes starting at once against one database apply
 * the migrations one after the other instead of racing on CREATE SCHEMA / CREATE TABLE.
 */
const migrationLockKey = 7_305_771_002; // arbitrary, fixed: "turnscope migrations"

function migrationsFolder(): string {
  // `next start` and the test runners both run from the project root.
  return path.join(process.cwd(), "db", "migrations-pg");
}

/**
 * Apply the pending migrations of db/migrations-pg. Holds a session advisory lock on its own
 * connection for the whole run (so it needs no slot of any pool) and releases it with that connection.
 */
export async function migratePg(url: string): Promise<void> {
  const client = sessionClient(url, "turnscope-migrate");
  await client.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [migrationLockKey]);
    await migrate(drizzle(client), { migrationsFolder: migrationsFolder() });
  } finally {
    // Closing the session releases the advisory lock even if the unlock never ran.
    await client.end();
  }
}

/** A new pool on `url`, migrated before it is returned. The caller closes it. */
export async function openPg({ url, poolSize }: { url: string; poolSize: number }): Promise<OpenPg> {
  await migratePg(url);
  // JIT off: the grid's pages are prepared statements whose generic plans are costed for every row (the
  // LIMIT is a parameter), which passed jit_above_cost, and compiling took 14-40 ms of a query that runs
  // in under 1 ms. Nothing Turnscope asks runs long enough to gain from JIT.
  // Custom plans always: every statement is a named prepared one, and after five runs PostgreSQL may keep
  // a generic plan made from the statistics of that moment. Tables that grow from empty (spans, traces,
  // results) then kept plans made for a few rows: an export's trace lookup read every trace of its dataset
  // and a rebuild's span read scanned every span (bench/trace-store.bench.ts: export p50 30 -> 85 ms from
  // 0 to 100k spans). Planning each run costs tens of microseconds; the statements stay parsed once.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: "turnscope", options: "-c jit=off -c plan_cache_mode=force_custom_plan" });
  // An idle connection dropped by the server (restart, network) must not crash the process: the pool
  // replaces it on the next checkout.
  pool.on("error", (err) => log.error("PostgreSQL idle connection failed", { err }));
  const db = drizzle(pool, { schema }) as PgDb;
  return { db, pool, url, close: () => pool.end() };
}

type OpenEntry = { url: string; poolSize: number; open: Promise<OpenPg> };
const globalKey = Symbol.for("turnscope.pg");
type GlobalWithPg = typeof globalThis & { [globalKey]?: OpenEntry };

/**
 * The process-wide PostgreSQL handle from DATABASE_URL and DATABASE_POOL_SIZE, opened and migrated on
 * first use. Concurrent first calls share one opening; a failed opening is retried by the next call.
 */
export async function getPgDb(): Promise<PgDb> {
  const g = globalThis as GlobalWithPg;
  const { DATABASE_URL: url, DATABASE_POOL_SIZE: poolSize } = getConfig();
  if (!url) throw new Error("DATABASE_URL is not set: the PostgreSQL store is not selected");
  // Configuration read before the environment changed (work a test file left running, its modules
  // holding that file's settings) must not reopen its store: that closed the pool the environment's
  // store is open on now. In a server the two never differ.
  const now = process.env.DATABASE_URL?.trim();
  if (now && url !== now) {
    throw new Error("the store this work was started on is closed (DATABASE_URL changed since)");
  }
  let entry = g[globalKey];
  if (entry && (entry.url !== url || entry.poolSize !== poolSize)) {
    await closePgDb();
    entry = undefined;
  }
  if (!entry) {
    const opening: OpenEntry = { url, poolSize, open: openPg({ url, poolSize }) };
    g[globalKey] = opening;
    opening.open.catch(() => {
      if (g[globalKey] === opening) g[globalKey] = undefined;
    });
    entry = opening;
  }
  return (await entry.open).db;
}

/** Close the process-wide pool (graceful shutdown, tests). The next getPgDb() opens it again. */
export async function closePgDb(): Promise<void> {
  const g = globalThis as GlobalWithPg;
  const entry = g[globalKey];
  g[globalKey] = undefined;
  if (!entry) return;
  const open = await entry.open.catch(() => undefined);
  await open?.close();
}
