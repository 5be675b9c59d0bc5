/** Executions: their rows, status moves and end-of-run totals. */
import "server-only";
import { and, asc, count, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { ExecutionStatus, PipelineExecutionRow } from "../schema";
import { dialect } from "../dialect";
import { database, first, lockRow, prepared, raw, rows, transaction } from "../store";
import { pipelineExecutionsTable } from "../tables";
import { activeStatuses, isFinalStatus } from "@/lib/execution-status";

export type NewExecution = {
  evaluationPipelineId: number | null;
  datasetId: number;
  pipelineNodeId: number | null;
  totalEvaluations: number;
  meta: Record<string, unknown>;
};

export async function insertExecution(values: NewExecution): Promise<PipelineExecutionRow> {
  const db = await database();
  const [row] = await db
    .insert(pipelineExecutionsTable)
    .values({ ...values, status: "pending", errors: [] })
    .returning();
  return row;
}

export async function getExecutionRow(id: number): Promise<PipelineExecutionRow | undefined> {
  // Read by every execution, results and progress request: prepared once.
  return first(
    await prepared("executions.row", (db) => db.select().from(pipelineExecutionsTable).where(eq(pipelineExecutionsTable.id, sql.placeholder("id"))), { id }),
  );
}

/**
 * Move an execution on; `onlyIfActive` refuses to touch one that is already final. A final status
 * counts every cell without a result as skipped, so succeeded + failed + skipped = total.
 */
export async function updateExecution(
  id: number,
  values: Partial<Pick<PipelineExecutionRow, "status" | "startedAt" | "completedAt" | "durationMs" | "meta" | "errors">>,
  opts: { onlyIfActive?: boolean } = {},
): Promise<PipelineExecutionRow | undefined> {
  const where = opts.onlyIfActive
    ? and(eq(pipelineExecutionsTable.id, id), inArray(pipelineExecutionsTable.status, [...activeStatuses]))
    : eq(pipelineExecutionsTable.id, id);
  const final = values.status !== undefined && isFinalStatus(values.status);
  const set = final
    ? {
        ...values,
        skippedEvaluations: sql`${sql.raw(dialect.greatest)}(0, ${pipelineExecutionsTable.totalEvaluations} - ${pipelineExecutionsTable.successfulEvaluations} - ${pipelineExecutionsTable.failedEvaluations})`,
      }
    : values;
  const db = await database();
  return first(await db.update(pipelineExecutionsTable).set(set).where(where).returning());
}

export async function listExecutionRows(opts: {
  datasetId: number;
  status?: ExecutionStatus;
  pipelineNodeId?: number;
  limit: number;
  offset: number;
  sort: "started_at" | "-started_at";
}): Promise<{ items: PipelineExecutionRow[]; total: number }> {
  const db = await database();
  const conditions: SQL[] = [eq(pipelineExecutionsTable.datasetId, opts.datasetId)];
  if (opts.status) conditions.push(eq(pipelineExecutionsTable.status, opts.status));
  if (opts.pipelineNodeId) conditions.push(eq(pipelineExecutionsTable.pipelineNodeId, opts.pipelineNodeId));
  const where = and(...conditions);
  // Pending executions have no started_at yet: order them by creation so paging is stable.
  const started = sql`coalesce(${pipelineExecutionsTable.startedAt}, ${pipelineExecutionsTable.createdAt})`;
  const order = opts.sort === "started_at" ? [asc(started), asc(pipelineExecutionsTable.id)] : [desc(started), desc(pipelineExecutionsTable.id)];
  const items = await db.select().from(pipelineExecutionsTable).where(where).orderBy(...order).limit(opts.limit).offset(opts.offset);
  const total = first(await db.select({ n: count() }).from(pipelineExecutionsTable).where(where))?.n ?? 0;
  return { items, total };
}

/** Executions still pending or processing (of one dataset when given). */
export async function listActiveExecutionIds(datasetId?: number): Promise<number[]> {
  const db = await database();
  const active = inArray(pipelineExecutionsTable.status, [...activeStatuses]);
  const rows = await db
    .select({ id: pipelineExecutionsTable.id })
    .from(pipelineExecutionsTable)
    .where(datasetId === undefined ? active : and(active, eq(pipelineExecutionsTable.datasetId, datasetId)));
  return rows.map((r) => r.id);
}

/** pending → processing with its start time; false when another process already started it (or it is over). */
export async function markExecutionProcessing(id: number, startedAt: string): Promise<boolean> {
  const db = await database();
  const rows = await db
    .update(pipelineExecutionsTable)
    .set({ status: "processing", startedAt })
    .where(and(eq(pipelineExecutionsTable.id, id), eq(pipelineExecutionsTable.status, "pending")))
    .returning({ id: pipelineExecutionsTable.id });
  return rows.length > 0;
}

/** An execution's results summed per model: what its final meta reports (tokens, cached cells, cost). */
export type ModelTotals = { model: string | null; inputTokens: number; outputTokens: number; cached: number; results: number };
type RawModelTotals = { model: string | null; input_tokens: number | string; output_tokens: number | string; cached: number | string; results: number | string };
const totalsByModelSql = `select model_name as model, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
      sum(case when ${dialect.isTrue("cached")} then 1 else 0 end) as cached, count(*) as results
    from evaluation_results where execution_id = ? group by model_name`;

/**
 * End an active execution in one transaction holding its row: read it and its results' totals, and write
 * what `finish` makes of them. Nothing of the run (a result, a reply counted without one: insertResultOnce,
 * addUnsavedUsage) can land between the reading and the writing, so the final totals miss none of it.
 * Undefined when the execution is gone or already ended.
 */
export async function finishExecution(
  id: number,
  finish: (current: PipelineExecutionRow, totals: ModelTotals[]) => Partial<Pick<PipelineExecutionRow, "status" | "startedAt" | "completedAt" | "durationMs" | "meta" | "errors">>,
): Promise<PipelineExecutionRow | undefined> {
  return await transaction(function* (tx) {
    yield* lockRow("pipeline_executions", id);
    const [current] = yield* rows(tx.select().from(pipelineExecutionsTable).where(eq(pipelineExecutionsTable.id, id)));
    if (!current || !activeStatuses.some((s) => s === current.status)) return undefined;
    const values = finish(current, modelTotals(yield* raw<RawModelTotals>(totalsByModelSql, [id])));
    const set =
      values.status !== undefined && isFinalStatus(values.status)
        ? { ...values, skippedEvaluations: sql`${sql.raw(dialect.greatest)}(0, ${pipelineExecutionsTable.totalEvaluations} - ${pipelineExecutionsTable.successfulEvaluations} - ${pipelineExecutionsTable.failedEvaluations})` }
        : values;
    const [final] = yield* rows(tx.update(pipelineExecutionsTable).set(set).where(eq(pipelineExecutionsTable.id, id)).returning());
    return final;
  });
}

function modelTotals(rows: RawModelTotals[]): ModelTotals[] {
  // PostgreSQL's sum/count are bigint/numeric: node-postgres gives them as text.
  return rows.map((r) => ({
    model: r.model,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cached: Number(r.cached),
    results: Number(r.results),
  }));
}
