/** Wire schemas of online rules and the Live page (shared/API.md, "Additions of the third phase"). */
import { z } from "zod";
import { gridQuery } from "./executions";
import { bodyId, idText, intText, isoTimestamp } from "./common";

const positiveId = bodyId;
const filter = gridQuery.shape.filter.unwrap();

const ruleFields = {
  pipeline_node_ids: z.array(positiveId).min(1).max(100).describe("The metrics each finished conversation is evaluated with (metrics of the dataset)"),
  filter: filter
    .nullable()
    .optional()
    .describe("Only conversations matching this grid filter (the grid's `filter` syntax at the conversation level, e.g. `meta.channel==web`)"),
  sample_rate: z.number().min(0).max(1).describe("Share of finished conversations evaluated, decided per conversation by a hash of rule and conversation (a re-sweep never re-rolls)"),
  idle_seconds: z.number().int().min(1).max(7 * 86_400).describe("A conversation with no new span for this long counts as finished"),
  max_cost_usd_per_day: z
    .number()
    .positive()
    .nullable()
    .describe("Stop evaluating for the day (UTC) once the rule's runs have cost this much; null: no cap"),
  enabled: z.boolean(),
};

export const createRuleBody = z
  .object({
    dataset_id: positiveId,
    ...ruleFields,
    sample_rate: ruleFields.sample_rate.optional().default(1),
    idle_seconds: ruleFields.idle_seconds.optional().default(60),
    max_cost_usd_per_day: ruleFields.max_cost_usd_per_day.optional().default(null),
    enabled: ruleFields.enabled.optional().default(true),
  })
  .strict();

export const updateRuleBody = z
  .object({
    pipeline_node_ids: ruleFields.pipeline_node_ids.optional(),
    filter: ruleFields.filter,
    sample_rate: ruleFields.sample_rate.optional(),
    idle_seconds: ruleFields.idle_seconds.optional(),
    max_cost_usd_per_day: ruleFields.max_cost_usd_per_day.optional(),
    enabled: ruleFields.enabled.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: "name at least one field to change" });

export const listRulesQuery = z.object({ dataset_id: idText().optional() });

export const onlineRuleSchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.number().int(),
    pipeline_node_ids: z.array(z.number().int()),
    filter: z.string().nullable(),
    sample_rate: z.number(),
    idle_seconds: z.number().int(),
    max_cost_usd_per_day: z.number().nullable(),
    enabled: z.boolean(),
    spent_usd_today: z.number().describe("What the rule's runs cost today (UTC) by JUDGE_PRICES; calls of a model without a price count nothing"),
    evaluated: z.number().int().describe("Conversation evaluations the rule started (a conversation that grew and was evaluated again counts again)"),
    last_error: z.string().nullable().describe("Why the last sweep could not start the rule's run; cleared by the next run it starts"),
    last_error_at: isoTimestamp.nullable(),
    user_id: z.string(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: "OnlineRule" });

export const liveQuery = z.object({
  bucket: z.enum(["hour", "day"]).optional().default("hour").describe("Width of the score-over-time buckets"),
  days: intText({ min: 1, max: 90 }).optional().default(7).describe("How far back the scores go"),
});

export const liveSchema = z
  .object({
    conversations: z
      .array(
        z.object({
          id: z.number().int().describe("The live conversation (its spans' grouping)"),
          conversation_id: z.number().int().nullable().describe("The dataset conversation it became; null until first rebuilt"),
          key: z.string(),
          name: z.string().nullable(),
          messages: z.number().int(),
          span_count: z.number().int(),
          revision: z.number().int(),
          first_span_at: isoTimestamp,
          last_span_at: isoTimestamp,
          evaluated_revision: z.number().int().nullable().describe("The latest revision a rule sent for evaluation; null when none did"),
        }),
      )
      .describe("The 50 most recently active live conversations"),
    scores: z.array(
      z.object({ bucket: isoTimestamp.describe("Start of the hour or day (UTC)"), pipeline_node_id: z.number().int(), mean: z.number(), count: z.number().int() }),
    ),
    failures: z
      .array(
        z.object({
          result_id: z.number().int(),
          execution_id: z.number().int(),
          pipeline_node_id: z.number().int(),
          conversation_id: z.number().int(),
          entity_type: z.string(),
          entity_id: z.number().int(),
          error: z.string().nullable(),
          created_at: isoTimestamp,
        }),
      )
      .describe("The last 20 failed cells of the dataset's rule runs"),
    rules: z.array(onlineRuleSchema),
  })
  .meta({ id: "LiveDataset" });

export type CreateRuleBody = z.infer<typeof createRuleBody>;
export type UpdateRuleBody = z.infer<typeof updateRuleBody>;
export type OnlineRule = z.infer<typeof onlineRuleSchema>;
export type LiveDataset = z.infer<typeof liveSchema>;
