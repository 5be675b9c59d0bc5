import { errorSchema, idParams } from "@/lib/schemas/common";
import {
  createAndImportBodyDoc,
  createSavedMappingBody,
  importFailureSchema,
  importHeadersDoc,
  importIntoDatasetBodyDoc,
  importSuccessSchema,
  mappingPreviewBodyDoc,
  mappingPreviewSchema,
  savedMappingSchema,
} from "@/lib/schemas/imports";
import { badRequest, notFoundResponse } from "./shared";
import type { Operation, ResponseSpec } from "./types";

const tag = "Import";

const formats =
  "Accepted formats, detected from the content, never the file name (the response's `format` names the adapter that matched, and is " +
  "absent from a failure when none did): " +
  "`turnscope` (`{\"conversations\": [{\"messages\": [{\"role\", \"content\", \"steps\"?}]}]}`, or one conversation object); " +
  "`openai_chat` (message lists with `content` a string or an array of parts — text, image/audio as a placeholder, refusal — `tool_calls`, " +
  "legacy `function_call` and `role: function`, `tool` messages; request bodies with `messages` and `tools`, the tools becoming the " +
  "conversation's agent): assistant tool calls become `tool_call` steps and tool replies `tool_result` steps of the same assistant turn; " +
  "`sharegpt` (ShareGPT / LLaMA-Factory `conversations: [{from, value}]`, `function_call`/`observation` turns, `tools` as JSON text); " +
  "`anthropic_messages` (top-level `system`, content blocks `text`, `thinking`, `tool_use`, `tool_result`); " +
  "`content_parts` (content parts holding their text in `value`/`content`, part types `reasoning`/`thinking`, `tool_call`/`tool_use`, `tool_result`); " +
  "`records` (records holding a conversation under `messages`, `traj`, `trajectory`, `conversation`, `dialog`, `chat`, `history`, …: " +
  "the record's other fields become the conversation's `meta`); `csv` (a header naming `role` and `content`/`text`, one row per message, " +
  "`conversation_id` grouping rows, other columns → meta); `jsonl` (JSON Lines, one record per line, in any of these shapes); " +
  "`coding_agent_session` (Claude Code session JSONL: one conversation per session, streamed replies merged by `message.id`, progress/snapshot/system records skipped and counted, compaction summary marked); " +
  "`message_tree` (Open Assistant trees: one conversation per root-to-leaf path, `rank`/votes/reviews/`parent_id` in message meta, `message_tree_id` in conversation meta); " +
  "`swe_agent_trajectory` (SWE-agent `.traj`, `history` + `trajectory`: imported once); `agent_events` (OpenHands event streams and evaluation output, one run per line with its `history`: actions → tool calls, caused observations → results, outcome in meta); " +
  "`eval_log` (Inspect AI logs, JSON or `.eval` ZIP archives with `attachment://` bodies resolved: one conversation per sample, `input`/`target`/`scores` in meta, the final submit call kept); " +
  "`codex_rollout` (Codex CLI `rollout-*.jsonl`: response items read once, their `event_msg` copies skipped and counted, calls paired with outputs by `call_id`, context around the prompt a system message); " +
  "`tau2_results` (tau2-bench `simulations[]` + `tasks[]`: one conversation per simulation, the policy its system message, `raw_data` read only for reasoning, reward and task in meta); " +
  "`smolagents_run` (smolagents run outputs: `intermediate_steps` with tool-call / tool-response roles, calls read from their Python repr, a failed call from its error text, answer and `true_answer` in meta); " +
  "`smolagents_memory` (smolagents memory steps as `agent.memory.get_full_steps()` returns them: a list of task, planning, action and final-answer steps, a record holding it under `steps` or `logs` with `system_prompt`, steps perhaps with their `__class__`, or JSON Lines of one step per line; an action step's output is thinking, its `tool_calls` steps with the observations or error as the result, a final step's output the answer; the per-step `model_input_messages` copies are listed in not_imported); " +
  "`langsmith_runs` (LangSmith runs: a run tree with `child_runs`, a list of runs naming `parent_run_id` (bare or under `runs`), or JSON Lines of one run per line; one conversation per trace, read from the root run's `outputs.messages`, else the last `llm` run's messages and answer, else the root's inputs and outputs; LangChain serialised, dict and OpenAI messages; the trace's runs in meta); " +
  "`aider_history` (Aider's `.aider.chat.history.md`, Markdown: one conversation per session, `####` prompts once, confirmation answers not prompts, `>` output in meta, `<thinking-content-…>` as thinking); " +
  "`ai_sdk_ui_messages` (the AI SDK's `UIMessage[]`, or records holding them under `messages`: parts `text`, `reasoning`, `tool-<name>` / `dynamic-tool` as a call and its `output` or `errorText`, sources and files as placeholders, `data-*` parts and `metadata` in meta; AI SDK 4 `tool-invocation` parts; plain `{role, content}` messages among them; JSON Lines of one UI message per line as one conversation); " +
  "`openai_responses` (OpenAI Responses items, a list or a response object's `input`/`output`: `message`, `reasoning` summaries, `function_call` / `custom_tool_call` and their outputs paired by `call_id`, built-in `*_call` items, `instructions` as the system message); " +
  "`gemini_contents` (Gemini `contents` with `role: model`, parts `text` (`thought: true` → thinking), `functionCall`, `functionResponse`, `executableCode` / `codeExecutionResult`, `systemInstruction`); " +
  "`atif` (ATIF trajectories, Harbor's Agent Trajectory Interchange Format v1.0–v1.7: a file of one, a list, or JSON Lines of one per line; one conversation per trajectory, the agent steps between two user or system steps one assistant turn whose steps are each agent step's `reasoning_content`, `message`, `tool_calls` and `observation` results in the order of the calls they answer (`source_call_id`); each agent step's timestamp, model and `metrics` in the turn's meta (`turn_messages`), the `agent`, `session_id`, `notes`, `final_metrics` and `extra` in the conversation's meta, `agent.tool_definitions` as the conversation's agent's tools; what Turnscope's own ATIF export kept under `extra.turnscope` read back into place); `joined_files` (several `file` parts joined on `join_key`, roles from each file). " +
  "A file no adapter reads is refused with a `suggested_mapping` the structural reader inferred from its shape (role-like and content-like fields at any depth, tool calls, results paired by `tool_call_id`, JSON Lines grouped by `group_by`), checked to import it. " +
  "Every success carries `records`, saying why the stored counts differ from the file's records. " +
  "UTF-8 only (a UTF-8 BOM is allowed). Nothing is silently lost: text found in the file's messages that no stored field holds is " +
  "listed in `not_imported` per field path, so is a value stored in another written form than the file's, with a `reason` " +
  "(`re-serialised: 25.00 stored as 25`; an integer-like key moved first; a key written twice), and a message that would be stored empty although the file has text in it refuses the import (422).";

