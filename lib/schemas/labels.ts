/** Wire schemas of human labels, metric references, agreement and run comparison (API.md, second phase). */
import { z } from "zod";
import { evaluationLevels } from "@/lib/vocabulary";
import { bodyId, idsInRange, idText, intText, MAX_ID, isoTimestamp, jsonValue } from "./common";

const entityType = z.enum(evaluationLevels);
const positiveId = bodyId;
const userId = z.string().trim().min(1).max(200);

export const createLabelBody = z.object({
  dataset_id: positiveId,
  pipeline_node_id: positiveId,
  entity_type: entityType,
  entity_id: positiveId,
  value: jsonValue.describe(
    "As the metric's result would hold it: checkbox a boolean, progress a score in [0, 1], number a number, text a string, json an " +
      "object matching the output schema; null for a note without a verdict",
  ),
  note: z.string().max(5000, "must be at most 5000 characters").nullable().optional(),
});

const boolText = z.enum(["true", "false"]).transform((v) => v === "true");

export const listLabelsQuery = z.object({
  dataset_id: idText().describe("The dataset whose labels to list"),
  pipeline_node_id: idText().optional().describe("Only labels of this metric"),
  user_id: userId.optional().describe("Only labels of this user"),
  entity_type: entityType.optional().describe("With entity_id: only labels of this cell"),
  entity_id: idText().optional(),
  include_history: boolText.optional().default(false).describe("Also superseded labels (default: current labels only)"),
  limit: intText({ min: 1, max: 5000 }).optional().default(1000).describe("Page size (1–5000, default 1000)"),
  offset: intText({ min: 0 }).optional().default(0),
});

export const labelSchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    entity_type: entityType,
    entity_id: z.number().int(),
    conversation_id: z.number().int(),
    user_id: z.string(),
    value: jsonValue,
    score: z.number().nullable().describe("Numeric reading, as a result's score: checkbox 1/0, progress score, number value, json score"),
    note: z.string().nullable(),
    current: z.boolean().describe("False once the same user relabelled the cell"),
    superseded_at: isoTimestamp.nullable(),
    created_at: isoTimestamp,
  })
  .meta({ id: "Label" });

const ruleValue = z.union([z.number(), z.string(), z.boolean()]);

/** Input form of a metric's reference (not registered: request bodies are inlined in the OpenAPI document). */
export const referenceInput = z.discriminatedUnion("source", [
  z.strictObject({
    source: z.literal("meta"),
    level: z.enum(["conversation", "message"]).describe("Whose meta: the entity's conversation, or its message (message/step metrics)"),
    path: z
      .string()
      .regex(/^meta(\.[A-Za-z0-9_-]{1,100}){1,8}$/, 'must be a dotted path into meta, e.g. "meta.reward"')
      .describe('Dotted path of the field, starting with "meta."'),
    rule: z
      .strictObject({ op: z.enum(["==", "!=", ">=", ">", "<=", "<"]), value: ruleValue })
      .optional()
      .describe("Pass when `<field> <op> <value>` holds; the reference is then pass/fail"),
  }),
  z.strictObject({
    source: z.literal("labels"),
    user_id: userId.optional().describe("Only this user's labels (default: the most recent label of anyone)"),
  }),
]);

export type MetricReference = z.infer<typeof referenceInput>;

const sourceText = z
  .string()
  .regex(/^(execution:\d{1,16}|latest|labels(:.{1,200})?|reference)$/, "must be execution:<id>, latest, labels, labels:<user_id> or reference")
  .refine((v) => idsInRange(v, /^execution:/), `execution:<id> must be between 1 and ${MAX_ID}`);

export const agreementQuery = z.object({
  dataset_id: idText(),
  pipeline_node_id: idText(),
  a: sourceText.describe("First source (the one judged): execution:<id>, latest, labels, labels:<user_id> or reference"),
  b: sourceText.describe("Second source (taken as the truth for false pass / false fail)"),
  threshold: z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, "must be a number")
    .transform(Number)
    .optional()
    .describe("Score metrics: a score ≥ threshold is a pass, which adds accuracy, kappa and the confusion matrix (default 0.5 for a progress metric against a pass/fail reading; the answer says which was used)"),
  tolerance: z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a non-negative number")
    .transform(Number)
    .optional()
    .describe("Score metrics compared as scores: two scores at most this far apart agree (default 0.1 for progress, 0 otherwise)"),
  compare: z
    .enum(["auto", "scores", "pass_fail"])
    .optional()
    .describe(
      "Score metrics: `pass_fail` compares at the threshold (default the metric's: 0.5 for progress, else the middle of the scores), `scores` within the tolerance; " +
        "`auto` (the default, unless threshold or tolerance is given) compares as the readings are: pass/fail when a source reads pass/fail (a rule's verdicts, labels of only 0 and 1), else as scores",
    ),
});

