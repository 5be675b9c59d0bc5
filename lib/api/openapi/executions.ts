import { z } from "zod";
import { idParams, intText } from "@/lib/schemas/common";
import { executionSchema, listExecutionsQuery, runEstimateSchema, runPostBody, runQuery } from "@/lib/schemas/executions";
import { badRequest, conflictResponse, notFoundResponse, totalCountHeader, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const tag = "Executions";

const sseDescription =
  "`text/event-stream`. Events (`event:` name, JSON `data:`): `processing` {status, execution_id, pipeline_node_id, " +
  "entity_type, entity_id, progress, completed, total} when a cell starts; `complete` {…, progress, result: IndividualResult} " +
  "and `error` {…, progress, error: {message}, result} when a cell's result is saved (their `id:` is the result id); " +
  "`done` {status, execution} last, then the stream closes. A `: heartbeat` comment every 15 s.";

export const executionOperations: Operation[] = [
  {
    method: "post",
    path: "/evaluation-pipeline-executions/run",
    operationId: "runEvaluation",
    summary: "Start a run: a cell, a row, a column or everything",
    description:
      "Scope: cell = `pipeline_node_id` + `entity_type`/`entity_id`; row = entity only (a conversation row includes its " +
      "messages' and steps' metrics, a message row its steps'); column = `pipeline_node_id` only; all = neither. " +
      "Message-level metrics evaluate assistant messages; step-level metrics every step. `retry` evaluates only cells whose " +
      "latest result failed or is missing (and asks the judge afresh); with none in the scope it answers 409 `conflict` " +
      "(\"Nothing to retry\") and records no run — a dry run answers `cells: 0`. Answers at once; the run goes on in the server. " +
      "404 for an unknown dataset, metric or entity (or one of another dataset); 422 when the dataset has no metrics, the " +
      "metric's level does not match the entity, or no metric applies to the entity. `conversation_ids` and `pipeline_node_ids` " +
      "narrow the run to some conversations and some metrics (how online rules run). " +
      "`dry_run: true` answers 200 with the run's estimate instead (cells, judge calls, cache hits, tokens of the prompts the judge " +
      "would be sent, and USD by JUDGE_PRICES, null without a price) and creates nothing; it answers the same 404/422 a run would. " +
      "`max_cost_usd` stops the run once its judge calls cost that much: `status: cancelled`, `meta.stop_reason: \"budget\"`, " +
      "a `budget reached` entry in `errors`, the results so far kept (a `retry` run finishes the rest).",
    tag,
    body: runPostBody,
    responses: {
      200: { description: "With `dry_run: true`: the estimate; nothing was created", schema: runEstimateSchema },
      202: { description: "The execution, `pending`; `Location` names it", schema: executionSchema },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "`retry` with no failed or missing cell in the scope: nothing to retry, no run recorded", schema: conflictResponse.schema },
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions/run",
    operationId: "runEvaluationStream",
    summary: "Start the same run and follow it as Server-Sent Events",
    description: `${sseDescription} The execution id is also in the \`X-Execution-Id\` header.`,
    tag,
    query: runQuery,
    responses: {
      200: { description: "The event stream", contentType: "text/event-stream" },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "`retry` with nothing to retry (as for the POST)", schema: conflictResponse.schema },
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions",
    operationId: "listExecutions",
    summary: "Execution history of a dataset",
    description: "Newest first by default (`sort=-started_at`); pending executions sort by creation time.",
    tag,
    query: listExecutionsQuery,
    responses: {
      200: { description: "A page of executions", schema: executionSchema, array: true, headers: totalCountHeader },
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions/{id}",
    operationId: "getExecution",
    summary: "One execution with its counts, errors and usage",
    tag,
    params: idParams,
    responses: { 200: { description: "The execution", schema: executionSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "delete",
    path: "/evaluation-pipeline-executions/{id}",
    operationId: "cancelExecution",
    summary: "Cancel a running execution",
    description: "Judge calls in flight are aborted and nothing is written after the cancel; results finished before it are kept.",
    tag,
    params: idParams,
    responses: {
      200: { description: "The execution, now `cancelled`", schema: executionSchema },
      400: badRequest,
      404: notFoundResponse,
      409: conflictResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions/{id}/events",
    operationId: "followExecution",
    summary: "Follow an execution as Server-Sent Events",
    description: `First a snapshot of the cells already finished, then live events. Reconnect with the \`Last-Event-ID\` header (or \`last_event_id\`) to receive only what came after. ${sseDescription}`,
    tag,
    params: idParams,
    query: z.object({ last_event_id: intText({ min: 0 }).optional().describe("Resume after this result id") }),
    responses: {
      200: { description: "The event stream", contentType: "text/event-stream" },
      400: badRequest,
      404: notFoundResponse,
    },
  },
];
