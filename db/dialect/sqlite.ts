/**
 * The SQLite store (the default): db/sqlite-database.ts opens the file once per process; hand-written
 * SQL is prepared once per text; transactions run synchronously in BEGIN IMMEDIATE, which already lets
 * one writer in at a time, so nothing needs a row lock.
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { getConfig } from "@/lib/config";
import { bulkWriterFor } from "../sqlite-bulk-writer";
import { getDb, onDatabaseOpen, statement } from "../sqlite-database";
import { asServerWrite, threadWritesDone, threadWriting } from "../sqlite-write-gate";
import * as schema from "../schema";
import { placeholders } from "../placeholders";
import type { Db, Dialect, JsonList, JsonSql, OpenHook, Step } from "./types";

/** Set inside the open hooks: their own queries must not wait for the hooks to finish. */
const inOpenHook = new AsyncLocalStorage<boolean>();
/** The open hooks still running (their synchronous part ran as the database opened). */
let hooksRunning: Promise<void> = Promise.resolve();

/** `["reward", "total"]` → `$."reward"."total"` (SQLite JSON path). */
function sqlitePath(keys: string[]): string {
  return "$" + keys.map((k) => `."${k.replace(/"/g, "")}"`).join("");
}

const json: JsonSql = {
  fieldText: (column, keys) => sql<string | null>`(${column} -> ${sqlitePath(keys)})`,
  fieldValue: (column, keys) => sql`(${column} ->> ${sqlitePath(keys)})`,
  field(column: SQLiteColumn, keys: string[]) {
    const path = sqlitePath(keys);
    return {
      value: sql<number | string | null>`case when json_valid(${column}) then json_extract(${column}, ${path}) end`,
      jsonType: sql<string | null>`case when json_valid(${column}) then json_type(${column}, ${path}) end`,
    };
  },
  fromField: (row) => row,
  toolName: (toolCall) =>
    sql<string | null>`(case when json_valid(${toolCall}) and json_type(${toolCall}) = 'object'
        then cast(json_extract(${toolCall}, '$.name') as text) end)`,
  objectKeys: (datasetId) =>
    sql`select distinct j.key as key from conversations c, json_each(c.meta) j
          where c.dataset_id = ${datasetId} and c.meta is not null and json_valid(c.meta) and json_type(c.meta) = 'object'
          order by j.key`,
  inIntegers: (column: SQLiteColumn, list: JsonList): SQL => sql`${column} in (select value from json_each(${list}))`,
  inIntegersSql: "in (select value from json_each(?))",
};

/**
 * One prepared single-row INSERT run per row, its id from `lastInsertRowid`: on SQLite, where a statement
 * is a function call and not a round trip, this is a third faster than 1,000-row INSERTs with RETURNING
 * (no parameter array spread over thousands of values, no rows to return and sort).
 */
function insertRows(step: Extract<Step, { kind: "insertRows" }>): number[] {
  const insert = statement(`insert into ${step.table} (${step.columns.join(", ")}) values (${placeholders(step.columns.length)})`);
  const ids: number[] = [];
  for (const row of step.rows) ids.push(Number(insert.run(...row).lastInsertRowid));
  return ids;
}

/** Rows sent to the write thread per statement batch: the loop builds and copies at most this many at a time. */
const BULK_SLICE_ROWS = 2000;

/**
 * The bulk transaction holding the write lock on its thread (db/sqlite-bulk-writer.ts), if any, and the
 * chain bulk transactions wait in. Process-wide: Next.js may load this module once per route bundle.
 */
type BulkState = { active: Promise<void> | null; tail: Promise<unknown> };
const bulkKey = "__turnscopeSqliteBulk";
const bulk: BulkState = ((globalThis as typeof globalThis & { [bulkKey]?: BulkState })[bulkKey] ??= { active: null, tail: Promise.resolve() });

/** Resolves once no bulk transaction holds the write lock: a write on this connection would wait for it on the loop. */
async function writesPaused(): Promise<void> {
  while (bulk.active) await bulk.active;
}