const metaPathText = z.string().regex(/^meta(\.[A-Za-z0-9_-]{1,100}){1,8}$/, 'must be a dotted path into meta, e.g. "meta.rank"');

/** The ranking's judge: a pointwise metric's verdicts, or a pairwise comparison of sibling replies. */
const rankingSourceText = z.union([
  z
    .string()
    .regex(/^comparison:[1-9]\d{0,9}$/)
    .refine((v) => Number(v.slice("comparison:".length)) <= MAX_ID, `comparison:<id> must be between 1 and ${MAX_ID}`),
  sourceText,
]);

export const rankingQuery = z.object({
  dataset_id: idText(),
  pipeline_node_id: idText().describe("A message metric (scores or pass/fail), or the pairwise metric of the comparison named in a"),
  a: rankingSourceText
    .optional()
    .default("latest")
    .describe("The judge's verdicts: execution:<id>, latest (default), or comparison:<id> (a pairwise comparison with pair_by siblings on this dataset)"),
  pointwise_node_id: idText()
    .optional()
    .describe("With a=comparison:<id>: a pointwise message metric of the dataset whose latest verdicts' figures are returned beside, as `pointwise`"),
  rank_path: metaPathText.optional().default("meta.rank").describe("The human rank in each message's meta, 0 = best (default meta.rank)"),
  group_path: metaPathText.optional().default("meta.parent_id").describe("What makes replies siblings: the prompt they answer (default meta.parent_id)"),
  id_path: metaPathText
    .optional()
    .default("meta.message_id")
    .describe("A reply's own id, so one stored on several paths counts once (default meta.message_id)"),
});

const interval = z.tuple([z.number(), z.number()]).nullable();
const entityRef = z.object({ entity_type: entityType, entity_id: z.number().int(), conversation_id: z.number().int() });

export const agreementSchema = z
  .object({
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    output_type: z.string(),
    kind: z.enum(["binary", "score", "category"]),
    a: z.string(),
    b: z.string(),
    n: z.number().int().describe("Cells with a reading in both sources"),
    accuracy: z.number().nullable(),
    kappa: z.number().nullable(),
    spearman: z.number().nullable(),
    mae: z.number().nullable(),
    weighted_kappa: z.number().nullable().describe("Scores on both sides: Cohen's kappa with quadratic weights ((x−y)/range)² over the values"),
    threshold: z.number().nullable().describe("The score that counted as a pass, when scores were compared as pass/fail"),
    tolerance: z.number().nullable().describe("When scores were compared as scores: how far apart two may be and agree"),
    compared_as: z.enum(["pass_fail", "scores", "categories"]).describe("How the readings were compared (for a score metric: pass/fail at `threshold`, or scores within `tolerance`)"),
    intervals: z
      .object({ accuracy: interval, kappa: interval, spearman: interval, mae: interval })
      .describe("95% intervals: accuracy Wilson score; kappa ± 1.96·SE (Cohen's large-sample SE, clipped to [−1, 1]); Spearman Fisher z with SE 1/√(n−3); MAE ± 1.96·s/√n"),
    confusion: z
      .object({
        labels: z.array(z.string()),
        counts: z.array(z.array(z.number().int())).describe("Rows: source a; columns: source b"),
        false_pass: z.array(entityRef),
        false_fail: z.array(entityRef),
      })
      .nullable(),
    disagreements: z.array(entityRef.extend({ a: jsonValue, b: jsonValue })),
  })
  .meta({ id: "Agreement" });

export type Agreement = z.infer<typeof agreementSchema>;

export const annotatorAgreementQuery = agreementQuery.omit({ a: true, b: true });

