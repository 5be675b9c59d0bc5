/**
 * What a verdict looks like for each output type: the JSON schema requested from the model, and the
 * validation that turns a parsed reply into a stored result and its numeric score.
 */
import type { OutputType } from "@/lib/vocabulary";
import { userSchemaValidator } from "@/lib/user-json-schema";

export type JsonSchema = Record<string, unknown>;
export type Verdict = { result: Record<string, unknown>; score: number | null };
export type VerdictCheck = { ok: true; verdict: Verdict } | { ok: false; reason: string };

const reasoning = { type: "string", description: "Why, in one to three sentences, citing the conversation" };

const builtinSchemas: Record<Exclude<OutputType, "json">, JsonSchema> = {
  progress: {
    type: "object",
    properties: { score: { type: "number", minimum: 0, maximum: 1, description: "0 = worst, 1 = best" }, reasoning },
    required: ["score", "reasoning"],
    additionalProperties: false,
  },
  checkbox: {
    type: "object",
    properties: { value: { type: "boolean", description: "true when the criterion is met" }, reasoning },
    required: ["value", "reasoning"],
    additionalProperties: false,
  },
  number: {
    type: "object",
    properties: { value: { type: "number" }, reasoning },
    required: ["value", "reasoning"],
    additionalProperties: false,
  },
  pairwise: {
    type: "object",
    properties: { winner: { type: "string", enum: ["A", "B", "tie"], description: "The better reply: A, B, or tie when neither is better" }, reasoning },
    required: ["winner", "reasoning"],
    additionalProperties: false,
  },
  text: {
    type: "object",
    properties: { value: { type: "string" } },
    required: ["value"],
    additionalProperties: false,
  },
};

/** The JSON schema the judge is asked to fill for a metric. */
export function verdictSchema(outputType: OutputType, outputSchema: unknown): JsonSchema {
  if (outputType === "json") {
    return isObject(outputSchema) ? outputSchema : { type: "object" };
  }
  return builtinSchemas[outputType];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

function toBoolean(v: unknown): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v === "string" && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === "true";
  return undefined;
}

function text(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);
}

/** A pairwise verdict's winner as stored (A, B or tie), read leniently: "a", "Tie", " B ". */
export function pairwiseWinner(v: string): "A" | "B" | "tie" | undefined {
  const w = v.trim().toLowerCase();
  return w === "a" ? "A" : w === "b" ? "B" : w === "tie" ? "tie" : undefined;
}

/** Validate a parsed reply for the metric's output type; progress scores are clamped to [0, 1]. */
export function checkVerdict(outputType: OutputType, outputSchema: unknown, value: unknown): VerdictCheck {
  if (!isObject(value)) return { ok: false, reason: "the judge replied with JSON that is not an object" };
  switch (outputType) {
    case "progress": {
      const score = toNumber(value.score);
      if (score === undefined) return { ok: false, reason: "the verdict has no numeric `score`" };
      const clamped = Math.min(1, Math.max(0, score));
      return { ok: true, verdict: { result: { score: clamped, reasoning: text(value.reasoning) }, score: clamped } };
    }
    case "checkbox": {
      const flag = toBoolean(value.value);
      if (flag === undefined) return { ok: false, reason: "the verdict has no boolean `value`" };
      return { ok: true, verdict: { result: { value: flag, reasoning: text(value.reasoning) }, score: flag ? 1 : 0 } };
    }
    case "number": {
      const n = toNumber(value.value);
      if (n === undefined) return { ok: false, reason: "the verdict has no numeric `value`" };
      return { ok: true, verdict: { result: { value: n, reasoning: text(value.reasoning) }, score: n } };
    }
    case "pairwise": {
      const winner = typeof value.winner === "string" ? pairwiseWinner(value.winner) : undefined;
      if (winner === undefined) return { ok: false, reason: "the verdict has no `winner` (A, B or tie)" };
      return { ok: true, verdict: { result: { winner, reasoning: text(value.reasoning) }, score: winner === "A" ? 1 : winner === "B" ? 0 : 0.5 } };
    }
    case "text": {
      if (value.value === undefined || value.value === null) return { ok: false, reason: "the verdict has no `value`" };
      return { ok: true, verdict: { result: { value: text(value.value) }, score: null } };
    }
    case "json": {
      // A user's output_schema: its patterns run on RE2, and an `$id` never collides with another's.
      const validate = userSchemaValidator(verdictSchema("json", outputSchema));
      if (validate instanceof Error) return { ok: false, reason: `invalid output_schema: ${validate.message}` };
      if (!validate(value)) {
        const why = (validate.errors ?? [])
          .slice(0, 5)
          .map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`)
          .join("; ");
        return { ok: false, reason: `the verdict does not match the output schema: ${why}` };
      }
      const score = toNumber(value.score);
      return { ok: true, verdict: { result: value, score: score ?? null } };
    }
  }
}
