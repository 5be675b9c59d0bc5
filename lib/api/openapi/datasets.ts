import { idParams } from "@/lib/schemas/common";
import {
  conversationSchema,
  conversationSummarySchema,
  createDatasetBody,
  datasetSchema,
  listConversationsQuery,
  listDatasetsQuery,
  updateDatasetBody,
} from "@/lib/schemas/datasets";
import { badRequest, notFoundResponse, totalCountHeader } from "./shared";
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
        headers: totalCountHeader,
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
];
