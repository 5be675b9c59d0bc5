/** Execution history as the API shows it. */
import "server-only";
import { getExecutionRow, listExecutionRows } from "@/db/repositories/executions";
import type { ExecutionStatus } from "@/db/schema";
import { notFound } from "@/lib/api/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { toExecution } from "@/lib/results/serialize";
import type { Execution } from "@/lib/schemas/executions";

export function getExecution(id: number): Execution {
  const row = getExecutionRow(id);
  if (!row) throw notFound("Execution", id);
  return toExecution(row);
}

export function listExecutions(opts: {
  datasetId: number;
  status?: ExecutionStatus;
  pipelineNodeId?: number;
  limit: number;
  offset: number;
  sort: "started_at" | "-started_at";
}): { items: Execution[]; total: number } {
  assertDatasetExists(opts.datasetId);
  const { items, total } = listExecutionRows(opts);
  return { items: items.map(toExecution), total };
}
