/** Wire schemas of executions, results, aggregates, SSE events and the grid (shared/API.md, "Executions"). */
import { z } from "zod";
import { evaluationLevels, executionStatuses, resultStatuses, stepKinds } from "@/lib/vocabulary";
import { bodyId, idsInRange, idText, intText, MAX_ID, isoTimestamp, jsonValue } from "./common";

const entityType = z.enum(evaluationLevels);
const positiveId = bodyId;

const runFields = {
  dataset_id: positiveId,
  pipeline_node_id: positiveId.nullable().optional().describe("The metric (column); omit for a row or all"),
  entity_type: entityType
    .nullable()
    .optional()
    .describe(
      "Level of entity_id; required with entity_id. With entity_id null or absent it means every entity of this type: " +
        "with pipeline_node_id the metric's column (the metric must be of this level), without it every row of this type",
    ),
  entity_id: positiveId.nullable().optional().describe("The entity (row); null or absent for a column, every row of entity_type, or all"),
  retry: z.boolean().optional().default(false).describe("Only cells whose latest result failed or is missing"),
  execution_mode: z.enum(["sync", "async"]).optional().default("sync"),
  batch_size: z.number().int().min(1).max(256).optional().default(8).describe("Async mode: judge calls of the run in flight at once (@GOAL calls included); the next cells are prepared and the last ones saved meanwhile"),
  model_name: z.string().trim().min(1).max(200).nullable().optional().describe("Judge model for this run"),
  no_cache: z.boolean().optional().default(false).describe("Ask the judge again even for unchanged cells"),
  conversation_ids: z
    .array(positiveId)
    .min(1)
    .max(1000)
    .optional()
    .describe("Only the cells of these conversations (and their messages and steps); not with entity_id. Online rules run this way"),
  pipeline_node_ids: z.array(positiveId).min(1).max(100).optional().describe("Only these metrics (a set of columns); not with pipeline_node_id"),
  trigger: z.enum(["gate"]).optional().describe("What starts the run when not a person at the grid: `gate` for the CI gate (`turnscope eval`); kept in `meta.trigger`, shown in History and on the run page"),
  max_cost_usd: z
    .number()
    .positive()
    .nullable()
    .optional()
    .describe(
      "Stop the run once its judge calls have cost this much (priced by JUDGE_PRICES; calls of a model without a price count nothing): " +
        "it ends `cancelled` with `meta.stop_reason: \"budget\"`, the results so far kept. Checked as each cell's cost is recorded, so a run stops within one batch of its limit",
    ),
};

function entityPair(
  body: { entity_type?: string | null; entity_id?: number | null; conversation_ids?: number[]; pipeline_node_ids?: number[]; pipeline_node_id?: number | null },
  ctx: z.RefinementCtx,
) {
  if (body.entity_id != null && body.entity_type == null) {
    ctx.addIssue({ code: "custom", path: ["entity_type"], message: "is required with entity_id" });
  }
  if (body.conversation_ids && body.entity_id != null) {
    ctx.addIssue({ code: "custom", path: ["conversation_ids"], message: "cannot be combined with entity_id" });
  }
  if (body.pipeline_node_ids && body.pipeline_node_id != null) {
    ctx.addIssue({ code: "custom", path: ["pipeline_node_ids"], message: "cannot be combined with pipeline_node_id" });
  }
}

/** `entity_id=` or `entity_id=null` in a query string is the body's `entity_id: null`. */
const absentInQuery = (v: unknown) => (v === "" || v === "null" ? undefined : v);

export const runBody = z.object(runFields).superRefine(entityPair);

/** The POST body: a run, or with `dry_run` its estimate. */
export const runPostBody = z
  .object({
    ...runFields,
    dry_run: z
      .boolean()
      .optional()
      .default(false)
      .describe("Price the run without running it: answers 200 with the estimate (RunEstimate) and creates nothing"),
  })
  .superRefine(entityPair);

