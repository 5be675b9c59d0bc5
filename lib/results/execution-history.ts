/** Execution history as the API shows it. */
import "server-only";
import { getExecutionRow, listExecutionRows } from "@/db/repositories/executions";
import type { ExecutionStatus } from "@/lib/vocabulary";
import { notFound } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { toExecution } from "@/lib/results/serialize";
import type { Execution } from "@/lib/schemas/executions";

export async function getExecution(id: number): Promise<Execution> {
  const row = await getExecutionRow(id);
  if (!row) throw notFound("Execution", id);
  return toExecution(row);
}

export async function listExecutions(opts: {
  datasetId: number;
  status?: ExecutionStatus;
  pipelineNodeId?: number;
  limit: number;
  offset: number;
  sort: "started_at" | "-started_at";
}): Promise<{ items: Execution[]; total: number }> {
  await assertDatasetExists(opts.datasetId);
  const { items, total } = await listExecutionRows(opts);
  return { items: items.map(toExecution), total };
}
