/**
 * Metrics that build on metrics: the run evaluates cells in waves so every dependency's cells finish
 * before its dependents start, and a dependent cell is skipped where its skip rule says so.
 */
import "server-only";
import { latestDependencyResult } from "@/lib/metrics/metric-verdicts";
import type { PipelineNodeRow } from "@/db/schema";
import type { Cell } from "./plan";

/** Cells grouped by dependency depth (0: no dependency among the run's metrics), in plan order. */
export function dependencyWaves(cells: Cell[]): Cell[][] {
  const nodes = new Map<number, PipelineNodeRow>();
  for (const c of cells) nodes.set(c.node.id, c.node);
  const depth = new Map<number, number>();
  // Saved graphs are acyclic (checked on save); `guard` only stops a corrupt one from recursing forever.
  const depthOf = (id: number, guard = 0): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const node = nodes.get(id);
    const deps = guard > nodes.size ? [] : (node?.dependsOn ?? []).filter((d) => nodes.has(d));
    const d = deps.length ? 1 + Math.max(...deps.map((x) => depthOf(x, guard + 1))) : 0;
    depth.set(id, d);
    return d;
  };
  const waves: Cell[][] = [];
  for (const c of cells) (waves[depthOf(c.node.id)] ??= []).push(c);
  return waves.filter(Boolean);
}

/**
 * Why the cell is skipped, or null to evaluate it: a dependency's latest result for the same entity
 * (or, for a conversation-level dependency, the entity's conversation) failed or scored below the
 * threshold. A dependency without a result does not skip: there is nothing to judge by.
 */
export async function skipReason(cell: Cell, dependencies: Map<number, PipelineNodeRow>): Promise<string | null> {
  const rule = cell.node.skipRule;
  if (!rule) return null;
  for (const depId of cell.node.dependsOn ?? []) {
    const dep = dependencies.get(depId);
    if (!dep) continue;
    const latest = await latestDependencyResult(dep, { type: cell.entityType, id: cell.entityId, conversationId: cell.conversationId });
    if (!latest) continue;
    if (latest.status === "failed" || latest.status === "skipped") return `skipped: ${dep.name} ${latest.status}`;
    if (rule.when === "failed" && latest.score === 0) return `skipped: ${dep.name} did not pass`;
    if (rule.when === "below" && latest.score !== null && latest.score < rule.threshold) {
      return `skipped: ${dep.name} scored ${latest.score}, below ${rule.threshold}`;
    }
  }
  return null;
}
