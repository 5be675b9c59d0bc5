/**
 * What a queued run's batch saves and spends (PostgreSQL; cluster-run.ts works the batch): its result sink
 * — each result saved once across processes, a budgeted run's saves one after another under its limit —
 * and its budget meter, the run's saved spend across processes plus what landed in this process's batches.
 */
import "server-only";
import { addExecutionHedges, addExecutionRateLimits, addUnsavedUsage, unsavedCostOf } from "@/db/repositories/execution-queue";
import { insertResultOnce, insertResultsOnce } from "@/db/repositories/evaluation-results";
import { resultTokensSince } from "@/db/repositories/online";
import { SharedBudgetMeter, type LandedPool } from "@/lib/jobs";
import { costOf } from "@/lib/judge";
import { processSingleton } from "@/lib/process-state";
import { pricedUsd, type ResultSink, type ResultSinkContext } from "./cell-record";

/**
 * The queued engine's result sink: a cell may be evaluated again after a redelivery, so a result is
 * saved only when the execution is still active and has none for the cell yet (insertResultOnce), and
 * its announcement counts what every process saved. The 429s and hedges are added to the execution's
 * meta as they are seen, saved or not, since other processes count theirs too. With a budget, this
 * process's saves of the run go one after another, each only while the saved spend is under the limit
 * (never on a reading taken before another reply's save); a reply not saved is counted in the run's meta
 * all the same, as is a call no cell carries (billedApart: a goal extraction, counted where every
 * process's meter reads it).
 */
export function queuedResults({ executionId, totals, signal }: ResultSinkContext, budget?: SharedBudgetMeter): ResultSink {
  const billedApart = (model: string, input: number, output: number) => addUnsavedUsage(executionId, input, output, costOf(model, input, output));
  const save: ResultSink["record"] = async (outcome, values, announce) => {
    if (outcome.rateLimited) {
      totals.rateLimits += outcome.rateLimited;
      await addExecutionRateLimits(executionId, outcome.rateLimited);
    }
    if (outcome.hedges) await addExecutionHedges(executionId, outcome.hedges);
    const once = await insertResultOnce(values, outcome.cacheEntry);
    if (once) return await announce({ saved: once.saved, counted: once.counted });
    // Not saved (the run ended meanwhile, or another process saved the cell first): its call still cost.
    if (outcome.inputTokens + outcome.outputTokens === 0) return;
    await billedApart(outcome.model, outcome.inputTokens, outcome.outputTokens);
    budget?.saved(pricedUsd(outcome.model, outcome.inputTokens, outcome.outputTokens));
  };
  return {
    record: budget
      ? (outcome, values, announce) =>
          oneAtATime(executionId, async () => {
            if (signal.aborted) return;
            const billed = outcome.inputTokens + outcome.outputTokens > 0;
            if (await budget.underLimit()) {
              await save(outcome, values, announce);
              // The saved spend may have reached the limit with this reply: the run ends at once.
              if (billed) await budget.underLimit();
              return;
            }
            // The budget was reached meanwhile (by any process): not saved, but the provider billed it.
            if (billed) await billedApart(outcome.model, outcome.inputTokens, outcome.outputTokens);
            budget.saved(pricedUsd(outcome.model, outcome.inputTokens, outcome.outputTokens));
          })
      : save,
    async recordMany(values, announce) {
      const { saved, counted } = await insertResultsOnce(executionId, values);
      const fresh = saved.filter(Boolean).length;
      let n = 0;
      for (const [i, row] of saved.entries()) if (row) await announce(i, { saved: row, counted: counted - fresh + ++n });
    },
    counted: () => undefined,
    ...(budget ? { billedApart } : {}),
  };
}

/** Budgeted saves of each execution in this process, one after another (see queuedResults). */
const budgetedSaves = processSingleton("runner.cluster.budgeted-saves", () => new Map<number, Promise<void>>());

function oneAtATime(executionId: number, save: () => Promise<void>): Promise<void> {
  const done = (budgetedSaves.get(executionId) ?? Promise.resolve()).then(save);
  const tail = done.catch(() => undefined);
  budgetedSaves.set(executionId, tail);
  void tail.then(() => budgetedSaves.get(executionId) === tail && budgetedSaves.delete(executionId));
  return done;
}

/** Per execution, the priced replies that landed in this process and wait for their save (all its batches here). */
const landedUsd = processSingleton("runner.cluster.landed-usd", () => new Map<number, number>());

/**
 * A batch's budget meter (lib/jobs SharedBudgetMeter): the run's saved spend across processes, what landed
 * in this process's batches of the run (each batch counting only its own let the others start calls past
 * the limit), and `onReached` (the run's end) once the saved spend reaches the limit.
 */
export function runBudget(executionId: number, limitUsd: number, onReached: () => Promise<void>): SharedBudgetMeter {
  const spend = runSpend(executionId);
  const pool: LandedPool = {
    add: (usd) => void landedUsd.set(executionId, (landedUsd.get(executionId) ?? 0) + usd),
    remove: (usd) => {
      const left = (landedUsd.get(executionId) ?? 0) - usd;
      if (left > 1e-12) landedUsd.set(executionId, left);
      else landedUsd.delete(executionId);
    },
    total: () => landedUsd.get(executionId) ?? 0,
  };
  return new SharedBudgetMeter(limitUsd, () => spend.now(), { pool, onReached });
}

/** A queued run's priced cost so far across processes, each reading only the results saved since the last. */
function runSpend(executionId: number): { now(): Promise<number> } {
  let upToId = 0;
  let cost = 0;
  let reading: Promise<number> | undefined;
  const read = async () => {
    for (const t of await resultTokensSince(executionId, upToId)) {
      upToId = Math.max(upToId, t.maxId);
      cost += costOf(t.model ?? "", t.inputTokens, t.outputTokens) ?? 0;
    }
    // Calls counted without a result (goal extractions, replies past the budget): meta.unsaved_cost_usd.
    return cost + (await unsavedCostOf(executionId));
  };
  // Callers at once share one read, but never one that started before the call: it could miss a result
  // saved just before (a budgeted save must see the one before it).
  const next = () => (reading ??= read().finally(() => (reading = undefined)));
  return {
    now: async () => {
      if (reading) await reading.catch(() => undefined);
      return await next();
    },
  };
}
