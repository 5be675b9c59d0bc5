/**
 * Tools over runs: estimate and start one (annotator, as POST /evaluation-pipeline-executions/run), follow it
 * to its end with its aggregates, read its results, compare two runs, and ask for the gate's verdict.
 */
import { z } from "zod";
import { isFinalStatus } from "@/lib/execution-status";
import { gateReport } from "@/lib/gate";
import { compareExecutions } from "@/lib/labels/compare";
import { compareBySource } from "@/lib/labels/compare-across";
import { getExecution } from "@/lib/results/execution-history";
import { executionResultsPage } from "@/lib/results/json";
import { aggregateSnapshot, openSnapshot } from "@/lib/results/read";
import { estimateRun, startExecution } from "@/lib/runner";
import { bodyId } from "@/lib/schemas/common";
import { compareQuery } from "@/lib/schemas/compare";
import { runBody, type Aggregated, type Execution, type IndividualResult } from "@/lib/schemas/executions";
import { gateQuery } from "@/lib/schemas/gate";
import { clip, dropEmpty, paging, verdict } from "./compact";
import { defineTool, maxCharsArg, pageArgs, parseArgs } from "./define";
import { waitFor, waitSecondsArg } from "./wait";

/** An execution in the fields an agent acts on; the errors' first few. */
export function compactExecution(e: Execution) {
  const meta = e.meta as Record<string, unknown>;
  return dropEmpty({
    id: e.id,
    dataset_id: e.dataset_id,
    pipeline_node_id: e.pipeline_node_id,
    status: e.status,
    total: e.total_evaluations,
    successful: e.successful_evaluations,
    failed: e.failed_evaluations,
    skipped: e.skipped_evaluations,
    started_at: e.started_at,
    completed_at: e.completed_at,
    duration_ms: e.duration_ms,
    model: meta.model,
    input_tokens: meta.input_tokens,
    output_tokens: meta.output_tokens,
    cost_usd: meta.cost_usd,
    max_cost_usd: meta.max_cost_usd,
    stop_reason: meta.stop_reason,
    errors: e.errors.slice(0, 5).map((err) => ({ ...err, message: clip(err.message, 300) })),
    errors_total: e.errors.length > 5 ? e.errors.length : undefined,
  });
}

const runDescription =
  "Scope: dataset_id alone runs every metric on every entity; pipeline_node_id one metric (its column); pipeline_node_ids a set; " +
  "entity_type + entity_id one row (with pipeline_node_id one cell); conversation_ids only those conversations. retry: only cells whose latest result failed or is missing.";

export const estimateRunTool = defineTool({
  name: "estimate_run",
  title: "Price a run",
  description: `What a run would cost before it is started: cells, judge calls, cache hits, tokens and USD (when the judge's prices are configured). Creates nothing. ${runDescription}`,
  role: "annotator",
  readOnly: true,
  input: runBody,
  run: async (args) => estimateRun(args),
});

export const startRunTool = defineTool({
  name: "start_run",
  title: "Start a run",
  description:
    `Start judging (answers at once with the run; it goes on in the server). Follow it with get_run and wait_seconds. Set max_cost_usd to stop it when its judge calls have cost that much ` +
    `(it then ends cancelled with stop_reason budget). Price it first with estimate_run. ${runDescription}`,
  role: "annotator",
  readOnly: false,
  input: runBody,
  run: async (args, { caller }) => compactExecution(await startExecution(args, caller.userId)),
});

/** Each metric's aggregate, with the metric's name and output type. */
async function aggregatesOf(executionId: number) {
  const snapshot = await openSnapshot(executionId);
  const aggregated = await aggregateSnapshot(snapshot);
  const names = new Map(snapshot.metrics.map((m) => [String(m.nodeId), m]));
  return {
    results_saved: snapshot.count,
    aggregated: Object.fromEntries(
      Object.entries(aggregated).map(([nodeId, a]: [string, Aggregated]) => [nodeId, { metric: names.get(nodeId)?.name ?? null, output_type: names.get(nodeId)?.outputType ?? null, ...a }]),
    ),
  };
}

export const getRunTool = defineTool({
  name: "get_run",
  title: "Follow a run",
  description:
    "A run's status, counts, cost and each metric's aggregate (total, average/min/max score, std_dev, distribution). With wait_seconds it waits up to that long " +
    "for the run to end first (call again while status is pending or processing). Results one by one: get_results.",
  role: "viewer",
  readOnly: true,
  input: z.object({ id: bodyId.describe("Execution (run) id"), wait_seconds: waitSecondsArg }),
  run: async ({ id, wait_seconds }, { signal, progress }) => {
    const execution = await waitFor(() => getExecution(id), (e) => isFinalStatus(e.status), wait_seconds, signal, {
      progress,
      measure: (e) => {
        const done = e.successful_evaluations + e.failed_evaluations + e.skipped_evaluations;
        return { done, total: e.total_evaluations, message: `run ${e.id} ${e.status}: ${done} of ${e.total_evaluations} cells` };
      },
    });
    const { results_saved, aggregated } = await aggregatesOf(id);
    const done = isFinalStatus(execution.status);
    return {
      ...compactExecution(execution),
      progress: { saved: results_saved, total: execution.total_evaluations, done },
      aggregated,
    };
  },
});

