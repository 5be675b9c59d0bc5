/**
 * Which of the cells the browser knows about a run will evaluate — mirroring the server's scope rules
 * (lib/runner/plan.ts) — so they can show `pending` the moment the run starts. Cells not loaded yet
 * get their state from the stream when it reaches them.
 */
import { metricAppliesToStep } from "@/lib/metrics/step-kinds";
import type { GridRow } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { viewOf, type LiveCells } from "./live-store";
import { cellKey, type RunScope } from "./types";

function inScope(scope: RunScope, row: GridRow): boolean {
  if (scope.entity_id == null || scope.entity_type == null) return true;
  if (scope.entity_type === "conversation") return row.conversation_id === scope.entity_id;
  if (scope.entity_type === "message") return row.message_id === scope.entity_id;
  return row.step_id === scope.entity_id;
}

/** Keys of the known cells in the run's scope; with `retry`, only those not completed. */
export function plannedKeys(scope: RunScope, rows: GridRow[], metrics: Metric[], store: LiveCells): string[] {
  const nodes = scope.pipeline_node_id == null ? metrics : metrics.filter((m) => m.id === scope.pipeline_node_id);
  const keys: string[] = [];
  for (const row of rows) {
    // Message metrics judge assistant messages only; the grid lists no others at message level.
    if (!inScope(scope, row)) continue;
    for (const node of nodes) {
      if (node.evaluation_level !== row.entity_type) continue;
      if (row.entity_type === "step" && !metricAppliesToStep(node.applies_to, row.step_kinds ?? [])) continue;
      const key = cellKey(node.id, row.entity_type, row.entity_id);
      if (scope.retry && viewOf(store.get(key), row.cells[String(node.id)]).status === "completed") continue;
      keys.push(key);
    }
  }
  return keys;
}
