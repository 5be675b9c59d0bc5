/**
 * Runs an execution inside the server, independent of any connection: plan → schedule (sync one at a
 * time, async up to batch_size) → judge each cell → save the result → announce it. Cancel aborts the
 * judge calls in flight; nothing is written after it.
 */
import "server-only";
import pLimit from "p-limit";
import {
  getExecutionRow,
  insertExecution,
  insertResult,
  insertResults,
  listActiveExecutionIds,
  type NewResult,
  updateExecution,
} from "@/db/repositories/executions";
import type { EvaluationResultRow, PipelineExecutionRow } from "@/db/schema";
import { AppError, notFound } from "@/lib/api/errors";
import { assertDatasetExists, deleteDataset } from "@/lib/datasets";
import { contextTokensFor, costOf, getJudgeConfig, judge, resolveModelName, type JudgeDeps, type JudgeOutcome } from "@/lib/judge";
import { existingLimiter } from "@/lib/judge/limiter";
import { log } from "@/lib/log";
import { buildJudgePrompt, loadConversationTree, type ConversationTree } from "@/lib/metrics";
import { processSingleton } from "@/lib/process-state";
import { toExecution, toResult } from "@/lib/results/serialize";
import type { Execution, ExecutionMeta, RunRequest } from "@/lib/schemas/executions";
import { metricVerdicts } from "@/lib/metrics/metric-verdicts";
import { checkEvaluator, runCheckCells, skippedOutcome, type CellOutcome } from "./check-cell";
import { dependencyWaves, skipReason } from "./dependencies";
import { emit, hasListeners, progressOf } from "./events";
import { withGoal } from "./goal";
import { planRun, type Cell, type Plan } from "./plan";

export type RunnerDeps = { judge?: JudgeDeps; now?: () => number };

type ActiveRun = { controller: AbortController; finished: Promise<void>; datasetId: number };
const active = processSingleton("runner.active", () => new Map<number, ActiveRun>());
/** Set on SIGTERM: no new runs, no new cells; cells in flight may finish. */
const lifecycle = processSingleton("runner.lifecycle", () => ({ draining: false }));
const SHUTDOWN_MESSAGE = "interrupted: server shutting down";

const TREE_CACHE = 64;

/** Plan the run, record the execution as pending and start it in the background. */
export async function startExecution(req: RunRequest, userId: string, deps: RunnerDeps = {}): Promise<Execution> {
  if (lifecycle.draining) throw new AppError("unavailable", "The server is shutting down; start the run again in a moment");
  const plan = await planRun(req);
  const variables = [...new Set(plan.cells.map((c) => c.node).flatMap((n) => n.templateVariables ?? []))];
  const meta: ExecutionMeta = {
    model: req.model_name ?? null,
    execution_mode: req.execution_mode,
    batch_size: req.execution_mode === "async" ? req.batch_size : 1,
    template_variables: variables,
    user_id: userId,
    scope: plan.scope,
    entity_type: req.entity_type ?? null,
    entity_id: req.entity_id ?? null,
    retry: req.retry,
    input_tokens: 0,
    output_tokens: 0,
    cached_evaluations: 0,
    cost_usd: null,
  };
  const row = await insertExecution({
    evaluationPipelineId: plan.pipelineId,
    datasetId: req.dataset_id,
    pipelineNodeId: req.pipeline_node_id ?? null,
    totalEvaluations: plan.cells.length,
    meta,
  });
  const controller = new AbortController();
  const finished = new Promise<void>((resolve) => {
    // Start on the next turn so the 202 answer goes out first.
    setImmediate(() => {
      executeRun(row, plan, req, controller.signal, deps)
        .catch((error) => failRun(row.id, error))
        .finally(() => {
          active.delete(row.id);
          resolve();
        });
    });
  });
  active.set(row.id, { controller, finished, datasetId: req.dataset_id });
  return toExecution(row);
}

/** Whether this process is running the execution now. */
export function isRunning(executionId: number): boolean {
  return active.has(executionId);
}

/** Resolves when the execution's run in this process is over (tests, shutdown). */
export async function waitForExecution(executionId: number): Promise<void> {
  await active.get(executionId)?.finished;
}

