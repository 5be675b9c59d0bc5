/**
 * The in-process engine (SQLite): a run is worked inside the server that started it, independent of
 * any connection — wave by wave, check cells first, then the judge's cells with at most batch_size calls
 * in flight (1 in sync mode) — and a cancel aborts its judge calls in flight; nothing is written after it.
 */
import "server-only";
import { insertResults, type NewResult } from "@/db/repositories/evaluation-results";
import { getExecutionRow, listActiveExecutionIds, updateExecution } from "@/db/repositories/executions";
import type { PipelineExecutionRow } from "@/db/schema";
import { isActiveStatus } from "@/lib/execution-status";
import { defineJobKind, LocalBudgetMeter } from "@/lib/jobs";
import { resolveModelName } from "@/lib/judge";
import { AdaptiveLimiter } from "@/lib/judge/limiter";
import type { RunRequest } from "@/lib/schemas/executions";
import { batchSizeOf } from "./batch-size";
import type { ResultSink, ResultSinkContext, SavedResult } from "./cell-record";
import { cellRunner, type RunnerDeps } from "./cells";
import type { CellOutcome } from "./check-cell";
import { dependencyWaves } from "./dependencies";
import { endRun, failRun, INTERRUPTED_MESSAGE, runJobStore, runnerState, SHUTDOWN_MESSAGE, type RunEngine } from "./lifecycle";
import type { Plan } from "./plan";

export const inProcessEngine: RunEngine = {
  name: "in-process",
  // A run is a lib/jobs job of this process: its abort signal (every cell in flight or waiting for a call
  // slot listens on it), its lease (a renewal that finds the run ended stops its calls), cancel (the run
  // stops here and writes `cancelled` with its totals itself; the row is marked only if it could not) and drain.
  jobs: defineJobKind({
    name: "run",
    store: runJobStore(() => inProcessEngine, {
      // Only this process works its runs: at start-up every other active one was left by a dead server.
      unfinished: async () => (await listActiveExecutionIds()).filter((id) => !inProcessEngine.jobs.worksHere(id)),
      // Nobody else works them while this process runs: none is lost meanwhile.
      expired: async () => [],
    }),
    expired: INTERRUPTED_MESSAGE,
    interrupted: INTERRUPTED_MESSAGE,
    endsOnCancel: true,
  }),
  boot: () => inProcessEngine.jobs.boot(),
  planBound: async () => undefined,
  runMeta: () => ({}),

  async start(row, plan, req, deps) {
    // From the next turn of the loop, so the 202 answer goes out first.
    inProcessEngine.jobs.start(
      row.id,
      (job) => executeRun(row, plan, req, job.signal, deps),
      (error) => failRun(inProcessEngine, row.id, `run stopped: ${error.message}`),
    );
  },

  ended: async () => undefined,
  waitFor: (executionId) => inProcessEngine.jobs.waitFor(executionId),
  isLive: async (executionId) => inProcessEngine.jobs.worksHere(executionId),
  drain: (graceMs) => inProcessEngine.jobs.drain(graceMs, SHUTDOWN_MESSAGE),
  // Nobody else saves its cells: this process's own events wake its streams.
  followOthers: async () => () => undefined,
};