async function runBulk<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R> {
  const db = getDb();
  const writer = bulkWriterFor(getConfig().DATABASE_PATH);
  if (!writer) return sqliteDialect.transaction(body);
  let done!: () => void;
  bulk.active = new Promise<void>((resolve) => (done = resolve));
  try {
    await writer.send({ op: "begin" });
    try {
      const steps = body(db as unknown as Db);
      let next = steps.next();
      while (!next.done) {
        const step = next.value;
        let value: unknown;
        if (step.kind === "raw") value = await writer.send({ op: "raw", text: step.text, params: [...step.params] });
        else if (step.kind === "rawRun") value = await writer.send({ op: "run", text: step.text, params: [...step.params] });
        else if (step.kind === "insertRows") {
          const ids: number[] = [];
          let slice: unknown[][] = [];
          const flush = async () => {
            if (slice.length) ids.push(...((await writer.send({ op: "insert", table: step.table, columns: [...step.columns], rows: slice })) as number[]));
            slice = [];
          };
          for (const row of step.rows) {
            slice.push([...row]);
            if (slice.length >= BULK_SLICE_ROWS) await flush();
          }
          await flush();
          value = ids;
        } else throw new Error("a bulk transaction runs hand-written SQL only (raw, rawExec, insertRows steps)");
        next = steps.next(value);
      }
      await writer.send({ op: "commit" });
      return next.value;
    } catch (error) {
      await writer.send({ op: "rollback" }).catch(() => undefined);
      throw error;
    }
  } finally {
    bulk.active = null;
    done();
  }
}

export const sqliteDialect: Dialect = {
  name: "sqlite",
  queuesRuns: false,
  tables: schema,

  onOpen(hook: OpenHook) {
    // SQLite runs its hooks synchronously as it opens (db/sqlite-database.ts).
    onDatabaseOpen((db) => {
      const done = inOpenHook.run(true, async () => hook(db as unknown as Db));
      hooksRunning = hooksRunning.then(() => done);
    });
  },
  async database() {
    const db = getDb() as unknown as Db;
    // Not held back by a bulk transaction: its callers mostly read (a health read, a grid page), which WAL
    // lets go on; its few writes (sessions, keys, renames) wait in SQLite's busy wait, as every write did
    // before the bulk transaction had a thread.
    if (!inOpenHook.getStore()) await hooksRunning;
    // Held back by a thread storing an export's spans, though (tens of milliseconds, db/sqlite-write-gate.ts):
    // one write among its callers would otherwise hold the loop, and every request with it, until the thread commits.
    if (threadWriting()) await threadWritesDone();
    return db;
  },
  // Writes wait for a bulk transaction, and for a thread storing spans (db/sqlite-write-gate.ts), off the loop.
  async rawRows<T>(text: string, params: readonly unknown[]) {
    const s = statement(text);
    if (s.readonly) return s.all(...params) as T[];
    if (bulk.active) await writesPaused();
    return asServerWrite(() => s.all(...params) as T[]);
  },
  async rawRun(text, params) {
    if (bulk.active) await writesPaused();
    return asServerWrite(() => statement(text).run(...params).changes);
  },
  async sqlRows<T>(query: SQL) {
    return (await sqliteDialect.database()).all<T>(query);
  },
  // SQLite's `prepare()` takes no name (and ignores one).
  preparedName: () => undefined,
  async transaction<R>(body: (tx: Db) => Generator<Step, R, unknown>) {
    if (bulk.active) await writesPaused();
    const db = getDb();
    return asServerWrite(() =>
      db.transaction(
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
            else if (step.kind === "insertRows") value = insertRows(step);
            else value = statement(step.text).run(...step.params).changes;
            next = steps.next(value);
          }
          return next.value;
        },
        { behavior: "immediate" },
      ),
    );
  },
  // On the write thread, one at a time; the server's own writes wait for each (writesPaused).
  bulkTransaction<R>(body: (tx: Db) => Generator<Step, R, unknown>) {
    const run = bulk.tail.then(() => runBulk(body));
    bulk.tail = run.catch(() => undefined);
    return run;
  },
  lockRow: () => null,
  exclusive: () => null,

  forUpdate: "",
  forUpdateSkipLocked: "",
  greatest: "max",
  booleanParam: (value) => (value ? 1 : 0),
  isTrue: (column) => `${column} <> 0`,
  countFailureSql: (maxErrors) => `update pipeline_executions set failed_evaluations = failed_evaluations + 1,
  errors = case when json_array_length(errors) < ${maxErrors} then json_insert(errors, '$[#]', json(?)) else errors end
  where id = ?`,
  addMetaCountSql: (key) => `update pipeline_executions set meta = json_set(meta, '$.${key}', coalesce(json_extract(meta, '$.${key}'), 0) + ?) where id = ?`,
  claimNextWaveSql: `update pipeline_executions set meta = json_set(meta, '$.queue.wave', ?, '$.queue.enqueued', ?)
        where id = ? and status in ('pending', 'processing') and json_extract(meta, '$.queue.wave') = ?
          and successful_evaluations + failed_evaluations + skipped_evaluations >= json_extract(meta, '$.queue.enqueued')`,
  savesResultOnceInOneCall: false,
  json,
};
