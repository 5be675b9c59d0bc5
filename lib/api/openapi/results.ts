import { idParams } from "@/lib/schemas/common";
import { datasetExportQuery, executionResultsSchema, exportQuery, gridQuery, gridRowSchema, resultsQuery } from "@/lib/schemas/executions";
import { badRequest, gridPageHeaders, notFoundResponse, totalCountHeader, unprocessableResponse } from "./shared";
import type { Operation } from "./types";
import { VERDICT_COLUMNS } from "@/lib/results/grid-columns";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const exportColumns =
  "result_id, execution_id, metric_id, metric_name, output_type, entity_type, entity_id, conversation_id, conversation_name, message_id, " +
  "step_id, status, score, value, reasoning, result_json, error, model_name, input_tokens, output_tokens, " +
  "execution_time_ms, cached, created_at";

const aggregatedDescription =
  "`aggregated` maps each metric id with results in the execution to an Aggregated: over completed results with a " +
  "score (progress → score, checkbox → 1/0, number → value, json → its numeric `score`), `std_dev` is the population " +
  'standard deviation; `distribution` is five bins `"0.0-0.2"` … `"0.8-1.0"` for progress (a bin holds its lower edge, ' +
  'the last also 1.0), `"true"`/`"false"` for checkbox, five equal-width bins `"a-b"` between min and max for number ' +
  '(one bin `"a-a"` when all are equal), progress-style bins for json when all its scores are within [0, 1] (else ' +
  "number-style), and `{}` with null scores for text, whose `total` is its number of completed results.";

const gridExportColumns = VERDICT_COLUMNS.join(", ");

/** A 200 answer that is a downloaded file: CSV, JSON of the given shape, or an XLSX workbook. */
function exportFileResponse(filename: string, json: Record<string, unknown>, workbook: string, more: Record<string, Record<string, unknown>> = {}) {
  return {
    description: "The file (`Content-Disposition: attachment`)",
    headers: { "Content-Disposition": { description: `attachment; filename="${filename}"`, schema: { type: "string" } } },
    content: {
      ...more,
      "text/csv": { type: "string", description: "UTF-8 CSV with a header row" },
      "application/json": json,
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
        type: "string",
        contentMediaType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        description: workbook,
      },
    },
  };
}

