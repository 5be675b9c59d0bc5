import { idParams } from "@/lib/schemas/common";
import {
  createMetricBody,
  createTemplateBody,
  judgePromptPreviewSchema,
  listMetricsQuery,
  listTemplatesQuery,
  metricSchema,
  metricTemplateSchema,
  previewBody,
  updateMetricBody,
  updateTemplateBody,
} from "@/lib/schemas/metrics";
import { badRequest, forbiddenResponse, notFoundResponse, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const variablesNote =
  "`is_advanced` and `template_variables` are derived from the prompt by the server (input values are ignored). " +
  "Variables are `@NAMES` in upper case; e-mail addresses and lower-case words are not variables. " +
  "A variable not valid at the level is a 422 whose message lists the valid ones. " +
  "`output_schema` (a JSON Schema with `type: object`) is required for `output_type: json` and stored as null for other types.";

const templates = "Metric templates";
const metrics = "Metrics";

export const metricOperations: Operation[] = [
  {
    method: "get",
    path: "/metric-templates",
    operationId: "listMetricTemplates",
    summary: "List system templates and the caller's own",
    description: "System templates first, then the caller's (`X-User-Id`, else `default`), each in creation order. Not paged.",
    tag: templates,
    query: listTemplatesQuery,
    responses: { 200: { description: "Templates", schema: metricTemplateSchema, array: true }, 400: badRequest },
  },
  {
    method: "post",
    path: "/metric-templates",
    operationId: "createMetricTemplate",
    summary: "Create a template owned by the caller",
    description: `\`is_system\` is false and \`user_id\` is the caller. ${variablesNote}`,
    tag: templates,
    body: createTemplateBody,
    responses: {
      201: { description: "The new template", schema: metricTemplateSchema },
      400: badRequest,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/metric-templates/{id}",
    operationId: "getMetricTemplate",
    summary: "Get a template",
    description: "System templates and the caller's own; another user's template is invisible (404) and cannot be copied into a metric.",
    tag: templates,
    params: idParams,
    responses: { 200: { description: "The template", schema: metricTemplateSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "patch",
    path: "/metric-templates/{id}",
    operationId: "updateMetricTemplate",
    summary: "Change one of the caller's templates",
    description: `Metrics created from the template earlier keep their copy. 403 for system templates and other users' templates. ${variablesNote}`,
    tag: templates,
    params: idParams,
    body: updateTemplateBody,
    responses: {
      200: { description: "The updated template", schema: metricTemplateSchema },
      400: badRequest,
      403: forbiddenResponse,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "delete",
    path: "/metric-templates/{id}",
    operationId: "deleteMetricTemplate",
    summary: "Delete one of the caller's templates",
    description: "Permanent. Metrics created from it keep working; their `template_id` becomes null. 403 for system templates and other users' templates.",
    tag: templates,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 403: forbiddenResponse, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/evaluation-pipeline-nodes",
    operationId: "createMetric",
    summary: "Add a metric to a dataset",
    description:
      "With `template_id`, the template's fields are copied (later template edits do not change the metric) and fields in the body override the copy; " +
      "without it, `name`, `evaluation_level`, `prompt` and `output_type` are required. The metric is appended as the last column; " +
      `the dataset's evaluation pipeline is created with its first metric. 404 for an unknown dataset or template. ${variablesNote}`,
    tag: metrics,
    body: createMetricBody,
    responses: {
      201: { description: "The new metric", schema: metricSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-nodes",
    operationId: "listMetrics",
    summary: "List a dataset's metrics in column order",
    description: "Not paged: a dataset has few metrics.",
    tag: metrics,
    query: listMetricsQuery,
    responses: { 200: { description: "Metrics", schema: metricSchema, array: true }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/evaluation-pipeline-nodes/{id}",
    operationId: "getMetric",
    summary: "Get a metric",
    tag: metrics,
    params: idParams,
    responses: { 200: { description: "The metric", schema: metricSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "patch",
    path: "/evaluation-pipeline-nodes/{id}",
    operationId: "updateMetric",
    summary: "Change a metric, or move its column",
    description:
      "The prompt is re-checked against the (possibly new) level and its variables re-derived. Results already computed are kept. " +
      `\`position\` moves the metric to that 0-based column (clamped to the last) and renumbers the others. ${variablesNote}`,
    tag: metrics,
    params: idParams,
    body: updateMetricBody,
    responses: {
      200: { description: "The updated metric", schema: metricSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "delete",
    path: "/evaluation-pipeline-nodes/{id}",
    operationId: "deleteMetric",
    summary: "Delete a metric and its results",
    description: "The columns after it move one to the left. Executions that ran it are kept with `pipeline_node_id` null.",
    tag: metrics,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/evaluation-pipeline-nodes/preview",
    operationId: "previewJudgePrompt",
    summary: "Show the exact judge prompt for a real entity, without calling the judge",
    description:
      "Give either `pipeline_node_id` (a saved metric) or `prompt` with `evaluation_level` (and optionally `output_type`, default progress, " +
      "and `output_schema`, which decide the output format in the system message). `entity_type` defaults to the metric's level and must equal it " +
      "(422 otherwise); `entity_id` is a conversation, message or step id (404 if unknown; 422 if outside a saved metric's dataset). " +
      "Conversation text is fenced in `<conversation_data name=\"…\">` blocks; values absent at the entity are written `(none)` and listed in `missing`. " +
      "A prompt without variables gets the level's default context appended.",
    tag: metrics,
    body: previewBody,
    responses: {
      200: { description: "The system message and prompt the judge would receive", schema: judgePromptPreviewSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
];
