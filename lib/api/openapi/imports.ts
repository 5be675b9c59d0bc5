import { idParams } from "@/lib/schemas/common";
import {
  createAndImportBodyDoc,
  importFailureSchema,
  importIntoDatasetBodyDoc,
  importSuccessSchema,
} from "@/lib/schemas/imports";
import { notFoundResponse } from "./shared";
import type { Operation, ResponseSpec } from "./types";

const tag = "Import";

const formats =
  "Accepted formats, detected from the content (the response's `format` says which): " +
  "`turnscope` (`{\"conversations\": [{\"messages\": [{\"role\", \"content\", \"steps\"?}]}]}`, or one conversation object); " +
  "`openai_chat` (a chat-completions message list, a list of them, a request body with `messages` and `tools`, or `{messages}` objects: " +
  "assistant `tool_calls` become `tool_call` steps and `role: tool` messages become `tool_result` steps of the same assistant turn); " +
  "`jsonl` (JSON Lines, one conversation per line, in either shape). UTF-8 only (a UTF-8 BOM is allowed).";

const stages =
  "Validation runs in stages, each stopping the next on error: size and encoding (413, 415 for gzip/ZIP/binary or non-UTF-8), " +
  "JSON syntax (400, `Invalid JSON: … at line L, column C`), structure (`conversations`, each `messages`, each `role`; 422), " +
  "then types and values (roles, the step rule, tool call shapes, `meta` objects; 422). Up to 200 errors per stage, then one saying how many more. " +
  "Warnings (the file still imports): messages without content; tool calls not declared by the conversation's agents, or with arguments " +
  "whose types differ from the declared parameters (checked only when the conversation declares agents); files over 10 MB. " +
  "Paths point into the uploaded file: for JSON Lines they are within the line and the issue's `line` names it; for OpenAI " +
  "messages they name the file's message (an issue inside a converted tool step points at the assistant message starting that turn). " +
  "A failed import writes nothing. With `get_feedback` (default true) a failure also carries `llm_feedback`, from the judge model when " +
  "one is configured (8 s limit, no retries) and from deterministic rules otherwise or when the model fails (`generated_by: \"rules\"`). " +
  "Conversations are appended after the dataset's existing ones: `position` continues from the current maximum.";

const refused = (description: string): ResponseSpec => ({ description, schema: importFailureSchema });

const failures = {
  400: refused(
    "JSON syntax error, in the import shape. A bad form (not multipart, no `file` field, a text field failing its schema) " +
      "is also a 400 but in the generic error shape `{error: {code: \"bad_request\", message, details}}`.",
  ),
  413: refused("File over `MAX_IMPORT_BYTES` (default 50 MB)"),
  415: refused("Compressed or binary file, or not UTF-8"),
  422: refused("Structure, types or values invalid"),
};

export const importOperations: Operation[] = [
  {
    method: "post",
    path: "/datasets/{id}/import",
    operationId: "importIntoDataset",
    summary: "Import conversations into an existing dataset",
    description: `${formats}\n\n${stages}\n\nAn unknown dataset is a 404 (generic shape), answered before the upload is read.`,
    tag,
    params: idParams,
    body: importIntoDatasetBodyDoc,
    bodyContentType: "multipart/form-data",
    responses: { 200: { description: "Imported", schema: importSuccessSchema }, ...failures, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/datasets/import",
    operationId: "createDatasetAndImport",
    summary: "Create a dataset and import conversations into it, in one transaction",
    description:
      `${formats}\n\n${stages}\n\nThe dataset is created inside the import's transaction: when the file is refused, no dataset exists. ` +
      "`user_id` defaults to the caller (`X-User-Id`, else `default`). A bad `name` is a 400 in the generic error shape.",
    tag,
    body: createAndImportBodyDoc,
    bodyContentType: "multipart/form-data",
    responses: { 201: { description: "Created and imported; `dataset` is the new dataset", schema: importSuccessSchema }, ...failures },
  },
];
