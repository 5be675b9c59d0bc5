/**
 * The rules every metric definition obeys, whether it is a template or a metric: variables valid for
 * the level (422 naming the valid ones), a JSON Schema for json output, and the derived fields.
 */
import type { CheckSpec, EvaluationLevel, MetricKind, OutputType, StepKind } from "@/lib/vocabulary";
import { defaultAppliesTo, parseCheckSpec } from "@/lib/checks";
import { AppError } from "@/lib/errors";
import { checkPromptVariables, explainInvalidVariable, pairwiseVariables, variablesForLevel } from "./variables";
import { USER_SCHEMA_LIMITS, userSchemaTooLarge, userSchemaValidator } from "@/lib/user-json-schema";

export type Definition = {
  prompt: string;
  evaluationLevel: EvaluationLevel;
  outputType: OutputType;
  outputSchema?: unknown;
  /** Step level only: the step kinds judged; null or absent judges every step. */
  appliesTo?: StepKind[] | null;
  kind?: MetricKind;
  check?: unknown;
};

export type DerivedFields = {
  templateVariables: string[];
  isAdvanced: boolean;
  /** Kept only for json output; other output types have a fixed shape. */
  outputSchema: Record<string, unknown> | null;
  /** Null unless the level is step (other levels have no step kinds). */
  appliesTo: StepKind[] | null;
  kind: MetricKind;
  /** The validated check (defaults filled in) for check metrics; null for llm metrics. */
  check: CheckSpec | null;
};

/** The columns a template and a metric share, stored the same way on both. */
type StoredDefinition = {
  name: string;
  description: string | null;
  evaluationLevel: EvaluationLevel;
  prompt: string;
  outputType: OutputType;
  outputSchema: unknown;
  modelName: string | null;
  isAdvanced: boolean;
  templateVariables: string[];
  appliesTo: StepKind[] | null;
  kind: MetricKind;
  check: CheckSpec | null;
};

/** The shared definition fields as the API shows them (snake_case), for templates and metrics alike. */
export function definitionToWire(row: StoredDefinition) {
  return {
    name: row.name,
    description: row.description,
    evaluation_level: row.evaluationLevel,
    prompt: row.prompt,
    output_type: row.outputType,
    output_schema: row.outputSchema ?? null,
    model_name: row.modelName,
    is_advanced: row.isAdvanced,
    template_variables: row.templateVariables,
    applies_to: row.appliesTo ?? null,
    kind: row.kind,
    check: row.check ?? null,
  };
}

