/** The shape of a built-in template, and JSON Schema helpers for their structured outputs. */
import type { CheckSpec, EvaluationLevel, MetricKind, OutputType, StepKind } from "@/lib/vocabulary";

export type SystemTemplate = {
  /** Stable forever: seeding matches on it to update the template in place. */
  key: string;
  name: string;
  description: string;
  evaluationLevel: EvaluationLevel;
  category: string;
  outputType: OutputType;
  outputSchema?: Record<string, unknown>;
  prompt: string;
  /** Step level: the step kinds the template judges (others show n/a and cost no judge call). */
  appliesTo?: StepKind[];
  /** Check templates: the check and its default parameters (lib/checks); absent for llm templates. */
  kind?: MetricKind;
  check?: CheckSpec;
};

type Schema = Record<string, unknown>;

/**
 * An object whose every property is required and nothing else allowed: the form OpenAI's strict
 * structured outputs accept, and the easiest for any judge model to follow.
 */
export function strictObject(properties: Record<string, Schema>, description?: string): Schema {
  return {
    type: "object",
    ...(description ? { description } : {}),
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

export const score01 = (description: string): Schema => ({ type: "number", minimum: 0, maximum: 1, description });
export const nullableScore01 = (description: string): Schema => ({ type: ["number", "null"], minimum: 0, maximum: 1, description });
export const bool = (description: string): Schema => ({ type: "boolean", description });
export const str = (description: string): Schema => ({ type: "string", description });
export const nullableStr = (description: string): Schema => ({ type: ["string", "null"], description });
export const int = (description: string): Schema => ({ type: "integer", minimum: 0, description });
export const oneOf = (values: string[], description: string): Schema => ({ type: "string", enum: values, description });
export const listOf = (items: Schema, description: string): Schema => ({ type: "array", items, description });

/** Shared wording: reasoning is asked of every structured output so results can be audited. */
export const reasoning = str("Two to four sentences explaining the judgement, citing the evidence");
