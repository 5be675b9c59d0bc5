/** Wire schemas of the reference editor's reads: the meta fields of a dataset, a reference's preview. */
import { z } from "zod";
import { evaluationLevels } from "@/lib/vocabulary";
import { referenceInput } from "./labels";

const scalar = z.union([z.number(), z.string(), z.boolean()]);

export const metaFieldSchema = z
  .object({
    path: z.string().describe('Dotted path of a scalar field, starting with "meta.", e.g. "meta.reward"'),
    types: z.array(z.enum(["number", "string", "boolean"])).describe("The JSON types the field holds in the sample"),
    count: z.number().int().describe("How many sampled objects have the field"),
    examples: z.array(scalar).describe("Up to 5 distinct values, in the order first seen"),
  })
  .meta({ id: "MetaField" });

export const metaFieldsSchema = z
  .object({
    sampled: z.object({
      conversation: z.number().int().describe("Conversations whose meta was read"),
      message: z.number().int().describe("Messages with meta that were read"),
    }),
    conversation: z.array(metaFieldSchema).describe("Fields of conversation meta, most common first"),
    message: z.array(metaFieldSchema).describe("Fields of message meta, most common first"),
  })
  .meta({ id: "MetaFields" });

export type MetaField = z.infer<typeof metaFieldSchema>;
export type MetaFields = z.infer<typeof metaFieldsSchema>;

export const referencePreviewBody = z.strictObject({
  reference: referenceInput.nullable().optional().describe("The reference to preview; absent: the metric's saved reference"),
});

export const referencePreviewSchema = z
  .object({
    reference: referenceInput.nullable().describe("The reference previewed"),
    cells: z.number().int().describe("Cells of the metric (entities at its level)"),
    read: z.number().int().describe("Cells the reference gives a reading for"),
    missing: z.number().int().describe("Cells without a reading (field absent or not a scalar, no label)"),
    pass: z.number().int().describe("Readings that are pass"),
    fail: z.number().int().describe("Readings that are fail"),
    other: z.number().int().describe("Readings that are scores or categories (a reference without a rule)"),
    readings: z
      .array(z.object({ entity_type: z.enum(evaluationLevels), entity_id: z.number().int(), value: scalar }))
      .describe("Every cell's reading, in entity order"),
  })
  .meta({ id: "ReferencePreview" });

export type ReferencePreview = z.infer<typeof referencePreviewSchema>;
