/**
 * The in-process engine (SQLite): a run is worked inside the server that started it, independent of
 * any connection — wave by wave, check cells first, then the judge's cells with at most batch_size calls
 * in flight (1 in sync mode) — and a cancel aborts its judge calls in flight; nothing is written after it.
 */
import "server-only";
import { setMaxListeners } from "node:events";
import { listActiveExecutionIds, updateExecution } from "@/db/repositories/executions";
import type { PipelineExecutionRow } from "@/db/schema";
import { resolveModelName } from "@/lib/judge";
import { AdaptiveLimiter } from "@/lib/judge/limiter";
import { processSingleton } from "@/lib/process-state";
import type { RunRequest } from "@/lib/schemas/executions";
import { cellRunner, type RunnerDeps } from "./cells";
import { dependencyWaves } from "./dependencies";
import { endRun, failRun, markCancelled, runnerState, SHUTDOWN_MESSAGE, type RunEngine } from "./lifecycle";
import { forEachLimited } from "./limited";
import type { Plan } from "./plan";

type ActiveRun = { controller: AbortController; finished: Promise<void>; datasetId: number };
const active = processSingleton("runner.active", () => new Map<number, ActiveRun>());

export const inProcessEngine: RunEngine = {
  name: "in-process",
  boot: async () => undefined,
  planBound: async () => undefined,
  runMeta: () => ({}),

  async start(row, plan, req, deps) {
    const controller = new AbortController();
    // Every cell in flight or waiting for a call slot listens for the cancel: up to 2 × batch_size
    // listeners by design, not a leak (Node warns past 10).
    setMaxListeners(0, controller.signal);
    const finished = new Promise<void>((resolve) => {
      // Start on the next turn so the 202 answer goes out first.
      setImmediate(() => {
        executeRun(row, plan, req, controller, deps)
          .catch((error: unknown) => failRun(inProcessEngine, row.id, `run stopped: ${(error as Error).message}`))
          .finally(() => {
            active.delete(row.id);
            resolve();
          });
      });
    });
    active.set(row.id, { controller, finished, datasetId: req.dataset_id });
  },

  async cancel(row) {
    const run = active.get(row.id);
    if (run) {
      run.controller.abort(new Error("cancelled"));
      // The run writes `cancelled` itself once its in-flight calls have unwound (they abort at once).
      await Promise.race([run.finished, new Promise((r) => setTimeout(r, 10_000))]);
    }
    // Not running here (its server died), or stuck: cancelled anyway.
    await markCancelled(inProcessEngine, row);
  },

  ended: async () => undefined,

  async waitFor(executionId) {
    await active.get(executionId)?.finished;
  },

  isLive: async (executionId) => active.has(executionId),

  async drain(graceMs) {
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
  },

  // Only this process works its runs: every other active one was left by a dead server.
  orphaned: async () => (await listActiveExecutionIds()).filter((id) => !active.has(id)),

  // Nobody else saves its cells: this process's own events wake its streams.
  followOthers: async () => () => undefined,
};

async function executeRun(row: PipelineExecutionRow, plan: Plan, req: RunRequest, controller: AbortController, deps: RunnerDeps): Promise<void> {
  const signal = controller.signal;
  const startedAt = (deps.now ?? Date.now)();
  await updateExecution(row.id, { status: "processing", startedAt: new Date(startedAt).toISOString() }, { onlyIfActive: true });
  const total = plan.cells.length;
  // async: batch_size judge calls in flight (this process's slots: nobody else works the run), the next
  // cells prepared and the last ones saved meanwhile.
  const slots = req.execution_mode === "async" ? new AdaptiveLimiter(req.batch_size) : undefined;
  let budgetReached = false;
  const cells = cellRunner({
    execution: row,
    req,
    allNodes: plan.allNodes,
    total,
    firstModel: resolveModelName(req.model_name, plan.cells[0]?.node.modelName),
    signal,
    stopped: () => runnerState.draining,
    deps,
    shared: false,
    callSlots: slots && { size: req.batch_size, gate: () => async (s, o) => (await slots.acquire(s, o)).release },
    // Once the budget is reached no call goes out (each is checked before it is sent); the calls already
    // out finish and are saved and counted, so the overshoot is at most those calls, each on the bill.
    budget: req.max_cost_usd != null ? (spent) => void (spent >= req.max_cost_usd! && (budgetReached = true)) : undefined,
    stopStarting: req.max_cost_usd != null ? () => budgetReached : undefined,
  });

  // Wave by wave (dependencies before dependents); in each, check cells first, written in chunks
  // (they cost no judge call), then the judge's cells.
  for (const wave of dependencyWaves(plan.cells)) {
    await cells.runChecks(wave.filter((c) => c.node.kind === "check"));
    // A cell that throws (a database error) fails the run only once the cells in flight are over, and no
    // further cell starts: nothing of the run goes on after it is marked failed.
    await forEachLimited(wave.filter((c) => c.node.kind !== "check"), cells.evaluateAtOnce ?? 1, (cell) => cells.evaluate(cell), cells.bindAtOnce);
  }

  // A shutdown that left cells undone ends the run as failed (interrupted) so `retry` finishes it.
  const reason = signal.aborted ? (signal.reason as Error | undefined)?.message : undefined;
  const cancelled = reason === "cancelled";
  const overBudget = !cancelled && budgetReached && cells.totals.done < total;
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
