/**
 * A run's lifecycle, written once for both engines: what an engine is (the steps that differ — where
 * cells are worked, how work is stopped, who else must hear of a change), and the steps that are the
 * same whichever engine runs the cells — ending a run with its totals, failing it, cancelling it,
 * recovering runs nobody can finish. The engine is chosen once, at boot (engine.ts).
 */
import "server-only";
import { budgetMessage } from "./budget";
import { finishExecution, getExecutionRow, updateExecution, type ModelTotals } from "@/db/repositories/executions";
import type { PipelineExecutionRow } from "@/db/schema";
import { isActiveStatus } from "@/lib/execution-status";
import type { JobKind, JobStore } from "@/lib/jobs";
import { costOf } from "@/lib/judge";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { toExecution } from "@/lib/results/serialize";
import type { ExecutionMeta, RunRequest } from "@/lib/schemas/executions";
import type { RunnerDeps } from "./cells";
import { emit } from "./events";
import type { Plan } from "./plan";

export type StopOutcome = { finished: number; aborted: number };

/** Set on SIGTERM: no new runs, no new cells; cells in flight may finish. */
export const runnerState = processSingleton("runner.lifecycle", () => ({ draining: false }));
export const SHUTDOWN_MESSAGE = "interrupted: server shutting down";
export const INTERRUPTED_MESSAGE = "interrupted: server restarted";

/** How a run's cells are worked: in the process that started it (SQLite), or as queued batches any process of a PostgreSQL cluster works. */
export interface RunEngine {
  readonly name: "in-process" | "queued";
  /** Start this process's share of the work (at boot; idempotent). */
  boot(): Promise<void>;
  /** The result id a new run's plan is bound to (a queued run plans each wave again later), if any. */
  planBound(): Promise<number | undefined>;
  /** What the engine keeps in a new run's meta besides the API's fields. */
  runMeta(req: RunRequest, plan: Plan, resultsUpTo: number | undefined): Record<string, unknown>;
  /**
   * Runs as a lib/jobs kind, registered by the engine with how its runs are ended (runJobStore): cancel from
   * any process, the sweep of runs no process can finish, start-up recovery, and (in process) each run's
   * abort signal, lease and drain.
   */
  readonly jobs: JobKind;
  /** Work the run, whose execution row exists (pending). Throws if it could not be started. */
  start(row: PipelineExecutionRow, plan: Plan, req: RunRequest, deps: RunnerDeps): Promise<void>;
  /** Tell whoever must know that the run ended (other processes' streams) and drop what is left of its work. */
  ended(final: PipelineExecutionRow): Promise<void>;
  /** Resolves once the run is over (tests, shutdown). */
  waitFor(executionId: number): Promise<void>;
  /** Whether any process is working the run, or will. */
  isLive(executionId: number): Promise<boolean>;
  /** Take no new work; give running work `graceMs`, then stop it. */
  drain(graceMs: number): Promise<StopOutcome>;
  /** Wake `onProgress` when another process saved cells of the run; resolves to the unsubscribe. */
  followOthers(executionId: number, onProgress: () => void): Promise<() => void>;
}

/** The results' totals of a run: its final meta's tokens, cached cells and cost, summed from what was saved. */
/** A run's tokens, cached cells and cost from its results' totals per model. */
function totalsOf(byModel: ModelTotals[]): Pick<ExecutionMeta, "input_tokens" | "output_tokens" | "cached_evaluations" | "cost_usd"> {
  let inputTokens = 0;
  let outputTokens = 0;
  let cached = 0;
  let results = 0;
  let cost = 0;
  let priced = true;
  for (const t of byModel) {
    inputTokens += t.inputTokens;
    outputTokens += t.outputTokens;
    cached += t.cached;
    results += t.results;
    // Checks and skipped cells use no model: they cost nothing rather than an unknown price.
    if (t.inputTokens + t.outputTokens === 0) continue;
    const c = costOf(t.model ?? "", t.inputTokens, t.outputTokens);
    if (c === null) priced = false;
    else cost += c;
  }
  return { input_tokens: inputTokens, output_tokens: outputTokens, cached_evaluations: cached, cost_usd: priced && results > 0 ? cost : results === 0 ? 0 : null };
}

export type RunEnd = {
  /** The run was cancelled, or stopped by a shutdown with cells left undone (in process). */
  cancelled?: boolean;
  interrupted?: string;
  /** The provider's 429s over the run, and the model's live limit of calls in flight at its end. */
  rateLimits: number;
  concurrencyLimit: number | null;
  /** The hedged requests of an in-process run; a queued run's are already counted in meta by every process (kept). */
  hedges?: number;
  startedAt?: number;
  /** The run reached its max_cost_usd (this one): it ends cancelled with `stop_reason: "budget"`. */
  budgetUsd?: number;
};

/**
 * End a run that worked all it could: its final status (failed if a cell failed, or `interrupted`,
 * else completed; cancelled when it was), duration and totals, written once (only while it is active),
 * then announced. Returns the final row, or undefined if it had ended already.
 */