export const runEstimateSchema = z
  .object({
    cells: z.number().int().describe("Cells the run would evaluate"),
    judge_calls: z.number().int().describe("Judge calls it would make: judge cells the cache does not answer, plus one @GOAL extraction per conversation that has none yet"),
    goal_extractions: z.number().int().describe("Of judge_calls, the @GOAL extractions: one per conversation a metric's prompt needs the goal of and that has none stored yet (the run counts their tokens and cost with the cell that first needed each)"),
    cached: z.number().int().describe("Judge cells the verdict cache would answer (0 with no_cache or retry)"),
    checks: z.number().int().describe("Check cells (no judge call)"),
    estimated_input_tokens: z.number().int().describe("Tokens of the prompts the judge would be sent (about 3 characters a token)"),
    estimated_output_tokens: z.number().int().describe("The metrics' average reply so far, else 150 a call"),
    estimated_cost_usd: z.number().nullable().describe("From JUDGE_PRICES; null when a model the run would call has no price (the tokens still say how much)"),
  })
  .meta({ id: "RunEstimate" });
export type RunEstimate = z.infer<typeof runEstimateSchema>;

const boolText = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1");

/** The same run, from the query string of the streaming GET. */
export const runQuery = z
  .object({
    dataset_id: idText(),
    pipeline_node_id: idText().optional(),
    entity_type: entityType.optional(),
    entity_id: z.preprocess(absentInQuery, idText().optional()),
    retry: boolText.optional().default(false),
    execution_mode: z.enum(["sync", "async"]).optional().default("sync"),
    batch_size: intText({ min: 1, max: 256 }).optional().default(8),
    model_name: z.string().trim().min(1).max(200).optional(),
    no_cache: boolText.optional().default(false),
  })
  .superRefine(entityPair);

export type RunRequest = z.infer<typeof runBody>;

export const executionErrorSchema = z.object({
  pipeline_node_id: z.number().int().nullable(),
  entity_type: entityType.nullable(),
  entity_id: z.number().int().nullable(),
  message: z.string(),
});

