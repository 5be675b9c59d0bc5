/**
 * A run's entry points, whichever engine works it (engine.ts): start (plan → record → the engine works
 * the cells), wait, cancel, delete a dataset with its runs, drain for shutdown, recover at start-up.
 */
import "server-only";
import { getExecutionRow, insertExecution, listActiveExecutionIds } from "@/db/repositories/executions";
import { AppError, notFound } from "@/lib/errors";
import { assertDatasetExists, deleteDataset } from "@/lib/datasets";
import { toExecution } from "@/lib/results/serialize";
import type { Execution, ExecutionMeta, RunRequest } from "@/lib/schemas/executions";
import { batchSizeOf } from "./batch-size";
import type { RunnerDeps } from "./cells";
import { runEngine } from "./engine";
import { failRun, runnerState } from "./lifecycle";
import { planRun } from "./plan";
import { isActiveStatus } from "@/lib/execution-status";

export type { RunnerDeps };

/**
 * At boot: this process's share of the work (the engine's), with the runs' lib/jobs kind: recovery of runs
 * nobody can finish, the sweep of runs whose work was lost, cancels heard from other processes.
 */
export async function startRunner(): Promise<void> {
  await runEngine().boot();
}

/**
 * Plan the run, record the execution as pending and start it with this process's engine: in the
 * background of this process (SQLite), or as queued batches any process of the cluster works
 * (PostgreSQL; `deps` then do not apply — the judge is each process's configured one).
 */
export async function startExecution(req: RunRequest, userId: string, deps: RunnerDeps = {}, origin: { trigger?: string } = {}): Promise<Execution> {
  if (runnerState.draining) throw new AppError("unavailable", "The server is shutting down; start the run again in a moment");
  const engine = runEngine();
  const resultsUpTo = await engine.planBound();
  const plan = await planRun(req, { resultsUpTo });
  // A retry with nothing failed or missing would record an empty run (n = 0), which then reads as a run
  // everywhere runs are listed (Compare's default, Agreement's sources): refused, nothing recorded.
  if (req.retry && plan.cells.length === 0) {
    throw new AppError("conflict", "Nothing to retry: every cell of this scope already has a completed result");
  }
  const variables = [...new Set(plan.cells.map((c) => c.node).flatMap((n) => n.templateVariables ?? []))];
  const meta: ExecutionMeta = {
    model: req.model_name ?? null,
    execution_mode: req.execution_mode,
    batch_size: batchSizeOf(req),
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
    ...(req.pipeline_node_ids ? { pipeline_node_ids: req.pipeline_node_ids } : {}),
    ...(origin.trigger ? { trigger: origin.trigger } : req.trigger ? { trigger: req.trigger } : {}),
    ...(req.max_cost_usd != null ? { max_cost_usd: req.max_cost_usd } : {}),
  };
  const row = await insertExecution({
    evaluationPipelineId: plan.pipelineId,
    datasetId: req.dataset_id,
    pipelineNodeId: req.pipeline_node_id ?? null,
    totalEvaluations: plan.cells.length,
    meta: { ...meta, ...engine.runMeta(req, plan, resultsUpTo) },
  });
  try {
    await engine.start(row, plan, req, deps);
  } catch (error) {
    await failRun(engine, row.id, `run stopped: ${(error as Error).message}`);
    throw error;
  }
  return toExecution(row);
}

/** Resolves once the execution's run is over (tests, shutdown). */
export async function waitForExecution(executionId: number): Promise<void> {
  await runEngine().waitFor(executionId);
}

/** Cancel a pending or processing execution: stop its judge calls, keep finished results. 409 if final. */
export async function cancelExecution(executionId: number): Promise<Execution> {
  const row = await getExecutionRow(executionId);
  if (!row) throw notFound("Execution", executionId);
  if (!isActiveStatus(row.status)) {
    throw new AppError("conflict", `Execution ${executionId} is already ${row.status}`);
  }
  await runEngine().jobs.cancel(executionId);
  return toExecution((await getExecutionRow(executionId))!);
}

/**
 * Delete a dataset whose runs may be going on: cancel them first (each ends `cancelled` and tells its
 * streams `done`; no result of it is saved after), then delete, so no run writes into rows that are
 * gone. 404 for an unknown dataset.
 */
export async function deleteDatasetStoppingRuns(datasetId: number): Promise<void> {
  await assertDatasetExists(datasetId);
  const engine = runEngine();
  // Again while there are some: a run started while we waited is cancelled too.
  for (let round = 0; round < 3; round++) {
    const ids = await listActiveExecutionIds(datasetId);
    if (ids.length === 0) break;
    await Promise.all(
      ids.map(async (id) => {
        const row = await getExecutionRow(id);
        if (row && isActiveStatus(row.status)) await engine.jobs.cancel(id);
      }),
    );
  }
  await deleteDataset(datasetId);
}

/**
 * Graceful shutdown: take no new work, let cells in flight finish for up to `graceMs`, then stop the
 * rest. In process, unfinished executions end `failed` (interrupted) so a `retry` run completes them;
 * queued batches go back to the queue for other processes.
 */
export async function drainRuns(graceMs: number): Promise<{ finished: number; aborted: number }> {
  runnerState.draining = true;
  return runEngine().drain(graceMs);
}

/** Take work again after a drain (tests; a real drain ends in process exit). */
export function resumeAfterDrain(): void {
  runnerState.draining = false;
}

/** Whether the server is draining for shutdown. */
export function isDraining(): boolean {
  return runnerState.draining;
}

/** At start-up: executions nobody can finish any more (a dead server's) become failed, to be retried. */
export async function recoverInterruptedExecutions(): Promise<number> {
  return runEngine().jobs.recover();
}