function compactResult(r: IndividualResult, maxChars: number) {
  const v = verdict(r.result, maxChars);
  return dropEmpty({
    id: r.id,
    pipeline_node_id: r.pipeline_node_id,
    entity_type: r.entity_type,
    entity_id: r.entity_id,
    conversation_id: r.conversation_id,
    status: r.status,
    value: v.value,
    reasoning: v.reasoning,
    error: clip(r.error, maxChars),
  });
}

export const getResultsTool = defineTool({
  name: "get_results",
  title: "Read a run's results",
  description: "A page of a run's results in the order they were saved: the metric, the entity, the verdict (score or value) and the judge's reasoning, clipped.",
  role: "viewer",
  readOnly: true,
  input: z.object({ id: bodyId.describe("Execution (run) id"), ...pageArgs(20, 200), max_chars: maxCharsArg }),
  run: async ({ id, limit, offset, max_chars }) => {
    // The page GET /evaluation-pipeline-executions/{id}/results?limit&offset answers (its aggregates are get_run's).
    const { body, total } = await executionResultsPage(await openSnapshot(id), limit, offset);
    const { results } = JSON.parse(body) as { results: IndividualResult[] };
    return { execution_id: id, results: results.map((r) => compactResult(r, max_chars)), ...paging(total, offset, results.length) };
  },
});

export const compareRunsTool = defineTool({
  name: "compare_runs",
  title: "Compare two runs",
  description:
    "Two runs of the same cells side by side: per metric how many cells flipped, the mean score delta (b − a), agreement (accuracy, kappa), and what changed " +
    "(model, prompt); then a page of the cells (only those that flipped unless only_flips is false). pair_by source pairs a generated dataset's run (b) " +
    "with its source's run (a) by source conversation (pass^k and pass@k with repeats).",
  role: "viewer",
  readOnly: true,
  input: z.object({
    a: bodyId.describe("First run (before)"),
    b: bodyId.describe("Second run (after)"),
    pipeline_node_id: bodyId.optional().describe("Only this metric's cells"),
    pair_by: z.enum(["cell", "source"]).default("cell"),
    only_flips: z.boolean().default(true).describe("List only the cells whose verdict differs (default true)"),
    ...pageArgs(20, 200),
  }),
  run: async ({ a, b, pipeline_node_id, pair_by, only_flips, limit, offset }) => {
    // The REST query, so its rules and messages are the same.
    const q = parseArgs(compareQuery, dropEmpty({ a: String(a), b: String(b), pipeline_node_id: pipeline_node_id === undefined ? undefined : String(pipeline_node_id), pair_by }), "arguments");
    const comparison = q.pair_by === "source" ? await compareBySource(q) : await compareExecutions(q);
    const cells = (comparison.cells as Array<{ flip: boolean }>).filter((c) => !only_flips || c.flip);
    const page = cells.slice(offset, offset + limit);
    return { a: comparison.a, b: comparison.b, metrics: comparison.metrics, cells: page, ...paging(cells.length, offset, page.length) };
  },
});

export const gateTool = defineTool({
  name: "gate",
  title: "Ask the gate for its verdict",
  description:
    "The CI gate's verdict over finished runs (what `npx turnscope eval` exits on): pass, fail (a threshold or a regression against the baseline failed) or error " +
    "(a metric could not be evaluated), per metric with the baseline's paired delta and McNemar's test; then a page of the cases (only those not passing unless only_failing is false).",
  role: "viewer",
  readOnly: true,
  input: z.object({
    runs: z.array(bodyId).min(1).max(20).describe("The run, or the repeats of one evaluation (a case fails only when it fails in every repeat)"),
    baseline: bodyId.optional().describe("A finished run of the same dataset to compare with, case by case"),
    min: z.record(z.string().regex(/^\d+$/, "must be a metric id"), z.number()).optional().describe("Per-metric minimum score, keyed by metric id, e.g. {\"12\": 0.8}"),
    threshold: z.enum(["case", "mean"]).default("case").describe("case: every case must reach the minimum; mean: the mean score must"),
    alpha: z.number().gt(0).lt(1).default(0.05).describe("Significance level of McNemar's test"),
    only_failing: z.boolean().default(true),
    ...pageArgs(20, 200),
  }),
  run: async ({ runs, baseline, min, threshold, alpha, only_failing, limit, offset }) => {
    const minText = min && Object.keys(min).length ? Object.entries(min).map(([id, value]) => `${id}:${value}`).join(",") : undefined;
    const q = parseArgs(gateQuery, dropEmpty({ runs: runs.join(","), baseline: baseline === undefined ? undefined : String(baseline), min: minText, threshold, alpha }), "arguments");
    const report = await gateReport(q);
    const cases = report.cases.filter((c) => !only_failing || c.verdict !== "pass" || c.flipped).map((c) => ({ ...c, reason: clip(c.reason, 300) }));
    const page = cases.slice(offset, offset + limit);
    return { status: report.status, dataset: report.dataset, runs: report.runs, baseline: report.baseline, metrics: report.metrics, cases: page, ...paging(cases.length, offset, page.length) };
  },
});
