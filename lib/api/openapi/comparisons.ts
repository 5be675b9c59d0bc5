import { errorSchema, idParams } from "@/lib/schemas/common";
import { comparisonSchema, createComparisonBody, rankingsQuery, rankingsSchema } from "@/lib/schemas/comparisons";
import { badRequest, conflictResponse, notFoundResponse, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const tag = "Pairwise comparisons";

const comparisonDescription =
  "A metric with `output_type: \"pairwise\"` judges two replies to one input: its prompt uses `@CANDIDATE_A` and `@CANDIDATE_B` " +
  "beside the conversation-level variables, which describe the input both replies answer (the conversation before them); a prompt " +
  "without variables gets the conversation and both replies appended. The judge answers `{\"winner\": \"A\" | \"B\" | \"tie\", \"reasoning\"}`. " +
  "`pair_by: source_conversation` pairs a's and b's conversations of the same source (`meta.source_conversation_id`, or the source " +
  "conversation's own id; with repeats on both sides, repeat k against repeat k): a conversation-level metric compares what follows " +
  "the messages the two share from the start, a message-level one each assistant turn against its counterpart (a next_turn reply's " +
  "`meta.source_message_id`, else the k-th against the k-th). `pair_by: siblings` (b omitted; message-level metrics) pairs every two " +
  "assistant replies with the same `meta.parent_id` within a, as in a message tree (one reply stored on several paths counts once, " +
  "by `meta.message_id`). Every pair is judged in both orders — `verdict_ab` with a shown as A, `verdict_ba` with b shown as A — and " +
  "a reply wins only when picked in both; a verdict that flips with the order is a tie. Judge calls go through the same client as " +
  "runs (cache, retries, JUDGE_MAX_CONCURRENCY); `batch_size` pairs at once; `max_cost_usd` stops starting pairs once the calls cost " +
  "that much (JUDGE_PRICES; the comparison ends `cancelled`). Worked in the server that started it. A generation side must have ended (409).";

export const comparisonOperations: Operation[] = [
  {
    method: "post",
    path: "/comparisons",
    operationId: "createComparison",
    summary: "Judge two sides' replies against each other with a pairwise metric, in both orders",
    description: comparisonDescription,
    tag,
    body: createComparisonBody,
    responses: {
      202: { description: "Started: the comparison with its pairs, none judged yet", schema: comparisonSchema },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "A generation side is still running", schema: errorSchema },
      422: { description: "Not a pairwise metric, b given with siblings (or missing otherwise), the same dataset twice, no pairs, more than max_pairs", schema: unprocessableResponse.schema },
    },
  },
  {
    method: "get",
    path: "/comparisons/{id}",
    operationId: "getComparison",
    summary: "A comparison's win/tie/loss with its interval, consistency, position bias and every pair's two verdicts",
    description:
      "Figures over the pairs judged in both orders: `win_rate_a` = (wins_a + ties/2) / pairs with a Wilson 95% interval; `consistency` " +
      "the share of pairs whose two verdicts name the same reply (or both tie); `first_position_rate` of the verdicts that picked a " +
      "reply, the share that picked the one shown first (0.5: no position bias; 1: the judge always picks the first). Pairs whose " +
      "judging failed are counted in `failed`, with the error, and left out of the figures.",
    tag,
    params: idParams,
    responses: { 200: { description: "The comparison", schema: comparisonSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/comparisons/{id}/cancel",
    operationId: "cancelComparison",
    summary: "Cancel a comparison: its calls are aborted, the pairs judged so far kept",
    tag,
    params: idParams,
    responses: { 200: { description: "The comparison, cancelled", schema: comparisonSchema }, 400: badRequest, 404: notFoundResponse, 409: conflictResponse },
  },
  {
    method: "get",
    path: "/rankings",
    operationId: "getRankings",
    summary: "Bradley–Terry strengths of the candidates of several comparisons, with bootstrap intervals",
    description:
      "Each comparison's sides (`dataset:<id>`, `generation:<id>` as it named them) are candidates and its pairs' outcomes games " +
      "between them (a tie half a win to each). Strengths are maximum-likelihood Bradley–Terry (P(i beats j) = s_i / (s_i + s_j), " +
      "summing to 1), with a percentile bootstrap 95% interval that redraws each comparison's pairs (`iterations`, `seed`: the same " +
      "query gives the same answer). Every comparison must be of the metric, between two sides, ended, and together link every candidate.",
    tag,
    query: rankingsQuery,
    responses: {
      200: { description: "Strongest first", schema: rankingsSchema },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "A comparison is still running", schema: errorSchema },
      422: { description: "A comparison of another metric or of siblings, or candidates the comparisons do not link", schema: unprocessableResponse.schema },
    },
  },
];