export const resultOperations: Operation[] = [
  {
    method: "get",
    path: "/evaluation-pipeline-executions/{id}/results",
    operationId: "getExecutionResults",
    summary: "Every result of an execution, with per-metric aggregates",
    description:
      "Results in the order they were saved. " +
      aggregatedDescription +
      " `errors` are the execution's errors. For a running execution, the answer covers the results saved when it was " +
      "asked. Without `limit` every result is returned, streamed; with `limit` (and `offset`) one page, `X-Total-Count` " +
      "giving the number of results, while `aggregated` still covers them all.",
    tag: "Executions",
    params: idParams,
    query: resultsQuery,
    responses: {
      200: { description: "Results, aggregates and errors", schema: executionResultsSchema, headers: totalCountHeader },
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-executions/{id}/export",
    operationId: "exportExecutionResults",
    summary: "Download an execution's results as CSV, JSON or XLSX",
    description:
      'An attachment named `execution-<id>-results.<csv|json|xlsx>`, streamed. CSV (header row) and the XLSX "Results" ' +
      `sheet have the columns ${exportColumns}; \`value\` is the verdict's value for checkbox, number and text metrics, ` +
      "`result_json` the whole verdict. In CSV and XLSX, a text cell starting with `=`, `+`, `-`, `@`, a tab or a " +
      "carriage return is prefixed with `'` so spreadsheets do not run it as a formula (numbers stay numbers). The XLSX " +
      'has typed cells (numbers, booleans, dates), a frozen, filterable header, and a "Summary" sheet of aggregates per ' +
      "metric (metric, output type, total, average, min, max, std dev, distribution). JSON is `{execution, metrics, " +
      "aggregated, results}`. " +
      aggregatedDescription,
    tag: "Executions",
    params: idParams,
    query: exportQuery,
    responses: {
      200: exportFileResponse('execution-<id>-results.<format>', {
            type: "object",
            required: ["execution", "metrics", "aggregated", "results"],
            properties: {
              execution: ref("Execution"),
              metrics: {
                type: "array",
                items: {
                  type: "object",
                  properties: { id: { type: "integer" }, name: { type: "string" }, output_type: { type: "string" } },
                },
              },
              aggregated: { type: "object", additionalProperties: ref("Aggregated") },
              results: { type: "array", items: ref("IndividualResult") },
            },
          }, 'Workbook with "Results" and "Summary" sheets'),
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/datasets/{id}/grid",
    operationId: "getDatasetGrid",
    summary: "A page of the dataset grid: rows of one level with their latest result per metric",
    description:
      "Rows in grid order (conversation position, then message position, then step position): conversations, " +
      "assistant messages (message-level metrics evaluate those) or every step. `conversation_id` keeps one " +
      "conversation's rows (expanding a grid row). `cells` holds, for each metric of that level, the latest result of " +
      "that (metric, entity) across all executions. `label`: a conversation's name or `Conversation <position+1>`; the " +
      "first ~80 characters of a message on one line, or `(no content)`; what a step does (`tool_call <name>`, " +
      "`tool_result`, `output`, `thinking`). `role` is the message's role (for a step, its message's). A page costs the " +
      "same few queries at any size. `meta`, `filter` and `sort` add conversation meta fields as `meta` on each row, keep " +
      "the rows matching every condition (meta fields, a metric's latest verdict or score) and order them; `X-Total-Count` " +
      "then counts the matching rows — estimated on a large dataset, as `X-Total-Count-Kind` says. A page reads what it shows, not the " +
      "dataset: totals without a filter are kept as rows are written; a filter or sort on a meta field of a dataset of 10,000 " +
      "conversations or more starts building an index on that field (within the dataset, in the background: the first reads scan as " +
      "before), after which an equality reads its matches in grid order and a sort reads its first rows; `cursor` (the page's " +
      "`X-Next-Cursor`) pages the conversation level on from a page's last row where a deep `offset` would skip rows one by one. " +
      "Each (metric, entity)'s latest result is also kept as results are written: on the conversation level a `pass`, `fail` or " +
      "`failed` filter reads its matches in grid order and a metric sort its first rows from an index; `none` and `!=` verdicts " +
      "test each row in grid order (cheap per row; a page of a rare `none` reads rows up to its matches).",
    tag: "Datasets",
    params: idParams,
    query: gridQuery,
    responses: {
      200: { description: "A page of rows", schema: gridRowSchema, array: true, headers: gridPageHeaders },
      400: badRequest,
      422: {
        description:
          "`sort`/`filter` name a metric of another dataset or level, or compare it with what it cannot hold; `cursor` is not one this API gave, or is sent with `offset`, `sort` or another level than conversation",
        schema: unprocessableResponse.schema,
      },
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/datasets/{id}/export",
    operationId: "exportDatasetGrid",
    summary: "Download the grid's state (CSV, JSON, XLSX) or the dataset's conversations as ATIF or OpenAI chat JSON Lines",
    description:
      'An attachment named `dataset-<id>-grid.<csv|json|xlsx>`, streamed. One row per cell: every metric × every grid row ' +
      "of its level (conversations, assistant messages, steps), in grid order and column order, with that cell's latest " +
      "result across all executions — the same verdicts `GET /datasets/{id}/grid` shows; a cell never evaluated has a null " +
      `\`status\` (empty in CSV). Columns: ${gridExportColumns}, then \`meta.<key>\` for every top-level key of the ` +
      "dataset's conversation meta (null where a conversation lacks it), then the cell's latest human label " +
      "(`label_value`, `label_note`, `label_user`, `labelled_at`) and the metric's reference (`reference`: where it " +
      "reads from, e.g. `conversation.meta.reward >= 1` or `labels`; `reference_value`: what it says for the cell). Naming: " +
      "`label` is the row's name as the grid shows it (a conversation's name, a message's first words, a step's kind), as in " +
      "`GET /datasets/{id}/grid`, never a human label; a human label is always `label_value` with `label_user` its author (the newest " +
      "current label of anyone). `value` is the verdict's value for checkbox, number and text metrics, `result` the whole " +
      "verdict. In CSV and XLSX, objects and arrays are JSON text, and a text cell starting with `=`, `+`, `-`, `@`, a " +
      "tab or a carriage return is prefixed with `'` so spreadsheets do not run it as a formula (numbers stay numbers). " +
      'The XLSX has one "Grid" sheet with typed cells, a frozen, filterable header. JSON is `{dataset_id, columns, ' +
      "metrics, rows}` with rows keyed by column and JSON values kept as they are. " +
      "`format=atif` and `format=openai_jsonl` export the conversations themselves instead, in grid order, as JSON Lines " +
      "(`application/x-ndjson`, one conversation a line, `dataset-<id>[-filtered].<atif|openai>.jsonl`), all of them or those a " +
      "`filter` keeps (the grid's filter language at the conversation level; with csv, json or xlsx a filter is refused with 422). " +
      "`atif`: each line an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, written as ATIF-v1.6), as " +
      "`GET /conversations/{id}/export` writes one; importing the file gives the same conversations back. `openai_jsonl`: each line " +
      "`{messages, tools?, metadata?, name?}` in OpenAI's chat format, for fine-tuning or another evaluator: an assistant turn is one " +
      "assistant message per model call (`content`, `reasoning_content` when it reasoned, `tool_calls` with arguments as JSON text), " +
      "each followed by `tool` messages holding its results, paired with the calls in order by `tool_call_id`; `tools` are the " +
      "conversation's agents' tools as function definitions; `metadata` is the conversation's meta, kept apart from the messages; " +
      "`name` its name. Importing the file gives the same messages, steps, meta and name back (a step that holds a call and its " +
      "result at once comes back as two steps).",
    tag: "Datasets",
    params: idParams,
    query: datasetExportQuery,
    responses: {
      200: exportFileResponse('dataset-<id>-grid.<format>', {
            type: "object",
            required: ["dataset_id", "columns", "metrics", "rows"],
            properties: {
              dataset_id: { type: "integer" },
              columns: { type: "array", items: { type: "string" }, description: "Every row's keys, in order" },
              metrics: {
                type: "array",
                items: {
                  type: "object",
                  required: ["id", "name", "output_type", "evaluation_level"],
                  properties: {
                    id: { type: "integer" },
                    name: { type: "string" },
                    output_type: { type: "string" },
                    evaluation_level: { type: "string", enum: ["conversation", "message", "step"] },
                  },
                },
              },
              rows: { type: "array", items: { type: "object", additionalProperties: true } },
            },
          }, 'Workbook with one "Grid" sheet', {
            "application/x-ndjson": {
              type: "string",
              description: "`atif`, `openai_jsonl`: JSON Lines, one conversation a line (an ATIF trajectory, or `{messages, tools?, metadata?, name?}`)",
            },
          }),
      400: badRequest,
      404: notFoundResponse,
      422: { description: "`filter` names a metric of another dataset or level, or is sent with csv, json or xlsx", schema: unprocessableResponse.schema },
    },
  },
];