/** The shared definition fields a PATCH body changes, as column values (absent fields stay as they are). */
export function definitionPatch(patch: {
  name?: string;
  description?: string | null;
  evaluation_level?: EvaluationLevel;
  prompt?: string;
  output_type?: OutputType;
  model_name?: string | null;
}) {
  return {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.evaluation_level !== undefined && { evaluationLevel: patch.evaluation_level }),
    ...(patch.prompt !== undefined && { prompt: patch.prompt }),
    ...(patch.output_type !== undefined && { outputType: patch.output_type }),
    ...(patch.model_name !== undefined && { modelName: patch.model_name }),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The prompt and output type a definition stores: a check has no prompt of its own and answers pass or
 * fail (checkbox); an llm definition needs both (422 naming the missing one).
 */
export function promptAndOutput(kind: MetricKind, prompt: string | undefined, outputType: OutputType | undefined): { prompt: string; outputType: OutputType } {
  if (kind === "check") return { prompt: prompt ?? "", outputType: "checkbox" };
  const missing = [prompt === undefined && "prompt", outputType === undefined && "output_type"].filter((f): f is string => Boolean(f));
  if (prompt === undefined || outputType === undefined) {
    throw new AppError("unprocessable", `${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} required for an llm metric`, missing.map((path) => ({ path, message: "is required when kind is llm" })));
  }
  return { prompt, outputType };
}

/**
 * A pairwise metric compares two replies (conversation level: two conversations' replies after their common
 * start; message level: two messages answering the same input), so no step level; a prompt with variables
 * names both candidates (one without any gets the two replies appended, like basic mode).
 */
function assertPairwisePrompt(level: EvaluationLevel, variables: string[], invalid: string[]): void {
  if (level === "step") {
    throw new AppError("unprocessable", "A pairwise metric compares two replies: its evaluation_level is conversation or message, not step", [
      { path: "evaluation_level", message: "must be conversation or message for output_type pairwise" },
    ]);
  }
  const missing = variables.length === 0 || invalid.length ? [] : pairwiseVariables.filter((v) => !variables.includes(v));
  if (missing.length) {
    throw new AppError("unprocessable", `A pairwise prompt that uses variables must show both replies: add ${missing.join(" and ")}`, [
      { path: "prompt", message: `must use ${pairwiseVariables.join(" and ")}` },
    ]);
  }
}

/** 422 unless the prompt's variables exist at the level. */
export function assertPromptVariables(prompt: string, level: EvaluationLevel, outputType?: OutputType): string[] {
  const { variables, invalid } = checkPromptVariables(prompt, level, outputType);
  if (outputType === "pairwise") assertPairwisePrompt(level, variables, invalid);
  if (invalid.length) {
    throw new AppError(
      "unprocessable",
      `The prompt uses ${invalid.length === 1 ? "a variable" : "variables"} not valid at the ${level} level: ${invalid.join(", ")}. ` +
        (outputType === "pairwise"
          ? `Valid variables in a pairwise metric: ${[...variablesForLevel("conversation"), ...pairwiseVariables].join(", ")}`
          : `Valid variables at the ${level} level: ${variablesForLevel(level).join(", ")}`),
      invalid.map((v) => ({ path: "prompt", message: explainInvalidVariable(v, level, outputType) })),
    );
  }
  return variables;
}

/** 422 unless a json metric has an object JSON Schema (the judge is asked for one JSON object). */
function normaliseOutputSchema(outputType: OutputType, schema: unknown): Record<string, unknown> | null {
  if (outputType !== "json") return null;
  if (!isPlainObject(schema)) {
    throw new AppError("unprocessable", "output_schema (a JSON Schema object) is required when output_type is json", [
      { path: "output_schema", message: "required for output_type json" },
    ]);
  }
  if (schema.type !== "object" || (schema.properties !== undefined && !isPlainObject(schema.properties))) {
    throw new AppError("unprocessable", 'output_schema must describe a JSON object: {"type": "object", "properties": {...}}', [
      { path: "output_schema", message: 'must have type "object" and an object of properties' },
    ]);
  }
  // The limits a json_schema check's schema has (32 KB, 32 levels, 100 patterns), checked before ajv compiles
  // it: a 148 KB schema was saved, and every cell then failed after four judge calls (issue 48.12).
  const tooLarge = userSchemaTooLarge(schema);
  const compiled = tooLarge ? null : userSchemaValidator(schema);
  const problem = tooLarge ? `the schema ${tooLarge}` : compiled instanceof Error ? compiled.message : null;
  if (problem) {
    const limits = `at most ${USER_SCHEMA_LIMITS.bytes / 1024} KB, ${USER_SCHEMA_LIMITS.depth} levels and ${USER_SCHEMA_LIMITS.patterns} patterns`;
    throw new AppError("unprocessable", `output_schema is not a usable JSON Schema: ${problem} (a schema may have ${limits})`, [{ path: "output_schema", message: problem }]);
  }
  return schema;
}

/**
 * 422 when a conversation or message metric names step kinds (it has none to filter); a step metric
 * keeps its kinds deduplicated in a fixed order, so equal sets compare equal.
 */
function normaliseAppliesTo(level: EvaluationLevel, appliesTo: StepKind[] | null | undefined): StepKind[] | null {
  if (appliesTo == null) return null;
  if (level !== "step") {
    throw new AppError("unprocessable", `applies_to filters step kinds and is only allowed on step-level metrics, not ${level}`, [
      { path: "applies_to", message: "must be null unless evaluation_level is step" },
    ]);
  }
  const order: StepKind[] = ["thinking", "tool_call", "tool_result", "output"];
  return order.filter((k) => appliesTo.includes(k));
}

/** Validate a definition and derive `template_variables`, `is_advanced` and the stored output schema. */
export function deriveDefinition(def: Definition): DerivedFields {
  if (def.kind === "check") {
    const check = parseCheckSpec(def.check, def.evaluationLevel);
    // Unless told otherwise, a step check judges the step kinds it is about (tool_call_valid: tool calls).
    const appliesTo = def.appliesTo === undefined && def.evaluationLevel === "step" ? defaultAppliesTo(check.type) : def.appliesTo;
    // A check judges nothing with a prompt: pass/fail is its answer, so its output is a checkbox.
    return {
      templateVariables: [],
      isAdvanced: false,
      outputSchema: null,
      appliesTo: normaliseAppliesTo(def.evaluationLevel, appliesTo),
      kind: "check",
      check,
    };
  }
  const templateVariables = assertPromptVariables(def.prompt, def.evaluationLevel, def.outputType);
  return {
    templateVariables,
    isAdvanced: templateVariables.length > 0,
    outputSchema: normaliseOutputSchema(def.outputType, def.outputSchema),
    appliesTo: normaliseAppliesTo(def.evaluationLevel, def.appliesTo),
    kind: "llm",
    check: null,
  };
}
