/**
 * The runner's branch for check metrics: the verdict of a deterministic check, shaped like a judge
 * outcome (zero tokens, no model call) so results, SSE, aggregates and exports treat it the same.
 */
import "server-only";
import type { PipelineNodeRow } from "@/db/schema";
import { prepareCheck, type CheckTree } from "@/lib/checks";
import type { JudgeOutcome } from "@/lib/judge";
import type { Cell } from "./plan";

type Prepared = ReturnType<typeof prepareCheck>;

/** Checks compiled once per metric per run (regexes, JSON Schemas), then called per cell. */
export function checkEvaluator(): (cell: Cell, tree: CheckTree) => JudgeOutcome {
  const prepared = new Map<number, Prepared>();
  const forNode = (node: PipelineNodeRow): Prepared => {
    let fn = prepared.get(node.id);
    if (!fn) {
      // Saved checks were validated on save; a check that no longer parses fails its cells with the reason.
      fn = prepareCheck(node.check ?? { type: "", params: {} }, node.evaluationLevel);
      prepared.set(node.id, fn);
    }
    return fn;
  };
  return (cell, tree) => {
    const started = performance.now();
    const outcome = forNode(cell.node)(tree, { type: cell.entityType, id: cell.entityId });
    return {
      status: "completed",
      result: outcome.result,
      score: outcome.score,
      error: null,
      rawOutput: null,
      model: `check:${cell.node.check?.type ?? "unknown"}`,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: Math.round(performance.now() - started),
      cached: false,
      attempts: 0,
    };
  };
}
