/**
 * Runs an execution inside the server, independent of any connection: plan → schedule (sync one at a
 * time, async up to batch_size) → judge each cell → save the result → announce it. Cancel aborts the
 * judge calls in flight; nothing is written after it. On PostgreSQL the same entry points start, cancel,
 * wait for and recover queued runs instead, which every process of the cluster works (cluster-run.ts).
 */
import "server-only";
import { setMaxListeners } from "node:events";
import { forEachLimited } from "./limited";
import { getExecutionRow, insertExecution, listActiveExecutionIds, updateExecution } from "@/db/repositories/executions";
import type { PipelineExecutionRow } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";
import { assertDatasetExists, deleteDataset } from "@/lib/datasets";
import { resolveModelName } from "@/lib/judge";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { toExecution } from "@/lib/results/serialize";
import type { Execution, ExecutionMeta, RunRequest } from "@/lib/schemas/executions";
import { cellRunner, type RunnerDeps } from "./cells";
import {
  cancelQueuedRun,
  cancelQueuedRunsOf,
  enqueueFirstWave,
  newQueueMeta,
  planBound,
  recoverOrphanedRuns,
  runsAreQueued,
  stopClusterRunner,
  waitForQueuedExecution,
} from "./cluster-run";
import { dependencyWaves } from "./dependencies";
import { emit } from "./events";
import { planRun, type Plan } from "./plan";
import { budgetMessage } from "./budget";
import { isActiveStatus } from "@/lib/execution-status";

export type { RunnerDeps };

type ActiveRun = { controller: AbortController; finished: Promise<void>; datasetId: number };
const active = processSingleton("runner.active", () => new Map<number, ActiveRun>());
/** Set on SIGTERM: no new runs, no new cells; cells in flight may finish. */
const lifecycle = processSingleton("runner.lifecycle", () => ({ draining: false }));
const SHUTDOWN_MESSAGE = "interrupted: server shutting down";

/**
 * Plan the run, record the execution as pending and start it: in the background of this process
 * (SQLite), or on PostgreSQL as queued batches any process of the cluster works (cluster-run.ts;
 * `deps` then do not apply — the judge is each process's configured one).
 */
