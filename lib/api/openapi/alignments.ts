import { idParams } from "@/lib/schemas/common";
import {
  agreementHistoryQuery,
  agreementHistorySchema,
  alignmentEstimateSchema,
  alignmentSchema,
  createAlignmentBody,
  listAlignmentsQuery,
  promoteAlignmentBody,
  promotedSchema,
} from "@/lib/schemas/alignments";
import { badRequest, conflictResponse, notFoundResponse, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const tag = "Alignment";

const alignmentDescription =
  "Builds candidates of the metric's prompt from the truth — people's current labels (the most recent per cell; their notes " +
  "feed `rewrite`) or the metric's reference — and proves each on held-out cells. The truth cells are split into `folds` " +
  "stratified by class (seeded); every cell is judged by a candidate built without its own fold: `few_shot` puts up to " +
  "`max_examples` labelled cells of the other folds (the baseline's disagreements first, classes in turn) into a marked " +
  "section of the prompt; `rewrite` asks `optimizer_model` (default: the metric's judge model) for a new rubric from the " +
  "other folds' disagreements and notes; `threshold` (score metrics) picks the pass threshold that agrees best on the other " +
  "folds. The baseline is the metric's current prompt on every cell. Each candidate gets κ, accuracy, TPR and TNR on " +
  "held-out cells with 95% bootstrap intervals, and Δκ against the baseline with a paired bootstrap interval; " +
  "`recommended` is the largest Δκ whose interval lies above zero, else null. With two annotators on the same cells, " +
  "`annotator_kappa` comes first and `warnings` says so below 0.6. Every judge and optimiser call is counted in `usage`; " +
  "`max_cost_usd` stops it (status `failed`, saying so); POST /alignments/{id}/cancel stops it (status `cancelled`). 422 when there is no truth (no labels, no reference, one class, " +
  "fewer than two cells per fold) or `threshold` is asked of a pass/fail or category metric. `dry_run`: 200 with the calls " +
  "and cost it would make, nothing judged or stored.";

export const alignmentOperations: Operation[] = [
  {
    method: "post",
    path: "/alignments",
    operationId: "createAlignment",
    summary: "Align a metric's judge to labels or its reference, proven on held-out folds",
    description: alignmentDescription,
    tag,
    body: createAlignmentBody,
    responses: {
      202: { description: "Started; follow it with GET /alignments/{id}", schema: alignmentSchema },
      200: { description: "dry_run: the calls and cost it would make", schema: alignmentEstimateSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/alignments",
    operationId: "listAlignments",
    summary: "A metric's alignments, newest first (at most 50)",
    tag,
    query: listAlignmentsQuery,
    responses: { 200: { description: "The alignments", schema: alignmentSchema, array: true }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/alignments/{id}",
    operationId: "getAlignment",
    summary: "An alignment: progress while it works, then the baseline, the candidates and the recommendation",
    tag,
    params: idParams,
    responses: { 200: { description: "The alignment", schema: alignmentSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/alignments/{id}/cancel",
    operationId: "cancelAlignment",
    summary: "Cancel an alignment: it ends `cancelled` at once, its calls in flight are aborted, the calls so far counted in usage",
    description:
      "Works from any server of a cluster: the alignment ends `cancelled` first, and the process working it stops its judge and " +
      "optimiser calls (at once when it is this one, else when it hears of it — within a third of JOB_VISIBILITY_TIMEOUT_SECONDS). " +
      "No figures are kept: promote needs a completed alignment. 409 when it has already ended.",
    tag,
    params: idParams,
    responses: { 200: { description: "The alignment, cancelled", schema: alignmentSchema }, 400: badRequest, 404: notFoundResponse, 409: conflictResponse },
  },
  {
    method: "post",
    path: "/alignments/{id}/promote",
    operationId: "promoteAlignment",
    summary: "Save a candidate's prompt as the metric's next prompt version",
    description:
      "The previous prompt stays among the metric's versions (GET /evaluation-pipeline-nodes/{id}/versions). 409 when the " +
      "alignment has not completed, when the candidate did not beat the baseline on held-out cells (its Δκ interval does not " +
      "lie above zero; the message gives Δκ and the interval), or when the metric's prompt changed since the baseline was " +
      "judged — each unless `force: true`. 422 for `threshold` (a threshold is not part of the prompt) or a strategy the " +
      "alignment did not build.",
    tag,
    params: idParams,
    body: promoteAlignmentBody,
    responses: {
      200: { description: "The new version", schema: promotedSchema },
      400: badRequest,
      404: notFoundResponse,
      409: conflictResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-nodes/{id}/agreement-history",
    operationId: "getAgreementHistory",
    summary: "The metric's agreement with the truth per prompt version (version → κ with its interval)",
    description:
      "For each saved version of the metric's definition (a change of prompt or model is a new version), the latest result " +
      "per cell its runs saved while it was in effect, compared with the labels or the reference: κ and accuracy with their " +
      "intervals (as GET /agreement computes them). Computed when asked.",
    tag,
    params: idParams,
    query: agreementHistoryQuery,
    responses: { 200: { description: "The history, oldest version first", schema: agreementHistorySchema }, 400: badRequest, 404: notFoundResponse, 422: unprocessableResponse },
  },
];
