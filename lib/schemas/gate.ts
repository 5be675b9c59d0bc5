/** Wire schemas of the CI gate's report (`GET /evaluation-pipeline-executions/gate`, used by `npx turnscope eval`). */
import { z } from "zod";
import { idText } from "./common";

const idList = z
  .string()
  .regex(/^\d+(,\d+)*$/, "must be execution ids separated by commas")
  .transform((s) => s.split(",").map(Number))
  .pipe(z.array(z.number().int().min(1).max(2 ** 31 - 1)).min(1).max(20));

export const gateQuery = z.object({
  runs: idList.describe("The runs to judge the gate on: one, or the repeats of one evaluation (a case fails only when it fails in every repeat)"),
  baseline: idText().optional().describe("A finished run of the same dataset to compare with, case by case"),
  min: z
    .string()
    .regex(/^\d+:-?\d+(\.\d+)?(,\d+:-?\d+(\.\d+)?)*$/, "must be <metric id>:<value> pairs separated by commas")
    .transform((s) => s.split(",").map((pair) => pair.split(":").map(Number) as [number, number]))
    .optional()
    .default([])
    .describe("Per-metric minimums: a score case passes at or above it (checkbox metrics pass on true)"),
  threshold: z.enum(["case", "mean"]).default("case").describe("`case`: every case must reach the minimum; `mean`: the mean score must"),
  alpha: z.coerce.number().gt(0).lt(1).default(0.05).describe("Significance level of McNemar's test"),
});

const verdict = z.enum(["pass", "fail", "error"]);

export const gateReportSchema = z
  .object({
    status: z.enum(["pass", "fail", "error"]).describe("`pass`: every gate holds (exit 0); `fail`: a threshold or a regression failed (exit 1); `error`: a metric could not be evaluated at all (exit 2)"),
    dataset: z.object({ id: z.number().int(), hash: z.string().describe("sha256 of the dataset's conversations and messages: the data the gate ran on"), conversations: z.number().int() }),
    runs: z.array(z.number().int()),
    baseline: z.number().int().nullable(),
    metrics: z.array(
      z.object({
        pipeline_node_id: z.number().int(),
        name: z.string(),
        output_type: z.string(),
        cases: z.number().int(),
        passed: z.number().int(),
        failed: z.number().int(),
        errors: z.number().int().describe("Cases with a failed cell in every repeat (the judge could not answer)"),
        mean_score: z.number().nullable(),
        threshold: z.object({ mode: z.enum(["case", "mean"]), min: z.number(), holds: z.boolean() }).nullable(),
        baseline: z
          .object({
            execution_id: z.number().int(),
            paired: z.number().int(),
            mean: z.number().nullable(),
            delta: z.object({ estimate: z.number(), interval: z.tuple([z.number(), z.number()]) }).nullable().describe("Mean score delta (now − baseline) with a paired bootstrap 95% interval"),
            pass_to_fail: z.number().int(),
            fail_to_pass: z.number().int(),
            mcnemar_p: z.number(),
            regressed: z.boolean(),
            why: z.string().nullable(),
          })
          .nullable(),
        status: verdict,
      }),
    ),
    cases: z.array(
      z.object({
        pipeline_node_id: z.number().int(),
        metric: z.string(),
        conversation_id: z.number().int(),
        conversation: z.string(),
        verdict,
        score: z.number().nullable(),
        repeats: z.array(verdict),
        reason: z.string().nullable().describe("The judge's reasoning (a failing cell's first), or the error"),
        baseline: verdict.nullable(),
        flipped: z.boolean().describe("Passed in the baseline, fails now in every repeat"),
      }),
    ),
  })
  .meta({ id: "GateReport" });

export type GateQuery = z.infer<typeof gateQuery>;
export type GateReport = z.infer<typeof gateReportSchema>;
