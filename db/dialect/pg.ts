/**
 * The PostgreSQL store (DATABASE_URL=postgres://…): db/pg.ts's pool, migrated once per process;
 * hand-written SQL with `?` placeholders is numbered `$1…$n` and named, so each connection plans it
 * once; transactions run on one pooled connection, with row locks where a body reads then writes.
 * Several processes share the store, so runs are queued jobs (lib/cluster).
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { getPgDb, type PgDb } from "../pg";
import * as schema from "../schema.pg";
import { placeholders } from "../placeholders";
import type { Db, Dialect, JsonList, JsonSql, OpenHook, Step, Tables } from "./types";

const openHooks: OpenHook[] = [];
const pgReady = Symbol.for("turnscope.pg.ready");
type GlobalWithReady = typeof globalThis & { [pgReady]?: { db: PgDb; ready: Promise<void> } };
/** Set inside the open hooks: their own queries must not wait for the hooks to finish. */
const inOpenHook = new AsyncLocalStorage<boolean>();

/** Rows changed by a write without RETURNING. */
function changes(result: unknown): number {
  const r = result as { changes?: number; rowCount?: number | null };
  return r.changes ?? r.rowCount ?? 0;
}

/** `?` placeholders → PostgreSQL's `$1…$n` (our hand-written SQL has no `?` inside string literals). */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** Runs hand-written text with `?` placeholders on a transaction's connection. */
type RunText = (text: string, params: readonly unknown[]) => Promise<{ rows: unknown[]; rowCount: number | null }>;
type TxClient = { query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }> };

/**
 * How a transaction runs hand-written SQL: on its pooled connection as a named statement (planned once
 * per connection, as `rawRows` outside one), not rebuilt as Drizzle SQL with a chunk per parameter and
 * planned anew each time (a 1,000-row insert was 7,000 chunks). Drizzle's node-postgres transaction keeps
 * that connection as `session.client`.
 */
function textRunner(tx: unknown): RunText {
  const client = (tx as { session?: { client?: Partial<TxClient> } }).session?.client;
  if (!client || typeof client.query !== "function") throw new Error("drizzle-orm's node-postgres transaction no longer exposes its connection as session.client");
  const c = client as TxClient;
  return (text, params) => c.query({ name: preparedName(text), text: numbered(text), values: params as unknown[] });
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

/** `["reward", "total"]` → `{"reward","total"}` (a PostgreSQL text[] literal, sent as a parameter). */
function pgPath(keys: string[]): string {
  return `{${keys.map((k) => `"${k.replace(/["\\]/g, "")}"`).join(",")}}`;
}

