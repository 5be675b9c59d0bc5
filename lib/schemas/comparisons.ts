/** Wire schemas of pairwise comparisons and Bradley–Terry rankings (API.md, fourth phase: Pairwise verdicts). */
import { z } from "zod";
import { isoTimestamp } from "./common";

const id = z.number().int().min(1).max(2 ** 31 - 1);

/** One side of a comparison: a dataset, or a generation (its dataset, once it has ended). */
export const sideText = z
  .string()
  .regex(/^(dataset|generation):[1-9]\d{0,9}$/, "must be dataset:<id> or generation:<id>")
  .refine((v) => Number(v.split(":")[1]) <= 2 ** 31 - 1, "the id is out of range");

export const pairByValues = ["source_conversation", "siblings"] as const;
export const comparisonStatuses = ["pending", "processing", "completed", "failed", "cancelled"] as const;

export const createComparisonBody = z.object({
  pipeline_node_id: id.describe("A metric with output_type pairwise"),
  a: sideText.describe("dataset:<id> or generation:<id>"),
  b: sideText.optional().describe("The other side (source_conversation); omitted for siblings"),
  pair_by: z
    .enum(pairByValues)
    .describe(
      "`source_conversation`: a's and b's conversations of the same source (meta.source_conversation_id, or the source conversation's own id), repeat by repeat; `siblings`: replies to the same message within a (meta.parent_id; one reply stored on several paths counted once by meta.message_id)",
    ),
  model_name: z.string().trim().min(1).max(200).optional().describe("The judge model (default: the metric's, else JUDGE_MODEL)"),
  batch_size: z.number().int().min(1).max(256).optional().describe("Pairs judged at once (each pair's two orders together); the judge's own JUDGE_MAX_CONCURRENCY still bounds calls"),
  max_cost_usd: z.number().positive().optional().describe("Stop starting pairs once the judge calls cost this much (JUDGE_PRICES); the comparison ends cancelled with the pairs judged so far"),
  no_cache: z.boolean().optional().default(false).describe("Ask the judge afresh instead of reusing cached verdicts for the same prompts (the fresh verdicts are still cached)"),
  max_pairs: z.number().int().min(1).max(100_000).optional().default(10_000).describe("Refuse (422) a comparison with more pairs than this"),
});
export type CreateComparisonInput = z.infer<typeof createComparisonBody>;

const position = z.enum(["A", "B", "tie"]);
const ref = z.object({ conversation_id: z.number().int(), message_id: z.number().int().nullable() });
const interval = z.tuple([z.number(), z.number()]).nullable();

export const comparisonSchema = z
  .object({
    id: z.number().int(),
    pipeline_node_id: z.number().int(),
    a: z.string(),
    b: z.string().nullable(),
    a_dataset_id: z.number().int(),
    b_dataset_id: z.number().int().nullable(),
    pair_by: z.enum(pairByValues),
    status: z.enum(comparisonStatuses),
    total: z.number().int().describe("Pairs planned"),
    pairs: z.number().int().describe("Pairs judged in both orders (the figures below are over these)"),
    failed: z.number().int().describe("Pairs whose judging failed in either order (left out of the figures)"),
    wins_a: z.number().int().describe("Pairs a won in both orders"),
    wins_b: z.number().int().describe("Pairs b won in both orders"),
    ties: z.number().int().describe("Pairs the judge called a tie, or whose verdict flipped with the order"),
    win_rate_a: z.object({ estimate: z.number().nullable(), interval }).describe("(wins_a + ties / 2) / pairs, with a Wilson 95% interval"),
    consistency: z.number().nullable().describe("Share of pairs whose two verdicts name the same reply (or both say tie)"),
    first_position_rate: z.number().nullable().describe("Of the verdicts that picked a reply, the share that picked the one shown first: 0.5 means no position bias"),
    judge_calls: z.number().int(),
    usage: z.object({ judge_calls: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int(), cost_usd: z.number().nullable() }),
    error: z.string().nullable(),
    created_at: isoTimestamp,
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    results: z.array(
      z.object({
        group: z.string().nullable().describe("What the two replies answer: the source conversation (and turn), or the parent message"),
        a: ref,
        b: ref,
        verdict_ab: position.nullable().describe("The judge's pick with a shown first (as A)"),
        verdict_ba: position.nullable().describe("The judge's pick with b shown first (as A)"),
        reasoning_ab: z.string().nullable(),
        reasoning_ba: z.string().nullable(),
        outcome: z.enum(["a", "b", "tie"]).nullable().describe("a or b when picked in both orders, else tie; null when judging failed"),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "Comparison" });
export type Comparison = z.infer<typeof comparisonSchema>;

export const rankingsQuery = z.object({
  pipeline_node_id: z.coerce.number().int().min(1).max(2 ** 31 - 1),
  comparisons: z
    .string()
    .regex(/^[1-9]\d{0,9}(,[1-9]\d{0,9}){0,99}$/, "must be comparison ids separated by commas")
    .transform((v) => [...new Set(v.split(",").map(Number))])
    .refine((ids) => ids.every((i) => i <= 2 ** 31 - 1), "an id is out of range"),
  iterations: z.coerce.number().int().min(0).max(10_000).optional().default(1000).describe("Bootstrap redraws (default 1000)"),
  seed: z.coerce.number().int().min(0).max(2 ** 31 - 1).optional().default(1),
});

export const rankingsSchema = z
  .object({
    pipeline_node_id: z.number().int(),
    comparisons: z.array(z.number().int()),
    iterations: z.number().int(),
    candidates: z.array(
      z.object({
        candidate: z.string().describe("dataset:<id> or generation:<id>, as the comparisons named it"),
        strength: z.number().describe("Bradley–Terry strength; the candidates' strengths sum to 1, P(i beats j) = s_i / (s_i + s_j)"),
        interval: interval.describe("Percentile bootstrap 95% interval (each comparison's pairs redrawn)"),
        wins: z.number().int(),
        losses: z.number().int(),
        ties: z.number().int(),
      }),
    ),
  })
  .meta({ id: "Rankings" });
export type Rankings = z.infer<typeof rankingsSchema>;
