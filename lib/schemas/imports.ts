/** Wire schemas of the import endpoints (shared/API.md, "Import"). */
import { z } from "zod";
import { idText } from "./common";
import { datasetSchema } from "./datasets";
import { importMappingV2Object, importMappingV2Schema, type ImportMappingV2 } from "./import-mapping";

export const importFormats = [
  "turnscope",
  "openai_chat",
  "jsonl",
  "sharegpt",
  "anthropic_messages",
  "content_parts",
  "records",
  "csv",
  "coding_agent_session",
  "message_tree",
  "swe_agent_trajectory",
  "agent_events",
  "eval_log",
  "codex_rollout",
  "tau2_results",
  "smolagents_run",
  "smolagents_memory",
  "langsmith_runs",
  "aider_history",
  "ai_sdk_ui_messages",
  "openai_responses",
  "gemini_contents",
  "atif",
  "joined_files",
  "mapping",
] as const;
export type ImportFormat = (typeof importFormats)[number];

export const importIssueSchema = z
  .object({
    path: z.string().describe("Where in the file, e.g. `conversations[0].messages[2].role`; `(file)` for the whole file"),
    message: z.string(),
    suggestion: z.string().describe("What to change to fix it"),
    line: z.number().int().optional().describe("1-based line in the file, when known (JSON syntax, JSON Lines)"),
    column: z.number().int().optional().describe("1-based column in the file, when known (JSON syntax)"),
    count: z
      .number()
      .int()
      .optional()
      .describe("How many places have this same fault, when it is more than one; `path` then names them as index ranges (`conversations[0..79]`)"),
  })
  .meta({ id: "ImportIssue" });

export const suggestedTransformationSchema = z
  .object({
    from: z.string().describe("Field path in the uploaded file, `[]` for every element: `conversations[].messages[].speaker`"),
    to: z.string().describe("Field path it should become"),
    mapping: z.record(z.string(), z.string()).describe("Values to replace on the way, e.g. `{\"bot\": \"assistant\"}`"),
  })
  .meta({ id: "SuggestedTransformation" });

export const notImportedSchema = z
  .object({
    path: z.string().describe("Field path in the file, `[]` for every element: `messages[].content[].value`"),
    characters: z.number().int().describe("Characters of text found there and not stored (for a re-serialised value: the characters of its form in the file)"),
    reason: z
      .string()
      .optional()
      .describe(
        "Why it is listed when the text is stored but not byte for byte: `re-serialised: 25.00 stored as 25` (a number written in another form, an integer-like key moved first, a duplicate key's first value dropped), or when it is a copy of text stored from elsewhere in the file (smolagents' `model_input_messages`). Absent for text not stored at all",
      ),
  })
  .meta({ id: "NotImported" });

export const importRecordsSchema = z
  .object({
    in_file: z.number().int().describe("Records in the file as the adapter reads them: messages, events, lines, tree nodes or samples"),
    skipped: z
      .record(z.string(), z.number().int())
      .describe("Records read and deliberately not stored, per kind (e.g. `progress` lines of a coding-agent session log)"),
    explanation: z
      .string()
      .describe("Why the stored counts differ from the file's, e.g. `5,308 records → 3,031 messages + 2,277 steps: tool results and tool-call-only turns became steps`"),
  })
  .meta({ id: "ImportRecords" });

/** Where the conversations are in a file no adapter recognises, and which fields are what. */
// Unregistered, so request bodies can inline it (OpenAPI inlines inputs); the registered copy is below.
const importMappingObject = z
  .object({
    conversations: z
      .string()
      .max(200)
      .optional()
      .describe("Path of the list of conversation records: `\"\"` or absent for the top level (an array, or JSON Lines), `data`, `results.items`"),
    messages: z.string().min(1).max(200).describe("Field of a record holding its message list, e.g. `turns`"),
    role: z.string().min(1).max(200).describe("Field of a message holding its role, e.g. `speaker`"),
    content: z.string().min(1).max(200).describe("Field of a message holding its text, e.g. `text`"),
    roles: z
      .record(z.string(), z.string())
      .optional()
      .describe("Role values in the file → Turnscope roles (`user`, `assistant`, `system`, `tool`), e.g. `{\"bot\": \"assistant\"}`"),
    thinking: z.string().max(200).optional().describe("Message field whose text becomes a thinking step"),
    tool_calls: z.string().max(200).optional().describe("Message field holding a tool call or a list of them (`{name, arguments}`), become tool_call steps"),
    steps: z
      .string()
      .max(200)
      .optional()
      .describe("Message field holding steps already in the Turnscope shape (`thinking`, `tool_call`, `tool_result`, `output_content`), kept as they are"),
    tool_result: z.string().max(200).optional().describe("Message field holding a tool's output, becomes a tool_result step"),
    tool_call_id: z
      .string()
      .max(200)
      .optional()
      .describe("Message field naming the call a tool message answers (`tool_call_id`): set, each tool message (and a message of only tool results) becomes a tool_result step of the assistant message holding that call"),
    group_by: z
      .string()
      .max(200)
      .optional()
      .describe("Records that are single messages (JSON Lines of one message each): the record field shared by the messages of one conversation, e.g. `session_id` (`\"\"`: all records are one conversation); `messages` is then the record field holding the message, `.` for the record itself"),
    name: z.string().max(200).optional().describe("Record field used as the conversation's name"),
    meta: z
      .array(z.string().max(200))
      .max(200)
      .optional()
      .describe("Record fields copied into the conversation's meta; absent: every field except the messages and the name"),
    message_meta: z.array(z.string().max(200)).max(200).optional().describe("Message fields copied into the message's meta"),
  });
