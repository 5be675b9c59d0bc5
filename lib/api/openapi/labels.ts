import { errorSchema, idParams } from "@/lib/schemas/common";
import { gateQuery, gateReportSchema } from "@/lib/schemas/gate";
import { z } from "zod";
import { compareQuery, comparisonSchema, sourceComparisonSchema } from "@/lib/schemas/compare";
import { metaFieldsSchema, referencePreviewBody, referencePreviewSchema } from "@/lib/schemas/references";
import { agreementQuery, agreementSchema, annotatorAgreementQuery, annotatorAgreementSchema, createLabelBody, labelSchema, listLabelsQuery, metricVersionSchema, rankingQuery, rankingSchema } from "@/lib/schemas/labels";
import { badRequest, forbiddenResponse, notFoundResponse, totalCountHeader, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const labels = "Labels";

export const labelOperations: Operation[] = [
  {
    method: "post",
    path: "/labels",
    operationId: "createLabel",
    summary: "Label a cell as the caller",
    description:
      "The caller is `X-User-Id` (else `default`). `entity_type` must be the metric's level (assistant messages for message " +
      "metrics). `value` is checked against the metric's output type (422 with the reason): checkbox a boolean, progress a " +
      "number in [0, 1], number a finite number, text a string, json an object matching the output schema; `value: null` " +
      "with a `note` records a note without a verdict. The caller's earlier label of the same cell is kept as history " +
      "(`current: false`, `superseded_at` set).",
    tag: labels,
    body: createLabelBody,
    responses: {
      201: { description: "The new current label", schema: labelSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/labels",
    operationId: "listLabels",
    summary: "List labels of a dataset",
    description: "Newest first; current labels only unless `include_history=true`. Paged with `limit`/`offset`.",
    tag: labels,
    query: listLabelsQuery,
    responses: {
      200: { description: "Labels", schema: labelSchema, array: true, headers: totalCountHeader },
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "delete",
    path: "/labels/{id}",
    operationId: "deleteLabel",
    summary: "Delete one of the caller's labels",
    description: "Only the label's author may delete it (403 otherwise). Earlier, superseded versions stay as history.",
    tag: labels,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 403: forbiddenResponse, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/agreement",
    operationId: "getAgreement",
    summary: "Agreement of a metric between two sources",
    description:
      "Sources: `execution:<id>` (that run's last result per cell), `latest` (the grid's latest result per cell), `labels` " +
      "(the most recent current label of anyone per cell), `labels:<user_id>`, `reference` (the metric's reference: a meta " +
      "field, pass/fail through its rule, or the labels it names). Only cells read by both sources count (`n`); failed " +
      "results and notes without a value are not readings. Checkbox metrics (and references with a rule) compare as " +
      "pass/fail: accuracy, Cohen's kappa and a 2×2 confusion matrix (rows a, columns b, order pass, fail) whose " +
      "`false_pass` (a pass, b fail) and `false_fail` cells list the entities; b is taken as the truth. Text metrics compare " +
      "as categories. Score metrics get Spearman's rho (average ranks for ties), mean absolute error, quadratic-weighted kappa " +
      "(weights ((x−y)/range)² over the values) and accuracy as the share of scores at most `tolerance` apart (default 0.1 " +
      "for progress, 0 otherwise; `disagreements` are the cells further apart, largest first); with `threshold` " +
      "(or a reference with a rule on a progress metric, threshold 0.5) also the pass/fail figures; other score metrics " +
      "compared with a pass/fail reference need `threshold` (422 otherwise). Intervals are two-sided " +
      "95%: accuracy Wilson score; kappa ± 1.96·SE with Cohen's large-sample SE, clipped to [−1, 1]; Spearman Fisher z " +
      "(SE 1/√(n−3), null below 4 pairs); MAE ± 1.96·s/√n (null below 2 pairs). A figure that is undefined (no pairs, a " +
      "constant side) is null.",
    tag: labels,
    query: agreementQuery,
    responses: {
      200: { description: "Agreement figures", schema: agreementSchema },
      400: badRequest,
      404: notFoundResponse,
      422: { description: "The metric is not of the dataset, an execution of another dataset, `reference` without one, or a missing threshold", schema: unprocessableResponse.schema },
    },
  },
  {
    method: "get",
    path: "/agreement/annotators",
    operationId: "getAnnotatorAgreement",
    summary: "Agreement between the people who labelled a metric",
    description:
      "Each person's current labels are one source (`labels:<user_id>`); every pair of people with cells in common is " +
      "compared on those cells as `GET /agreement` would compare them: pass/fail and categories get accuracy and Cohen's " +
      "kappa, scores quadratic-weighted kappa and accuracy within `tolerance` (default 0.1 for progress), or with " +
      "`threshold` the pass/fail figures. A note without a verdict is not a label: `labelled` counts a person's verdicts " +
      "only, `notes_only` the rest.",
    tag: labels,
    query: annotatorAgreementQuery,
    responses: {
      200: { description: "Annotators and their agreement, pair by pair", schema: annotatorAgreementSchema },
      400: badRequest,
      404: notFoundResponse,
      422: { description: "The metric is not of the dataset", schema: unprocessableResponse.schema },
    },
  },
  {
    method: "get",
    path: "/agreement/ranking",
    operationId: "getRankingAgreement",
    summary: "A message metric against human ranks among sibling replies",
    description:
      "For message trees with human rankings (Open Assistant: several assistant replies to one prompt, `meta.rank` 0 = best, " +
      "`meta.parent_id` the prompt): replies with the same group value are siblings. Pairwise accuracy is the share of sibling " +
      "pairs people ranked differently that the judge orders the same way (higher score = better; scores are compared at 9 decimals, " +
      "so copies averaged to 0.7999999999999999 tie with 0.8; a judge tie counts half and is counted in `ties`, never in `discordant`), " +
      "with a Wilson 95% interval; `mean_spearman` averages per prompt Spearman's rho between the judge's scores and the human " +
      "order, with mean ± 1.96·s/√g. A reply stored on several root-to-leaf paths (same `id_path` value) counts once, its copies' " +
      "scores averaged. Pass/fail metrics read as 1/0. With `a=comparison:<id>` (a pairwise comparison with `pair_by: siblings` " +
      "of this dataset, `pipeline_node_id` its metric): the share of its pairs people ranked differently whose outcome orders them as " +
      "people did (a reply picked in both orders; a tie, including a flip with the order, counts half), with its Wilson interval; " +
      "`pointwise_node_id` adds a pointwise message metric's figures on the same replies (its latest verdicts) as `pointwise`.",
    tag: labels,
    query: rankingQuery,
    responses: {
      200: { description: "Ranking agreement", schema: rankingSchema },
      400: badRequest,
      404: notFoundResponse,
      422: { description: "The metric is not of the dataset, not judged per message, or a text metric; a comparison not of siblings, of this dataset or of this metric", schema: unprocessableResponse.schema },
    },
  },

  {
    method: "get",
    path: "/evaluation-pipeline-executions/compare",
    operationId: "compareExecutions",
    summary: "Compare two executions of a dataset",
    description:
      "Per cell (metric × entity, each run's last result) both sides `{status, value, score, model_name}` (null when the run " +
      "has no result there), `flip` (both completed and the pass/fail, category or score differs) and `delta` (b − a of the " +
      "scores). Per metric: `n` cells completed in both, flips, mean delta, accuracy, kappa (pass/fail and categories) or " +
      "Spearman (scores), the models that answered in each run, the prompt version in effect when each run was created, and " +
      "`changed` naming what differs (`model`, `prompt`). Per run: results, completed, failed, tokens and cost (`cost_usd` " +
      "null when the model has no price). Executions of different datasets are a 422.",
    tag: "Executions",
    query: compareQuery,
    responses: {
      200: { description: "The comparison (`pair_by=source`: SourceComparison — pass^k, pass@k, flips per source conversation, target and simulator errors apart)", schema: z.union([comparisonSchema, sourceComparisonSchema]) },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions/gate",
    operationId: "gateExecutions",
    summary: "A CI gate's verdict over finished runs (what `npx turnscope eval` exits on)",
    description:
      "One case per metric and conversation (a conversation's cells of a message- or step-level metric make one case, passing " +
      "when all of them pass). With several `runs` (repeats), a case fails only when it fails in every repeat (confirm-on-fail). " +
      "`min`: a score case passes at or above the metric's minimum (0.5 without one; checkbox metrics pass on true), and the " +
      "threshold applies per case or to the mean (`threshold`). Against a `baseline`: the cases that passed there and fail now, " +
      "McNemar's exact test of the flips, and the mean score delta with a paired bootstrap 95% interval (seeded); a metric " +
      "regressed on a significant drop or any case that passed in the baseline and fails in every repeat now. `dataset.hash` " +
      "pins the data. `status`: `pass`, `fail`, or `error` when a metric has no case judged at all.",
    tag: "Executions",
    query: gateQuery,
    responses: {
      200: { description: "The gate's report", schema: gateReportSchema },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "A run is not finished yet", schema: errorSchema },
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-nodes/{id}/versions",
    operationId: "listMetricVersions",
    summary: "A metric's prompt version history",
    description:
      "Every saved judge definition of the metric (prompt, level, output type and schema, model), oldest first. A save that " +
      "changes none of these adds no version. Metrics created before versions were kept get version 1 at their next save.",
    tag: "Metrics",
    params: idParams,
    responses: { 200: { description: "Versions", schema: metricVersionSchema, array: true }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/datasets/{id}/meta-fields",
    operationId: "listMetaFields",
    summary: "The scalar meta fields of a dataset (for a reference's path)",
    description:
      "Reads the meta of the dataset's first 1000 conversations and first 1000 messages with meta, and lists every scalar " +
      "field (number, string, boolean; nested objects walked to 8 levels, arrays not) as a dotted `meta.` path a metric's " +
      "reference can name, with how many objects hold it and up to 5 example values, most common first.",
    tag: "Metrics",
    params: idParams,
    responses: { 200: { description: "Meta fields", schema: metaFieldsSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/evaluation-pipeline-nodes/{id}/reference-preview",
    operationId: "previewReference",
    summary: "How a reference reads a metric's cells",
    description:
      "Reads every cell of the metric (entities at its level) through `reference` (absent: the metric's saved reference; " +
      "null: none) as agreement would: a meta field through its rule (pass/fail), the field itself for the output type, or " +
      "the latest label. Returns the counts (`pass`, `fail`, `other` readings, `missing`) and each cell's reading. Changes " +
      "nothing, so a viewer may call it too (it is a POST only to carry an unsaved reference); a reference the metric " +
      "could not save is a 422 with the same reason as on save.",
    tag: "Metrics",
    params: idParams,
    body: referencePreviewBody,
    responses: {
      200: { description: "The preview", schema: referencePreviewSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
];
