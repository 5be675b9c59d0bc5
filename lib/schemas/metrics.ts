/** Wire schemas of metric templates, metrics and the judge-prompt preview (shared/API.md). */
import { z } from "zod";
import { evaluationLevels, metricKinds, outputTypes, stepKinds } from "@/lib/vocabulary";
import { bodyId, idText, isoTimestamp, jsonValue } from "./common";
import { referenceInput } from "./labels";

const name = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");
const description = z.string().max(5000, "must be at most 5000 characters").nullable();
const prompt = z.string().max(50_000, "must be at most 50000 characters").regex(/\S/, "must not be empty");
const evaluationLevel = z.enum(evaluationLevels);
const outputType = z.enum(outputTypes);
const outputSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .describe("JSON Schema of the judge's answer; required for output_type json, ignored (stored as null) otherwise");
const modelName = z.string().trim().min(1, "must not be empty").max(200).nullable().describe("Judge model; null uses the server default");
const category = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters").nullable();
const positiveId = bodyId;
const reference = referenceInput
  .nullable()
  .describe(
    'Where the truth for this metric comes from, for agreement and the review queue: a meta field of the entity\'s conversation or ' +
      'message, optionally turned into pass/fail by a rule (`{source: "meta", level: "conversation", path: "meta.reward", rule: {op: ">=", value: 1}}`), ' +
      'or the human labels (`{source: "labels", user_id?}`); null for none',
  );
const kind = z.enum(metricKinds).describe("llm asks the judge model; check runs a deterministic check (no judge call, zero tokens)");
const checkSpec = z
  .object({
    type: z.string().min(1).describe("One of the check types (lib/checks); validated on save"),
    params: z.record(z.string(), z.unknown()).optional().describe("The check's parameters; validated on save (422 with the reason)"),
  })
  .nullable()
  .describe("Required when kind is check; null for llm metrics");
const dependsOn = z
  .array(bodyId)
  .max(20, "must list at most 20 metrics")
  .describe("Metric ids of the same dataset evaluated before this one in a run; cycles are rejected (422 with the cycle's path)");
const skipRule = z
  .discriminatedUnion("when", [
    z.object({ when: z.literal("failed").describe("Skip where a dependency's latest result failed or did not pass (score 0)") }),
    z.object({ when: z.literal("below"), threshold: z.number().describe("Skip where a dependency's latest score is below this") }),
  ])
  .nullable()
  .describe("When a cell is skipped (recorded as skipped, no judge call) because of its dependencies; null never skips");
const checkWire = z.object({ type: z.string(), params: z.record(z.string(), z.unknown()) }).nullable();
const appliesTo = z
  .array(z.enum(stepKinds))
  .min(1, "must name at least one step kind (or be null for every step)")
  .nullable()
  .describe("Step-level metrics only: the step kinds judged (a step with none of them shows n/a and is not run); null judges every step");

const templateFields = z.object({
  name,
  description: description.optional(),
  evaluation_level: evaluationLevel,
  prompt: prompt.optional().describe("Required for llm templates"),
  output_type: outputType.optional().describe("Required for llm templates; check templates are checkbox"),
  output_schema: outputSchema.optional(),
  model_name: modelName.optional(),
  category: category.optional(),
  applies_to: appliesTo.optional(),
  kind: kind.optional(),
  check: checkSpec.optional(),
});

export const createTemplateBody = templateFields.superRefine((body, ctx) => {
  // An llm template needs a prompt and an output type; a check answers pass/fail by itself.
  if (body.kind === "check") {
    if (body.check == null) ctx.addIssue({ code: "custom", path: ["check"], message: "is required when kind is check" });
    return;
  }
  for (const field of ["prompt", "output_type"] as const) {
    if (body[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: "is required when kind is llm" });
  }
  // Run even when other fields are invalid, so one 400 names every missing field.
}, { when: (payload) => typeof payload.value === "object" && payload.value !== null });

export const updateTemplateBody = templateFields
  .partial()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "give at least one field to change" });

export const listTemplatesQuery = z.object({
  evaluation_level: evaluationLevel.optional().describe("Only templates of this level"),
  category: z.string().trim().min(1).max(100).optional().describe("Only templates of this category (exact match)"),
});

export const metricTemplateSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    evaluation_level: evaluationLevel,
    prompt: z.string(),
    output_type: outputType,
    output_schema: jsonValue,
    model_name: z.string().nullable(),
    is_advanced: z.boolean().describe("The prompt uses template variables; derived by the server"),
    template_variables: z.array(z.string()).describe("Variables of the prompt, first-seen order; derived by the server"),
    applies_to: appliesTo,
    kind,
    check: checkWire,
    category: z.string().nullable(),
    is_system: z.boolean(),
    user_id: z.string().nullable().describe("Owner; null for system templates"),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: "MetricTemplate" });

const requiredWithoutTemplate = ["name", "evaluation_level", "prompt", "output_type"] as const;

export const createMetricBody = z
  .object({
    dataset_id: positiveId,
    template_id: positiveId.nullable().optional().describe("Copy this template's fields; fields in the body override the copy"),
    name: name.optional(),
    description: description.optional(),
    evaluation_level: evaluationLevel.optional(),
    prompt: prompt.optional(),
    output_type: outputType.optional(),
    output_schema: outputSchema.optional(),
    model_name: modelName.optional(),
    reference: reference.optional(),
    applies_to: appliesTo.optional(),
    kind: kind.optional(),
    check: checkSpec.optional(),
    depends_on: dependsOn.optional(),
    skip_rule: skipRule.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.template_id != null) return;
    // A check needs no prompt or output type: it answers pass/fail (checkbox) by itself.
    const required = body.kind === "check" ? (["name", "evaluation_level", "check"] as const) : requiredWithoutTemplate;
    for (const field of required) {
      if (body[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: "is required without template_id" });
    }
  });