export const importMappingSchema = importMappingObject.meta({
  id: "ImportMapping",
  description: "Version 1 of the mapping language: flat field names (no `version`). Version 2 (`ImportMappingV2`, `\"version\": 2`) says trees, span trees, transcripts, pairs, kinds of records and containers",
});

/** Either version of the mapping language: `"version": 2` picks the second (ImportMappingV2), anything else is read as version 1. */
export const anyImportMappingSchema = z.union([importMappingSchema, importMappingV2Schema]).meta({ id: "AnyImportMapping" });
const anyImportMappingObject = z.union([importMappingObject, importMappingV2Object]);
export type AnyImportMapping = ImportMapping | ImportMappingV2;

/** A mapping document of either version, read with the errors of the version it names (`path: message` of the first). */
export function parseAnyMapping(value: unknown): { ok: true; mapping: AnyImportMapping } | { ok: false; message: string } {
  const v2 = typeof value === "object" && value !== null && (value as { version?: unknown }).version !== undefined;
  const parsed = v2 ? importMappingV2Object.safeParse(value) : importMappingObject.safeParse(value);
  if (parsed.success) return { ok: true, mapping: parsed.data };
  const first = parsed.error.issues[0];
  const unknownKeys = first.code === "unrecognized_keys" ? ` (${first.keys.join(", ")})` : "";
  return { ok: false, message: `${first.path.join(".") || "(mapping)"}: ${first.message}${unknownKeys}` };
}

export const llmFeedbackSchema = z
  .object({
    analysis: z.string(),
    suggested_transformation: suggestedTransformationSchema
      .nullable()
      .describe("Null when no mechanical rewrite fixes the file (a JSON syntax error, say)"),
    generated_by: z.string().describe("The judge model's name, or `rules` when no model is configured or it failed"),
    suggested_mapping: anyImportMappingSchema
      .optional()
      .describe(
        "A mapping that imports this file without errors (checked before it is offered; version 1 when that says enough, else version 2); send it as the `mapping` form field",
      ),
    mapping_score: z
      .object({
        text_kept: z.number().describe("Share of the sampled file's text the mapping stores (0–1)"),
        calls_paired: z.number().describe("Share of the stored tool calls with a result (1 when there are none)"),
        turns_plausible: z.number().describe("Share of conversations whose turns are plausible: a dialogue alternates, every message has text or a call"),
        conversations: z.number().int().describe("Conversations the sample gave"),
        messages: z.number().int().describe("Messages the sample gave"),
      })
      .optional()
      .describe("How the structural reader scored the suggested mapping on a sample of the file"),
    mapping_by: z
      .string()
      .optional()
      .describe("Who wrote `suggested_mapping`: `structure` (the structural reader's search) or the judge model's name (it wrote the mapping from the file's skeleton)"),
    mapping_rounds: z.number().int().optional().describe("When the model wrote the mapping: the rounds it took (its failed tries' errors were sent back to it)"),
    usage: z
      .object({
        judge_calls: z.number().int().describe("Calls sent to the judge model for this feedback (one that failed or timed out included)"),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        cost_usd: z.number().nullable().describe("Priced with JUDGE_PRICES; null when the model has no price"),
      })
      .optional()
      .describe(
        "What asking the judge for this feedback cost; present whenever the judge was asked (also when its answer was not used). " +
          "This server process's totals since it started: GET /api/settings/judge, `side_calls.import_feedback`",
      ),
  })
  .meta({ id: "LlmFeedback" });

