/** Wire schemas of the import endpoints (shared/API.md, "Import"). */
import { z } from "zod";
import { datasetSchema } from "./datasets";

export const importFormats = ["turnscope", "openai_chat", "jsonl"] as const;
export type ImportFormat = (typeof importFormats)[number];

export const importIssueSchema = z
  .object({
    path: z.string().describe("Where in the file, e.g. `conversations[0].messages[2].role`; `(file)` for the whole file"),
    message: z.string(),
    suggestion: z.string().describe("What to change to fix it"),
    line: z.number().int().optional().describe("1-based line in the file, when known (JSON syntax, JSON Lines)"),
    column: z.number().int().optional().describe("1-based column in the file, when known (JSON syntax)"),
  })
  .meta({ id: "ImportIssue" });

export const suggestedTransformationSchema = z
  .object({
    from: z.string().describe("Field path in the uploaded file, `[]` for every element: `conversations[].messages[].speaker`"),
    to: z.string().describe("Field path it should become"),
    mapping: z.record(z.string(), z.string()).describe("Values to replace on the way, e.g. `{\"bot\": \"assistant\"}`"),
  })
  .meta({ id: "SuggestedTransformation" });

export const llmFeedbackSchema = z
  .object({
    analysis: z.string(),
    suggested_transformation: suggestedTransformationSchema
      .nullable()
      .describe("Null when no mechanical rewrite fixes the file (a JSON syntax error, say)"),
    generated_by: z.string().describe("The judge model's name, or `rules` when no model is configured or it failed"),
  })
  .meta({ id: "LlmFeedback" });

export const importSuccessSchema = z
  .object({
    success: z.literal(true),
    dataset_id: z.number().int(),
    dataset: datasetSchema.optional().describe("Only on the create-and-import endpoint"),
    format: z.enum(importFormats).describe("The input format that was detected and converted"),
    conversations_imported: z.number().int(),
    messages_imported: z.number().int(),
    steps_imported: z.number().int(),
    errors: z.array(importIssueSchema).describe("Always empty on success"),
    warnings: z.array(importIssueSchema),
  })
  .meta({ id: "ImportSuccess" });

export const importFailureSchema = z
  .object({
    success: z.literal(false),
    format: z.enum(importFormats).optional().describe("Present once the file parsed and its format was detected"),
    errors: z.array(importIssueSchema),
    warnings: z.array(importIssueSchema),
    llm_feedback: llmFeedbackSchema.optional().describe("Only when `get_feedback` is true"),
  })
  .meta({ id: "ImportFailure" });

const booleanText = z
  .enum(["true", "false", "1", "0"], { message: "must be true or false" })
  .transform((v) => v === "true" || v === "1");

const fileField = z.string().meta({ format: "binary" }).describe("The conversations file (JSON or JSON Lines, UTF-8)");
const getFeedbackField = booleanText.optional().default(true).describe("Explain a failed import (default true)");

/** Text fields of `POST /datasets/{id}/import`. */
export const importIntoDatasetForm = z.object({ get_feedback: getFeedbackField });

/** Text fields of `POST /datasets/import`. */
export const createAndImportForm = z.object({
  name: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
  description: z.string().max(5000, "must be at most 5000 characters").optional(),
  user_id: z.string().trim().min(1).max(200).optional().describe("Owner of the new dataset; default the caller"),
  get_feedback: getFeedbackField,
});

/** The multipart bodies as OpenAPI shows them. */
export const importIntoDatasetBodyDoc = z.object({ file: fileField, get_feedback: z.enum(["true", "false"]).optional() });
export const createAndImportBodyDoc = z.object({
  file: fileField,
  name: z.string().max(200),
  description: z.string().max(5000).optional(),
  user_id: z.string().max(200).optional(),
  get_feedback: z.enum(["true", "false"]).optional(),
});

export type ImportIssue = z.infer<typeof importIssueSchema>;
export type SuggestedTransformation = z.infer<typeof suggestedTransformationSchema>;
export type LlmFeedback = z.infer<typeof llmFeedbackSchema>;
export type ImportSuccess = z.infer<typeof importSuccessSchema>;
export type ImportFailure = z.infer<typeof importFailureSchema>;
