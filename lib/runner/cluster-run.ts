/**
 * The queued engine (PostgreSQL): a run's cells are durable jobs shared by every process of the
 * cluster (lib/jobs/cell-queue.ts).
 *
 * Starting a run plans it, stores the request in `meta.queue` and enqueues the cells of its first
 * dependency wave as batches. Any server process or `npm run worker` process works a batch: it
 * evaluates each cell with the same code as an in-process run (cells.ts); its batch_size is the run's
 * judge calls in flight across the cluster — each provider call holds a slot of the cluster-wide
 * semaphore `execution:<id>` (batch_size slots, 1 in sync mode) and one of `model:<name>`
 * (JUDGE_MAX_CONCURRENCY), taken just before the call and given back when the provider answers — and
 * saves each result only if the cell has none yet (a redelivered batch judges only what is missing; two
 * holders never store a cell twice). The process whose batch brings the counters up to the cells
 * enqueued so far moves the run on — one conditional update picks it — enqueueing the next wave
 * (planned again from the stored request) or, after the last, ending the run (lifecycle.ts); only the
 * process whose `onlyIfActive` update wins announces it. Progress goes out on NOTIFY (`progressChannel`,
 * the execution id) for streams in other processes (stream.ts).
 */
import "server-only";
import { z } from "zod";
import { getExecutionRow, listActiveExecutionIds, markExecutionProcessing } from "@/db/repositories/executions";
import { cellsWithResult, maxResultId } from "@/db/repositories/evaluation-results";
import { claimNextWave } from "@/db/repositories/execution-queue";
import { listNodes } from "@/db/repositories/metrics";
import type { PipelineExecutionRow, PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { getNotifier, subscribe as subscribeCluster } from "@/lib/cluster/notify";
import { cancelExecutionJobs, enqueueCellBatches, executionJobCounts, startQueue, workCells, type CellJob, type StopOutcome } from "@/lib/jobs/cell-queue";
import { acquire, type SemaphoreRelease } from "@/lib/jobs/semaphore";
import { getConfig } from "@/lib/config";
import { getJudgeConfig, resolveModelName, type CallGate } from "@/lib/judge";
import { existingLimiter } from "@/lib/judge/limiter";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import type { ExecutionMeta, RunRequest } from "@/lib/schemas/executions";
import { batchSizeOf } from "./batch-size";
import { defineJobKind, LocalBudgetMeter } from "@/lib/jobs";
import { cellRunner } from "./cells";
import { queuedResults, runBudget } from "./cluster-results";
import { dependencyWaves } from "./dependencies";
import { endRun, failRun, INTERRUPTED_MESSAGE, runJobStore, type RunEngine } from "./lifecycle";
import { planRun, type Cell, type Plan } from "./plan";
import { isActiveStatus } from "@/lib/execution-status";

/** NOTIFY channel: the id of an execution that has new results or a new status. */
export const progressChannel = "turnscope_run_progress";
/** Judge cells per queued batch in async mode: small enough that processes share a run evenly. */
export const JUDGE_CELLS_PER_BATCH = 10;
/** A pending run older than this without queued batches was left by a dead process (enqueue never happened). */
const ORPHAN_PENDING_MS = 60_000;
export const ORPHANED_MESSAGE =
  "run stopped: no process has any of its batches any more (a batch's last attempt was lost, or the next wave was never enqueued); retry finishes it";

/** What a queued run keeps in `meta.queue` (not part of the API's meta). */
export type QueueMeta = {
  request: RunRequest;
  /** The dependency wave enqueued last (0-based) and how many waves the plan had. */
  wave: number;
  waves: number;
  /** Cells of every wave enqueued so far: the run moves on when its counters reach this. */
  enqueued: number;
  /** The plan judges `retry` by the results up to this id, so a later wave's re-plan matches the first. */
  max_result_id: number;
};

const cellSchema = z.object({
  nodeId: z.number().int(),
  entityType: z.enum(["conversation", "message", "step"]),
  entityId: z.number().int(),
  conversationId: z.number().int(),
  messageId: z.number().int().nullable(),
  stepId: z.number().int().nullable(),
});
type QueuedCell = z.infer<typeof cellSchema>;

type RunnerState = {
  starting: Promise<void> | null;
  stop: ((graceMs?: number) => Promise<StopOutcome>) | null;
  /** Batches this process is working now, by job id: settles when the handler returns. */
  running: Map<string, Promise<unknown>>;
  /** False in a process that only enqueues and follows runs (the cluster bench's API process). */
  worksHere: boolean;
  /** Whether the runs' lib/jobs kind was booted here (its sweep runs until the process ends), and the runs the orphan sweep found orphaned last time. */
  jobsBooted: boolean;
  suspects: Set<number>;
};
const state = processSingleton<RunnerState>("runner.cluster", () => ({ starting: null, stop: null, running: new Map(), worksHere: true, jobsBooted: false, suspects: new Set() }));

/** Make this process enqueue and follow runs without working their batches (before its first run). */
export function enqueueOnly(): void {
  state.worksHere = false;
}

/**
 * Start this process's share of the cluster's work (idempotent): the queue client and WORKER_CONCURRENCY
 * batches at once. Server processes call it at boot (instrumentation.ts) and before enqueueing.
 */
export function startClusterRunner(): Promise<void> {
  state.starting ??= (async () => {
    await startQueue();
    if (state.worksHere) state.stop = workCells(handleCellBatch, { concurrency: getConfig().WORKER_CONCURRENCY }).stop;
    // Runs no process can finish end failed: those left when this process starts at once, the others on
    // the orphan sweep every half lease (lib/jobs); cancels other processes write are heard.
    if (!state.jobsBooted) {
      state.jobsBooted = true;
      await queuedEngine.jobs.boot();
    }
  })().catch((error: unknown) => {
    state.starting = null;
    throw error;
  });
  return state.starting;
}

/**
 * Stop working batches in this process: running ones get `graceMs` to finish, the rest go back to the
 * queue for other processes. Returns how many finished and how many were given back.
 */
export async function stopClusterRunner(graceMs: number): Promise<StopOutcome> {
  const stop = state.stop;
  state.stop = null;
  state.starting = null;
  if (!stop) return { finished: 0, aborted: 0 };
  // The worker stops taking batches at once (waiting out the grace period first would let it fill every
  // slot freed meanwhile with a batch it then gives back), gives the running ones the grace period, and
  // returns the rest to the queue.
  return await stop(graceMs);
}

/** The body of `npm run worker` and of every server's in-process worker: one queued batch of cells. */
export async function handleCellBatch(job: CellJob, signal: AbortSignal): Promise<void> {
  const work = workBatch(job, signal);
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  // Per attempt: a batch whose lease this process lost can come back to it as its next attempt.
  const attempt = `${job.jobId}:${job.attempt}`;
  state.running.set(attempt, settled);
  try {
    await work;
  } catch (error) {
    // The queue retries a batch that threw; after its last attempt the run could never add up, so it
    // ends failed with the reason (a `retry` run finishes it) rather than staying active for good.
    if (!job.finalAttempt || signal.aborted) throw error;
    await failRun(queuedEngine, job.executionId, `run stopped: ${(error as Error).message}`);
  } finally {
    state.running.delete(attempt);
  }
}

async function workBatch(job: CellJob, signal: AbortSignal): Promise<void> {
  const queuedCells = z.array(cellSchema).parse(job.cells);
  const row = await getExecutionRow(job.executionId);
  if (!row || !isActiveStatus(row.status)) return;
  const queue = queueMetaOf(row);
  if (!queue) throw new Error(`execution ${row.id} has no queued request`);
  const req = queue.request;
  await markExecutionProcessing(row.id, new Date().toISOString());
  const allNodes = new Map((await listNodes({ datasetId: row.datasetId })).map((n) => [n.id, n]));
  // A batch worked again (its process died or lost its lease mid-batch) skips the cells already saved:
  // judging them again would pay the provider twice for a result the save then drops.
  const saved = job.attempt > 1 ? await cellsWithResult(row.id, queuedCells.map((c) => ({ pipelineNodeId: c.nodeId, entityType: c.entityType, entityId: c.entityId }))) : null;
  const cells: Cell[] = [];
  for (const c of queuedCells) {
    const node = allNodes.get(c.nodeId);
    // A metric deleted mid-run takes its results with it: the run cannot add up any more.
    if (!node) return void (await failRun(queuedEngine, row.id, `run stopped: metric ${c.nodeId} was deleted during the run`));
    if (saved?.has(`${c.nodeId}:${c.entityType}:${c.entityId}`)) continue;
    cells.push(toCell(c, node));
  }
  const batchSize = batchSizeOf(req);
  const leaseMs = getConfig().JOB_VISIBILITY_TIMEOUT_SECONDS * 1000;
  // What every process's batches of the run saved so far (read incrementally), before each call goes out
  // and before each reply is saved, plus what landed in this process's batches and waits for its save: the
  // first to see the saved spend at the limit ends the run; until the end reaches the other batches, none
  // of them calls or saves more.
  const limit = req.max_cost_usd;
  const budget = limit != null ? runBudget(row.id, limit, () => stopForBudget(row.id, limit)) : undefined;
  if (budget && !(await budget.underLimit())) return;
  const runner = cellRunner({
    execution: row,
    req,
    allNodes,
    total: row.totalEvaluations,
    firstModel: resolveModelName(req.model_name, cells[0]?.node.modelName),
    signal,
    // A shutdown aborts the signal once its grace period is over; the batch then goes back to the queue.
    stopped: () => false,
    deps: {},
    results: (context) => queuedResults(context, budget),
    // batch_size and the model's limit hold across the cluster: every process's calls share these slots.
    callSlots: { gate: (model) => clusterCallGate(`execution:${row.id}`, batchSize, model, leaseMs) },
    meter: budget ?? new LocalBudgetMeter(),
  });
  await runner.runChecks(cells.filter((c) => c.node.kind === "check"));
  const judged = cells.filter((c) => c.node.kind !== "check");
  // A cell that throws (a database error) ends the batch only once its other cells in flight are over:
  // nothing of it runs on after the handler returns and the queue retries it.
  // Sync mode: one cell at a time, in grid order, as an in-process run does.
  await runner.evaluateAll(judged);
  // Cancelled, lease lost, or shutting down: what is missing is another attempt's (or nobody's) to do.
  if (signal.aborted) return;
  // Calls stopped on replies that were to reach the limit once saved; if the saved spend (read now, this
  // batch's replies saved) is still under it, the cells never started would never be judged and the run
  // would never end: the batch is worked again (the next attempt skips the cells saved).
  if (budget?.stoppedShort && (await budget.underLimit())) {
    throw new Error("calls stopped for a budget the saved spend did not reach; the batch is worked again");
  }
  await publishProgress(row.id);
  await advance(row.id);
}

/**
 * A provider call's slots across the cluster: one of the run's (`batch_size`) and then one of the
 * model's (JUDGE_MAX_CONCURRENCY, shared by every run and process calling it), always in that order, so
 * two waiters never hold what the other waits for. The process's own adaptive limiter (lib/judge) still
 * lowers its share when the provider answers 429.
 */
function clusterCallGate(runKey: string, batchSize: number, model: string, leaseMs: number): CallGate {
  return async (signal) => {
    const run = await acquire(runKey, batchSize, { signal, leaseMs });
    let forModel: SemaphoreRelease;
    try {
      forModel = await acquire(`model:${model}`, getJudgeConfig().maxConcurrency, { signal, leaseMs });
    } catch (error) {
      await run().catch(() => undefined);
      throw error;
    }
    const leave = () => {
      for (const release of [forModel, run]) void release().catch((err: unknown) => log.warn("runner: a semaphore release failed; its lease frees it", { err }));
    };
    // Cancelled while the last slot was being taken (two round trips): no call goes out after the cancel.
    if (signal?.aborted) {
      leave();
      signal.throwIfAborted();
    }
    return leave;
  };
}

/**
 * A queued run's start after the execution row exists: enqueue its first wave (or finish a run
 * without cells at once). The plan was made with `queue.max_result_id` (see QueueMeta).
 */
async function enqueueFirstWave(row: PipelineExecutionRow, plan: Plan, req: RunRequest): Promise<void> {
  await startClusterRunner();
  const first = dependencyWaves(plan.cells)[0] ?? [];
  if (first.length === 0) return void (await advance(row.id));
  await enqueueCellBatches(row.id, batchesOf(first, req));
}

/** The queue part of a new run's meta. */
function newQueueMeta(req: RunRequest, plan: Plan, resultsUpTo: number): QueueMeta {
  const waves = dependencyWaves(plan.cells);
  return { request: req, wave: 0, waves: waves.length, enqueued: waves[0]?.length ?? 0, max_result_id: resultsUpTo };
}

/**
 * A wave's batches: its check cells in one (they cost no judge call, and one batch keeps their results
 * and events in order), its judge cells in batches of JUDGE_CELLS_PER_BATCH — or, in sync mode, all in
 * one batch, evaluated in grid order one at a time as an in-process run does.
 */
function batchesOf(wave: Cell[], req: RunRequest): QueuedCell[][] {
  const checks = wave.filter((c) => c.node.kind === "check").map(toQueued);
  const judged = wave.filter((c) => c.node.kind !== "check").map(toQueued);
  const batches: QueuedCell[][] = checks.length ? [checks] : [];
  const size = req.execution_mode === "async" ? JUDGE_CELLS_PER_BATCH : Math.max(1, judged.length);
  for (let i = 0; i < judged.length; i += size) batches.push(judged.slice(i, i + size));
  return batches;
}

/**
 * Once every cell enqueued so far has its result, move the run on: the one process whose conditional
 * update wins enqueues the next wave; after the last wave the execution is finalised.
 */
async function advance(executionId: number): Promise<void> {
  for (;;) {
    const row = await getExecutionRow(executionId);
    if (!row || !isActiveStatus(row.status)) return;
    const queue = queueMetaOf(row);
    if (!queue) return;
    const counted = row.successfulEvaluations + row.failedEvaluations + row.skippedEvaluations;
    if (counted < queue.enqueued) return;
    const nextWave = queue.wave + 1;
    if (nextWave >= queue.waves) return void (await finalise(row));
    let next: Cell[];
    try {
      next = dependencyWaves((await planRun(queue.request, { resultsUpTo: queue.max_result_id })).cells)[nextWave] ?? [];
    } catch (error) {
      return void (await failRun(queuedEngine, executionId, `run stopped: ${(error as Error).message}`));
    }
    if (!(await claimNextWave(executionId, queue.wave, queue.enqueued + next.length))) return;
    if (next.length > 0) return void (await enqueueCellBatches(executionId, batchesOf(next, queue.request)));
    // An empty wave (the dataset changed since the plan): go on to the one after.
  }
}

/**
 * A queued run reached its max_cost_usd: it ends cancelled with `stop_reason: "budget"` (once: the end
 * is written only while the run is active), its results so far kept, its other batches dropped or aborted (ended).
 */
async function stopForBudget(executionId: number, limitUsd: number): Promise<void> {
  const row = await getExecutionRow(executionId);
  if (!row || !isActiveStatus(row.status)) return;
  const meta = row.meta as ExecutionMeta & { queue?: QueueMeta };
  const model = resolveModelName(meta.queue?.request.model_name);
  await endRun(queuedEngine, row, { rateLimits: meta.rate_limits ?? 0, concurrencyLimit: existingLimiter(model)?.currentLimit ?? meta.concurrency_limit ?? null, budgetUsd: limitUsd });
}

/** The run's end after its last wave: status and totals (lifecycle.ts), with the 429s every process counted into meta. */
async function finalise(row: PipelineExecutionRow): Promise<void> {
  const meta = row.meta as ExecutionMeta & { queue?: QueueMeta };
  const model = resolveModelName(meta.queue?.request.model_name);
  await endRun(queuedEngine, row, { rateLimits: meta.rate_limits ?? 0, concurrencyLimit: existingLimiter(model)?.currentLimit ?? meta.concurrency_limit ?? null });
}

export const queuedEngine: RunEngine = {
  name: "queued",
  // Runs as a lib/jobs kind: a cancel marks the run cancelled (from then on no process saves a result of
  // it), then its queued batches are dropped and its running ones aborted in every process (ended). Start-up
  // recovery ends at once the runs with no work left in any process; the sweep, those found so twice.
  jobs: defineJobKind({
    name: "run",
    store: runJobStore(() => queuedEngine, {
      unfinished: () => recoverOrphanedRuns(),
      expired: () => orphanSweep(),
    }),
    expired: ORPHANED_MESSAGE,
    interrupted: INTERRUPTED_MESSAGE,
    recoversShared: true,
  }),
  boot: () => startClusterRunner(),
  planBound: () => maxResultId(),
  runMeta: (req, plan, resultsUpTo) => ({ queue: newQueueMeta(req, plan, resultsUpTo ?? 0) }),
  start: (row, plan, req) => enqueueFirstWave(row, plan, req),
  async ended(final) {
    await startQueue();
    // A run stopped by its budget keeps its batches: those working finish the calls they have out (each
    // reply counted, saved or not) and start none; the ones not started yet see the spend and return at once.
    // Cancelling them would abort calls the provider may already have answered and billed.
    if ((final.meta as { stop_reason?: string } | null)?.stop_reason === "budget") return void (await publishProgress(final.id));
    await cancelExecutionJobs(final.id).catch((err: unknown) => log.warn("runner: could not drop an ended run's batches", { execution_id: final.id, err }));
    await publishProgress(final.id);
  },
  waitFor: (executionId) => waitForQueuedExecution(executionId),
  isLive: (executionId) => executionIsLive(executionId),
  // Its batches finish within the grace period or go back to the queue: other processes (or this one
  // after a restart) finish the runs.
  drain: (graceMs) => stopClusterRunner(graceMs),
  async followOthers(executionId, onProgress) {
    const unsubscribe = await subscribeCluster(progressChannel, (payload) => {
      if (payload === executionId) onProgress();
    });
    return () => void unsubscribe();
  },
};

async function publishProgress(executionId: number): Promise<void> {
  await getNotifier()
    .publish(progressChannel, executionId)
    .catch((err: unknown) => log.warn("runner: progress notification not sent", { execution_id: executionId, err }));
}

/** Whether any process has (or will have) work of the execution: batches queued, waiting for a retry, or running. */
export async function executionIsLive(executionId: number): Promise<boolean> {
  await startQueue();
  const counts = await executionJobCounts(executionId);
  return counts.created + counts.retry + counts.active > 0;
}

/** Resolves once the execution is final or gone (any process may be running it). */
export async function waitForQueuedExecution(executionId: number, pollMs = 50): Promise<void> {
  for (;;) {
    const row = await getExecutionRow(executionId);
    if (!row || !isActiveStatus(row.status)) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * At start-up on PostgreSQL: fail only the active executions no process can finish — none of their
 * batches is queued, waiting or running (a batch that failed for good, or a process that died between
 * two waves), and, for pending ones, not just started. Other processes' live runs are left alone.
 */
export async function recoverOrphanedRuns(): Promise<number[]> {
  const failed: number[] = [];
  for (const id of await listActiveExecutionIds()) {
    const row = await getExecutionRow(id);
    if (!row || !isActiveStatus(row.status)) continue;
    if (row.status === "pending" && Date.now() - Date.parse(row.createdAt) < ORPHAN_PENDING_MS) continue;
    if (await executionIsLive(id)) continue;
    failed.push(id);
  }
  return failed;
}

/**
 * One look for active runs no process can finish any more (recoverOrphanedRuns) while the servers run,
 * not only when one starts: the last attempt of a batch lost with its process or its lease (the queue
 * fails the job, no handler ever throws), or a wave claimed whose batches were never enqueued. A run
 * must be found so on two sweeps in a row (half a lease apart: lib/jobs) before it is failed, so the moment between
 * a wave's claim and its enqueue is never mistaken for one. Returns the runs it failed.
 */
export async function orphanSweep(): Promise<number[]> {
  const now = new Set(await recoverOrphanedRuns());
  const failed: number[] = [];
  for (const id of now) {
    if (!state.suspects.has(id)) continue;
    await failRun(queuedEngine, id, ORPHANED_MESSAGE);
    failed.push(id);
  }
  state.suspects = new Set([...now].filter((id) => !failed.includes(id)));
  return failed;
}

function queueMetaOf(row: PipelineExecutionRow): QueueMeta | undefined {
  return (row.meta as { queue?: QueueMeta } | null)?.queue;
}

function toQueued(c: Cell): QueuedCell {
  return { nodeId: c.node.id, entityType: c.entityType, entityId: c.entityId, conversationId: c.conversationId, messageId: c.messageId, stepId: c.stepId };
}

function toCell(c: QueuedCell, node: PipelineNodeRow): Cell {
  return { node, entityType: c.entityType as EvaluationLevel, entityId: c.entityId, conversationId: c.conversationId, messageId: c.messageId, stepId: c.stepId };
}
