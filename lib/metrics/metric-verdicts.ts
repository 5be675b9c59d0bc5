/**
 * Values of `@METRIC.<name>`: a dependency's latest verdict for the entity (or, for a conversation-level
 * dependency, the entity's conversation), as the judge reads it: the stored result as JSON.
 */
import "server-only";
import { latestResultsFor } from "@/db/repositories/evaluation-results";
import type { EvaluationResultRow, PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { metricVariableName } from "./variables";

type EntityAt = { type: EvaluationLevel; id: number; conversationId: number };

/**
 * A dependency's latest result for an entity: the same entity when the dependency is at its level, the
 * entity's conversation for a conversation-level dependency, else none. Read by @METRIC values and skip rules.
 */
export async function latestDependencyResult(dep: Pick<PipelineNodeRow, "id" | "evaluationLevel">, entity: EntityAt): Promise<EvaluationResultRow | undefined> {
  const target = dep.evaluationLevel === entity.type ? entity.id : dep.evaluationLevel === "conversation" ? entity.conversationId : null;
  return target === null ? undefined : (await latestResultsFor([dep.id], dep.evaluationLevel, [target]))[0];
}

/** Whether a metric's prompt reads other metrics' verdicts (`@METRIC.<name>`): only then are they looked up. */
export function usesMetricVerdicts(node: Pick<PipelineNodeRow, "templateVariables">): boolean {
  return (node.templateVariables ?? []).some((v) => v.startsWith("@METRIC."));
}

export async function metricVerdicts(
  node: Pick<PipelineNodeRow, "dependsOn" | "templateVariables">,
  entity: EntityAt,
  nodesById: Map<number, PipelineNodeRow>,
): Promise<Record<string, string | null>> {
  const wanted = new Set((node.templateVariables ?? []).filter((v) => v.startsWith("@METRIC.")).map((v) => v.toLowerCase()));
  const values: Record<string, string | null> = {};
  if (wanted.size === 0) return values;
  for (const id of node.dependsOn ?? []) {
    const dep = nodesById.get(id);
    if (!dep) continue;
    const variable = metricVariableName(dep.name);
    const used = (node.templateVariables ?? []).find((v) => v.toLowerCase() === variable.toLowerCase());
    if (!used) continue;
    const latest = await latestDependencyResult(dep, entity);
    values[used] = latest && latest.status === "completed" ? JSON.stringify(latest.result) : null;
  }
  return values;
}
