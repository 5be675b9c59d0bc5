/**
 * An execution's evaluation results: saving a cell's result (or many) and counting it on its execution
 * in one transaction, once per cell when several processes may evaluate it, and reading result rows
 * back in the order they were saved.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import type { EvaluationLevel, EvaluationResultRow } from "../schema";
import { dialect } from "../dialect";
import { lockRow, placeholders, prepared, raw, rawExec, rawRows, transaction, type Step } from "../store";
import { evaluationResultsTable } from "../tables";
import { isActiveStatus } from "@/lib/execution-status";
import { IN_JSON_INTEGERS, inJsonIntegers } from "./json-fields";
import { writeJudgeCacheStep, type JudgeCacheEntry } from "./judge";

const MAX_STORED_ERRORS = 1000;
/** A LIMIT that lets every row through, on both stores (PostgreSQL refuses SQLite's -1). */
const NO_LIMIT = 2 ** 31 - 1;

export type NewResult = Omit<typeof evaluationResultsTable.$inferInsert, "id" | "createdAt">;

type RawResult = {
  id: number;
  execution_id: number;
  pipeline_node_id: number;
  dataset_id: number;
  entity_type: EvaluationLevel;
  entity_id: number;
  conversation_id: number;
  message_id: number | null;
  step_id: number | null;
  result: string | null;
  score: number | null;
  status: "completed" | "failed";
  error: string | null;
  raw_output: string | null;
  execution_time: number;
  model_name: string | null;
  input_tokens: number;
  output_tokens: number;
  cached: number | boolean;
  created_at: string;
};

function fromRaw(r: RawResult): EvaluationResultRow {
  return {
    id: r.id,
    executionId: r.execution_id,
    pipelineNodeId: r.pipeline_node_id,
    datasetId: r.dataset_id,
    entityType: r.entity_type,
    entityId: r.entity_id,
    conversationId: r.conversation_id,
    messageId: r.message_id,
    stepId: r.step_id,
    result: r.result === null ? null : (JSON.parse(r.result) as unknown),
    score: r.score,
    status: r.status,
    error: r.error,
    rawOutput: r.raw_output,
    executionTime: r.execution_time,
    modelName: r.model_name,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    cached: Boolean(r.cached),
    createdAt: r.created_at,
  };
}

const insertResultSql = `insert into evaluation_results (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id,
  conversation_id, message_id, step_id, result, score, status, error, raw_output, execution_time, model_name, input_tokens,
  output_tokens, cached) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`;
const countSuccessSql = "update pipeline_executions set successful_evaluations = successful_evaluations + 1 where id = ?";
const countSkippedSql = "update pipeline_executions set skipped_evaluations = skipped_evaluations + 1 where id = ?";
// Appends the error (JSON text) to the capped `errors` array.
const countFailureSql = dialect.countFailureSql(MAX_STORED_ERRORS);

/**
 * Save one cell's result and count it on its execution in one transaction, so the counters always
 * add up to the rows; a failure is also appended to the execution's `errors` (capped). Runs once per
 * cell, so its statements are prepared once (see `statement`).
 */
export async function insertResult(values: NewResult, cache?: JudgeCacheEntry): Promise<EvaluationResultRow> {
  return transaction(function* () {
    // The verdict's cache entry commits with the result it decided: one transaction per cell, not two.
    if (cache) yield* writeJudgeCacheStep(cache);
    // The execution's row is locked before the result gets its id, so one execution's results commit in
    // id order on PostgreSQL too: a stream that has sent id n has every earlier result (Last-Event-ID).
    yield* lockRow("pipeline_executions", values.executionId);
    return yield* saveResult(values);
  });
}

/**
 * Like `insertResult`, for a cell that several processes may evaluate (a redelivered queue batch):
 * saves nothing and returns null when the execution is no longer active (cancelled, final, deleted) or
 * already has a result for this (metric, entity). The check runs under the execution's row lock, so two
 * processes can never store the same cell twice, and nothing is stored after a cancel commits.
 */