export const updateMetricBody = z
  .object({
    name: name.optional(),
    description: description.optional(),
    evaluation_level: evaluationLevel.optional(),
    prompt: prompt.optional(),
    output_type: outputType.optional(),
    output_schema: outputSchema.optional(),
    model_name: modelName.optional(),
    reference: reference.optional(),
    applies_to: appliesTo.optional(),
    kind: kind.optional(),
    check: checkSpec.optional(),
    depends_on: dependsOn.optional(),
    skip_rule: skipRule.optional(),
    position: z.number().int().min(0).optional().describe("Move the metric to this 0-based column (clamped to the last)"),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "give at least one field to change" });

export const listMetricsQuery = z.object({ dataset_id: idText().describe("The dataset whose metrics to list") });

export const metricSchema = z
  .object({
    id: z.number().int(),
    evaluation_pipeline_id: z.number().int(),
    dataset_id: z.number().int(),
    template_id: z.number().int().nullable().describe("The template it was copied from; null once that is deleted"),
    name: z.string(),
    description: z.string().nullable(),
    evaluation_level: evaluationLevel,
    prompt: z.string(),
    output_type: outputType,
    output_schema: jsonValue,
    model_name: z.string().nullable(),
    is_advanced: z.boolean(),
    template_variables: z.array(z.string()),
    reference,
    applies_to: appliesTo,
    kind,
    check: checkWire,
    depends_on: z.array(z.number().int()),
    skip_rule: skipRule,
    position: z.number().int().describe("0-based column order within the dataset"),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: "Metric" });

export const previewBody = z
  .object({
    pipeline_node_id: positiveId.optional().describe("Preview a saved metric (instead of prompt + evaluation_level)"),
    prompt: prompt.optional(),
    evaluation_level: evaluationLevel.optional(),
    output_type: outputType.optional().describe("Decides the output format in the system message (default progress)"),
    output_schema: outputSchema.optional(),
    entity_type: evaluationLevel.optional().describe("Defaults to the metric's level; must equal it"),
    entity_id: positiveId,
    model_name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .nullable()
      .optional()
      .describe("Judge model whose context window the prompt must fit; default the metric's model, else JUDGE_MODEL"),
  })
  .superRefine((body, ctx) => {
    const byNode = body.pipeline_node_id !== undefined;
    const byPrompt = body.prompt !== undefined || body.evaluation_level !== undefined;
    if (byNode && byPrompt) {
      ctx.addIssue({ code: "custom", path: ["pipeline_node_id"], message: "give either pipeline_node_id or prompt with evaluation_level, not both" });
    } else if (!byNode) {
      if (body.prompt === undefined) ctx.addIssue({ code: "custom", path: ["prompt"], message: "is required without pipeline_node_id" });
      if (body.evaluation_level === undefined) {
        ctx.addIssue({ code: "custom", path: ["evaluation_level"], message: "is required without pipeline_node_id" });
      }
    }
  });

export const judgePromptPreviewSchema = z
  .object({
    prompt: z.string().describe("The exact user prompt the judge receives"),
    system: z.string().describe("The system message the judge receives"),
    template_variables: z.array(z.string()),
    missing: z.array(z.string()).describe("Variables with no value at this entity, written as (none)"),
    goal: z
      .object({
        source: z.enum(["imported", "extracted", "first_user_message"]),
        note: z.string().describe("Which goal text the judge receives, said in words"),
      })
      .nullable()
      .optional()
      .describe("For a prompt with @GOAL: where the goal in this preview comes from, and whether a run will replace it with an extracted one"),
    model: z.string().describe("The judge model the prompt is fitted to"),
    context_tokens: z.number().int().describe("That model's context window (JUDGE_CONTEXT_TOKENS_BY_MODEL, else JUDGE_CONTEXT_TOKENS)"),
    budget_tokens: z
      .number()
      .int()
      .nullable()
      .describe("Tokens left for system message and prompt once room is kept for the judge's reply"),
    token_estimate: z.number().int().describe("Estimated tokens of system message and prompt (3 characters per token, erring long)"),
    truncated: z
      .array(
        z.object({
          item: z.string().describe("The variable and item cut, e.g. `@HISTORY: message 3 (assistant) step 2 tool_result`"),
          removed_characters: z.number().int().describe("Characters cut from its middle (a marker in the prompt says how many)"),
        }),
      )
      .describe("Items whose middle was cut to fit the budget, in prompt order; empty when the whole evidence fits"),
  })
  .meta({ id: "JudgePromptPreview" });

export type CreateTemplateInput = z.infer<typeof createTemplateBody>;
export type UpdateTemplateInput = z.infer<typeof updateTemplateBody>;
export type MetricTemplate = z.infer<typeof metricTemplateSchema>;
export type CreateMetricInput = z.infer<typeof createMetricBody>;
export type UpdateMetricInput = z.infer<typeof updateMetricBody>;
export type Metric = z.infer<typeof metricSchema>;
export type PreviewInput = z.infer<typeof previewBody>;
export type JudgePromptPreview = z.infer<typeof judgePromptPreviewSchema>;
