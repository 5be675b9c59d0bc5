/**
 * lib/checks: deterministic check metrics — pure functions over a loaded conversation, no judge call.
 * `parseCheckSpec` validates a metric's `check` on save (422 with the reason); `prepareCheck` turns a
 * saved spec into a function the runner calls per cell. A verdict is stored like a checkbox result:
 * `{value, reasoning}` with score 1 or 0.
 */
import type { EvaluationLevel, StepKind } from "@/lib/vocabulary";
import { AppError, type ErrorDetail } from "@/lib/errors";
import { forbiddenTools } from "./forbidden-tools";
import { jsonSchema, validJson } from "./json-output";
import { messageCount } from "./message-count";
import { metaBudget } from "./meta-budget";
import { requiredTools } from "./required-tools";
import { contextOf } from "./scope";
import { stepCount } from "./step-count";
import { textContains, textNotContains } from "./text-contains";
import { textEqualsMeta } from "./text-equals-meta";
import { textRegex } from "./text-regex";
import { toolCallValid } from "./tool-call-valid";
import { toolError } from "./tool-error";
import { toolSequence } from "./tool-sequence";
import { turnsToFirstAnswer } from "./turns-to-first-answer";
import type { AnyCheck, CheckEntity, CheckTree, CheckVerdict } from "./types";

export type { CheckEntity, CheckTree, CheckVerdict } from "./types";

/** Every check, in the order the metric form lists them. */
export const checks: readonly AnyCheck[] = [
  toolCallValid,
  requiredTools,
  forbiddenTools,
  toolSequence,
  toolError,
  stepCount,
  messageCount,
  turnsToFirstAnswer,
  metaBudget,
  textContains,
  textNotContains,
  textRegex,
  textEqualsMeta,
  validJson,
  jsonSchema,
] as unknown as AnyCheck[];

const byType = new Map(checks.map((c) => [c.type, c]));

export const checkTypes = checks.map((c) => c.type);

export type CheckSpec = { type: string; params: Record<string, unknown> };

/** The check's default step kinds (null: every step). */
export function defaultAppliesTo(type: string): StepKind[] | null {
  const found = byType.get(type);
  return found?.appliesTo ? [...found.appliesTo] : null;
}

/** Whether the check's work can grow faster than its text (it then runs off the event loop with a time budget). */
export function checkRunsOffLoop(type: string): boolean {
  return byType.get(type)?.offLoop === true;
}

/** Validate a check spec for a level; returns it with defaults filled in, or throws a 422 naming the problem. */
export function parseCheckSpec(spec: unknown, level: EvaluationLevel): CheckSpec {
  const raw = (spec ?? {}) as { type?: unknown; params?: unknown };
  const def = typeof raw.type === "string" ? byType.get(raw.type) : undefined;
  if (!def) {
    throw new AppError("unprocessable", `check.type must be one of: ${checkTypes.join(", ")}`, [
      { path: "check.type", message: raw.type === undefined ? "is required for a check metric" : `unknown check type ${JSON.stringify(raw.type)}` },
    ]);
  }
  if (!def.levels.includes(level)) {
    throw new AppError("unprocessable", `The ${def.type} check works at the ${def.levels.join(" or ")} level, not ${level}`, [
      { path: "evaluation_level", message: `must be ${def.levels.join(" or ")} for ${def.type}` },
    ]);
  }
  const parsed = def.params.safeParse(raw.params ?? {});
  if (!parsed.success) {
    const details: ErrorDetail[] = parsed.error.issues.map((i) => ({
      path: ["check", "params", ...i.path.map(String)].join("."),
      message: i.message,
    }));
    throw new AppError("unprocessable", `Invalid parameters for the ${def.type} check: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}`, details);
  }
  return { type: def.type, params: parsed.data as Record<string, unknown> };
}

export type CheckOutcome = { result: { value: boolean; reasoning: string }; score: number };

/** A saved spec made ready to run: parsed once (regexes and schemas compiled once), then called per cell. */
export function prepareCheck(spec: CheckSpec, level: EvaluationLevel): (tree: CheckTree, entity: CheckEntity) => CheckOutcome {
  const parsed = parseCheckSpec(spec, level);
  const def = byType.get(parsed.type)!;
  const run = def.run as (params: unknown, ctx: ReturnType<typeof contextOf>) => CheckVerdict;
  return (tree, entity) => {
    const verdict = run(parsed.params, contextOf(tree, entity));
    return { result: { value: verdict.pass, reasoning: verdict.reasoning }, score: verdict.pass ? 1 : 0 };
  };
}

/** Run a check once (tests, previews). */
export function runCheck(spec: CheckSpec, level: EvaluationLevel, tree: CheckTree, entity: CheckEntity): CheckOutcome {
  return prepareCheck(spec, level)(tree, entity);
}
