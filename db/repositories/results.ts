/**
 * Reads behind result summaries and exports: a snapshot bound (so a running execution's later rows do
 * not leak into a half-written export), per-metric score ranges in SQL, and light keyset pages of scores.
 */
import "server-only";
import { count, and, asc, eq, gt, isNotNull, lte, max, sql } from "drizzle-orm";
import type { OutputType } from "../schema";
import { database, first, prepared } from "../store";
import { evaluationResultsTable, pipelineNodesTable } from "../tables";

/** The highest result id of an execution now (0 when it has none). */
/** The last result id and the number of results of an execution: one walk of the (execution, id) index. */
export async function resultStats(executionId: number): Promise<{ maxId: number; count: number }> {
  const r = evaluationResultsTable;
  // Read for every results page and export: prepared once.
  const row = first(
    await prepared("results.stats", (db) => db.select({ maxId: max(r.id), count: count() }).from(r).where(eq(r.executionId, sql.placeholder("executionId"))), {
      executionId,
    }),
  );
  return { maxId: row?.maxId ?? 0, count: row?.count ?? 0 };
}

export async function maxResultId(executionId: number): Promise<number> {
  const db = await database();
  return first(await db.select({ id: max(evaluationResultsTable.id) }).from(evaluationResultsTable).where(eq(evaluationResultsTable.executionId, executionId)))?.id ?? 0;
}

export type NodeScoreRange = {
  nodeId: number;
  name: string;
  outputType: OutputType;
  completed: number;
  scored: number;
  min: number | null;
  max: number | null;
};

/** Per metric with results in the execution (up to `uptoId`): completed count, scored count, min, max. */
export async function scoreRangesByNode(executionId: number, uptoId: number): Promise<NodeScoreRange[]> {
  const r = evaluationResultsTable;
  const completedScore = sql`case when ${r.status} = 'completed' then ${r.score} end`;
  const db = await database();
  return db
    .select({
      nodeId: r.pipelineNodeId,
      name: pipelineNodesTable.name,
      outputType: pipelineNodesTable.outputType,
      completed: sql<number>`sum(case when ${r.status} = 'completed' then 1 else 0 end)`.mapWith(Number),
      scored: sql<number>`count(${completedScore})`.mapWith(Number),
      min: sql<number | null>`min(${completedScore})`,
      max: sql<number | null>`max(${completedScore})`,
    })
    .from(r)
    .innerJoin(pipelineNodesTable, eq(pipelineNodesTable.id, r.pipelineNodeId))
    .where(and(eq(r.executionId, executionId), lte(r.id, uptoId)))
    // Every selected node column is grouped on: PostgreSQL requires it (SQLite would not).
    .groupBy(r.pipelineNodeId, pipelineNodesTable.name, pipelineNodesTable.outputType, pipelineNodesTable.position)
    .orderBy(asc(pipelineNodesTable.position), asc(r.pipelineNodeId));
}

/** A keyset page of the scores of completed results, just the three columns aggregation needs. */
export async function listScorePage(
  executionId: number,
  opts: { afterId: number; uptoId: number; limit: number },
): Promise<Array<{ id: number; nodeId: number; score: number }>> {
  const r = evaluationResultsTable;
  const db = await database();
  return db
    .select({ id: r.id, nodeId: r.pipelineNodeId, score: sql<number>`${r.score}` })
    .from(r)
    .where(
      and(
        eq(r.executionId, executionId),
        gt(r.id, opts.afterId),
        lte(r.id, opts.uptoId),
        eq(r.status, "completed"),
        isNotNull(r.score),
      ),
    )
    .orderBy(asc(r.id))
    .limit(opts.limit);
}
