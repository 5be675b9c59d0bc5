/** Wire schemas of generations: replay and simulation against a target (API.md, fourth phase). */
import { z } from "zod";
import { idText, isoTimestamp, paginationQuery } from "./common";

export const generationModes = ["next_turn", "replay", "simulate"] as const;
export const stopReasons = ["end_of_source", "stop_token", "max_turns", "target_error", "simulator_error"] as const;

const id = z.number().int().min(1).max(2 ** 31 - 1);

export const createGenerationBody = z.object({
  source_dataset_id: id,
  target_id: id,
  mode: z.enum(generationModes).describe("`next_turn`: each assistant turn's history sent, the candidate stored beside the original; `replay`: the source's user turns sent in order; `simulate`: a model plays the user from a scenario"),
  conversation_ids: z.array(id).min(1).max(10_000).optional().describe("Only these conversations of the source (default: all)"),
  filter: z
    .string()
    .max(2000)
    .optional()
    .describe(
      "Only source conversations matching this grid filter (the grid's `filter` language at the conversation level, e.g. `meta.reward==0;metric.12==fail`); " +
        "with `conversation_ids`, the named conversations that match. Resolved once, when the generation is created; a filter the grid cannot read, " +
        "or one that matches nothing, is refused with 422 naming `filter`",
    ),
  repeats: z.number().int().min(1).max(10).optional().default(1),
  max_turns: z.number().int().min(1).max(50).optional().default(10).describe("simulate: user turns at most"),
  simulator: z
    .object({
      model: z.string().trim().min(1).max(200).optional().describe("Default: JUDGE_MODEL, through OPENAI_BASE_URL"),
      scenario_path: z.string().regex(/^meta(\.[A-Za-z0-9_-]+)+$/, "must be a path such as meta.info.task.instruction").optional(),
      persona: z.string().max(4000).optional(),
      stop_token: z.string().min(1).max(100).optional().default("###STOP###"),
    })
    .optional()
    .default({ stop_token: "###STOP###" }),
  seed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  batch_size: z.number().int().min(1).max(256).optional().describe("Conversations at once (at most the target's max_concurrency)"),
  max_cost_usd: z
    .number()
    .positive()
    .optional()
    .describe(
      "Stop once the target's and the simulator's calls cost this much (JUDGE_PRICES): checked before every call, so no call starts after it and the spend ends " +
        "within the calls already in flight (at most one per conversation at once). The generation ends `cancelled` with `stop_reason: \"budget\"`; " +
        "conversations stopped mid-way are not written. Refused (422) when a model it would call has no price, or when nothing it calls reports tokens",
    ),
  dry_run: z.boolean().optional().default(false),
  name: z.string().trim().min(1).max(200).optional().describe("Name of the new dataset"),
});

export const generationSchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.number().int().describe("The new dataset holding the generated conversations"),
    source_dataset_id: z.number().int().nullable(),
    target_id: z.number().int().nullable(),
    mode: z.enum(generationModes),
    status: z.enum(["pending", "processing", "completed", "failed", "cancelled"]),
    total: z.number().int().describe("Conversations to generate (source conversations × repeats)"),
    completed: z.number().int().describe("Conversations generated to their end (end of source, stop token or max_turns)"),
    failed: z.number().int().describe("Conversations cut short by a target or simulator error (saved as far as they got, with meta.stop_reason)"),
    usage: z.object({
      target_calls: z.number().int(),
      simulator_calls: z.number().int(),
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      cost_usd: z.number().nullable(),
      lost_calls: z
        .number()
        .int()
        .describe("Calls a process that stopped (it died) had out when another took the generation up: sent, so counted in target_calls and simulator_calls, but their replies, tokens and cost never came"),
    }),
    stop_reasons: z.object(Object.fromEntries(stopReasons.map((r) => [r, z.number().int()])) as Record<(typeof stopReasons)[number], z.ZodNumber>),
    error: z.string().nullable(),
    stop_reason: z.enum(["budget"]).optional().describe("`budget`: stopped (cancelled) when its calls' cost reached max_cost_usd; `error` says how much was spent"),
    params: z.record(z.string(), z.unknown()),
    created_at: isoTimestamp,
    started_at: isoTimestamp.nullable(),
    finished_at: isoTimestamp.nullable(),
  })
  .meta({ id: "Generation" });

const estimatePart = z.object({
  model: z.string().nullable().describe("The model priced (the target's `model`; the simulator's model)"),
  calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number().nullable().describe("null when the model has no price in JUDGE_PRICES (said in `notes`)"),
});

export const generationEstimateSchema = z
  .object({
    conversations: z.number().int().describe("Conversations it would generate (source conversations × repeats)"),
    target_calls: z.number().int(),
    simulator_calls: z.number().int().describe("simulate: an upper bound, max_turns each"),
    estimated_input_tokens: z
      .number()
      .int()
      .describe("What each call would carry (the whole history, system prompt, tool definitions, the simulator's instructions), 4 characters a token, target and simulator together"),
    estimated_output_tokens: z.number().int(),
    estimated_cost_usd: z
      .number()
      .nullable()
      .describe("Target and simulator together, the replies as long as the source's; null when either's model has no price in JUDGE_PRICES"),
    estimated_cost_usd_high: z
      .number()
      .nullable()
      .describe("The same with every reply (and simulated user turn) as long as the longest the source holds: a longer reply is paid again in every later turn's history"),
    target: estimatePart,
    simulator: estimatePart.nullable().describe("null unless mode is simulate"),
    note: z.string().describe("The notes below in one sentence"),
    notes: z.array(z.string()).describe("How the figures were reached, and which model could not be priced"),
  })
  .meta({ id: "GenerationEstimate" });

export const listGenerationsQuery = paginationQuery.extend({
  source_dataset_id: idText().optional().describe("Only generations made from this dataset"),
});

export const evaluateGenerationBody = z.object({
  pipeline_node_ids: z.array(id).min(1).max(100).describe("Metrics of the source dataset; each, with the metrics it depends on, is copied by name to the generated dataset where it has no metric of that name"),
  execution_mode: z.enum(["sync", "async"]).optional().default("async"),
  batch_size: z.number().int().min(1).max(256).optional().default(8),
});

export type CreateGenerationInput = z.infer<typeof createGenerationBody>;
export type Generation = z.infer<typeof generationSchema>;
export type GenerationEstimate = z.infer<typeof generationEstimateSchema>;
