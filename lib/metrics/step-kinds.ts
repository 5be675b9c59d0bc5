/**
 * Which kinds of content a step carries, and whether a step metric applies to it. One rule for the
 * runner's plan (cells not applicable are not planned) and the grid (they show n/a).
 */
import type { StepKind } from "@/lib/vocabulary";

export type StepKindFlags = { hasThinking: boolean; hasToolCall: boolean; hasToolResult: boolean; hasOutput: boolean };

export function stepKindsOf(flags: StepKindFlags): StepKind[] {
  const kinds: StepKind[] = [];
  if (flags.hasThinking) kinds.push("thinking");
  if (flags.hasToolCall) kinds.push("tool_call");
  if (flags.hasToolResult) kinds.push("tool_result");
  if (flags.hasOutput) kinds.push("output");
  return kinds;
}

/** A step applies when the metric names no kinds, or the step carries at least one of them. */
export function metricAppliesToStep(appliesTo: readonly StepKind[] | null | undefined, kinds: readonly StepKind[]): boolean {
  return appliesTo == null || kinds.some((k) => appliesTo.includes(k));
}