async function executeRun(row: PipelineExecutionRow, plan: Plan, req: RunRequest, signal: AbortSignal, deps: RunnerDeps): Promise<void> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  await updateExecution(row.id, { status: "processing", startedAt: new Date(startedAt).toISOString() }, { onlyIfActive: true });
  const total = plan.cells.length;
  const totals = { done: 0, inputTokens: 0, outputTokens: 0, cached: 0, cost: 0, priced: true, rateLimits: 0 };
  let lastModel = resolveModelName(req.model_name, plan.cells[0]?.node.modelName);
  const limitNow = () => existingLimiter(lastModel)?.currentLimit ?? null;
  // The live limiter figures also go into `meta` while the run goes on, at most once a second.
  let metaWrittenAt = now();
  const writeLiveMeta = async () => {
    const current = await getExecutionRow(row.id);
    if (!current || (current.status !== "processing" && current.status !== "pending")) return;
    await updateExecution(row.id, { meta: { ...(current.meta as object), rate_limits: totals.rateLimits, concurrency_limit: limitNow() } }, { onlyIfActive: true });
  };
  const trees = new Map<number, Promise<ConversationTree>>();
  const judgeConfigured = getJudgeConfig().configured || Boolean(deps.judge?.languageModel);

  const treeFor = (conversationId: number, cell: Cell): Promise<ConversationTree> => {
    let tree = trees.get(conversationId);
    if (!tree) {
      tree = loadTreeWithGoal(conversationId, cell, req, signal, judgeConfigured, deps);
      trees.set(conversationId, tree);
      if (trees.size > TREE_CACHE) trees.delete(trees.keys().next().value as number);
    }
    return tree;
  };

  const runCheck = checkEvaluator();
  let lastTree: { id: number; tree: ConversationTree } | undefined;

  const evaluate = async (cell: Cell) => {
    if (signal.aborted || lifecycle.draining) return;
    const model = resolveModelName(req.model_name, cell.node.modelName);
    lastModel = model;
    announceProcessing(cell);
    const started = now();
    const skipped = await skipReason(cell, plan.allNodes);
    if (skipped) return await record(cell, skippedOutcome(skipped));
    let outcome: JudgeOutcome;
    try {
      const tree = await treeFor(cell.conversationId, cell);
      const metricValues = await metricVerdicts(cell.node, { type: cell.entityType, id: cell.entityId, conversationId: cell.conversationId }, plan.allNodes);
      const prompt = buildJudgePrompt({
        metric: cell.node,
        tree,
        entity: { type: cell.entityType, id: cell.entityId },
        metricValues,
        contextTokens: contextTokensFor(model),
      });
      outcome = await judge(
        {
          model,
          system: prompt.system,
          prompt: prompt.prompt,
          outputType: cell.node.outputType,
          outputSchema: cell.node.outputSchema,
          signal,
          noCache: req.retry || req.no_cache,
        },
        deps.judge,
      );
    } catch (error) {
      if (signal.aborted) return; // cancelled: nothing is written after the cancel
      outcome = failedOutcome(model, error instanceof AppError ? error.message : `could not evaluate: ${(error as Error).message}`, now() - started);
    }
    // Synchronous from here to the write: a cancel cannot slip in between the check and the save.
    if (signal.aborted) return;
    await record(cell, outcome);
  };

  const resultValues = (cell: Cell, outcome: CellOutcome): NewResult => ({
    executionId: row.id,
    pipelineNodeId: cell.node.id,
    datasetId: row.datasetId,
    entityType: cell.entityType,
    entityId: cell.entityId,
    conversationId: cell.conversationId,
    messageId: cell.messageId,
    stepId: cell.stepId,
    result: outcome.result,
    score: outcome.score,
    status: outcome.status,
    error: outcome.error,
    rawOutput: outcome.rawOutput,
    executionTime: outcome.latencyMs,
    modelName: outcome.model,
    inputTokens: outcome.inputTokens,
    outputTokens: outcome.outputTokens,
    cached: outcome.cached,
  });

  /** Count a saved cell and announce it (synchronous). */
  const announce = async (cell: Cell, outcome: CellOutcome, saved: EvaluationResultRow) => {
    const base = { execution_id: row.id, pipeline_node_id: cell.node.id, entity_type: cell.entityType, entity_id: cell.entityId };
    totals.done++;
    totals.rateLimits += outcome.rateLimited ?? 0;
    if (now() - metaWrittenAt >= 1000) {
      metaWrittenAt = now();
      await writeLiveMeta();
    }
    totals.inputTokens += outcome.inputTokens;
    totals.outputTokens += outcome.outputTokens;
    if (outcome.cached) totals.cached++;
    // Checks and skipped cells use no model: they cost nothing rather than an unknown price.
    const cost = outcome.inputTokens + outcome.outputTokens === 0 ? 0 : costOf(outcome.model, outcome.inputTokens, outcome.outputTokens);
    if (cost === null) totals.priced = false;
    else totals.cost += cost;
    if (!hasListeners(row.id)) return; // nobody streams this run: skip building the event
    const result = toResult(saved);
    const progress = progressOf(totals.done, total);
    if (outcome.status !== "failed") {
      emit(row.id, { event: "complete", id: saved.id, data: { ...base, status: "complete", progress, result } });
    } else {
      emit(row.id, { event: "error", id: saved.id, data: { ...base, status: "error", progress, error: { message: outcome.error ?? "failed" }, result } });
    }
  };

  /** Save a cell's outcome, count it and announce it (synchronous). */
  const record = async (cell: Cell, outcome: CellOutcome) => announce(cell, outcome, await insertResult(resultValues(cell, outcome)));

  /** Save a chunk of cells' outcomes with multi-row inserts, then count and announce each in order. */
  const recordMany = async (cells: Cell[], outcomes: CellOutcome[]) => {
    const saved = await insertResults(row.id, cells.map((cell, i) => resultValues(cell, outcomes[i])));
    for (const [i, cell] of cells.entries()) await announce(cell, outcomes[i], saved[i]);
  };

  /** The `processing` event of a cell, built only when someone listens (check cells announce it too). */
  const announceProcessing = (cell: Cell) => {
    if (!hasListeners(row.id)) return;
    emit(row.id, {
      event: "processing",
      data: {
        execution_id: row.id,
        pipeline_node_id: cell.node.id,
        entity_type: cell.entityType,
        entity_id: cell.entityId,
        status: "processing",
        progress: progressOf(totals.done, total),
        completed: totals.done,
        total,
        concurrency_limit: limitNow(),
        rate_limits: totals.rateLimits,
      },
    });
  };

  // Wave by wave (dependencies before dependents); in each, check cells first, written in chunks
  // (they cost no judge call), then the judge's cells.
  for (const wave of dependencyWaves(plan.cells)) {
    const checkCells = wave.filter((c) => c.node.kind === "check");
    await runCheckCells(checkCells, {
      signal,
      stopped: () => lifecycle.draining,
      // Cells come in grid order, so consecutive cells share their conversation's tree.
      evaluate: async (cell) => {
        const skipped = await skipReason(cell, plan.allNodes);
        if (skipped) return skippedOutcome(skipped);
        if (lastTree?.id !== cell.conversationId) lastTree = { id: cell.conversationId, tree: await loadConversationTree(cell.conversationId) };
        return runCheck(cell, lastTree.tree);
      },
      processing: announceProcessing,
      recordMany,
    });
    const limit = pLimit(req.execution_mode === "async" ? req.batch_size : 1);
    await Promise.all(wave.filter((c) => c.node.kind !== "check").map((cell) => limit(() => evaluate(cell))));
  }

  const current = await getExecutionRow(row.id);
  const meta = {
    ...((current?.meta as ExecutionMeta | undefined) ?? {}),
    input_tokens: totals.inputTokens,
    output_tokens: totals.outputTokens,
    cached_evaluations: totals.cached,
    cost_usd: totals.priced && totals.done > 0 ? totals.cost : totals.done === 0 ? 0 : null,
    rate_limits: totals.rateLimits,
    concurrency_limit: limitNow(),
  };
  // A shutdown that left cells undone ends the run as failed (interrupted) so `retry` finishes it.
  const cancelled = signal.aborted && (signal.reason as Error | undefined)?.message === "cancelled";
  const interrupted = !cancelled && lifecycle.draining && totals.done < total;
  const status = interrupted ? "failed" : cancelled ? "cancelled" : (current?.failedEvaluations ?? 0) > 0 ? "failed" : "completed";
  const completedAt = now();
  const errors = interrupted
    ? [...((current?.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message: SHUTDOWN_MESSAGE }]
    : undefined;
  const final = await updateExecution(
    row.id,
    {
      status,
      completedAt: new Date(completedAt).toISOString(),
      durationMs: completedAt - startedAt,
      meta: interrupted ? { ...meta, interrupted: true } : meta,
      ...(errors ? { errors } : {}),
    },
    { onlyIfActive: true },
  );
  const execution = toExecution(final ?? (await getExecutionRow(row.id))!);
  emit(row.id, { event: "done", data: { status: execution.status as "completed" | "failed" | "cancelled", execution } });
}