async function executeRun(row: PipelineExecutionRow, plan: Plan, req: RunRequest, signal: AbortSignal, deps: RunnerDeps): Promise<void> {
  const startedAt = (deps.now ?? Date.now)();
  await updateExecution(row.id, { status: "processing", startedAt: new Date(startedAt).toISOString() }, { onlyIfActive: true });
  const total = plan.cells.length;
  // async: batch_size judge calls in flight (this process's slots: nobody else works the run), the next
  // cells prepared and the last ones saved meanwhile.
  const slots = req.execution_mode === "async" ? new AdaptiveLimiter(batchSizeOf(req)) : undefined;
  // Once the budget is reached no call goes out (each asks the meter once its slot is held); the calls
  // already out finish and are saved and counted, so the overshoot is at most those calls, each on the bill.
  const meter = new LocalBudgetMeter(req.max_cost_usd ?? null);
  const cells = cellRunner({
    execution: row,
    req,
    allNodes: plan.allNodes,
    total,
    firstModel: resolveModelName(req.model_name, plan.cells[0]?.node.modelName),
    signal,
    stopped: () => runnerState.draining,
    deps,
    results: inProcessResults,
    callSlots: slots && { gate: () => (s, o) => slots.acquire(s, o).then((slot) => slot.release) },
    meter,
  });

  // Wave by wave (dependencies before dependents); in each, check cells first, written in chunks
  // (they cost no judge call), then the judge's cells.
  for (const wave of dependencyWaves(plan.cells)) {
    await cells.runChecks(wave.filter((c) => c.node.kind === "check"));
    // A cell that throws (a database error) fails the run only once the cells in flight are over, and no
    // further cell starts: nothing of the run goes on after it is marked failed.
    await cells.evaluateAll(wave.filter((c) => c.node.kind !== "check"));
  }

  // A shutdown that left cells undone ends the run as failed (interrupted) so `retry` finishes it.
  const reason = signal.aborted ? (signal.reason as Error | undefined)?.message : undefined;
  const cancelled = reason === "cancelled";
  const overBudget = !cancelled && meter.reached && cells.totals.done < total;
  const interrupted = !cancelled && !overBudget && runnerState.draining && cells.totals.done < total;
  await endRun(inProcessEngine, row, {
    cancelled,
    interrupted: interrupted ? SHUTDOWN_MESSAGE : undefined,
    rateLimits: cells.totals.rateLimits,
    hedges: cells.totals.hedges,
    concurrencyLimit: cells.limitNow(),
    startedAt,
    ...(overBudget ? { budgetUsd: req.max_cost_usd! } : {}),
  });
}

/**
 * The in-process engine's result sink: nobody else works the run, so results are saved as they come —
 * in groups: the cells that finish in one turn of the event loop (the judge answers a batch's calls at
 * about the same time) share one transaction and one multi-row INSERT, where a transaction per cell was
 * the largest single cost of a run after the judge call. The run's 429s are counted as cells are, and the
 * live limiter figures written into `meta` while the run goes on, at most once a second.
 */
function inProcessResults({ executionId, totals, limitNow, signal, now }: ResultSinkContext): ResultSink {
  type Waiting = { outcome: CellOutcome; values: NewResult; announce: (result: SavedResult) => Promise<void>; resolve: () => void; reject: (error: unknown) => void };
  let group: Waiting[] = [];
  const saveGroup = async () => {
    const pending = group;
    group = [];
    try {
      // A cancel that came after these cells finished but before their write: nothing is written after
      // it. Checked synchronously before the (synchronous, on SQLite) write, as the per-cell save did.
      if (signal.aborted) return pending.forEach((p) => p.resolve());
      const saved = await insertResults(
        executionId,
        pending.map((p) => p.values),
        pending.flatMap((p) => (p.outcome.cacheEntry ? [p.outcome.cacheEntry] : [])),
      );
      for (const [i, p] of pending.entries()) await p.announce({ saved: saved[i] });
      pending.forEach((p) => p.resolve());
    } catch (error) {
      pending.forEach((p) => p.reject(error));
    }
  };
  let metaWrittenAt = now();
  const writeLiveMeta = async () => {
    const current = await getExecutionRow(executionId);
    if (!current || !isActiveStatus(current.status)) return;
    await updateExecution(executionId, { meta: { ...(current.meta as object), rate_limits: totals.rateLimits, hedges: totals.hedges, concurrency_limit: limitNow() } }, { onlyIfActive: true });
  };
  return {
    record: (outcome, values, announce) =>
      new Promise<void>((resolve, reject) => {
        group.push({ outcome, values, announce, resolve, reject });
        if (group.length === 1) setImmediate(() => void saveGroup());
      }),
    async recordMany(values, announce) {
      const saved = await insertResults(executionId, values);
      for (const [i, row] of saved.entries()) await announce(i, { saved: row });
    },
    counted(outcome) {
      totals.rateLimits += outcome.rateLimited ?? 0;
      if (now() - metaWrittenAt >= 1000) {
        metaWrittenAt = now();
        return writeLiveMeta();
      }
    },
  };
}