export async function insertResultOnce(values: NewResult, cache?: JudgeCacheEntry): Promise<{ saved: EvaluationResultRow; counted: number } | null> {
  if (dialect.savesResultOnceInOneCall) return saveResultOnceInOneCall(values, cache);
  return transaction(function* () {
    if (cache) yield* writeJudgeCacheStep(cache);
    if (!(yield* lockActiveExecution(values.executionId))) return null;
    if (yield* hasResult(values)) return null;
    const saved = yield* saveResult(values);
    return { saved, counted: yield* countedResults(values.executionId) };
  });
}

/**
 * The same in one round trip, `turnscope_save_result_once` (PostgreSQL, db/migrations-pg/0001): every
 * cell of a queued run is saved this way, and the seven statements of the transaction above were most
 * of a worker's time per cell.
 */
async function saveResultOnceInOneCall(values: NewResult, cache?: JudgeCacheEntry): Promise<{ saved: EvaluationResultRow; counted: number } | null> {
  const [row] = await rawRows<{ id: number; created_at: string; counted: number }>(
    `select id, created_at, counted from turnscope_save_result_once(${placeholders(26)})`,
    [
      ...resultParams(values),
      values.status === "failed" ? JSON.stringify(failureEntry(values)) : null,
      MAX_STORED_ERRORS,
      cache?.key ?? null,
      cache?.model ?? null,
      cache ? JSON.stringify(cache.response) : null,
      cache?.inputTokens ?? null,
      cache?.outputTokens ?? null,
      new Date().toISOString(),
    ],
  );
  return row ? { saved: savedRow(values, row), counted: Number(row.counted) } : null;
}

