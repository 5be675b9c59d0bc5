/**
 * The domain's vocabulary: the enums the wire (lib/schemas), the store (db/schema.ts, db/schema.pg.ts)
 * and the pages (components) share. The ground floor: it imports nothing, and everything may import it —
 * the store's column types are written in these words, not the other way round.
 */

/** What a metric judges: a whole conversation, one message, or one step of a message. */
export const evaluationLevels = ["conversation", "message", "step"] as const;
export type EvaluationLevel = (typeof evaluationLevels)[number];

/** The shape of a metric's verdict; `pairwise` picks the better of two replies (A, B or tie) and is judged by comparisons, not runs. */
export const outputTypes = ["checkbox", "progress", "number", "text", "json", "pairwise"] as const;
export type OutputType = (typeof outputTypes)[number];

/** Who speaks a message. */
export const messageRoles = ["user", "assistant", "system", "tool"] as const;
export type MessageRole = (typeof messageRoles)[number];

/** The kinds of content a step can carry; a step metric's `applies_to` names those it judges. */
export const stepKinds = ["thinking", "tool_call", "tool_result", "output"] as const;
export type StepKind = (typeof stepKinds)[number];

/** Where a run (an execution) stands. */
export const executionStatuses = ["pending", "processing", "completed", "failed", "cancelled"] as const;
export type ExecutionStatus = (typeof executionStatuses)[number];

/** `skipped`: a dependency of the metric was not met, so the cell was recorded but not evaluated. */
export const resultStatuses = ["completed", "failed", "skipped"] as const;
export type ResultStatus = (typeof resultStatuses)[number];

/** `llm` asks the judge model; `check` is a deterministic program over the conversation (lib/checks). */
export const metricKinds = ["llm", "check"] as const;
export type MetricKind = (typeof metricKinds)[number];

/** How a target (an agent or model a generation sends conversations to) is called: lib/targets has one client a kind. */
export const targetKinds = ["openai_chat", "http_json", "ai_sdk_ui"] as const;
export type TargetKind = (typeof targetKinds)[number];

/** A check metric's program: which check, with what parameters. */
export type CheckSpec = { type: string; params: Record<string, unknown> };

/** When a dependent metric skips a cell: its dependency failed, or scored below a threshold. */
export type SkipRule = { when: "failed" } | { when: "below"; threshold: number };

/** A JSON object (not null, not an array): how every reader of loose JSON — imports, checks, exports, targets — tells one. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