export const importSuccessSchema = z
  .object({
    success: z.literal(true),
    dataset_id: z.number().int(),
    dataset: datasetSchema.optional().describe("Only on the create-and-import endpoint"),
    format: z.enum(importFormats).describe("The input format that was detected and converted (`mapping` when the `mapping` field was used)"),
    not_imported: z
      .array(notImportedSchema)
      .describe("Text found in the file that no field of the import holds, per field path; empty when every character was placed"),
    conversations_imported: z.number().int(),
    messages_imported: z.number().int(),
    steps_imported: z.number().int(),
    records: importRecordsSchema.describe("How the file's records became the stored conversations, messages and steps"),
    mapping: anyImportMappingSchema
      .optional()
      .describe(
        "Present when no adapter knew the file and the structural reader was sure of its mapping (text kept, calls paired, turns plausible, on enough of the file): the mapping the file was imported with (`format` is then `mapping`); send it again, edit it or save it for the next file",
      ),
    errors: z.array(importIssueSchema).describe("Always empty on success"),
    warnings: z.array(importIssueSchema),
  })
  .meta({ id: "ImportSuccess" });

export const importFailureSchema = z
  .object({
    success: z.literal(false),
    format: z.enum(importFormats).optional().describe("Present only when an adapter really matched the file's shape"),
    errors: z.array(importIssueSchema),
    not_imported: z.array(notImportedSchema).optional().describe("Present once the file was converted: text that would not have been stored"),
    warnings: z.array(importIssueSchema),
    llm_feedback: llmFeedbackSchema.optional().describe("Only when `get_feedback` is true"),
  })
  .meta({ id: "ImportFailure" });

const booleanText = z
  .enum(["true", "false", "1", "0"], { message: "must be true or false" })
  .transform((v) => v === "true" || v === "1");

const fileField = z
  .string()
  .meta({ format: "binary" })
  .describe(
    "The conversations file (JSON or JSON Lines, UTF-8). Send the field several times (up to 10 files, `MAX_IMPORT_BYTES` for all together) " +
      "to import files that belong together, joined on `join_key`",
  );

const joinKeyDoc = z
  .string()
  .max(200)
  .optional()
  .describe(
    "With several `file` parts: the record field the files are joined on, e.g. `question_id` for MT-Bench's `question.jsonl` + " +
      "`model_answer/<model>.jsonl`. One conversation per key value; a turn's role comes from its file: records holding their turns " +
      "under `choices[0].turns` are answers (assistant), `turns` are the user's (when no file has `choices`, the first file is the user's). " +
      "Required with several files; the outcome's `format` is `joined_files`.",
  );
const getFeedbackField = booleanText.optional().default(true).describe("Explain a failed import (default true)");

const mappingText = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text.trim() === "") return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a JSON object (see ImportMapping)" });
      return z.NEVER;
    }
    const parsed = parseAnyMapping(value);
    if (!parsed.ok) {
      ctx.addIssue({ code: "custom", message: parsed.message });
      return z.NEVER;
    }
    return parsed.mapping;
  });

const mappingIdText = idText().optional();

const joinKeyText = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").optional();

const oneMapping = (form: { mapping?: unknown; mapping_id?: number }, ctx: z.RefinementCtx) => {
  if (form.mapping !== undefined && form.mapping_id !== undefined) {
    ctx.addIssue({ code: "custom", path: ["mapping_id"], message: "send either 'mapping' or 'mapping_id', not both" });
  }
};

/** Text fields of `POST /datasets/{id}/import`. */
export const importIntoDatasetForm = z
  .object({ get_feedback: getFeedbackField, mapping: mappingText, mapping_id: mappingIdText, join_key: joinKeyText })
  .superRefine(oneMapping);

/** Text fields of `POST /datasets/import`. */
export const createAndImportForm = z.object({
  name: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
  description: z.string().max(5000, "must be at most 5000 characters").optional(),
  user_id: z.string().trim().min(1).max(200).optional().describe("Owner of the new dataset, honoured only while no credential is configured (otherwise the caller owns it); default the caller"),
  get_feedback: getFeedbackField,
  mapping: mappingText,
  mapping_id: mappingIdText,
  join_key: joinKeyText,
}).superRefine(oneMapping);

const mappingDoc = z
  .string()
  .optional()
  .describe(
    "JSON of a mapping (ImportMapping, version 1, or ImportMappingV2 with `\"version\": 2`: see docs/importing.md): read the file with it instead of detecting the format (the outcome's `format` is then `mapping`). " +
      "A failed import's `llm_feedback.suggested_mapping` is one, checked to import the file.",
  );

const mappingIdDoc = z
  .string()
  .regex(/^\d+$/)
  .optional()
  .describe("Id of one of the caller's saved mappings (`/import-mappings`) to read the file with; 404 if the caller has none with that id. Not together with `mapping`.");

