/**
 * "Evaluate and compare with the source" (issue 37): the chosen metrics of the source dataset, copied
 * by name to the generated dataset where it has none of that name, are run on both datasets, so the two
 * runs can be compared paired by source conversation (lib/labels/compare-across.ts pairs metrics by name).
 */
import "server-only";
import * as repo from "@/db/repositories/targets";
import { AppError, notFound } from "@/lib/errors";
import { createMetric, listMetrics } from "@/lib/metrics";
import { startExecution } from "@/lib/runner";
import type { Execution } from "@/lib/schemas/executions";
import type { CreateMetricInput, Metric } from "@/lib/schemas/metrics";

export type EvaluateWithSource = { source_execution: Execution; generated_execution: Execution; compare_url: string; metrics: Array<{ name: string; source_id: number; generated_id: number }> };

/** The fields of a metric that make it the same metric in another dataset (its dependencies are dataset-bound and left out). */
function copyOf(m: Metric, datasetId: number): CreateMetricInput {
  return {
    dataset_id: datasetId,
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
  const existing = new Map((await listMetrics(g.datasetId)).map((m) => [m.name, m]));
  const pairs: EvaluateWithSource["metrics"] = [];
  for (const id of nodeIds) {
    const m = sourceMetrics.get(id)!;
    const copy = existing.get(m.name) ?? (await createMetric(copyOf(m, g.datasetId), userId));
    pairs.push({ name: m.name, source_id: m.id, generated_id: copy.id });
  }
  const run = (datasetId: number, ids: number[]) =>
    startExecution({ dataset_id: datasetId, pipeline_node_ids: ids, execution_mode: opts.executionMode, batch_size: opts.batchSize, retry: false, no_cache: false }, userId);
  const a = await run(g.sourceDatasetId, pairs.map((p) => p.source_id));
  const b = await run(g.datasetId, pairs.map((p) => p.generated_id));
  return { source_execution: a, generated_execution: b, compare_url: `/datasets/${g.datasetId}/compare-source?a=${a.id}&b=${b.id}`, metrics: pairs };
}
