/** Wire schemas of judge alignment (API.md, fourth phase; issue 39). */
import { z } from "zod";
import { bodyId, idText, isoTimestamp, jsonValue } from "./common";
import { metricVersionSchema } from "./labels";

export const alignmentStrategies = ["few_shot", "rewrite", "threshold"] as const;
export type AlignmentStrategy = (typeof alignmentStrategies)[number];

export const createAlignmentBody = z.object({
  pipeline_node_id: bodyId.describe("The metric (an llm metric) whose judge is aligned"),
  truth: z.enum(["labels", "reference"]).describe("`labels`: people's current labels of the metric (the most recent per cell); `reference`: the metric's reference (e.g. meta.reward through a rule)"),
  strategies: z
    .array(z.enum(alignmentStrategies))
    .min(1)
    .max(3)
    .refine((s) => new Set(s).size === s.length, "must not repeat a strategy")
    .describe("Candidates to build: `few_shot` (examples in a marked prompt section), `rewrite` (an optimiser model rewrites the rubric), `threshold` (score metrics: the pass threshold)"),
  folds: z.number().int().min(2).max(20).optional().default(5).describe("k of the stratified k-fold cross-validation (default 5)"),
  seed: z.number().int().min(0).max(2 ** 31 - 1).optional().default(1).describe("Seeds the folds, the examples' order and the bootstrap (default 1)"),
  max_examples: z.number().int().min(1).max(32).optional().default(8).describe("few_shot: examples per prompt at most (default 8)"),
  optimizer_model: z.string().trim().min(1).max(200).optional().describe("rewrite: the model that rewrites the rubric (default: the metric's judge model)"),
  max_cost_usd: z.number().positive().optional().describe("Stop once the alignment's judge and optimiser calls cost this much (JUDGE_PRICES); it then ends failed, saying so"),
  dry_run: z.boolean().optional().default(false).describe("Answer 200 with the calls and cost the alignment would make; nothing is judged or stored"),
});
export type CreateAlignmentInput = z.infer<typeof createAlignmentBody>;

const interval = z.tuple([z.number(), z.number()]).nullable();
const figures = z.object({
  n: z.number().int().describe("Cells with a verdict (a failed judge call leaves its cell out)"),
  kappa: z.number().nullable(),
  accuracy: z.number().nullable(),
  tpr: z.number().nullable().describe("Of the cells the truth passes, the share the judge passes (null for categories)"),
  tnr: z.number().nullable().describe("Of the cells the truth fails, the share the judge fails (null for categories)"),
  intervals: z
    .object({ kappa: interval, accuracy: interval, tpr: interval, tnr: interval })
    .describe("95% percentile bootstrap intervals over cells (1,000 seeded resamples)"),
});

const usage = z.object({
  judge_calls: z.number().int(),
  optimizer_calls: z.number().int(),
  cached: z.number().int().describe("Verdicts read from the judge cache (no call)"),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number().nullable().describe("Priced with JUDGE_PRICES; null when a model has no price"),
});

export const alignmentEstimateSchema = z
  .object({
    dry_run: z.literal(true),
    truth_n: z.number().int(),
    judge_calls: z.number().int(),
    optimizer_calls: z.number().int(),
    estimated_input_tokens: z.number().int(),
    estimated_output_tokens: z.number().int(),
    estimated_cost_usd: z.number().nullable(),
  })
  .meta({ id: "AlignmentEstimate" });