// PostgreSQL has `#>`/`#>>` over `{a,b}` paths and json_typeof, which names types differently and
// returns text; these give the answers SQLite's json_extract/json_type give.
const json: JsonSql = {
  fieldText: (column, keys) => sql<string | null>`((${column} #> ${pgPath(keys)}::text[])::text)`,
  // PostgreSQL cannot compare text with numbers, so a number comparison reads only numeric fields and
  // booleans as 1/0 (others are null), as SQLite's ->> gives them; a text comparison reads the text.
  fieldValue(column, keys, numeric) {
    const path = pgPath(keys);
    return numeric
      ? sql`(case json_typeof(${column} #> ${path}::text[])
        when 'number' then (${column} #>> ${path}::text[])::double precision
        when 'boolean' then case when ${column} #>> ${path}::text[] = 'true' then 1 else 0 end end)`
      : sql`(${column} #>> ${path}::text[])`;
  },
  field(column: SQLiteColumn, keys: string[]) {
    const path = pgPath(keys);
    const field = sql`(${column} #> ${path}::text[])`;
    return {
      value: sql<string | null>`(case when json_typeof(${field}) in ('object', 'array') then ${field}::text else ${column} #>> ${path}::text[] end)`,
      jsonType: sql<string | null>`(case json_typeof(${field})
      when 'boolean' then ${field}::text
      when 'number' then case when ${field}::text ~ '[.eE]' then 'real' else 'integer' end
      when 'string' then 'text'
      else json_typeof(${field}) end)`,
    };
  },
  // The value arrives as text: numbers as numbers, booleans as 1/0, as SQLite gives them.
  fromField(row) {
    if (row.value === null) return row;
    if (row.jsonType === "integer" || row.jsonType === "real") return { ...row, value: Number(row.value) };
    if (row.jsonType === "true" || row.jsonType === "false") return { ...row, value: row.jsonType === "true" ? 1 : 0 };
    return row;
  },
  toolName: (toolCall) => sql<string | null>`(case when json_typeof(${toolCall}) = 'object' then ${toolCall} ->> 'name' end)`,
  objectKeys: (datasetId) =>
    sql`select distinct k as key from conversations c,
          json_object_keys(case when json_typeof(c.meta) = 'object' then c.meta else '{}'::json end) k
          where c.dataset_id = ${datasetId} and c.meta is not null order by 1`,
  // `= any(array(…))`, not `in (select …)`: the planner then uses the list as an index condition even in a
  // prepared statement's generic plan. As a semi-join it drove the grid's latest cells from the entity ids and
  // tested the metric ids after, reading every result of those entities (283 ms against 0.24 ms at 100k rows).
  inIntegers: (column: SQLiteColumn, list: JsonList): SQL => sql`${column} = any(array(select (value)::integer from json_array_elements_text(cast(${list} as json))))`,
  inIntegersSql: "= any(array(select (value)::integer from json_array_elements_text(cast(? as json))))",
};

/**
 * Rows per multi-row INSERT: at most 1,000 × 12 parameters, below PostgreSQL's 65,535 bound parameters.
 * A remainder goes in chunks of 100, 10 and 1, so a table has at most four statement texts.
 */
const CHUNK_SIZES = [1000, 100, 10, 1];

/**
 * Multi-row INSERTs (one round trip per 1,000 rows instead of one per row); the ids in VALUES order.
 * Rows are taken from `step.rows` 1,000 at a time, so no more than one statement's rows are held.
 */
async function insertRows(run: RunText, step: Extract<Step, { kind: "insertRows" }>): Promise<number[]> {
  const ids: number[] = [];
  const one = `(${placeholders(step.columns.length)})`;
  const insertChunk = async (chunk: ReadonlyArray<readonly unknown[]>) => {
    const text = `insert into ${step.table} (${step.columns.join(", ")}) values ${new Array(chunk.length).fill(one).join(", ")} returning id`;
    const returned = (await run(text, chunk.flat())).rows as Array<{ id: number | string }>;
    // Ids are drawn in VALUES order; RETURNING's own order is not promised, so sort.
    ids.push(...returned.map((r) => Number(r.id)).sort((a, b) => a - b));
  };
  const [full, ...smaller] = CHUNK_SIZES;
  let pending: Array<readonly unknown[]> = [];
  for (const row of step.rows) {
    pending.push(row);
    if (pending.length === full) {
      await insertChunk(pending);
      pending = [];
    }
  }
  // The remainder (fewer than 1,000 rows) in chunks of 100, 10 and 1.
  let start = 0;
  for (const size of smaller) {
    for (; pending.length - start >= size; start += size) await insertChunk(pending.slice(start, start + size));
  }
  return ids;
}

