/**
 * The store the repositories run on: SQLite (db/client.ts, the default) or PostgreSQL (db/pg.ts, when
 * DATABASE_URL is set). The repositories build their queries once with drizzle and run them on either
 * through what is here: `database()` for single statements, `transaction()` for several that must
 * commit together, `rawRows`/`rawRun` for the hand-written SQL of hot paths. Where the two SQL
 * dialects differ, the repository asks `onPostgres` and says why. Only db/repositories import this.
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { getDb as sqliteDb, onDatabaseOpen, statement } from "./client";
import { getPgDb, type PgDb } from "./pg";
import type { PoolClient } from "pg";
import type * as schema from "./schema";
import { onPostgres } from "./tables";

export { onPostgres };

/**
 * The query builder of the store, typed as the SQLite one. On PostgreSQL it is drizzle's node-postgres
 * database: the builder calls the repositories make (select/insert/update/delete, joins, returning,
 * on conflict) exist on both with the same meaning, and queries are run with `await`, never with
 * SQLite's synchronous `.get()`/`.all()`/`.run()`.
 */
export type Db = BetterSQLite3Database<typeof schema>;

type OpenHook = (db: Db) => void | Promise<void>;
const openHooks: OpenHook[] = [];
const pgReady = Symbol.for("turnscope.pg.ready");
type GlobalWithReady = typeof globalThis & { [pgReady]?: { db: PgDb; ready: Promise<void> } };
/** Set inside the open hooks: their own queries must not wait for the hooks to finish. */
const inOpenHook = new AsyncLocalStorage<boolean>();
/** SQLite's open hooks still running (their synchronous part ran as the database opened). */
let sqliteHooks: Promise<void> = Promise.resolve();

/** Work to run once when the store is first opened and migrated (seeding the system templates). */
export function onStoreOpen(hook: OpenHook): void {
  openHooks.push(hook);
  // SQLite runs its hooks synchronously as it opens (db/client.ts); PostgreSQL in `database()`.
  if (!onPostgres) {
    return onDatabaseOpen((db) => {
      const done = inOpenHook.run(true, async () => hook(db as unknown as Db));
      sqliteHooks = sqliteHooks.then(() => done);
    });
  }
  // Registered after the store opened (a module imported late): run it now, before the next query.
  const g = globalThis as GlobalWithReady;
  const open = g[pgReady];
  if (open) g[pgReady] = { db: open.db, ready: open.ready.then(() => inOpenHook.run(true, async () => hook(open.db as unknown as Db))) };
}

/** The store's query builder, opened (and, the first time, migrated and seeded). */
export async function database(): Promise<Db> {
  if (!onPostgres) {
    const db = sqliteDb() as unknown as Db;
    if (!inOpenHook.getStore()) await sqliteHooks;
    return db;
  }
  const db = await getPgDb();
  const g = globalThis as GlobalWithReady;
  // A new pool (first use, or reopened after close) runs the open hooks again, once.
  if (g[pgReady]?.db !== db) {
    const ready = inOpenHook.run(true, async () => {
      for (const hook of openHooks) await hook(db as unknown as Db);
    });
    g[pgReady] = { db, ready };
  }
  if (!inOpenHook.getStore()) await g[pgReady]!.ready;
  return db as unknown as Db;
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

/** `?` placeholders → PostgreSQL's `$1…$n` (our hand-written SQL has no `?` inside string literals). */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** Drizzle SQL from hand-written text with `?` placeholders, to run inside a transaction. */
function toSql(text: string, params: readonly unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length - 1 !== params.length) throw new Error(`SQL has ${parts.length - 1} placeholders for ${params.length} values`);
  const chunks: SQL[] = [];
  parts.forEach((part, i) => {
    chunks.push(sql.raw(part));
    if (i < params.length) chunks.push(sql`${params[i]}`);
  });
  return sql.join(chunks);
}

/**
 * Rows of hand-written SQL (`?` placeholders), with snake_case column names as written. SQLite
 * prepares each text once; PostgreSQL names it, so the server plans it once per connection.
 * JSON columns come back as text on both (db/pg.ts keeps json unparsed, as SQLite does).
 */
export async function rawRows<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
  if (!onPostgres) return statement(text).all(...params) as T[];
  const db = await database();
  const result = await (db as unknown as PgDb).$client.query({ name: preparedName(text), text: numbered(text), values: params as unknown[] });
  return result.rows as T[];
}

/** Rows of a drizzle `sql` query (for SQL the query builder cannot express), on either store. */
export async function sqlRows<T>(query: SQL): Promise<T[]> {
  const db = await database();
  if (!onPostgres) return db.all<T>(query);
  return (await (db as unknown as PgDb).execute(query)).rows as T[];
}

