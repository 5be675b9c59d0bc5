/** Wire schemas of datasets and conversations (shared/API.md, "Datasets and conversations"). */
import { z } from "zod";
import { messageRoles } from "@/lib/vocabulary";
import { isoTimestamp, jsonValue, paginationQuery } from "./common";

const name = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");
const description = z.string().max(5000, "must be at most 5000 characters").nullable();
const userId = z.string().trim().min(1).max(200);

export const createDatasetBody = z
  .object({ name, description: description.optional(), user_id: userId.optional().describe("The owner; honoured only while no credential is configured (otherwise the caller owns it)") });

export const updateDatasetBody = z
  .object({ name: name.optional(), description: description.optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined, {
    message: "give at least one of name, description",
  });

const nameSearch = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");

export const listDatasetsQuery = paginationQuery.extend({
  user_id: userId.optional().describe("Only datasets of this user"),
  name: nameSearch.optional().describe("Only datasets whose name contains this text, in any case"),
});

export const listConversationsQuery = paginationQuery.extend({
  ids: z
    .string()
    .regex(/^\d+(,\d+)*$/, "must be conversation ids separated by commas")
    .transform((s) => s.split(",").map(Number))
    .pipe(z.array(z.number().int().min(1).max(2 ** 31 - 1)).min(1).max(500))
    .optional()
    .describe("Only these conversations of the dataset (up to 500 ids, comma-separated); ids of other datasets are left out"),
  name: nameSearch.optional().describe("Only conversations whose name contains this text, in any case (conversations without a name never match)"),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/, "must be the X-Next-Cursor of an earlier page")
    .optional()
    .describe("Keyset paging (not with `offset`): the `X-Next-Cursor` of the page before; the page reads on from there instead of skipping `offset` rows"),
});

export const datasetSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    user_id: z.string(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    conversation_count: z.number().int(),
    message_count: z.number().int(),
    step_count: z.number().int(),
  })
  .meta({ id: "Dataset" });

export const conversationSummarySchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.number().int(),
    position: z.number().int(),
    name: z.string().nullable(),
    label: z
      .string()
      .describe("What every page calls it: the name, else an id from meta (`task_id 12 · trial 0`), else the first words of its first user message, else `Conversation <position + 1>`"),
    description: z.string().nullable(),
    meta: jsonValue,
    message_count: z.number().int(),
    step_count: z.number().int(),
    created_at: isoTimestamp,
  })
  .meta({ id: "ConversationSummary" });

export const stepSchema = z
  .object({
    id: z.number().int(),
    position: z.number().int(),
    thinking: z.string().nullable(),
    tool_call: jsonValue,
    tool_result: jsonValue,
    output_content: z.string().nullable(),
    output_structured: jsonValue,
    model_name: z.string().nullable(),
    agent_name: z.string().nullable(),
  })
  .meta({ id: "Step" });

export const messageSchema = z
  .object({
    id: z.number().int(),
    position: z.number().int(),
    role: z.enum(messageRoles),
    content: z.string().nullable(),
    meta: jsonValue,
    steps: z.array(stepSchema),
  })
  .meta({ id: "Message" });

export const conversationSchema = conversationSummarySchema
  .extend({
    agents: jsonValue,
    goal: z.string().nullable().describe("The user's goal (@GOAL): imported with the conversation, or extracted by the judge model on the first run of a metric that uses it"),
    goal_generated_by: z.string().nullable().describe("The model that extracted the goal; null when it was imported (or there is none yet)"),
    messages: z.array(messageSchema),
  })
  .meta({ id: "Conversation" });

export type CreateDatasetInput = z.infer<typeof createDatasetBody>;
export type UpdateDatasetInput = z.infer<typeof updateDatasetBody>;
export type Dataset = z.infer<typeof datasetSchema>;
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;
export type Conversation = z.infer<typeof conversationSchema>;