export async function endRun(engine: RunEngine, row: PipelineExecutionRow, end: RunEnd): Promise<PipelineExecutionRow | undefined> {
  // Read and written holding the run's row: a result saved, or a late reply counted (addUnsavedUsage),
  // between reading the totals and writing them was lost (a capped queued run reported fewer tokens
  // than the provider billed).
  const final = await finishExecution(row.id, (current, byModel) => {
    const meta = (current.meta as ExecutionMeta | null) ?? {};
    const completedAt = Date.now();
    const startedAt = end.startedAt ?? (current.startedAt ? Date.parse(current.startedAt) : completedAt);
    const overBudget = !end.interrupted && end.budgetUsd !== undefined;
    const status = end.interrupted ? "failed" : end.cancelled || overBudget ? "cancelled" : current.failedEvaluations > 0 ? "failed" : "completed";
    const totals = totalsOf(byModel);
    // Replies a queued run could not save (past its budget, or after its end) were billed all the same.
    const unsaved = meta as { unsaved_input_tokens?: number; unsaved_output_tokens?: number; unsaved_cost_usd?: number | null };
    totals.input_tokens += unsaved.unsaved_input_tokens ?? 0;
    totals.output_tokens += unsaved.unsaved_output_tokens ?? 0;
    if (unsaved.unsaved_cost_usd !== undefined) totals.cost_usd = unsaved.unsaved_cost_usd === null || totals.cost_usd === null ? null : totals.cost_usd + unsaved.unsaved_cost_usd;
    const stopMessage = end.interrupted ?? (overBudget ? budgetMessage(totals.cost_usd ?? 0, end.budgetUsd!) : undefined);
    const errors = stopMessage
      ? [...((current.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message: stopMessage }]
      : undefined;
    const finalMeta = {
      ...meta,
      ...totals,
      rate_limits: end.rateLimits,
      ...(end.hedges === undefined ? {} : { hedges: end.hedges }),
      concurrency_limit: end.concurrencyLimit,
      ...(overBudget ? { stop_reason: "budget" as const } : {}),
    };
    return {
      status,
      startedAt: current.startedAt ?? new Date(startedAt).toISOString(),
      completedAt: new Date(completedAt).toISOString(),
      durationMs: completedAt - startedAt,
      meta: end.interrupted ? { ...finalMeta, interrupted: true } : finalMeta,
      ...(errors ? { errors } : {}),
    };
  });
  if (final) await announceEnd(engine, final);
  return final;
}

/** A bug, a database error or a lost batch stopped the run: it ends failed with the reason rather than staying active. */
export async function failRun(engine: RunEngine, executionId: number, message: string): Promise<void> {
  log.error("execution failed", { execution_id: executionId, message });
  const row = await getExecutionRow(executionId);
  if (!row) return;
  const errors = [...((row.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message }];
  const final = await updateExecution(executionId, { status: "failed", completedAt: new Date().toISOString(), errors }, { onlyIfActive: true });
  if (final) await announceEnd(engine, final);
}

/** Mark an active run cancelled (its results so far are kept); from then on no process saves a result of it. */
export async function markCancelled(engine: RunEngine, row: PipelineExecutionRow): Promise<PipelineExecutionRow | undefined> {
  const now = new Date();
  const started = row.startedAt ? Date.parse(row.startedAt) : now.getTime();
  const final = await updateExecution(row.id, { status: "cancelled", completedAt: now.toISOString(), durationMs: now.getTime() - started }, { onlyIfActive: true });
  if (final) await announceEnd(engine, final);
  return final;
}

/** `done` on this process's bus (its streams, tests), then the engine's part (other processes, leftover work). */
async function announceEnd(engine: RunEngine, final: PipelineExecutionRow): Promise<void> {
  const execution = toExecution(final);
  emit(final.id, { event: "done", data: { status: execution.status as "completed" | "failed" | "cancelled", execution } });
  await engine.ended(final);
}

/**
 * How a run's row is leased and ended, for lib/jobs (either engine): a run is still the worker's while it
 * is active (renewal: a run ended elsewhere stops its calls here); a cancel is the run marked cancelled;
 * `unfinished` says which active runs no process can finish any more (at start-up they end failed,
 * interrupted, to be retried); `expired` ends those whose work was lost while the servers run.
 */
export function runJobStore(engine: () => RunEngine, ends: { unfinished(): Promise<number[]>; expired(now: string, message: string): Promise<number[]> }): JobStore {
  return {
    renew: async (id) => {
      const row = await getExecutionRow(id);
      return Boolean(row && isActiveStatus(row.status));
    },
    failExpired: (now, message) => ends.expired(now, message),
    async failUnfinished(message, now) {
      const ids = await ends.unfinished();
      for (const id of ids) {
        const row = await getExecutionRow(id);
        if (!row) continue;
        const errors = [...((row.errors as unknown[]) ?? []), { pipeline_node_id: null, entity_type: null, entity_id: null, message }];
        const meta = { ...(row.meta as object), interrupted: true };
        await updateExecution(id, { status: "failed", completedAt: now, errors, meta }, { onlyIfActive: true });
      }
      return ids.length;
    },
    async cancel(id) {
      const row = await getExecutionRow(id);
      return Boolean(row && isActiveStatus(row.status) && (await markCancelled(engine(), row)));
    },
  };
}