const stages =
  "Validation runs in stages, each stopping the next on error: size and encoding (413, 415 for gzip, a ZIP archive that is no Inspect AI `.eval` log, other binary files or non-UTF-8; a `.eval` archive is read as the eval log it holds), " +
  "JSON syntax (400, `Invalid JSON: … at line L, column C`), structure (`conversations`, each `messages`, each `role`; 422), " +
  "then types and values (roles, the step rule, tool call shapes, `meta` objects; 422). Identical faults are grouped into one issue with `count` and the index ranges; up to 200 distinct faults per stage, then one issue saying how many more. " +
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
  422: {
    description:
      "Structure, types or values invalid (import shape), or text in the file that would be stored as empty messages. " +
      "Also an `Idempotency-Key` already used with a different file or form fields (generic error shape, code `unprocessable`).",
    content: {
      "application/json": { oneOf: [{ $ref: "#/components/schemas/ImportFailure" }, { $ref: "#/components/schemas/Error" }] },
    },
  },
};

const replayed = {
  "Idempotent-Replayed": { description: "`true` when this is the stored first outcome of a request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } },
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
    headers: importHeadersDoc,
    body: importIntoDatasetBodyDoc,
    bodyContentType: "multipart/form-data",
    responses: {
      200: { description: "Imported", schema: importSuccessSchema, headers: replayed },
      ...failures,
      404: { description: "Unknown dataset, or `mapping_id` names no saved mapping of the caller", schema: errorSchema },
    },
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
    headers: importHeadersDoc,
    body: createAndImportBodyDoc,
    bodyContentType: "multipart/form-data",
    responses: {
      201: { description: "Created and imported; `dataset` is the new dataset", schema: importSuccessSchema, headers: replayed },
      ...failures,
      404: { description: "`mapping_id` names no saved mapping of the caller", schema: errorSchema },
    },
  },
  {
    method: "post",
    path: "/import-mappings",
    operationId: "saveImportMapping",
    summary: "Save an import mapping under a name",
    description:
      "Kept for the caller (`X-User-Id`, else `default`) to read the next file of the same shape: send its id as the `mapping_id` " +
      "form field of an import. A name is unique per caller: saving the same name again replaces its mapping (200) instead of creating one (201).",
    tag,
    body: createSavedMappingBody,
    responses: {
      201: { description: "Saved under a new name", schema: savedMappingSchema },
      200: { description: "The caller's mapping of that name, replaced", schema: savedMappingSchema },
      400: badRequest,
      413: { description: "Body over 64 KB (the import form's limit for a mapping)", schema: errorSchema },
    },
  },
  {
    method: "post",
    path: "/import-mappings/preview",
    operationId: "previewImportMapping",
    summary: "Try a mapping on a file without importing it",
    description:
      "The mapping (`mapping` JSON, version 1 or 2, or a saved `mapping_id`) is applied to the whole file as an import would apply it, on the input " +
      "pool, and nothing is written: 200 with `ok`, the counts, the first conversation as it would be stored (texts cut at 2,000 characters), " +
      "the mapping's score on a sample (text kept, calls paired, turns plausible) and what of the file's text it leaves out; or `ok: false` with " +
      "why it would not import. What the import page's mapping editor shows as a mapping is edited. A form without a mapping, or a mapping that " +
      "is not one, is a 400; a file over MAX_IMPORT_BYTES a 413.",
    tag,
    body: mappingPreviewBodyDoc,
    bodyContentType: "multipart/form-data",
    responses: {
      200: { description: "The preview", schema: mappingPreviewSchema },
      400: badRequest,
      404: { description: "`mapping_id` names no saved mapping of the caller", schema: errorSchema },
      413: { description: "The file is over MAX_IMPORT_BYTES", schema: errorSchema },
    },
  },
  {
    method: "get",
    path: "/import-mappings",
    operationId: "listImportMappings",
    summary: "List the caller's saved import mappings",
    description: "Only the caller's own, by name.",
    tag,
    responses: { 200: { description: "Saved mappings", schema: savedMappingSchema, array: true } },
  },
  {
    method: "delete",
    path: "/import-mappings/{id}",
    operationId: "deleteImportMapping",
    summary: "Delete one of the caller's saved import mappings",
    description: "Another user's mapping is a 404, as if it did not exist.",
    tag,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 404: notFoundResponse },
  },
];