export const annotatorAgreementSchema = z
  .object({
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    output_type: z.string(),
    kind: z.enum(["binary", "score", "category"]),
    annotators: z
      .array(
        z.object({
          user_id: z.string(),
          labelled: z.number().int().describe("Cells with this person's current verdict (a note without a verdict is not counted)"),
          notes_only: z.number().int().describe("Cells where this person's current label is a note without a verdict"),
          who: z
            .enum(["person", "before_keys", "no_person"])
            .describe(
              'person: a person of the team (People page); before_keys: "default", the labels made while the server was open, before any key or API_TOKEN (one-person mode); no_person: a name with no person (API_TOKEN\'s "admin", or a name an open server was told in x-user-id). Each name counts as one annotator in the pairs.',
            ),
        }),
      )
      .describe("Everyone with a current label on the metric, by user id"),
    pairs: z
      .array(
        z.object({
          a: z.string(),
          b: z.string(),
          n: z.number().int().describe("Cells both people gave a verdict"),
          accuracy: z.number().nullable(),
          kappa: z.number().nullable().describe("Cohen's kappa (pass/fail, categories, or scores at `threshold`)"),
          weighted_kappa: z.number().nullable().describe("Scores: Cohen's kappa with quadratic weights over the values"),
          threshold: z.number().nullable(),
          tolerance: z.number().nullable(),
          intervals: z.object({ accuracy: interval, kappa: interval }),
          disagreements: z.number().int().describe("Cells the two disagree on"),
        }),
      )
      .describe("Every pair of annotators with at least one cell in common, by user id"),
  })
  .meta({ id: "AnnotatorAgreement" });

export type AnnotatorAgreement = z.infer<typeof annotatorAgreementSchema>;

export const rankingSchema = z
  .object({
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    a: z.string(),
    rank_path: z.string(),
    group_path: z.string(),
    items: z.number().int().describe("Judged replies with a rank and a group (a reply on several paths counts once)"),
    groups: z.number().int().describe("Prompts with at least two ranked replies"),
    pairs: z.number().int().describe("Pairs of sibling replies people ranked differently"),
    pairwise_accuracy: z.number().nullable().describe("Share of those pairs the judge orders as people did (a judge tie counts half)"),
    ties: z
      .number()
      .int()
      .describe("Of those pairs, the ones the judge scored alike (equal at 9 decimals, so averaging noise such as 0.7999999999999999 against 0.8 is a tie): counted half, never as reversed"),
    pairwise_interval: interval.describe("Wilson 95% interval"),
    mean_spearman: z.number().nullable().describe("Mean over prompts of Spearman's rho between the judge's scores and the human order"),
    spearman_interval: interval.describe("mean ± 1.96·s/√g over the prompts"),
    spearman_undefined: z.number().int().describe("Prompts where the judge gave every reply the same score"),
    discordant: z
      .array(z.object({ better: entityRef, worse: entityRef, judge_better: z.number(), judge_worse: z.number() }))
      .describe(
        "Pairs the judge ordered the other way round, a strictly higher score for people's worse reply (at most 200), the largest reversal first; ties are not listed. For a comparison: the pairs it won for people's worse reply in both orders (judge_better 0, judge_worse 1)",
      ),
    pointwise: z
      .object({ pipeline_node_id: z.number().int(), a: z.string(), pairs: z.number().int(), pairwise_accuracy: z.number().nullable(), ties: z.number().int(), pairwise_interval: interval })
      .optional()
      .describe("With a=comparison:<id> and pointwise_node_id: the pointwise metric's figures on the same dataset, for side-by-side reading"),
  })
  .meta({ id: "RankingAgreement" });

export const metricVersionSchema = z
  .object({
    version: z.number().int().describe("1 for the definition the metric was created with, then one more per saved change"),
    prompt: z.string(),
    evaluation_level: entityType,
    output_type: z.string(),
    output_schema: jsonValue,
    model_name: z.string().nullable(),
    created_at: isoTimestamp,
  })
  .meta({ id: "MetricVersion" });

export type MetricVersion = z.infer<typeof metricVersionSchema>;
export type Label = z.infer<typeof labelSchema>;
export type CreateLabelInput = z.infer<typeof createLabelBody>;
export type ListLabelsQuery = z.infer<typeof listLabelsQuery>;
