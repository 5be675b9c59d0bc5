import { idParams } from "@/lib/schemas/common";
import { conversationExportQuery } from "@/lib/schemas/executions";
import {
  conversationSchema,
  conversationSummarySchema,
  createDatasetBody,
  datasetSchema,
  listConversationsQuery,
  listDatasetsQuery,
  updateDatasetBody,
} from "@/lib/schemas/datasets";
import { badRequest, nextCursorHeader, notFoundResponse, totalCountHeader } from "./shared";
import type { Operation } from "./types";

const tag = "Datasets";

export const datasetOperations: Operation[] = [
  {
    method: "post",
    path: "/datasets",
    operationId: "createDataset",
    summary: "Create a dataset",
    description: "`user_id` defaults to the caller (`X-User-Id`, else `default`). Unknown body fields are ignored.",
    tag,
    body: createDatasetBody,
    responses: { 201: { description: "The new dataset", schema: datasetSchema }, 400: badRequest },
  },
  {
    method: "get",
    path: "/datasets",
    operationId: "listDatasets",
    summary: "List datasets, newest first",
    tag,
    query: listDatasetsQuery,
    responses: {
      200: { description: "A page of datasets", schema: datasetSchema, array: true, headers: totalCountHeader },
      400: badRequest,
    },
  },
  {
    method: "get",
    path: "/datasets/{id}",
    operationId: "getDataset",
    summary: "Get a dataset with its counts",
    tag,
    params: idParams,
    responses: { 200: { description: "The dataset", schema: datasetSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "patch",
    path: "/datasets/{id}",
    operationId: "updateDataset",
    summary: "Rename or describe a dataset",
    description: "Send `description: null` to clear the description.",
    tag,
    params: idParams,
    body: updateDatasetBody,
    responses: { 200: { description: "The updated dataset", schema: datasetSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "delete",
    path: "/datasets/{id}",
    operationId: "deleteDataset",
    summary: "Delete a dataset and everything in it",
    description:
      "Removes its conversations, messages, steps, metrics, executions and results. Runs of the dataset still going on are cancelled first (their `/events` streams end with `done`, status `cancelled`), then the dataset is deleted.",
    tag,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/datasets/{id}/conversations",
    operationId: "listConversations",
    summary: "List a dataset's conversations in import order",
    tag: "Conversations",
    params: idParams,
    query: listConversationsQuery,
    responses: {
      200: {
        description: "A page of conversations",
        schema: conversationSummarySchema,
        array: true,
        headers: { ...totalCountHeader, ...nextCursorHeader },
      },
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/conversations/{id}",
    operationId: "getConversation",
    summary: "Get one conversation with its messages and their steps",
    tag: "Conversations",
    params: idParams,
    responses: {
      200: { description: "The conversation", schema: conversationSchema },
      400: badRequest,
      404: notFoundResponse,
    },
  },
  {
    method: "get",
    path: "/conversations/{id}/export",
    operationId: "exportConversation",
    summary: "Download one conversation as an ATIF trajectory",
    description:
      "An attachment named `conversation-<id>.atif.json`: the conversation as an ATIF trajectory (Harbor's Agent Trajectory " +
      "Interchange Format, written as ATIF-v1.6). System and user messages are `system`/`user` steps; an assistant message is one " +
      "`agent` step per model call (as the import recorded them in `turn_messages`, else where a new call starts), each with its " +
      "`reasoning_content`, `message`, `tool_calls` and, as `observation.results`, the results that follow them, paired with the " +
      "calls in order by `source_call_id`; a call's timestamp, model and `metrics` come from the message's meta. The conversation's " +
      "meta gives `session_id`, `agent` (else the first agent's name and the usual step model; `version` `unknown` when none is " +
      "known), `notes`, `final_metrics` and `extra`; the agents' tools become `agent.tool_definitions`. What ATIF has no field for " +
      "rides under `extra.turnscope` (the name, description, goal, ids and other meta at the root; a message's other meta, a tool " +
      "message's role, steps ATIF cannot say on a step), so importing the file gives the same conversation back. " +
      "`GET /datasets/{id}/export?format=atif` writes a dataset as JSON Lines of these.",
    tag: "Conversations",
    params: idParams,
    query: conversationExportQuery,
    responses: {
      200: {
        description: "The trajectory (`Content-Disposition: attachment`)",
        headers: { "Content-Disposition": { description: 'attachment; filename="conversation-<id>.atif.json"', schema: { type: "string" } } },
        content: {
          "application/json": {
            type: "object",
            required: ["schema_version", "session_id", "agent", "steps"],
            properties: {
              schema_version: { type: "string", const: "ATIF-v1.6" },
              session_id: { type: "string" },
              agent: { type: "object", required: ["name", "version"], additionalProperties: true },
              steps: {
                type: "array",
                items: {
                  type: "object",
                  required: ["step_id", "source", "message"],
                  properties: { step_id: { type: "integer" }, source: { type: "string", enum: ["system", "user", "agent"] }, message: { type: "string" } },
                  additionalProperties: true,
                },
              },
              notes: { type: "string" },
              final_metrics: { type: "object", additionalProperties: true },
              extra: { type: "object", additionalProperties: true },
            },
          },
        },
      },
      400: badRequest,
      404: notFoundResponse,
    },
  },
];
