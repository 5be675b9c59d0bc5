/**
 * Values of `@METRIC.<name>`: a dependency's latest verdict for the entity (or, for a conversation-level
 * dependency, the entity's conversation), as the judge reads it: the stored result as JSON.
 */
import "server-only";
import { latestResultsFor } from "@/db/repositories/executions";
import type { EvaluationLevel, PipelineNodeRow } from "@/db/schema";
import { metricVariableName } from "./variables";

export function metricVerdicts(
  node: Pick<PipelineNodeRow, "dependsOn" | "templateVariables">,
  entity: { type: EvaluationLevel; id: number; conversationId: number },
  nodesById: Map<number, PipelineNodeRow>,
): Record<string, string | null> {
  const wanted = new Set((node.templateVariables ?? []).filter((v) => v.startsWith("@METRIC.")).map((v) => v.toLowerCase()));
  const values: Record<string, string | null> = {};
  if (wanted.size === 0) return values;
  for (const id of node.dependsOn ?? []) {
    const dep = nodesById.get(id);
    if (!dep) continue;
    const variable = metricVariableName(dep.name);
    const used = (node.templateVariables ?? []).find((v) => v.toLowerCase() === variable.toLowerCase());
    if (!used) continue;
    const target = dep.evaluationLevel === entity.type ? entity.id : dep.evaluationLevel === "conversation" ? entity.conversationId : null;
    const [latest] = target === null ? [] : latestResultsFor([dep.id], dep.evaluationLevel, [target]);
    values[used] = latest && latest.status === "completed" ? JSON.stringify(latest.result) : null;
  }
  return values;
}
