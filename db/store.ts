/**
 * The store the repositories run on, SQLite (the default) or PostgreSQL (when DATABASE_URL is set): the
 * repositories build their queries once with drizzle and run them on either through what is here:
 * `database()` for single statements, `transaction()` for several that must commit together,
 * `rawRows`/`rawRun` for the hand-written SQL of hot paths. Where the two SQL dialects differ, the
 * repository asks the chosen dialect (db/dialect). Only db/repositories import this.
 */
import "server-only";
import type { SQL } from "drizzle-orm";
import { dialect, type Db, type OpenHook, type Step } from "./dialect";

export { placeholders } from "./placeholders";

export type { Db, Step };

/** Work to run once when the store is first opened and migrated (seeding the system templates). */
export function onStoreOpen(hook: OpenHook): void {
  dialect.onOpen(hook);
}

/** The store's query builder, opened (and, the first time, migrated and seeded). */
export async function database(): Promise<Db> {
  return dialect.database();
}

/** The first row, or undefined (what SQLite's `.get()` gives). */
export function first<T>(rows: T[]): T | undefined {
  return rows[0];
}

/** Rows changed by an insert/update/delete without RETURNING, on either driver. */
export function changes(result: unknown): number {
  const r = result as { changes?: number; rowCount?: number | null };
  return r.changes ?? r.rowCount ?? 0;
}

/**
 * Rows of hand-written SQL (`?` placeholders), with snake_case column names as written. SQLite
 * prepares each text once; PostgreSQL names it, so the server plans it once per connection.
 * JSON columns come back as text on both (db/pg.ts keeps json unparsed, as SQLite does).
 */
export async function rawRows<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
  return dialect.rawRows<T>(text, params);
}

/** Rows of a drizzle `sql` query (for SQL the query builder cannot express), on either store. */
export async function sqlRows<T>(query: SQL): Promise<T[]> {
  return dialect.sqlRows<T>(query);
}

/** Run hand-written SQL that returns no rows; the number of rows it changed. */
export async function rawRun(text: string, params: readonly unknown[] = []): Promise<number> {
  return dialect.rawRun(text, params);
}

/** A query builder that can be prepared: drizzle's select on either store. */
export type Preparable<R> = {
  toSQL(): { sql: string };
  prepare(name?: string): { execute(placeholderValues?: Record<string, unknown>): PromiseLike<R> };
};
type PreparedQuery<R> = ReturnType<Preparable<R>["prepare"]>;
const preparedQueries = new WeakMap<object, Map<string, PreparedQuery<unknown>>>();

/**
 * Run a query built once per store handle and prepared: the values go in through
 * `sql.placeholder(name)`, so its SQL text never changes. SQLite compiles it once; PostgreSQL names it
 * by a hash of its text, so each connection plans it once. For the hot read paths (grid pages, latest
 * results), where building the query with drizzle and preparing it on every call cost more than
 * running it. `key` names the query's shape: one key, one SQL text.
 */
export async function prepared<R>(key: string, build: (db: Db) => Preparable<R>, values: Record<string, unknown>): Promise<R> {
  const db = await database();
  let cache = preparedQueries.get(db);
  if (!cache) preparedQueries.set(db, (cache = new Map()));
  let query = cache.get(key) as PreparedQuery<R> | undefined;
  if (!query) {
    const builder = build(db);
    // SQLite's `prepare()` takes no name (and ignores one); PostgreSQL's needs one, unique per text.
    query = builder.prepare(dialect.preparedName(builder.toSQL().sql));
    cache.set(key, query);
  }
  return await query.execute(values);
}

/** Inside `transaction`: the rows of a select or of a write with RETURNING. */
export function* rows<T>(query: PromiseLike<T[]>): Generator<Step, T[], unknown> {
  return (yield { kind: "rows", query }) as T[];
}

/** Inside `transaction`: run a write; how many rows it changed. */
export function* run(query: PromiseLike<unknown>): Generator<Step, number, unknown> {
  return (yield { kind: "changes", query }) as number;
}

/** Inside `transaction`: the rows of hand-written SQL with `?` placeholders. */
export function* raw<T>(text: string, params: readonly unknown[] = []): Generator<Step, T[], unknown> {
  return (yield { kind: "raw", text, params }) as T[];
}

/** Inside `transaction`: run hand-written SQL that returns no rows; how many rows it changed. */
export function* rawExec(text: string, params: readonly unknown[] = []): Generator<Step, number, unknown> {
  return (yield { kind: "rawRun", text, params }) as number;
}

/**
 * Inside `transaction`: serialise writers on one row (PostgreSQL's `select … for update`), for bodies
 * that read then write what they read (the next column position, the next label version). SQLite
 * needs nothing: its BEGIN IMMEDIATE already lets one writer in at a time.
 */
export function* lockRow(table: "datasets" | "pipeline_nodes" | "pipeline_executions", id: number): Generator<Step, void, unknown> {
  const step = dialect.lockRow(table, id);
  if (step) yield step;
}

/**
 * Inside `transaction`: one such transaction at a time across every process (PostgreSQL's
 * transaction-scoped advisory lock on `key`), e.g. for seeding at start-up. SQLite: BEGIN IMMEDIATE.
 */
export function* exclusive(key: number): Generator<Step, void, unknown> {
  const step = dialect.exclusive(key);
  if (step) yield step;
}

/**
 * Several statements that commit together or not at all. The body is a generator that yields its
 * queries (`yield* rows(tx.select()…)`), so one body runs on both stores: on SQLite synchronously in
 * one BEGIN IMMEDIATE … COMMIT (nothing else can run on the connection in between — an async body
 * could let another request's statement slip into the transaction), on PostgreSQL awaited on one
 * pooled connection.
 */
export async function transaction<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R> {
  return dialect.transaction(body);
}

/**
 * `transaction` for a body that writes many rows (an import), with raw/rawExec/insertRows steps only: on
 * SQLite its statements run on a write thread, so the event loop answers other requests meanwhile (their
 * writes wait for it); on PostgreSQL the same as `transaction`.
 */
export async function bulkTransaction<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R> {
  return dialect.bulkTransaction(body);
}