export const pgDialect: Dialect = {
  name: "postgres",
  queuesRuns: true,
  // The PostgreSQL tables carry the SQLite tables' static types: the query builder calls the
  // repositories make exist on both dialects with the same meaning, and the row types are identical.
  tables: schema as unknown as Tables,

  onOpen(hook: OpenHook) {
    openHooks.push(hook);
    // Registered after the store opened (a module imported late): run it now, before the next query.
    const g = globalThis as GlobalWithReady;
    const open = g[pgReady];
    if (open) {
      const ready = open.ready.then(() => inOpenHook.run(true, async () => hook(open.db as unknown as Db)));
      ready.catch(() => undefined); // as below: a failure is its callers', not the process's
      g[pgReady] = { db: open.db, ready };
    }
  },
  async database() {
    const db = await getPgDb();
    const g = globalThis as GlobalWithReady;
    // A new pool (first use, or reopened after close) runs the open hooks again, once.
    if (g[pgReady]?.db !== db) {
      const ready = inOpenHook.run(true, async () => {
        for (const hook of openHooks) await hook(db as unknown as Db);
      });
      // Its callers get the failure; with none waiting (the pool closed while a hook ran), it is no
      // unhandled rejection of the process.
      ready.catch(() => undefined);
      g[pgReady] = { db, ready };
    }
    if (!inOpenHook.getStore()) await g[pgReady]!.ready;
    return db as unknown as Db;
  },
  async rawRows<T>(text: string, params: readonly unknown[]) {
    const db = (await pgDialect.database()) as unknown as PgDb;
    const result = await db.$client.query({ name: preparedName(text), text: numbered(text), values: params as unknown[] });
    return result.rows as T[];
  },
  async rawRun(text, params) {
    const db = (await pgDialect.database()) as unknown as PgDb;
    const result = await db.$client.query({ name: preparedName(text), text: numbered(text), values: params as unknown[] });
    return result.rowCount ?? 0;
  },
  async sqlRows<T>(query: SQL) {
    const db = (await pgDialect.database()) as unknown as PgDb;
    return (await db.execute(query)).rows as T[];
  },
  preparedName,
  async transaction<R>(body: (tx: Db) => Generator<Step, R, unknown>) {
    const db = (await pgDialect.database()) as unknown as PgDb;
    return db.transaction(async (tx) => {
      const steps = body(tx as unknown as Db);
      const run = textRunner(tx);
      let next = steps.next();
      while (!next.done) {
        const step = next.value;
        let value: unknown;
        if (step.kind === "rows") value = await step.query;
        else if (step.kind === "changes") value = changes(await step.query);
        else if (step.kind === "raw") value = (await run(step.text, step.params)).rows;
        else if (step.kind === "insertRows") value = await insertRows(run, step);
        else value = (await run(step.text, step.params)).rowCount ?? 0;
        next = steps.next(value);
      }
      return next.value;
    });
  },
  // Awaited statement by statement already: the loop turns between them.
  bulkTransaction(body) {
    return pgDialect.transaction(body);
  },
  lockRow: (table, id) => ({ kind: "raw", text: `select id from ${table} where id = ? for update`, params: [id] }),
  exclusive: (key) => ({ kind: "raw", text: "select pg_advisory_xact_lock(?)", params: [key] }),

  forUpdate: " for update",
  forUpdateSkipLocked: " for update skip locked",
  greatest: "greatest",
  booleanParam: (value) => value,
  isTrue: (column) => column,
  // PostgreSQL splices the text, so the stored array keeps each error's keys in the order written, as
  // SQLite's json_insert does.
  countFailureSql: (maxErrors) => `update pipeline_executions set failed_evaluations = failed_evaluations + 1,
  errors = case when json_array_length(errors) < ${maxErrors}
    then (left(errors::text, -1) || case when json_array_length(errors) = 0 then '' else ',' end || ? || ']')::json else errors end
  where id = ?`,
  addMetaCountSql: (key) => `update pipeline_executions set meta = jsonb_set(meta::jsonb, '{${key}}',
          to_jsonb(coalesce((meta->>'${key}')::int, 0) + ?::int))::json where id = ?`,
  claimNextWaveSql: `update pipeline_executions
        set meta = jsonb_set(jsonb_set(meta::jsonb, '{queue,wave}', to_jsonb(?::int)), '{queue,enqueued}', to_jsonb(?::int))::json
        where id = ? and status in ('pending', 'processing') and (meta->'queue'->>'wave')::int = ?
          and successful_evaluations + failed_evaluations + skipped_evaluations >= (meta->'queue'->>'enqueued')::int`,
  savesResultOnceInOneCall: true,
  json,
};
