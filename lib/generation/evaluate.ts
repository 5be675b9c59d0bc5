/**
 * "Evaluate and compare with the source" (issue 37): the chosen metrics of the source dataset, and the
 * metrics they depend on, copied by name to the generated dataset where it has none of that name, are run
 * on both datasets, so the two runs can be compared paired by source conversation
 * (lib/labels/compare-across.ts pairs metrics by name). A copy depends on the copies of its source's
 * dependencies, with the same skip rule, so `@METRIC.<name>` and skipping read the same verdicts on both sides.
 */
import "server-only";
import * as repo from "@/db/repositories/targets";
import { AppError, notFound } from "@/lib/errors";
import { createMetric, listMetrics } from "@/lib/metrics";
import { startExecution } from "@/lib/runner";
import type { Execution, ExecutionMeta } from "@/lib/schemas/executions";
import { listExecutionRows } from "@/db/repositories/executions";
import { getMetricRow } from "@/lib/metrics/metrics";
import { toExecution } from "@/lib/results/serialize";
import type { CreateMetricInput, Metric } from "@/lib/schemas/metrics";

export type EvaluateWithSource = {
  source_execution: Execution;
  generated_execution: Execution;
  /** The source run is a finished one of the same metrics, not started again. */
  source_reused: boolean;
  compare_url: string;
  metrics: Array<{ name: string; source_id: number; generated_id: number }>;
};

/**
 * A finished run of the source that judged every one of these metrics over the whole dataset after each
 * metric last changed (issue 51.4): comparing again reads it rather than judging the source once more.
 * The newest such run, or null.
 */
async function finishedSourceRun(datasetId: number, nodeIds: number[]): Promise<Execution | null> {
  const nodes = await Promise.all(nodeIds.map((id) => getMetricRow(id)));
  const changed = nodes.map((n) => n.updatedAt).sort().at(-1) ?? "";
  const { items } = await listExecutionRows({ datasetId, status: "completed", limit: 50, offset: 0, sort: "-started_at" });
  for (const row of items) {
    const meta = (row.meta ?? {}) as Partial<ExecutionMeta> & { pipeline_node_ids?: number[] };
    if (meta.retry || meta.entity_type != null || meta.entity_id != null || meta.max_cost_usd != null) continue;
    if (row.createdAt < changed) continue;
    const covers =
      meta.scope === "all" ||
      (meta.scope === "column" && nodeIds.length === 1 && row.pipelineNodeId === nodeIds[0]) ||
      (Array.isArray(meta.pipeline_node_ids) && nodeIds.every((id) => meta.pipeline_node_ids!.includes(id)));
    if (!covers || row.failedEvaluations > 0) continue;
    return toExecution(row);
  }
  return null;
}

/** The fields of a metric that make it the same metric in another dataset, its dependencies given as that dataset's ids. */
function copyOf(m: Metric, datasetId: number, dependsOn: number[]): CreateMetricInput {
  return {
    dataset_id: datasetId,
    depends_on: dependsOn,
    skip_rule: m.skip_rule,
    name: m.name,
    description: m.description,
    evaluation_level: m.evaluation_level,
    kind: m.kind,
    ...(m.kind === "check" ? { check: m.check as CreateMetricInput["check"] } : { prompt: m.prompt, output_type: m.output_type, output_schema: m.output_schema as CreateMetricInput["output_schema"], model_name: m.model_name }),
    applies_to: m.applies_to,
  } as CreateMetricInput;
}

/** Run these source metrics on the source and on the generation's dataset; 409 while the generation runs. */
export async function evaluateWithSource(generationId: number, nodeIds: number[], userId: string, opts: { executionMode: "sync" | "async"; batchSize: number }): Promise<EvaluateWithSource> {
  const g = await repo.getGeneration(generationId);
  if (!g) throw notFound("Generation", generationId);
  if (["pending", "processing"].includes(g.status)) throw new AppError("conflict", `Generation ${generationId} is still ${g.status}: evaluate it once it has ended`);
  if (g.sourceDatasetId === null) throw new AppError("unprocessable", `Generation ${generationId}'s source dataset was deleted`, [{ path: "id", message: "has no source dataset" }]);
  const sourceMetrics = new Map((await listMetrics(g.sourceDatasetId)).map((m) => [m.id, m]));
  const foreign = nodeIds.filter((id) => !sourceMetrics.has(id));
  if (foreign.length) {
    throw new AppError("unprocessable", `Metrics ${foreign.join(", ")} are not metrics of the source dataset ${g.sourceDatasetId}`, [{ path: "pipeline_node_ids", message: `must be metrics of dataset ${g.sourceDatasetId}` }]);
  }
  // The chosen metrics and, before each, what it depends on (a dependency's results are what its skip
  // rule and @METRIC read: the generated side needs them judged too).
  const order: Metric[] = [];
  const seen = new Set<number>();
  const visit = (id: number) => {
    const m = sourceMetrics.get(id);
    if (!m || seen.has(id)) return;
    seen.add(id);
    for (const dep of m.depends_on) visit(dep);
    order.push(m);
  };
  for (const id of nodeIds) visit(id);
  const existing = new Map((await listMetrics(g.datasetId)).map((m) => [m.name, m]));
  const copies = new Map<number, number>();
  const pairs: EvaluateWithSource["metrics"] = [];
  for (const m of order) {
    const dependsOn = m.depends_on.flatMap((dep) => copies.get(dep) ?? []);
    const copy = existing.get(m.name) ?? (await createMetric(copyOf(m, g.datasetId, dependsOn), userId));
    copies.set(m.id, copy.id);
    pairs.push({ name: m.name, source_id: m.id, generated_id: copy.id });
  }
  // Both runs say what made them (History, the run page): "Evaluate and compare" of this generation.
  const run = (datasetId: number, ids: number[]) =>
    startExecution({ dataset_id: datasetId, pipeline_node_ids: ids, execution_mode: opts.executionMode, batch_size: opts.batchSize, retry: false, no_cache: false }, userId, {}, { trigger: `generation:${generationId}` });
  const sourceIds = pairs.map((p) => p.source_id);
  const reused = await finishedSourceRun(g.sourceDatasetId, sourceIds);
  const a = reused ?? (await run(g.sourceDatasetId, sourceIds));
  const b = await run(g.datasetId, pairs.map((p) => p.generated_id));
  return { source_execution: a, generated_execution: b, source_reused: reused !== null, compare_url: `/datasets/${g.datasetId}/compare-source?a=${a.id}&b=${b.id}`, metrics: pairs };
}