async function loadTreeWithGoal(
  conversationId: number,
  cell: Cell,
  req: RunRequest,
  signal: AbortSignal,
  judgeConfigured: boolean,
  deps: RunnerDeps,
): Promise<ConversationTree> {
  const tree = await loadConversationTree(conversationId);
  // @GOAL is extracted once per conversation by the judge model and stored; later runs reuse it.
  if (judgeConfigured && cell.node.templateVariables?.includes("@GOAL")) return await withGoal(tree, { model: req.model_name, signal }, deps.judge);
  return tree;
}

function failedOutcome(model: string, error: string, latencyMs: number): JudgeOutcome {
  return {
    status: "failed",
    result: null,
    score: null,
    error,
    rawOutput: null,
    model,
    inputTokens: 0,
    outputTokens: 0,
    latencyMs,
    cached: false,
    attempts: 0,
  };
}

/** A bug or a database error stopped the run: record it rather than leaving it "processing". */
async function failRun(executionId: number, error: unknown): Promise<void> {
  log.error("execution failed", { execution_id: executionId, error });
  const row = await getExecutionRow(executionId);
  if (!row) return;
  const errors = [...((row.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message: `run stopped: ${(error as Error).message}` }];
  const final = await updateExecution(executionId, { status: "failed", completedAt: new Date().toISOString(), errors }, { onlyIfActive: true });
  if (final) emit(executionId, { event: "done", data: { status: "failed", execution: toExecution(final) } });
}

/** Cancel a pending or processing execution: abort its judge calls, keep finished results. 409 if final. */
export async function cancelExecution(executionId: number): Promise<Execution> {
  const row = await getExecutionRow(executionId);
  if (!row) throw notFound("Execution", executionId);
  if (row.status !== "pending" && row.status !== "processing") {
    throw new AppError("conflict", `Execution ${executionId} is already ${row.status}`);
  }
  const run = active.get(executionId);
  if (run) {
    run.controller.abort(new Error("cancelled"));
    // The run writes `cancelled` itself once its in-flight calls have unwound (they abort at once).
    await Promise.race([run.finished, new Promise((r) => setTimeout(r, 10_000))]);
  }
  const now = new Date();
  const started = row.startedAt ? Date.parse(row.startedAt) : now.getTime();
  await updateExecution(
    executionId,
    { status: "cancelled", completedAt: now.toISOString(), durationMs: now.getTime() - started },
    { onlyIfActive: true },
  );
  return toExecution((await getExecutionRow(executionId))!);
}

/**
 * Delete a dataset whose runs may be going on: cancel them first (each ends `cancelled` and tells its
 * streams `done`), then delete, so no run writes into rows that are gone. 404 for an unknown dataset.
 */
export async function deleteDatasetStoppingRuns(datasetId: number): Promise<void> {
  await assertDatasetExists(datasetId);
  // Loop: a run started while we waited is cancelled too; the delete itself is synchronous.
  for (let runs = runsOf(datasetId); runs.length; runs = runsOf(datasetId)) {
    for (const run of runs) run.controller.abort(new Error("cancelled"));
    await Promise.race([Promise.all(runs.map((r) => r.finished)), new Promise((r) => setTimeout(r, 10_000))]);
    if (runs.every((r) => [...active.values()].includes(r))) break; // stuck: delete anyway, the run stops on its own
  }
  await deleteDataset(datasetId);
}

function runsOf(datasetId: number): ActiveRun[] {
  return [...active.values()].filter((r) => r.datasetId === datasetId);
}

/**
 * Graceful shutdown: take no new work, let cells in flight finish for up to `graceMs`, then abort the
 * rest. Unfinished executions end `failed` (interrupted) so a `retry` run completes them.
 */
export async function drainRuns(graceMs: number): Promise<{ finished: number; aborted: number }> {
  lifecycle.draining = true;
  const runs = [...active.values()];
  const settled = Promise.all(runs.map((r) => r.finished));
  const inTime = await Promise.race([settled.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
  let aborted = 0;
  if (!inTime) {
    for (const run of active.values()) {
      run.controller.abort(new Error(SHUTDOWN_MESSAGE));
      aborted++;
    }
    await Promise.race([settled, new Promise((r) => setTimeout(r, 2_000))]);
  }
  return { finished: runs.length - aborted, aborted };
}

/** Take work again after a drain (tests; a real drain ends in process exit). */
export function resumeAfterDrain(): void {
  lifecycle.draining = false;
}

/** Whether the server is draining for shutdown. */
export function isDraining(): boolean {
  return lifecycle.draining;
}

/** At start-up: executions a dead server left pending/processing become failed, to be retried. */
export async function recoverInterruptedExecutions(): Promise<number> {
  const ids = (await listActiveExecutionIds()).filter((id) => !active.has(id));
  for (const id of ids) {
    const row = await getExecutionRow(id);
    if (!row) continue;
    const errors = [
      ...((row.errors as unknown[]) ?? []),
      { pipeline_node_id: null, entity_type: null, entity_id: null, message: "interrupted: server restarted" },
    ];
    const meta = { ...(row.meta as object), interrupted: true };
    await updateExecution(id, { status: "failed", completedAt: new Date().toISOString(), errors, meta }, { onlyIfActive: true });
  }
  if (ids.length) log.warn("marked interrupted executions as failed", { executions: ids });
  return ids.length;
}
