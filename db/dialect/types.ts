/**
 * What differs between the two stores, as one interface: each store has one object holding all of it
 * (db/dialect/sqlite.ts, db/dialect/pg.ts), chosen once from the configuration (db/dialect/index.ts).
 * The repositories build their queries once and ask the dialect wherever SQLite and PostgreSQL differ.
 */
import type { SQL, sql } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type * as schema from "../schema";

/**
 * The query builder of the store, typed as the SQLite one. On PostgreSQL it is drizzle's node-postgres
 * database: the builder calls the repositories make (select/insert/update/delete, joins, returning,
 * on conflict) exist on both with the same meaning, and queries are run with `await`, never with
 * SQLite's synchronous `.get()`/`.all()`/`.run()`.
 */
export type Db = BetterSQLite3Database<typeof schema>;

/** The tables the repositories query, with the SQLite tables' static types (db/schema-parity.test.ts). */
export type Tables = Pick<
  typeof schema,
  | "datasetsTable"
  | "datasetCountsTable"
  | "conversationsTable"
  | "messagesTable"
  | "stepsTable"
  | "metricTemplatesTable"
  | "evaluationPipelinesTable"
  | "pipelineNodesTable"
  | "pipelineExecutionsTable"
  | "evaluationResultsTable"
  | "latestResultsTable"
  | "latestResultCountsTable"
  | "judgeCacheTable"
  | "labelsTable"
  | "metricPromptVersionsTable"
  | "importIdempotencyKeysTable"
  | "savedMappingsTable"
  | "otelConversationsTable"
  | "otelTracesTable"
  | "otelSpansTable"
  | "usersTable"
  | "apiKeysTable"
  | "sessionsTable"
  | "onlineRulesTable"
  | "onlineRuleConversationsTable"
  | "onlineRuleRunsTable"
>;

export type OpenHook = (db: Db) => void | Promise<void>;

/** One step of a transaction body: a query whose rows (or changed-row count) the body needs. */
export type Step =
  | { kind: "rows"; query: PromiseLike<unknown> }
  | { kind: "changes"; query: PromiseLike<unknown> }
  | { kind: "raw"; text: string; params: readonly unknown[] }
  | { kind: "rawRun"; text: string; params: readonly unknown[] }
  /**
   * Insert `rows` (values in `columns` order) into `table`; the new ids, in row order. The rows are
   * read as they are inserted (at most one statement's worth held), so a caller can build each row
   * when it is needed instead of holding every row of a large import at once.
   */
  | { kind: "insertRows"; table: string; columns: readonly string[]; rows: Iterable<readonly unknown[]> };

/** A list of ids bound as one JSON-text parameter (or a placeholder for one). */
export type JsonList = SQL.Aliased | SQL | ReturnType<typeof sql.placeholder>;

/** Fields inside JSON columns, in the store's SQL; both stores give the repositories the same answers. */
export interface JsonSql {
  /** The field as JSON text (objects and arrays included), null when absent. */
  fieldText(column: SQLiteColumn, keys: string[]): SQL<string | null>;
  /** The field as a comparable value for filters and sorting: numbers as numbers (`numeric`), else text. */
  fieldValue(column: SQLiteColumn, keys: string[], numeric: boolean): SQL;
  /** The field's value and SQLite-style JSON type (`true`, `false`, `integer`, `real`, `text`, `null`, `object`, `array`). */
  field(column: SQLiteColumn, keys: string[]): { value: SQL<number | string | null>; jsonType: SQL<string | null> };
  /** A row read with `field`, with the value as SQLite gives it. */
  fromField<T extends { value: number | string | null; jsonType: string | null }>(row: T): T;
  /** A step's tool name: the `name` of a `{name, arguments}` tool call object, else null. */
  toolName(toolCall: SQLiteColumn): SQL<string | null>;
  /** The distinct top-level keys of the JSON objects in conversations' meta, for one dataset. */
  objectKeys(datasetId: number): SQL;
  /** `column in (the integers of a JSON array)`, the list bound as one JSON-text parameter. */
  inIntegers(column: SQLiteColumn, list: JsonList): SQL;
  /** `inIntegers` for hand-written SQL: `column ${inIntegersSql}` with the JSON text bound to its `?`. */
  readonly inIntegersSql: string;
}

export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /**
   * Whether several processes share the store, so runs are queued jobs any process may work
   * (PostgreSQL) rather than run in the process that started them (SQLite).
   */
  readonly queuesRuns: boolean;
  readonly tables: Tables;

  /** Work to run once when the store is first opened and migrated (and again on a reopened pool). */
  onOpen(hook: OpenHook): void;
  /** The store's query builder, opened (and, the first time, migrated and seeded). */
  database(): Promise<Db>;
  /** Rows of hand-written SQL with `?` placeholders, prepared once per text. */
  rawRows<T>(text: string, params: readonly unknown[]): Promise<T[]>;
  /** Run hand-written SQL that returns no rows; how many rows it changed. */
  rawRun(text: string, params: readonly unknown[]): Promise<number>;
  /** Rows of a drizzle `sql` query. */
  sqlRows<T>(query: SQL): Promise<T[]>;
  /** The name a prepared query of this SQL text gets (PostgreSQL names it per connection; SQLite takes none). */
  preparedName(sqlText: string): string | undefined;
  /** Run a generator transaction body: SQLite synchronously in BEGIN IMMEDIATE, PostgreSQL on one pooled connection. */
  transaction<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R>;
  /**
   * A transaction of many rows, written with raw/rawExec/insertRows steps only: on SQLite its statements
   * run on a write thread with its own connection (db/sqlite-bulk-writer.ts) so the loop keeps answering;
   * on PostgreSQL it is `transaction`.
   */
  bulkTransaction<R>(body: (tx: Db) => Generator<Step, R, unknown>): Promise<R>;
  /** The step that serialises writers on one row inside a transaction, or null where the transaction already does. */
  lockRow(table: "datasets" | "pipeline_nodes" | "pipeline_executions", id: number): Step | null;
  /** The step that makes a transaction the only one of its kind across processes, or null where it already is. */
  exclusive(key: number): Step | null;

  /** What ends a select that must lock the rows it reads (" for update"), or "". */
  readonly forUpdate: string;
  /** The same, passing over rows another transaction holds (" for update skip locked"), or "". */
  readonly forUpdateSkipLocked: string;
  /** The SQL function for the larger of two values. */
  readonly greatest: "greatest" | "max";
  /** A boolean bound to hand-written SQL (SQLite stores booleans as 1/0). */
  booleanParam(value: boolean): boolean | number;
  /** A boolean column as a condition (SQLite stores booleans as 0/1). */
  isTrue(column: string): string;
  /** Count a failure and append its JSON (first `?`) to the capped `errors` of execution `?`. */
  countFailureSql(maxErrors: number): string;
  /** Add `?` to the count `meta.<key>` of execution `?` (key: a fixed name such as rate_limits). */
  addMetaCountSql(key: "rate_limits" | "hedges"): string;
  /** Claim a queued run's next wave (db/repositories/execution-queue.ts): params new wave, enqueued, id, current wave. */
  readonly claimNextWaveSql: string;
  /**
   * Whether the store saves one queued cell's result in one call of a database function
   * (`turnscope_save_result_once`, db/migrations-pg/0001) rather than a transaction of several statements.
   */
  readonly savesResultOnceInOneCall: boolean;

  readonly json: JsonSql;
}