export const executionMetaSchema = z.object({
  model: z.string().nullable().describe("The run's model override, else the default judge model"),
  execution_mode: z.enum(["sync", "async"]),
  batch_size: z.number().int(),
  template_variables: z.array(z.string()),
  user_id: z.string(),
  scope: z.enum(["cell", "row", "rows", "column", "all"]).describe("`rows`: every row of `entity_type` (entity_type without entity_id or metric)"),
  entity_type: entityType.nullable(),
  entity_id: z.number().int().nullable(),
  retry: z.boolean(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cached_evaluations: z.number().int().describe("Cells answered from the verdict cache"),
  cost_usd: z.number().nullable().describe("From JUDGE_PRICES; null when the model has no price"),
  interrupted: z.boolean().optional(),
  rate_limits: z.number().int().optional().describe("Judge calls of this run the provider answered with 429"),
  hedges: z
    .number()
    .int()
    .optional()
    .describe("Second requests sent for judge calls slower than the provider's observed p95 (the first answer is used, the other aborted; its tokens are not counted)"),
  concurrency_limit: z.number().int().optional().describe("The model's adaptive limit of calls in flight (process-wide) when last reported"),
  trigger: z
    .string()
    .optional()
    .describe("What started the run when not a person: `rule:<id>` an online rule, `generation:<id>` Evaluate and compare of a generation, `gate` the CI gate (`turnscope eval`)"),
  pipeline_node_ids: z.array(z.number().int()).optional().describe("The metrics the run was asked for, when given as a list"),
  max_cost_usd: z.number().nullable().optional().describe("The run's budget, when it had one"),
  stop_reason: z.enum(["budget"]).optional().describe("`budget`: the run was stopped (cancelled) when its cost reached max_cost_usd"),
});

export const executionSchema = z
  .object({
    id: z.number().int(),
    evaluation_pipeline_id: z.number().int().nullable(),
    dataset_id: z.number().int(),
    pipeline_node_id: z.number().int().nullable(),
    status: z.enum(executionStatuses),
    started_at: isoTimestamp.nullable(),
    completed_at: isoTimestamp.nullable(),
    duration_ms: z.number().int().nullable(),
    total_evaluations: z.number().int(),
    successful_evaluations: z.number().int(),
    failed_evaluations: z.number().int(),
    skipped_evaluations: z
      .number()
      .int()
      .describe(
        "Cells not evaluated: not applicable, dependency not met, or never run because the run was interrupted or cancelled. " +
          "Once final, successful + failed + skipped = total",
      ),
    errors: z.array(executionErrorSchema),
    meta: executionMetaSchema,
    created_at: isoTimestamp,
  })
  .meta({ id: "Execution" });

export const individualResultSchema = z
  .object({
    id: z.number().int(),
    execution_id: z.number().int(),
    pipeline_node_id: z.number().int(),
    entity_type: entityType,
    entity_id: z.number().int(),
    conversation_id: z.number().int(),
    message_id: z.number().int().nullable(),
    step_id: z.number().int().nullable(),
    result: jsonValue.describe("progress {score, reasoning}; checkbox {value, reasoning}; number {value, reasoning}; text {value}; json the object"),
    status: z.enum(resultStatuses),
    error: z.string().nullable(),
    raw_output: z.string().nullable().describe("The judge's unusable reply, when parsing failed"),
    cached: z.boolean(),
    execution_time: z.number().int().describe("milliseconds"),
    model_name: z.string().nullable(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    created_at: isoTimestamp,
  })
  .meta({ id: "IndividualResult" });

export const aggregatedSchema = z
  .object({
    total: z.number().int(),
    average_score: z.number().nullable(),
    min_score: z.number().nullable(),
    max_score: z.number().nullable(),
    std_dev: z.number().nullable().describe("Population standard deviation"),
    distribution: z.record(z.string(), z.number().int()),
  })
  .meta({ id: "Aggregated" });

export const executionResultsSchema = z
  .object({
    execution_id: z.number().int(),
    results: z.array(individualResultSchema),
    aggregated: z.record(z.string(), aggregatedSchema),
    errors: z.array(executionErrorSchema),
  })
  .meta({ id: "ExecutionResults" });

export const listExecutionsQuery = z.object({
  dataset_id: idText(),
  status: z.enum(executionStatuses).optional(),
  pipeline_node_id: idText().optional(),
  limit: intText({ min: 1, max: 500 }).optional().default(50),
  offset: intText({ min: 0 }).optional().default(0),
  sort: z.enum(["started_at", "-started_at"]).optional().default("-started_at"),
});

export const resultsQuery = z.object({
  limit: intText({ min: 1, max: 5000 }).optional().describe("Return one page of results of this size (default: all, streamed)"),
  offset: intText({ min: 0 }).optional().describe("With limit: results to skip (default 0)"),
});

export const exportQuery = z.object({
  format: z.enum(["csv", "json", "xlsx"]),
  bom: boolText
    .optional()
    .default(false)
    .describe("CSV only: start the file with a UTF-8 byte order mark, so Excel reads accents and non-Latin text right (default false)"),
});

const metaKey = "[A-Za-z0-9_-]{1,100}(?:\\.[A-Za-z0-9_-]{1,100}){0,7}";
const gridField = `(?:meta\\.${metaKey}|metric\\.\\d{1,16})`;

export const gridQuery = z.object({
  level: entityType.optional().default("conversation"),
  conversation_id: idText().optional(),
  meta: z
    .string()
    .regex(new RegExp(`^${metaKey}(?:,${metaKey}){0,19}$`), 'must be up to 20 comma-separated meta keys, e.g. "reward,task.kind"')
    .optional()
    .describe("Conversation meta keys (dotted for nested fields) to return as `meta` on each row, e.g. `reward,task.kind`"),
  sort: z
    .string()
    .regex(new RegExp(`^-?${gridField}$`), "must be meta.<key> or metric.<id>, with a leading - for descending")
    .refine((v) => idsInRange(v, /^-?metric\./), `metric.<id> must be between 1 and ${MAX_ID}`)
    .optional()
    .describe("Order rows by a conversation meta field (`meta.reward`) or a metric's latest score (`metric.12`); `-` first for descending. Rows without a value come last"),
  filter: z
    .string()
    .max(2000)
    .regex(
      new RegExp(`^${gridField}(?:==|!=|>=|<=|>|<)[^;]{1,200}(?:;${gridField}(?:==|!=|>=|<=|>|<)[^;]{1,200}){0,9}$`),
      "must be up to 10 ;-separated conditions <field><op><value>, e.g. meta.reward==0;metric.12==pass",
    )
    .refine((v) => idsInRange(v, /(?:^|;)metric\./), `metric.<id> must be between 1 and ${MAX_ID}`)
    .optional()
    .describe(
      "Rows matching every `;`-separated condition `<field><op><value>` (ops `== != >= > <= <`). `meta.<key>` compares the conversation's " +
        "meta field with a number, `true`/`false`, or text (rows without the field never match). `metric.<id>` compares the metric's latest " +
        "score with a number, or (`==`/`!=` only) its latest verdict: `pass`/`fail` (checkbox metrics), `failed` (the latest result is an error), `none` (never run). " +
        "The metric must be of the grid's level (422 otherwise)",
    ),
  limit: intText({ min: 1, max: 500 }).optional().default(50),
  offset: intText({ min: 0 }).optional().default(0),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/, "must be the X-Next-Cursor of an earlier page")
    .optional()
    .describe(
      "Keyset paging (conversation level, grid order, any `filter`; not with `sort` or `offset`): the `X-Next-Cursor` of the page before. " +
        "The page starts right after that page's last row, reading from there instead of skipping `offset` rows",
    ),
});

/** `GET /datasets/{id}/export`: the grid's state (csv, json, xlsx) or its conversations in an interchange format. */
export const datasetExportQuery = exportQuery.extend({
  format: z
    .enum(["csv", "json", "xlsx", "atif", "openai_jsonl"])
    .describe(
      "`csv`, `json`, `xlsx`: the grid's latest verdicts; `atif`: the conversations as ATIF trajectories, JSON Lines (one a line); " +
        "`openai_jsonl`: the conversations in OpenAI's chat format, JSON Lines (`{messages, tools, metadata, name}` a line)",
    ),
  filter: gridQuery.shape.filter.describe(
    "`atif` and `openai_jsonl` only: just the conversations matching this grid filter (the grid's `filter` language at the conversation level, " +
      "e.g. `meta.reward==0;metric.12==fail`; a metric must be a conversation-level metric of the dataset, 422 otherwise)",
  ),
});

/** `GET /conversations/{id}/export`. */
export const conversationExportQuery = z.object({
  format: z.enum(["atif"]).optional().default("atif").describe("`atif`: the conversation as one ATIF trajectory (JSON)"),
});

export const gridCellSchema = z.object({
  status: z.enum(resultStatuses),
  result: jsonValue,
  error: z.string().nullable(),
  execution_id: z.number().int(),
  updated_at: isoTimestamp,
});

export const gridRowSchema = z
  .object({
    entity_type: entityType,
    entity_id: z.number().int(),
    conversation_id: z.number().int(),
    message_id: z.number().int().nullable(),
    step_id: z.number().int().nullable(),
    position: z.number().int(),
    label: z.string(),
    role: z.string().nullable(),
    step_kinds: z
      .array(z.enum(stepKinds))
      .nullable()
      .describe("Steps: the kinds of content the step carries (a step metric whose applies_to names none of them shows n/a); null for other rows"),
    cells: z.record(z.string(), gridCellSchema).describe("Latest result per metric id, across executions"),
    rollups: z
      .record(
        z.string(),
        z.object({
          completed: z.number().int().describe("The conversation's message (or step) cells of this metric whose latest result completed"),
          failed: z.number().int(),
          mean: z.number().nullable().describe("Mean score of the completed cells (a pass/fail metric: the share that passed); null when none has a score"),
        }),
      )
      .optional()
      .describe("Conversation rows: per message- or step-level metric id with results in this conversation, those results summed up"),
    meta: z
      .record(z.string(), jsonValue)
      .optional()
      .describe("With `meta=`: each asked key of the conversation's meta, null when absent"),
  })
  .meta({ id: "GridRow" });

export type ExecutionError = z.infer<typeof executionErrorSchema>;
export type ExecutionMeta = z.infer<typeof executionMetaSchema>;
export type Execution = z.infer<typeof executionSchema>;
export type IndividualResult = z.infer<typeof individualResultSchema>;
export type Aggregated = z.infer<typeof aggregatedSchema>;
export type GridRow = z.infer<typeof gridRowSchema>;
