/**
 * Judge alignment (issue 39): candidates of a metric's prompt built from the truth (labels or the
 * reference) and proven on held-out cells. Started with 202 and worked in the process that received it as
 * a job kind of lib/jobs (leased, swept when its process dies, cancellable from any process; progress saved
 * as calls land); `dry_run` prices it first; promote saves a candidate as the metric's next
 * prompt version — refused (409) unless it beat the baseline on held-out cells or the caller forces it.
 */
import "server-only";
import { defineJobKind } from "@/lib/jobs";
import * as repo from "@/db/repositories/alignments";
import type { PipelineNodeRow } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";
import { contextTokensFor, costOf, getJudgeConfig, resolveModelName, verdictSchema } from "@/lib/judge";
import { log } from "@/lib/log";
import { buildJudgePrompt } from "@/lib/metrics";
import { estimateTokens } from "@/lib/metrics/evidence";
import { getMetricRow, listMetricVersions, updateMetric } from "@/lib/metrics/metrics";
import type { Alignment, AlignmentUsage, CreateAlignmentInput } from "@/lib/schemas/alignments";
import { listPromptVersions } from "@/db/repositories/prompt-versions";
import { EXAMPLE_CHARS } from "./few-shot";
import { BudgetReached, dependencyValues, Spend, treesOf, type JudgeContext } from "./judging";
import { lostMessage, lostVariables, REWRITE_DISAGREEMENTS } from "./rewrite";
import { loadTruth, type Truth } from "./truth";
import { alignmentWork, plannedCalls, type Report } from "./work";
import type { JudgeDeps } from "@/lib/judge";