/** Run hand-written SQL that returns no rows; the number of rows it changed. */
export async function rawRun(text: string, params: readonly unknown[] = []): Promise<number> {
  if (!onPostgres) return statement(text).run(...params).changes;
  const db = await database();
  const result = await (db as unknown as PgDb).$client.query({ name: preparedName(text), text: numbered(text), values: params as unknown[] });
  return result.rowCount ?? 0;
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
    query = builder.prepare(onPostgres ? preparedName(builder.toSQL().sql) : undefined);
    cache.set(key, query);
  }
  return await query.execute(values);
}

const names = new Map<string, string>();
/**
 * A stable name per statement text: node-postgres prepares a named statement once per connection. The
 * name is a hash of the text, not a counter: Next.js bundles this module more than once (instrumentation,
 * each route) over one shared pool, and counters per copy gave two texts one name on a connection
 * ("Prepared statements must be unique").
 */
function preparedName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `ts_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** One step of a transaction body: a query whose rows (or changed-row count) the body needs. */
export type Step =
  | { kind: "rows"; query: PromiseLike<unknown> }
  | { kind: "changes"; query: PromiseLike<unknown> }
  | { kind: "raw"; text: string; params: readonly unknown[] }
  | { kind: "rawRun"; text: string; params: readonly unknown[] };

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
  if (onPostgres) yield { kind: "raw", text: `select id from ${table} where id = ? for update`, params: [id] };
}

/**
 * Inside `transaction`: one such transaction at a time across every process (PostgreSQL's
 * transaction-scoped advisory lock on `key`), e.g. for seeding at start-up. SQLite: BEGIN IMMEDIATE.
 */
export function* exclusive(key: number): Generator<Step, void, unknown> {
  if (onPostgres) yield { kind: "raw", text: "select pg_advisory_xact_lock(?)", params: [key] };
}

/**
 * Several statements that commit together or not at all. The body is a generator that yields its
 * queries (`yield* rows(tx.select()…)`), so one body runs on both stores: on SQLite synchronously in
 * one BEGIN IMMEDIATE … COMMIT (nothing else can run on the connection in between — an async body
 * could let another request's statement slip into the transaction), on PostgreSQL awaited on one
 * pooled connection.
 */
export async function transaction<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R> {
  if (!onPostgres) {
    const db = sqliteDb();
    return db.transaction(
      (tx) => {
        const steps = body(tx as unknown as Db);
        let next = steps.next();
        while (!next.done) {
          const step = next.value;
          let value: unknown;
          // SQLite's builders run synchronously; the SQL of a raw step is prepared once.
          if (step.kind === "rows") value = (step.query as unknown as { all(): unknown[] }).all();
          else if (step.kind === "changes") value = (step.query as unknown as { run(): { changes: number } }).run().changes;
          else if (step.kind === "raw") value = statement(step.text).all(...step.params);
          else value = statement(step.text).run(...step.params).changes;
          next = steps.next(value);
        }
        return next.value;
      },
      { behavior: "immediate" },
    );
  }
  const db = (await database()) as unknown as PgDb;
  return db.transaction(async (tx) => {
    const steps = body(tx as unknown as Db);
    let next = steps.next();
    while (!next.done) {
      const step = next.value;
      let value: unknown;
      if (step.kind === "rows") value = await step.query;
      else if (step.kind === "changes") value = changes(await step.query);
      else if (step.kind === "raw") value = (await tx.execute(toSql(step.text, step.params))).rows;
      else value = (await tx.execute(toSql(step.text, step.params))).rowCount ?? 0;
      next = steps.next(value);
    }
    return next.value;
  });
}

/** A query on one PostgreSQL connection: hand-written SQL with `?` placeholders, its rows. */
export type PgQuery = <T>(text: string, params?: readonly unknown[]) => Promise<T[]>;

/**
 * PostgreSQL only: a transaction on one pooled connection for hand-written bulk SQL (an import's
 * multi-row inserts), committed when `body` resolves, rolled back when it throws.
 */
export async function pgTransaction<R>(body: (query: PgQuery) => Promise<R>): Promise<R> {
  const pool = ((await database()) as unknown as PgDb).$client;
  const client: PoolClient = await pool.connect();
  const query: PgQuery = async <T>(text: string, params: readonly unknown[] = []) =>
    (await client.query({ text: numbered(text), values: params as unknown[] })).rows as T[];
  try {
    await client.query("begin");
    const result = await body(query);
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