export const alignmentSchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    status: z.enum(["pending", "processing", "completed", "failed", "cancelled"]).describe("cancelled: POST /alignments/{id}/cancel stopped it (its calls so far counted in usage)"),
    truth: z.enum(["labels", "reference"]),
    strategies: z.array(z.enum(alignmentStrategies)),
    folds: z.number().int(),
    seed: z.number().int(),
    max_examples: z.number().int(),
    optimizer_model: z.string().nullable(),
    model: z.string().describe("The judge model every verdict was asked of"),
    baseline_version: z.number().int().nullable().describe("The metric's prompt version judged as the baseline"),
    truth_n: z.number().int().describe("Cells with a truth reading"),
    pass_threshold: z.number().nullable().describe("Score metrics: the score that counts as a pass on both sides (0.5 for progress; the middle of the truth's scale for number and json-score metrics); null for pass/fail and category metrics"),
    truth_classes: z.record(z.string(), z.number().int()).describe("Cells per truth class (pass / fail, or categories)"),
    annotator_kappa: z.number().nullable().describe("Cohen's κ between the two annotators who labelled the most cells in common; null without two"),
    annotator_pairs: z.array(z.object({ a: z.string(), b: z.string(), n: z.number().int(), kappa: z.number().nullable() })),
    warnings: z.array(z.string()).describe("E.g. annotators agreeing below κ 0.6: a judge cannot be aligned to people who disagree with each other"),
    progress: z.object({ total: z.number().int(), done: z.number().int() }).describe("Calls planned and made (judge and optimiser)"),
    baseline: figures.nullable().describe("The metric's current prompt on every truth cell"),
    candidates: z.array(
      z.object({
        strategy: z.enum(alignmentStrategies),
        held_out: figures.describe("Each cell judged by the candidate built without its fold"),
        delta_kappa: z.object({ estimate: z.number().nullable(), interval, n: z.number().int() }).describe("κ(candidate) − κ(baseline) on the same cells, paired bootstrap 95% interval"),
        beats_baseline: z.boolean().describe("The Δκ interval lies above zero"),
        prompt: z.string().optional().describe("The prompt promote would save, built from every truth cell"),
        examples: z.array(z.object({ entity_type: z.string(), entity_id: z.number().int(), verdict: jsonValue })).optional(),
        threshold: z.number().nullable().optional().describe("threshold: the pass threshold chosen on every truth cell"),
        fold_thresholds: z.array(z.number().nullable()).optional(),
        error: z.string().nullable().optional(),
      }),
    ),
    folds_detail: z
      .array(z.object({ fold: z.number().int(), held_out: z.array(z.number().int()), examples: z.array(z.number().int()) }))
      .describe("Per fold: the entity ids scored, and the entity ids few_shot used as examples (never among them)"),
    recommended: z.enum(alignmentStrategies).nullable().describe("The candidate with the largest Δκ among those whose interval is above zero"),
    promoted: z.array(z.object({ strategy: z.enum(alignmentStrategies), version: z.number().int(), at: isoTimestamp })).describe("Candidates promoted from this alignment, and the prompt version each became"),
    usage,
    error: z.string().nullable(),
    created_at: isoTimestamp,
    finished_at: isoTimestamp.nullable(),
  })
  .meta({ id: "Alignment" });
export type Alignment = z.infer<typeof alignmentSchema>;
export type AlignmentUsage = z.infer<typeof usage>;

export const promoteAlignmentBody = z.object({
  strategy: z.enum(alignmentStrategies),
  force: z.boolean().optional().default(false).describe("Promote a candidate that did not beat the baseline on held-out cells"),
});

export const promotedSchema = z
  .object({ alignment_id: z.number().int(), strategy: z.enum(alignmentStrategies), version: metricVersionSchema, previous_version: z.number().int().nullable() })
  .meta({ id: "AlignmentPromotion" });

export const listAlignmentsQuery = z.object({ pipeline_node_id: idText().describe("The metric whose alignments to list") });

export const agreementHistoryQuery = z.object({
  truth: z.enum(["labels", "reference"]).optional().describe("Compare with people's labels or the metric's reference (default: labels when there are any, else the reference)"),
});

export const agreementHistorySchema = z
  .object({
    pipeline_node_id: z.number().int(),
    truth: z.enum(["labels", "reference"]),
    versions: z
      .array(
        z.object({
          version: z.number().int(),
          created_at: isoTimestamp,
          model_name: z.string().nullable(),
          prompt: z.string(),
          n: z.number().int().describe("Cells this version's runs judged that have a truth reading (the latest result per cell while the version was in effect)"),
          kappa: z.number().nullable(),
          kappa_interval: interval,
          accuracy: z.number().nullable(),
          accuracy_interval: interval,
          aligned: z
            .object({ alignment_id: z.number().int(), strategy: z.enum(alignmentStrategies), kappa: z.number().nullable(), kappa_interval: interval, baseline_kappa: z.number().nullable() })
            .nullable()
            .describe("When the version was promoted from an alignment: its held-out κ there (before any run judged with it)"),
        }),
      )
      .describe("Oldest first; a version no run judged has n 0"),
  })
  .meta({ id: "AgreementHistory" });