/** The multipart bodies as OpenAPI shows them. */
export const importIntoDatasetBodyDoc = z.object({
  file: fileField,
  get_feedback: z.enum(["true", "false"]).optional(),
  mapping: mappingDoc,
  mapping_id: mappingIdDoc,
  join_key: joinKeyDoc,
});
export const createAndImportBodyDoc = z.object({
  file: fileField,
  name: z.string().max(200),
  description: z.string().max(5000).optional(),
  user_id: z.string().max(200).optional(),
  get_feedback: z.enum(["true", "false"]).optional(),
  mapping: mappingDoc,
  mapping_id: mappingIdDoc,
  join_key: joinKeyDoc,
});

/** The multipart body of `POST /import-mappings/preview`, as documented. */
export const mappingPreviewBodyDoc = z.object({ file: fileField, mapping: mappingDoc, mapping_id: mappingIdDoc });

/** A mapping saved under a name by its user, for the next file of the same shape. */
export const savedMappingSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    mapping: anyImportMappingSchema,
    created_at: z.string(),
    updated_at: z.string().describe("When the mapping was last saved under this name"),
  })
  .meta({ id: "SavedMapping" });

/** Largest `POST /import-mappings` body: the import form's limit for its mapping field. */
export const MAX_SAVED_MAPPING_BYTES = 64 * 1024;

export const createSavedMappingBody = z
  .object({
    name: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").describe("Unique per user: saving a name again replaces its mapping"),
    mapping: anyImportMappingObject,
  })
  .strict();

export type SavedMapping = z.infer<typeof savedMappingSchema>;
export type CreateSavedMappingBody = z.infer<typeof createSavedMappingBody>;
export type ImportMapping = z.infer<typeof importMappingSchema>;
export type NotImported = z.infer<typeof notImportedSchema>;
export type ImportRecords = z.infer<typeof importRecordsSchema>;
export type ImportIssue = z.infer<typeof importIssueSchema>;
export type SuggestedTransformation = z.infer<typeof suggestedTransformationSchema>;
export type LlmFeedback = z.infer<typeof llmFeedbackSchema>;
/** `POST /import-mappings/preview`: a mapping tried on a file, nothing written. */
export const mappingPreviewSchema = z
  .object({
    ok: z.boolean().describe("Whether the file would import with this mapping"),
    conversations: z.number().int().optional(),
    messages: z.number().int().optional(),
    steps: z.number().int().optional(),
    mapping_score: llmFeedbackSchema.shape.mapping_score,
    first_conversation: z
      .object({
        name: z.string().nullable(),
        messages: z.array(
          z.object({
            role: z.string(),
            content: z.string().nullable().describe("Cut at 2,000 characters, saying so"),
            steps: z.array(z.object({ thinking: z.string().nullable(), tool_call: z.unknown().describe("The call: name, arguments, id"), tool_result: z.unknown().describe("Its result, text cut at 2,000 characters") })),
          }),
        ),
      })
      .nullable()
      .optional()
      .describe("The first conversation as it would be stored (its first 200 messages)"),
    not_imported: z.array(notImportedSchema).describe("Text of the file the mapping leaves out (the first 20 places)"),
    errors: z.array(importIssueSchema).optional().describe("Why it would not import (the first 20)"),
    warnings: z.array(importIssueSchema),
  })
  .meta({ id: "MappingPreview" });
export type MappingPreview = z.infer<typeof mappingPreviewSchema>;

/** Text fields of `POST /import-mappings/preview`. */
export const mappingPreviewForm = z
  .object({ mapping: mappingText, mapping_id: mappingIdText })
  .superRefine(oneMapping)
  .refine((f) => f.mapping !== undefined || f.mapping_id !== undefined, { message: "send 'mapping' (JSON) or 'mapping_id'", path: ["mapping"] });

export type ImportSuccess = z.infer<typeof importSuccessSchema>;
export type ImportFailure = z.infer<typeof importFailureSchema>;

/** The request headers of both import endpoints, as OpenAPI shows them. */
export const importHeadersDoc = z.object({
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      "Makes a retry safe: the first outcome of a request with this key (1–255 visible ASCII characters, e.g. a UUID) is stored for 24 hours, " +
        "per caller and endpoint (and dataset). The same key with the same file and form fields answers that outcome again, with " +
        "`Idempotent-Replayed: true`, and imports nothing; a retry arriving while the first is still running waits for it. " +
        "The same key with another file or other fields is refused with 422 (generic error shape, code `unprocessable`), nothing written.",
    ),
});
