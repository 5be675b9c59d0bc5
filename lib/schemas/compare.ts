/** Wire schemas of comparing two executions (API.md, second phase). */
import { z } from "zod";
import { evaluationLevels, resultStatuses } from "@/lib/vocabulary";
import { idText, isoTimestamp, jsonValue } from "./common";

const entityType = z.enum(evaluationLevels);

const executionIdText = idText();

export const compareQuery = z.object({
  a: executionIdText.describe("First execution (before)"),
  b: executionIdText.describe("Second execution (after); same dataset"),
  pipeline_node_id: idText().optional().describe("Only this metric's cells"),
});

const side = z.object({ status: z.enum(resultStatuses), value: jsonValue, score: z.number().nullable(), model_name: z.string().nullable() }).nullable();

const runSummary = z.object({
  id: z.number().int(),
  status: z.string(),
  created_at: isoTimestamp,
  model: z.string().nullable().describe("The run's model override (null: the default judge model)"),
  models: z.array(z.string()).describe("Models that actually answered, from the results"),
  results: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number().nullable(),
});

const version = z.object({ version: z.number().int(), prompt: z.string(), model_name: z.string().nullable(), created_at: isoTimestamp }).nullable();

export const comparisonSchema = z
  .object({
    a: runSummary,
    b: runSummary,
    metrics: z.array(
      z.object({
        pipeline_node_id: z.number().int(),
        name: z.string(),
        output_type: z.string(),
        n: z.number().int().describe("Cells completed in both runs"),
        flips: z.number().int().describe("Cells whose pass/fail (checkbox) or category (text) differs; scores: any different value"),
        mean_delta: z.number().nullable().describe("Mean of b − a over scored cells"),
        accuracy: z.number().nullable().describe("Share of the n cells with the same verdict"),
        kappa: z.number().nullable(),
        spearman: z.number().nullable(),
        models: z.object({ a: z.array(z.string()), b: z.array(z.string()) }),
        prompt_version: z
          .object({ a: version, b: version })
          .describe("The metric's definition in effect when each run started (null: none recorded then)"),
        changed: z.array(z.enum(["model", "prompt"])).describe("What differs between the two runs for this metric"),
      }),
    ),
    cells: z.array(
      z.object({
        pipeline_node_id: z.number().int(),
        entity_type: entityType,
        entity_id: z.number().int(),
        conversation_id: z.number().int(),
        a: side,
        b: side,
        flip: z.boolean(),
        delta: z.number().nullable().describe("b − a of the scores, when both have one"),
      }),
    ),
  })
  .meta({ id: "ExecutionComparison" });

export type Comparison = z.infer<typeof comparisonSchema>;