export async function startExecution(req: RunRequest, userId: string, deps: RunnerDeps = {}, origin: { trigger?: string } = {}): Promise<Execution> {
  if (lifecycle.draining) throw new AppError("unavailable", "The server is shutting down; start the run again in a moment");
  const queued = runsAreQueued();
  const resultsUpTo = queued ? await planBound() : undefined;
  const plan = await planRun(req, { resultsUpTo });
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
    ...(origin.trigger ? { trigger: origin.trigger } : {}),
    ...(req.max_cost_usd != null ? { max_cost_usd: req.max_cost_usd } : {}),
  };
  const row = await insertExecution({
    evaluationPipelineId: plan.pipelineId,
    datasetId: req.dataset_id,
    pipelineNodeId: req.pipeline_node_id ?? null,
    totalEvaluations: plan.cells.length,
    meta: queued ? { ...meta, queue: newQueueMeta(req, plan, resultsUpTo!) } : meta,
  });
  if (queued) {
    try {
      await enqueueFirstWave(row, plan, req);
    } catch (error) {
      await failRun(row.id, error);
      throw error;
    }
    return toExecution(row);
  }
  const controller = new AbortController();
  // Every cell in flight or waiting for a call slot listens for the cancel: up to 2 × batch_size
  // listeners by design, not a leak (Node warns past 10).
  setMaxListeners(0, controller.signal);
  const finished = new Promise<void>((resolve) => {
    // Start on the next turn so the 202 answer goes out first.
    setImmediate(() => {
      executeRun(row, plan, req, controller, deps)
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

/** Whether this process is running the execution now (in-process runs; see cluster-run.executionIsLive for queued ones). */
export function isRunning(executionId: number): boolean {
  return active.has(executionId);
}

/** Resolves when the execution's run in this process is over — a queued run: once it is final anywhere (tests, shutdown). */
export async function waitForExecution(executionId: number): Promise<void> {
  if (runsAreQueued()) return waitForQueuedExecution(executionId);
  await active.get(executionId)?.finished;
}

/** The abort reason of a run stopped by its max_cost_usd. */
const BUDGET = "budget";

async function executeRun(row: PipelineExecutionRow, plan: Plan, req: RunRequest, controller: AbortController, deps: RunnerDeps): Promise<void> {
  const signal = controller.signal;
  const now = deps.now ?? Date.now;
  const startedAt = now();
  await updateExecution(row.id, { status: "processing", startedAt: new Date(startedAt).toISOString() }, { onlyIfActive: true });
  const total = plan.cells.length;
  const cells = cellRunner({
    execution: row,
    req,
    allNodes: plan.allNodes,
    total,
    firstModel: resolveModelName(req.model_name, plan.cells[0]?.node.modelName),
    signal,
    stopped: () => lifecycle.draining,
    deps,
    shared: false,
    // async: batch_size judge calls in flight, the next cells prepared and the last ones saved meanwhile.
    callSlots: req.execution_mode === "async" ? req.batch_size : undefined,
    // The calls in flight when the budget is reached are aborted and nothing more is written.
    budget: req.max_cost_usd != null ? (spent) => void (spent >= req.max_cost_usd! && !signal.aborted && controller.abort(new Error(BUDGET))) : undefined,
  });
  const totals = cells.totals;

  // Wave by wave (dependencies before dependents); in each, check cells first, written in chunks
  // (they cost no judge call), then the judge's cells.
  for (const wave of dependencyWaves(plan.cells)) {
    await cells.runChecks(wave.filter((c) => c.node.kind === "check"));
    // A cell that throws (a database error) fails the run only once the cells in flight are over, and no
    // further cell starts: nothing of the run goes on after it is marked failed.
    await forEachLimited(wave.filter((c) => c.node.kind !== "check"), cells.evaluateAtOnce ?? 1, (cell) => cells.evaluate(cell), cells.bindAtOnce);
  }

  const current = await getExecutionRow(row.id);
  const meta = {
    ...((current?.meta as ExecutionMeta | undefined) ?? {}),
    input_tokens: totals.inputTokens,
    output_tokens: totals.outputTokens,
    cached_evaluations: totals.cached,
    cost_usd: totals.priced && totals.done > 0 ? totals.cost : totals.done === 0 ? 0 : null,
    rate_limits: totals.rateLimits,
    hedges: totals.hedges,
    concurrency_limit: cells.limitNow(),
  };
  // A shutdown that left cells undone ends the run as failed (interrupted) so `retry` finishes it.
  const reason = signal.aborted ? (signal.reason as Error | undefined)?.message : undefined;
  const overBudget = reason === BUDGET;
  const cancelled = reason === "cancelled" || overBudget;
  const interrupted = !cancelled && lifecycle.draining && totals.done < total;
  const status = interrupted ? "failed" : cancelled ? "cancelled" : (current?.failedEvaluations ?? 0) > 0 ? "failed" : "completed";
  const completedAt = now();
  const stopMessage = interrupted ? SHUTDOWN_MESSAGE : overBudget ? budgetMessage(totals.cost, req.max_cost_usd!) : undefined;
  const errors = stopMessage
    ? [...((current?.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message: stopMessage }]
    : undefined;
  const final = await updateExecution(
    row.id,
    {
      status,
      completedAt: new Date(completedAt).toISOString(),
      durationMs: completedAt - startedAt,
      meta: interrupted ? { ...meta, interrupted: true } : overBudget ? { ...meta, stop_reason: "budget" } : meta,
      ...(errors ? { errors } : {}),
    },
    { onlyIfActive: true },
  );
  const execution = toExecution(final ?? (await getExecutionRow(row.id))!);
  emit(row.id, { event: "done", data: { status: execution.status as "completed" | "failed" | "cancelled", execution } });
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
  if (!isActiveStatus(row.status)) {
    throw new AppError("conflict", `Execution ${executionId} is already ${row.status}`);
  }
  if (runsAreQueued()) {
    await cancelQueuedRun(row);
    return toExecution((await getExecutionRow(executionId))!);
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
  // Queued runs: once cancelled no process saves a result of them, so the delete cannot collide.
  if (runsAreQueued()) await cancelQueuedRunsOf(datasetId);
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
  // Queued runs are not this process's alone: its batches finish within the grace period or go back
  // to the queue, and other processes (or this one after a restart) finish the runs.
  if (runsAreQueued()) return stopClusterRunner(graceMs);
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
  // PostgreSQL: other processes' runs are live and the queue redelivers a dead process's batches; only
  // runs nobody can finish any more are failed.
  const ids = runsAreQueued() ? await recoverOrphanedRuns() : (await listActiveExecutionIds()).filter((id) => !active.has(id));
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