/** Cells of the execution counted so far (succeeded + failed + skipped), read under its row lock. */
function* countedResults(executionId: number): Generator<Step, number, unknown> {
  const rows = yield* raw<{ n: number | string }>(
    "select successful_evaluations + failed_evaluations + skipped_evaluations as n from pipeline_executions where id = ?",
    [executionId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** The execution's row locked (PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises); whether it is still active. */
function* lockActiveExecution(executionId: number): Generator<Step, boolean, unknown> {
  const rows = yield* raw<{ status: string }>(`select status from pipeline_executions where id = ?${dialect.forUpdate}`, [executionId]);
  return rows[0] !== undefined && isActiveStatus(rows[0].status);
}

function* hasResult(v: NewResult): Generator<Step, boolean, unknown> {
  const rows = yield* raw<{ id: number }>(
    "select id from evaluation_results where execution_id = ? and pipeline_node_id = ? and entity_type = ? and entity_id = ? limit 1",
    [v.executionId, v.pipelineNodeId, v.entityType, v.entityId],
  );
  return rows.length > 0;
}

function* saveResult(values: NewResult): Generator<Step, EvaluationResultRow, unknown> {
  const [saved] = yield* raw<RawResult>(insertResultSql, resultParams(values));
  if (values.status === "failed") {
    yield* rawExec(countFailureSql, [JSON.stringify(failureEntry(values)), values.executionId]);
  } else if (values.status === "skipped") {
    yield* rawExec(countSkippedSql, [values.executionId]);
  } else {
    yield* rawExec(countSuccessSql, [values.executionId]);
  }
  return fromRaw(saved);
}

/** The 18 values of a result row, in RESULT_COLUMNS order. */
function resultParams(v: NewResult): unknown[] {
  return [
    v.executionId,
    v.pipelineNodeId,
    v.datasetId,
    v.entityType,
    v.entityId,
    v.conversationId,
    v.messageId ?? null,
    v.stepId ?? null,
    v.result === undefined || v.result === null ? null : JSON.stringify(v.result),
    v.score ?? null,
    v.status,
    v.error ?? null,
    v.rawOutput ?? null,
    v.executionTime ?? 0,
    v.modelName ?? null,
    v.inputTokens ?? 0,
    v.outputTokens ?? 0,
    v.cached ? 1 : 0,
  ];
}

/** What a failed cell appends to its execution's `errors`. */
function failureEntry(v: NewResult) {
  return { pipeline_node_id: v.pipelineNodeId, entity_type: v.entityType, entity_id: v.entityId, message: v.error ?? "failed" };
}

/** The saved row: the values given, with the id and created_at the store assigned. */
function savedRow(v: NewResult, stored: { id: number; created_at: string }): EvaluationResultRow {
  return {
    id: stored.id,
    executionId: v.executionId,
    pipelineNodeId: v.pipelineNodeId,
    datasetId: v.datasetId,
    entityType: v.entityType,
    entityId: v.entityId,
    conversationId: v.conversationId,
    messageId: v.messageId ?? null,
    stepId: v.stepId ?? null,
    result: v.result ?? null,
    score: v.score ?? null,
    status: v.status,
    error: v.error ?? null,
    rawOutput: v.rawOutput ?? null,
    executionTime: v.executionTime ?? 0,
    modelName: v.modelName ?? null,
    inputTokens: v.inputTokens ?? 0,
    outputTokens: v.outputTokens ?? 0,
    cached: Boolean(v.cached),
    createdAt: stored.created_at,
  };
}

const RESULT_COLUMNS = `execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id, message_id, step_id,
  result, score, status, error, raw_output, execution_time, model_name, input_tokens, output_tokens, cached`;
/** Rows per multi-row INSERT: 100 × 18 parameters stays far below SQLite's limit of bound variables. */
const ROWS_PER_INSERT = 100;
const countChunkSql = `update pipeline_executions set successful_evaluations = successful_evaluations + ?,
  skipped_evaluations = skipped_evaluations + ? where id = ?`;

/** `insert … values (…), (…)` for `rows` rows, prepared once per row count (at most ROWS_PER_INSERT of them). */
function insertManySql(rows: number): string {
  const one = `(${placeholders(18)})`;
  return `insert into evaluation_results (${RESULT_COLUMNS}) values ${new Array(rows).fill(one).join(", ")} returning id, created_at`;
}

/**
 * Save the results of many cells of one execution and count them, all in one transaction (a savepoint
 * when the caller already holds one): multi-row INSERTs of up to 100 rows and one counter update, where
 * `insertResult` costs an INSERT and an UPDATE per cell: check cells, and the judged cells of an
 * in-process run that finish in one turn of the event loop. `cache`: the verdicts those cells were
 * judged with, stored in the same transaction. Failures still append to `errors` one by one. Returns the
 * saved rows in the order given, ids increasing.
 */
export async function insertResults(executionId: number, values: NewResult[], cache: JudgeCacheEntry[] = []): Promise<EvaluationResultRow[]> {
  if (values.length === 0) return [];
  return transaction(function* () {
    for (const entry of cache) yield* writeJudgeCacheStep(entry);
    yield* lockRow("pipeline_executions", executionId);
    return yield* saveResults(executionId, values);
  });
}

/**
 * `insertResults` for cells several processes may evaluate (see `insertResultOnce`): the cells that
 * already have a result of this execution, or all of them once it is no longer active, are not saved
 * (null in their place). `counted`: the execution's counted cells after this write.
 */
export async function insertResultsOnce(executionId: number, values: NewResult[]): Promise<{ saved: Array<EvaluationResultRow | null>; counted: number }> {
  if (values.length === 0) return { saved: [], counted: 0 };
  return transaction(function* () {
    if (!(yield* lockActiveExecution(executionId))) return { saved: values.map(() => null), counted: 0 };
    const fresh: NewResult[] = [];
    for (const v of values) if (!(yield* hasResult(v))) fresh.push(v);
    const saved = yield* saveResults(executionId, fresh);
    const byValue = new Map(fresh.map((v, i) => [v, saved[i]]));
    return { saved: values.map((v) => byValue.get(v) ?? null), counted: yield* countedResults(executionId) };
  });
}

function* saveResults(executionId: number, values: NewResult[]): Generator<Step, EvaluationResultRow[], unknown> {
  const saved: EvaluationResultRow[] = [];
  let successes = 0;
  let skipped = 0;
  for (let start = 0; start < values.length; start += ROWS_PER_INSERT) {
    const chunk = values.slice(start, start + ROWS_PER_INSERT);
    const params: unknown[] = [];
    for (const v of chunk) {
      if (v.executionId !== executionId) throw new Error(`insertResults: a result of execution ${v.executionId} in a chunk of ${executionId}`);
      params.push(...resultParams(v));
    }
    // RETURNING's row order is not documented; ids are assigned in VALUES order, so sort by id.
    const returned = (yield* raw<{ id: number; created_at: string }>(insertManySql(chunk.length), params)).sort((a, b) => a.id - b.id);
    for (const [i, v] of chunk.entries()) {
      saved.push(savedRow(v, returned[i]));
      if (v.status === "failed") {
        yield* rawExec(countFailureSql, [JSON.stringify(failureEntry(v)), executionId]);
      } else if (v.status === "skipped") skipped++;
      else successes++;
    }
  }
  if (successes + skipped > 0) yield* rawExec(countChunkSql, [successes, skipped, executionId]);
  return saved;
}

/** The highest result id so far (0 when none): a run's plan is bound to the results up to it. */
export async function maxResultId(): Promise<number> {
  const rows = await rawRows<{ id: number | string | null }>("select max(id) as id from evaluation_results");
  return Number(rows[0]?.id ?? 0);
}

/** A page of an execution's results in the order they were saved (keyset paging on id). */
export async function listResultRows(executionId: number, opts: { afterId?: number; limit?: number } = {}): Promise<EvaluationResultRow[]> {
  // Read for every results page, export page and SSE snapshot: a prepared statement.
  const rows = await rawRows<RawResult>("select * from evaluation_results where execution_id = ? and id > ? order by id limit ?", [
    executionId,
    opts.afterId ?? 0,
    opts.limit ?? NO_LIMIT,
  ]);
  return rows.map(fromRaw);
}

/** One offset page of an execution's results up to a snapshot id (the snapshot knows how many there are). */
export async function listResultPage(executionId: number, uptoId: number, limit: number, offset: number): Promise<EvaluationResultRow[]> {
  const rows = await rawRows<RawResult>("select * from evaluation_results where execution_id = ? and id <= ? order by id limit ? offset ?", [
    executionId,
    uptoId,
    limit,
    offset,
  ]);
  return rows.map(fromRaw);
}

export type CellKey = { pipelineNodeId: number; entityType: EvaluationLevel; entityId: number };

/**
 * Which of these cells already have a result of the execution, keyed `node:type:entity`: a queued batch
 * worked again after its process died judges only the others (a saved cell is never paid for twice).
 */
export async function cellsWithResult(executionId: number, cells: CellKey[]): Promise<Set<string>> {
  if (cells.length === 0) return new Set();
  const rows = await rawRows<{ node: number; type: EvaluationLevel; entity: number }>(
    `select pipeline_node_id as node, entity_type as type, entity_id as entity from evaluation_results
    where execution_id = ? and pipeline_node_id ${IN_JSON_INTEGERS} and entity_id ${IN_JSON_INTEGERS}`,
    [executionId, JSON.stringify([...new Set(cells.map((c) => c.pipelineNodeId))]), JSON.stringify([...new Set(cells.map((c) => c.entityId))])],
  );
  return new Set(rows.map((row) => `${row.node}:${row.type}:${row.entity}`));
}

/** The latest result status of every cell of a dataset that has one (among results up to `uptoResultId`), keyed `node:type:entity`. */
export async function latestStatusByCell(datasetId: number, uptoResultId?: number): Promise<Map<string, "completed" | "failed">> {
  const rows = await rawRows<{ node: number; type: EvaluationLevel; entity: number; status: "completed" | "failed" }>(
    `select r.pipeline_node_id as node, r.entity_type as type, r.entity_id as entity, r.status as status
    from evaluation_results r
    join (
      select max(id) as id from evaluation_results where dataset_id = ? and id <= ?
      group by pipeline_node_id, entity_type, entity_id
    ) latest on latest.id = r.id`,
    [datasetId, uptoResultId ?? NO_LIMIT],
  );
  return new Map(rows.map((r) => [`${r.node}:${r.type}:${r.entity}`, r.status]));
}

/**
 * The latest result of each (metric, entity) for the given metrics and entities of one level: one
 * query per grid page. Filtering on the metrics lets SQLite walk the (node, type, entity, id) index
 * instead of every result of the dataset.
 */
export async function latestResultsFor(nodeIds: number[], entityType: EvaluationLevel, entityIds: number[]): Promise<EvaluationResultRow[]> {
  if (entityIds.length === 0 || nodeIds.length === 0) return [];
  const r = evaluationResultsTable;
  // The id lists go in as JSON arrays, so the SQL is the same for every page and is prepared once.
  const rows = await prepared(
    "executions.latestResultsFor",
    (db) => {
      const latest = db
        // Not aliased "id": drizzle renders the join column bare, which would be ambiguous with the table's id.
        .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
        .from(r)
        .where(and(inJsonIntegers(r.pipelineNodeId, sql.placeholder("nodeIds")), eq(r.entityType, sql.placeholder("entityType")), inJsonIntegers(r.entityId, sql.placeholder("entityIds"))))
        .groupBy(r.pipelineNodeId, r.entityId)
        .as("latest");
      return db.select({ r }).from(r).innerJoin(latest, eq(latest.id, r.id));
    },
    { nodeIds: JSON.stringify(nodeIds), entityType, entityIds: JSON.stringify(entityIds) },
  );
  return rows.map((x) => x.r);
}

export type RollupRow = { pipelineNodeId: number; conversationId: number; completed: number; failed: number; scored: number; scoreSum: number | null };

/**
 * For message- or step-level metrics, each conversation's latest cells summed up: how many completed or
 * failed, and the sum and count of their scores (a checkbox scores 1 for pass). The grid shows it on the
 * conversation's row, so a message-level run does not look empty until each conversation is opened.
 */
export async function rollupsFor(nodeIds: number[], entityType: "message" | "step", conversationIds: number[]): Promise<RollupRow[]> {
  if (nodeIds.length === 0 || conversationIds.length === 0) return [];
  const r = evaluationResultsTable;
  const rows = await prepared(
    "executions.rollupsFor",
    (db) => {
      const latest = db
        .select({ id: sql<number>`max(${r.id})`.as("latest_id") })
        .from(r)
        .where(and(inJsonIntegers(r.conversationId, sql.placeholder("conversationIds")), inJsonIntegers(r.pipelineNodeId, sql.placeholder("nodeIds")), eq(r.entityType, sql.placeholder("entityType"))))
        .groupBy(r.pipelineNodeId, r.entityId)
        .as("latest");
      return db
        .select({
          pipelineNodeId: r.pipelineNodeId,
          conversationId: r.conversationId,
          completed: sql<number>`sum(case when ${r.status} = 'completed' then 1 else 0 end)`,
          failed: sql<number>`sum(case when ${r.status} = 'failed' then 1 else 0 end)`,
          scored: sql<number>`sum(case when ${r.status} = 'completed' and ${r.score} is not null then 1 else 0 end)`,
          scoreSum: sql<number | null>`sum(case when ${r.status} = 'completed' then ${r.score} end)`,
        })
        .from(r)
        .innerJoin(latest, eq(latest.id, r.id))
        .groupBy(r.pipelineNodeId, r.conversationId);
    },
    { nodeIds: JSON.stringify(nodeIds), entityType, conversationIds: JSON.stringify(conversationIds) },
  );
  return rows.map((x) => ({
    pipelineNodeId: x.pipelineNodeId,
    conversationId: x.conversationId,
    completed: Number(x.completed),
    failed: Number(x.failed),
    scored: Number(x.scored),
    scoreSum: x.scoreSum === null ? null : Number(x.scoreSum),
  }));
}