/** Alignments as background work: leased on their rows, swept, recovered and cancelled by lib/jobs. */
export const alignmentJobs = defineJobKind({
  name: "alignment",
  store: {
    renew: repo.renewAlignmentLease,
    failExpired: repo.failExpiredAlignments,
    failUnfinished: repo.failOrphanedAlignments,
    cancel: repo.cancelAlignmentRow,
  },
  expired: "interrupted: the process working it stopped; start it again",
  interrupted: "interrupted: the server stopped while this alignment ran; start it again",
});
const emptyUsage = (): AlignmentUsage => ({ judge_calls: 0, optimizer_calls: 0, cached: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
/** Reply tokens assumed per call when pricing a dry run. */
const ASSUMED_OUTPUT_TOKENS = 150;
/** A metric's prompt at most (lib/schemas/metrics.ts): a longer candidate could not be edited after promotion. */
const MAX_PROMPT_CHARS = 50_000;
/** How often progress is written while calls land. */
const SAVE_EVERY_MS = 300;

type Params = {
  truth: "labels" | "reference";
  strategies: CreateAlignmentInput["strategies"];
  folds: number;
  seed: number;
  max_examples: number;
  optimizer_model: string | null;
  model: string;
  max_cost_usd: number | null;
};
type Header = Pick<Alignment, "truth_n" | "pass_threshold" | "truth_classes" | "annotator_kappa" | "annotator_pairs" | "warnings" | "baseline_version"> & { baseline_prompt: string };
type Stored = Header & Partial<Report> & { promoted?: Alignment["promoted"] };

async function metricToAlign(id: number): Promise<PipelineNodeRow> {
  const node = await getMetricRow(id);
  if (node.kind === "check") {
    throw new AppError("unprocessable", `Metric ${id} is a check, not a judge: there is no prompt to align`, [{ path: "pipeline_node_id", message: "must be an llm metric" }]);
  }
  if (node.outputType === "pairwise") {
    throw new AppError("unprocessable", `Metric ${id} is pairwise: it compares two replies, and alignment needs a verdict per cell`, [
      { path: "pipeline_node_id", message: "must be a pass/fail, score or category metric" },
    ]);
  }
  return node;
}

function assertStrategies(node: PipelineNodeRow, input: CreateAlignmentInput): void {
  if (input.strategies.includes("threshold") && (node.outputType === "checkbox" || node.outputType === "text")) {
    throw new AppError("unprocessable", `threshold needs a score metric; metric ${node.id} gives ${node.outputType === "checkbox" ? "pass/fail" : "categories"}`, [
      { path: "strategies", message: "threshold applies to progress, number and json-score metrics" },
    ]);
  }
}

/** What the alignment would call and cost: judge calls per strategy, optimiser calls, tokens and USD. */
async function estimate(node: PipelineNodeRow, truth: Truth, params: Params) {
  const { judge: judgeCalls, optimizer } = plannedCalls(truth.cells.length, { strategies: params.strategies, folds: params.folds });
  const trees = await treesOf(truth.cells);
  const schema = JSON.stringify(verdictSchema(node.outputType, node.outputSchema)).length;
  let baseTokens = 0;
  for (const c of truth.cells) {
    const tree = trees.get(c.conversationId);
    if (!tree) continue;
    const built = buildJudgePrompt({ metric: node, tree, entity: { type: c.entityType, id: c.entityId }, contextTokens: contextTokensFor(params.model) });
    baseTokens += estimateTokens(built.system.length + built.prompt.length + schema);
  }
  const n = truth.cells.length;
  const fewShot = params.strategies.includes("few_shot") ? n * estimateTokens(params.max_examples * (EXAMPLE_CHARS + 80)) : 0;
  const judged = params.strategies.filter((s) => s !== "threshold").length;
  const optimizerInput = optimizer * estimateTokens(node.prompt.length + REWRITE_DISAGREEMENTS * 700);
  const optimizerOutput = optimizer * (estimateTokens(node.prompt.length) + 50);
  const input = baseTokens * (1 + judged) + fewShot;
  const output = judgeCalls * ASSUMED_OUTPUT_TOKENS;
  const judgeCost = costOf(params.model, input, output);
  const optimizerCost = optimizer ? costOf(params.optimizer_model ?? params.model, optimizerInput, optimizerOutput) : 0;
  return {
    dry_run: true as const,
    truth_n: n,
    judge_calls: judgeCalls,
    optimizer_calls: optimizer,
    estimated_input_tokens: input + optimizerInput,
    estimated_output_tokens: output + optimizerOutput,
    estimated_cost_usd: judgeCost === null || optimizerCost === null ? null : judgeCost + optimizerCost,
  };
}

export type StartedAlignment = { dryRun: true; estimate: Awaited<ReturnType<typeof estimate>> } | { dryRun: false; alignment: Alignment };

/** Check, record and start an alignment (or price it: dry_run). Bad input is a 4xx and records nothing. */
export async function startAlignment(input: CreateAlignmentInput, userId: string, deps: { judge?: JudgeDeps } = {}): Promise<StartedAlignment> {
  const node = await metricToAlign(input.pipeline_node_id);
  assertStrategies(node, input);
  const truth = await loadTruth(node, input.truth, input.folds);
  const model = resolveModelName(undefined, node.modelName);
  const params: Params = {
    truth: input.truth,
    strategies: input.strategies,
    folds: input.folds,
    seed: input.seed,
    max_examples: input.max_examples,
    optimizer_model: input.optimizer_model ?? null,
    model,
    max_cost_usd: input.max_cost_usd ?? null,
  };
  if (input.dry_run) return { dryRun: true, estimate: await estimate(node, truth, params) };
  if (!getJudgeConfig().configured && !deps.judge?.languageModel) {
    throw new AppError("unprocessable", "No judge model is configured: set OPENAI_API_KEY or OPENAI_BASE_URL (dry_run works without one)");
  }
  const versions = await listPromptVersions(node.id);
  const classes: Record<string, number> = {};
  for (const c of truth.cells) classes[c.truth] = (classes[c.truth] ?? 0) + 1;
  const header: Header = {
    truth_n: truth.cells.length,
    pass_threshold: node.outputType === "checkbox" || node.outputType === "text" ? null : truth.threshold,
    truth_classes: classes,
    annotator_kappa: truth.annotatorKappa,
    annotator_pairs: truth.annotatorPairs,
    warnings: truth.warnings,
    baseline_version: versions.at(-1)?.version ?? null,
    baseline_prompt: node.prompt,
  };
  const calls = plannedCalls(truth.cells.length, { strategies: params.strategies, folds: params.folds });
  const row = await repo.insertAlignment({ userId, datasetId: node.datasetId, pipelineNodeId: node.id, params, report: header, total: calls.judge + calls.optimizer }, alignmentJobs.leaseUntil());
  alignmentJobs.start(
    row.id,
    (job) => work(row.id, node, truth, params, header, deps.judge, job.signal),
    (error) => repo.saveAlignmentState(row.id, { status: "failed", done: 0, total: row.total, report: header, usage: emptyUsage(), error: `alignment failed: ${error.message}`, finishedAt: new Date().toISOString() }),
  );
  return { dryRun: false, alignment: toWire((await repo.getAlignmentRow(row.id))!) };
}

/** Judge calls an alignment keeps in flight: the model's limit, at most 16. */
export const alignmentConcurrency = (maxConcurrency: number) => Math.max(1, Math.min(maxConcurrency, 16));

async function work(id: number, node: PipelineNodeRow, truth: Truth, params: Params, header: Header, judgeDeps: JudgeDeps | undefined, signal: AbortSignal): Promise<void> {
  const total = plannedCalls(truth.cells.length, { strategies: params.strategies, folds: params.folds });
  let lastSave = 0;
  let saving: Promise<void> = Promise.resolve();
  const spend: Spend = new Spend(params.max_cost_usd ?? undefined, () => {
    const now = Date.now();
    if (now - lastSave < SAVE_EVERY_MS) return;
    lastSave = now;
    saving = saving.then(() => repo.saveAlignmentState(id, { status: "processing", done: spend.done, total: total.judge + total.optimizer, report: header, usage: spend.usage })).catch(() => undefined);
  });
  try {
    await repo.saveAlignmentState(id, { status: "processing", done: 0, total: total.judge + total.optimizer, report: header, usage: spend.usage });
    const config = getJudgeConfig();
    const ctx: JudgeContext = { node, model: params.model, trees: await treesOf(truth.cells), metricValues: await dependencyValues(node, truth.cells), spend, concurrency: alignmentConcurrency(config.maxConcurrency), signal, deps: judgeDeps };
    const report = await alignmentWork(ctx, node, truth, {
      strategies: params.strategies,
      folds: params.folds,
      seed: params.seed,
      maxExamples: params.max_examples,
      optimizerModel: params.optimizer_model ?? params.model,
    });
    await saving;
    await repo.saveAlignmentState(id, { status: "completed", done: spend.done, total: spend.done, report: { ...header, ...report }, usage: spend.usage, finishedAt: new Date().toISOString() });
  } catch (error) {
    await saving;
    const message = error instanceof BudgetReached ? error.message : `alignment failed: ${(error as Error).message}`;
    // Stopped (cancelled, swept, its lease lost): its row already says why; nothing is rewritten.
    if (signal.aborted && !(error instanceof BudgetReached)) return;
    if (!(error instanceof BudgetReached)) log.error("alignment failed", { alignment_id: id, error: (error as Error).message });
    await repo.saveAlignmentState(id, { status: "failed", done: spend.done, total: total.judge + total.optimizer, report: header, usage: spend.usage, error: message, finishedAt: new Date().toISOString() });
  }
}

/**
 * Every process, on either store: alignments whose process died (their lease ran out) end failed, saying
 * so; one this process still works (stalled past its lease) stops its calls. A process stalled while another
 * swept it stops them at its next lease renewal (lib/jobs).
 */
export const sweepExpiredAlignments = (now: string): Promise<number> => alignmentJobs.sweep(now);

/**
 * At start-up on SQLite (one server owns the store): an alignment a stopped server left unfinished can
 * never finish, so it ends failed, saying to start it again. On PostgreSQL another process may be working
 * it, so it is left alone.
 */
export const recoverAlignments = (): Promise<number> => alignmentJobs.recover();

/** Resolves once the alignment's work in this process is over (tests). */
export const waitForAlignment = (id: number): Promise<void> => alignmentJobs.waitFor(id);

/**
 * Cancel an alignment from any process: it ends `cancelled` at once (its calls so far counted in usage), and
 * the process working it aborts its calls and writes nothing more. 409 once it has ended.
 */
export async function cancelAlignment(id: number): Promise<Alignment> {
  const row = await repo.getAlignmentRow(id);
  if (!row) throw notFound("Alignment", id);
  if (row.status !== "pending" && row.status !== "processing") throw new AppError("conflict", `Alignment ${id} is already ${row.status}`);
  if (!(await alignmentJobs.cancel(id))) throw new AppError("conflict", `Alignment ${id} ended meanwhile`);
  return getAlignment(id);
}

/**
 * A rewritten prompt that lost a variable of the baseline's is no candidate, stored before that was
 * checked or not: shown without its prompt (nothing to promote) and with the reason.
 */
function withoutLostVariables(c: Alignment["candidates"][number], baselinePrompt: string | undefined): Alignment["candidates"][number] {
  if (c.strategy !== "rewrite" || !c.prompt || baselinePrompt === undefined) return c;
  const lost = lostVariables(baselinePrompt, c.prompt);
  if (!lost.length) return c;
  const { prompt: _dropped, ...rest } = c;
  return { ...rest, beats_baseline: false, error: [c.error, `every cell: ${lostMessage(lost)}`].filter(Boolean).join("; ") };
}

function toWire(row: repo.AlignmentRow): Alignment {
  const p = row.params as Params;
  const r = (row.report ?? {}) as Partial<Stored>;
  return {
    id: row.id,
    dataset_id: row.datasetId,
    pipeline_node_id: row.pipelineNodeId,
    status: row.status,
    truth: p.truth,
    strategies: p.strategies,
    folds: p.folds,
    seed: p.seed,
    max_examples: p.max_examples,
    optimizer_model: p.optimizer_model,
    model: p.model,
    baseline_version: r.baseline_version ?? null,
    truth_n: r.truth_n ?? 0,
    pass_threshold: r.pass_threshold ?? null,
    truth_classes: r.truth_classes ?? {},
    annotator_kappa: r.annotator_kappa ?? null,
    annotator_pairs: r.annotator_pairs ?? [],
    warnings: r.warnings ?? [],
    progress: { total: row.total, done: row.done },
    baseline: r.baseline ?? null,
    candidates: (r.candidates ?? []).map((c) => withoutLostVariables(c, r.baseline_prompt)),
    folds_detail: r.folds_detail ?? [],
    recommended: r.recommended ?? null,
    promoted: r.promoted ?? [],
    usage: { ...emptyUsage(), ...((row.usage ?? {}) as Partial<AlignmentUsage>) },
    error: row.error,
    created_at: row.createdAt,
    finished_at: row.finishedAt,
  };
}

export async function getAlignment(id: number): Promise<Alignment> {
  const row = await repo.getAlignmentRow(id);
  if (!row) throw notFound("Alignment", id);
  return toWire(row);
}

/** A metric's alignments, newest first (the agreement page lists them). */
export async function listAlignments(pipelineNodeId: number): Promise<Alignment[]> {
  await getMetricRow(pipelineNodeId);
  return (await repo.listAlignmentRows(pipelineNodeId)).map(toWire);
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? "n/a" : (x >= 0 ? "+" : "") + x.toFixed(3));

/**
 * Save a candidate's prompt as the metric's next prompt version (the previous one stays in the metric's
 * versions). 409 when the alignment is not complete, when the candidate did not beat the baseline on
 * held-out cells, or when the metric's prompt changed since the baseline was judged — unless `force`.
 */
export async function promoteAlignment(id: number, body: { strategy: Alignment["strategies"][number]; force: boolean }) {
  const row = await repo.getAlignmentRow(id);
  if (!row) throw notFound("Alignment", id);
  const alignment = toWire(row);
  if (alignment.status !== "completed") throw new AppError("conflict", `Alignment ${id} is ${alignment.status}; a candidate can be promoted once it has completed`);
  const candidate = alignment.candidates.find((c) => c.strategy === body.strategy);
  if (!candidate) {
    throw new AppError("unprocessable", `Alignment ${id} has no ${body.strategy} candidate (it built ${alignment.strategies.join(", ")})`, [{ path: "strategy", message: `must be one of ${alignment.strategies.join(", ")}` }]);
  }
  if (body.strategy === "threshold") {
    throw new AppError("unprocessable", `A threshold is not part of the metric's prompt: use ${candidate.threshold ?? "the chosen threshold"} where the score is read (agreement's threshold, the gate's thresholds)`, [
      { path: "strategy", message: "few_shot and rewrite change the prompt; threshold does not" },
    ]);
  }
  if (!candidate.prompt) throw new AppError("conflict", `The ${body.strategy} candidate has no prompt to promote: ${candidate.error ?? "it failed"}`);
  if (candidate.prompt.length > MAX_PROMPT_CHARS) {
    throw new AppError("unprocessable", `The ${body.strategy} prompt is ${candidate.prompt.length} characters, over the ${MAX_PROMPT_CHARS} a metric's prompt may have; align again with fewer max_examples`, [
      { path: "strategy", message: "the candidate's prompt is too long to save" },
    ]);
  }
  const d = candidate.delta_kappa;
  if (!candidate.beats_baseline && !body.force) {
    const why = d.interval
      ? `Δκ ${fmt(d.estimate)} on ${d.n} held-out cells, 95% interval [${fmt(d.interval[0])}, ${fmt(d.interval[1])}] does not lie above zero`
      : `Δκ could not be measured on held-out cells (${d.n} cells with both verdicts)`;
    throw new AppError("conflict", `The ${body.strategy} candidate did not beat the baseline on held-out cells: ${why}. Send force: true to promote it anyway`, [
      { path: "strategy", message: "did not beat the baseline on held-out cells" },
    ]);
  }
  const node = await getMetricRow(row.pipelineNodeId);
  const baselinePrompt = ((row.report ?? {}) as Partial<Stored>).baseline_prompt;
  if (baselinePrompt !== undefined && node.prompt !== baselinePrompt && !body.force) {
    throw new AppError("conflict", `Metric ${node.id}'s prompt changed since alignment ${id} judged its baseline; align again, or send force: true`);
  }
  const before = (await listMetricVersions(node.id)).at(-1)?.version ?? null;
  await updateMetric(node.id, { prompt: candidate.prompt });
  const version = (await listMetricVersions(node.id)).at(-1)!;
  await repo.recordPromotion(id, { strategy: body.strategy, version: version.version, at: version.created_at });
  return { alignment_id: id, strategy: body.strategy, version, previous_version: before };
}
