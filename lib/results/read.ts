/**
 * Reading an execution's results for summaries and exports without holding them all: a snapshot fixes
 * the last result id (so rows a running execution adds later do not join half-way), then results are
 * read in keyset pages and aggregates are fed score by score.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { listResultRows } from "@/db/repositories/evaluation-results";
import { listScorePage, resultStats, scoreRangesByNode, type NodeScoreRange } from "@/db/repositories/results";
import type { EvaluationResultRow, PipelineExecutionRow } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { processSingleton } from "@/lib/process-state";
import type { Aggregated } from "@/lib/schemas/executions";
import { Aggregator, hasScore } from "./aggregate";

export const PAGE_SIZE = 1000;
const SCORE_PAGE_SIZE = 5000;

export type ExecutionSnapshot = {
  execution: PipelineExecutionRow;
  /** Results with a larger id were saved after the snapshot and are left out. */
  uptoId: number;
  /** How many results the snapshot holds (ids up to `uptoId`). */
  count: number;
  /** Metrics with results in the execution, in column order, with their score ranges. */
  metrics: NodeScoreRange[];
  /** Identifies exactly this set of results: execution, last id and count. */
  key: string;
};

/**
 * Summaries of a set of results, which never change once written: results are only appended, and a
 * deleted metric takes its results away, which changes the count. Keyed by (execution, last id, count),
 * so a reader polling a finished execution's results — or a page of them — no longer re-reads and
 * re-aggregates every score of it per request (the largest cost found under the load test's readers).
 */
type Summary = { metrics: NodeScoreRange[]; aggregated?: Record<string, Aggregated> };
const SUMMARY_CACHE = 256;
const summaries = processSingleton("results.summaries", () => new Map<string, Summary>());

function remember(key: string, summary: Summary): Summary {
  summaries.delete(key);
  summaries.set(key, summary);
  if (summaries.size > SUMMARY_CACHE) summaries.delete(summaries.keys().next().value!);
  return summary;
}

/** The execution (404 if unknown), its last result id and its metrics' score ranges. */
export async function openSnapshot(executionId: number): Promise<ExecutionSnapshot> {
  const execution = await getExecutionRow(executionId);
  if (!execution) throw notFound("Execution", executionId);
  const { maxId: uptoId, count } = await resultStats(executionId);
  const key = `${executionId}:${uptoId}:${count}`;
  const summary = summaries.get(key) ?? remember(key, { metrics: uptoId ? await scoreRangesByNode(executionId, uptoId) : [] });
  return { execution, uptoId, count, metrics: summary.metrics, key };
}

/** The snapshot's results in id order, one keyset page at a time. */
export async function* resultPages(snapshot: ExecutionSnapshot, pageSize = PAGE_SIZE): AsyncGenerator<EvaluationResultRow[]> {
  let afterId = 0;
  while (afterId < snapshot.uptoId) {
    const rows = await listResultRows(snapshot.execution.id, { afterId, limit: pageSize });
    const page = rows.filter((r) => r.id <= snapshot.uptoId);
    if (page.length) yield page;
    if (rows.length < pageSize || page.length < rows.length) return;
    afterId = rows[rows.length - 1].id;
  }
}

/** One aggregator per metric of the snapshot, to be fed with `feed` and read with `finishAggregates`. */
export function newAggregators(snapshot: ExecutionSnapshot): Map<number, Aggregator> {
  return new Map(snapshot.metrics.map((m) => [m.nodeId, new Aggregator(m.outputType, m)]));
}

/** Feed one result row to its metric's aggregator. */
export function feed(aggregators: Map<number, Aggregator>, row: EvaluationResultRow): void {
  if (hasScore(row)) aggregators.get(row.pipelineNodeId)?.add(row.score);
}

export function finishAggregates(aggregators: Map<number, Aggregator>): Record<string, Aggregated> {
  return Object.fromEntries([...aggregators].map(([nodeId, a]) => [String(nodeId), a.result()]));
}

/** Aggregates of the whole snapshot from light pages of scores only (used before streaming rows). */
export async function aggregateSnapshot(snapshot: ExecutionSnapshot): Promise<Record<string, Aggregated>> {
  const summary = summaries.get(snapshot.key);
  if (summary?.aggregated) return summary.aggregated;
  const aggregated = await computeAggregates(snapshot);
  remember(snapshot.key, { metrics: snapshot.metrics, aggregated });
  return aggregated;
}

async function computeAggregates(snapshot: ExecutionSnapshot): Promise<Record<string, Aggregated>> {
  const aggregators = newAggregators(snapshot);
  let afterId = 0;
  for (;;) {
    const page = await listScorePage(snapshot.execution.id, { afterId, uptoId: snapshot.uptoId, limit: SCORE_PAGE_SIZE });
    for (const s of page) if (Number.isFinite(s.score)) aggregators.get(s.nodeId)?.add(s.score);
    if (page.length < SCORE_PAGE_SIZE) break;
    afterId = page[page.length - 1].id;
  }
  return finishAggregates(aggregators);
}
