/**
 * Opens the SQLite database once per process: WAL, foreign keys, busy timeout, then the drizzle-kit
 * migrations. Only db/repositories import this module.
 */
import "server-only";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import * as schema from "./schema";
import { stopBulkWriter } from "./sqlite-bulk-writer";
import { AUTOCHECKPOINT_BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from "./sqlite-checkpointer";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

type OpenDb = { db: Db; sqlite: Database.Database; path: string; statements: Map<string, Database.Statement>; checkpointer: Checkpointer | null };
const globalKey = Symbol.for("turnscope.db");
type GlobalWithDb = typeof globalThis & { [globalKey]?: OpenDb };

const afterOpenHooks: Array<(db: Db) => void> = [];

/** Work to run once right after the database is migrated (seeding system templates, recovery). */
export function onDatabaseOpen(hook: (db: Db) => void): void {
  afterOpenHooks.push(hook);
  const open = (globalThis as GlobalWithDb)[globalKey];
  if (open) hook(open.db);
}

function migrationsFolder(): string {
  // `next start` and the test runners both run from the project root.
  return path.join(process.cwd(), "db", "migrations");
}

function openDatabase(file: string): OpenDb {
  if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new Database(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: migrationsFolder() });
  // Checkpoints run on a thread of their own (db/sqlite-checkpointer.ts); this connection only as a backstop.
  let checkpointer: Checkpointer | null = null;
  if (file !== ":memory:") {
    sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_BACKSTOP_PAGES}`);
    checkpointer = startCheckpointer(path.resolve(file), (message) => log.warn("sqlite checkpoint failed; the server checkpoints as it writes", { error: message }));
  }
  return { db, sqlite, path: file, statements: new Map(), checkpointer };
}

function closeOpen(open: OpenDb): void {
  open.checkpointer?.stop();
  // Its connection belongs to this opening of the file: a file reopened (or replaced) gets a new one.
  stopBulkWriter();
  open.sqlite.close();
}

/** The open database's checkpoint thread (tests, diagnostics); null on `:memory:` or when none is open. */
export function checkpointer(): Checkpointer | null {
  return (globalThis as GlobalWithDb)[globalKey]?.checkpointer ?? null;
}

/** The process-wide database handle, opened and migrated on first use. */
export function getDb(): Db {
  const g = globalThis as GlobalWithDb;
  const file = getConfig().DATABASE_PATH;
  // As in db/pg.ts: settings read before the environment changed must not close the open database.
  const now = process.env.DATABASE_PATH?.trim();
  if (now && file !== now) {
    throw new Error("the store this work was started on is closed (DATABASE_PATH changed since)");
  }
  let open = g[globalKey];
  if (open && open.path !== file) {
    closeOpen(open);
    open = undefined;
  }
  if (!open) {
    open = openDatabase(file);
    g[globalKey] = open;
    for (const hook of afterOpenHooks) hook(open.db);
  }
  return open.db;
}

/**
 * A prepared statement, compiled once per open database. For the per-cell hot paths (saving a result,
 * the verdict cache), where building and preparing the query on every call cost more than running it.
 */
export function statement(sqlText: string): Database.Statement {
  getDb();
  const open = (globalThis as GlobalWithDb)[globalKey]!;
  let stmt = open.statements.get(sqlText);
  if (!stmt) {
    stmt = open.sqlite.prepare(sqlText);
    open.statements.set(sqlText, stmt);
  }
  return stmt;
}

/**
 * The open database's file as an absolute path, for a thread that writes with a connection of its own
 * (db/sqlite-thread-store.ts); null for `:memory:`, which no other connection can open.
 */
export function databaseFile(): string | null {
  getDb();
  const file = (globalThis as GlobalWithDb)[globalKey]!.path;
  return file === ":memory:" ? null : path.resolve(file);
}

/** Close the handle (graceful shutdown, tests). The next getDb() opens it again. */
export function closeDb(): void {
  const g = globalThis as GlobalWithDb;
  const open = g[globalKey];
  if (open) closeOpen(open);
  g[globalKey] = undefined;
}
