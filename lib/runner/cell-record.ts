/**
 * Recording a run's cells (lib/runner): the row of each outcome, handed to the engine's result sink to
 * save; then each saved one counted into the runner's totals, its landed cost told to the budget meter as
 * saved, and announced — to the process-wide saved-result listeners (lib/otel/export.ts) and on the run's
 * event bus (only when someone streams it).
 */
import "server-only";
import type { NewResult } from "@/db/repositories/evaluation-results";
import type { EvaluationResultRow } from "@/db/schema";
import type { BudgetMeter } from "@/lib/jobs";
import { costOf, type JudgeOutcome } from "@/lib/judge";
import { toResult } from "@/lib/results/serialize";
import type { CellOutcome } from "./check-cell";
import { emit, hasListeners, hasSavedListeners, progressOf, resultSaved } from "./events";
import type { Cell } from "./plan";

export type CellTotals = {
  done: number;
  inputTokens: number;
  outputTokens: number;
  cached: number;
  cost: number;
  priced: boolean;
  rateLimits: number;
  /** Hedged second requests sent for slow calls (lib/judge/tail.ts). */
  hedges: number;
};

/** What a result sink is given: the runner's running figures, which it may count into. */
export type ResultSinkContext = { executionId: number; totals: CellTotals; limitNow: () => number | null; signal: AbortSignal; now: () => number };

/** A saved result: its row, and how many of the run's cells every process has saved (queued runs; else the runner's own count). */
export type SavedResult = { saved: EvaluationResultRow; counted?: number };

/**
 * Where an engine's outcomes go — what differs between saving in process and saving queued batches. The
 * runner builds the rows and the announcements; the sink saves and calls `announce` for each result it
 * saved, in order (not for one it did not save: a queued cell another attempt saved first, or one its
 * budget refused — the sink then counts the reply's cost itself and tells the meter it is saved).
 */
export type ResultSink = {
  /** Save one judged (or skipped) cell's outcome. */
  record(outcome: CellOutcome, values: NewResult, announce: (result: SavedResult) => Promise<void>): Promise<void>;
  /** Save a chunk of check cells' outcomes with multi-row inserts; `announce` gets each saved one's index. */
  recordMany(values: NewResult[], announce: (index: number, result: SavedResult) => Promise<void>): Promise<void>;
  /** A saved cell was just counted (totals.done, its hedges); its tokens and cost are counted next. */
  counted(outcome: CellOutcome): Promise<void> | void;
  /**
   * A billed call no saved cell carries — a @GOAL extraction, a reply that landed as the run ended —
   * counted in the run at once (a queued run with a budget: every process's meter reads the run's row).
   * Without it a goal extraction's tokens ride on its conversation's first saved cell, and a reply
   * dropped by a cancel is not counted.
   */
  billedApart?(model: string, inputTokens: number, outputTokens: number): Promise<void>;
};

/** The priced cost of a call's tokens; a call that used none (a check, a skip) or an unpriced model costs 0. */
export const pricedUsd = (model: string, input: number, output: number): number => (input + output === 0 ? 0 : (costOf(model, input, output) ?? 0));

export type RecorderOptions = {
  execution: { id: number; datasetId: number };
  /** Cells of the run, for the progress figures of events. */
  total: number;
  totals: CellTotals;
  sink: ResultSink;
  meter: BudgetMeter;
  limitNow: () => number | null;
};

export function cellRecorder({ execution, total, totals, sink, meter, limitNow }: RecorderOptions) {
  const values = (cell: Cell, outcome: CellOutcome): NewResult => ({
    executionId: execution.id,
    pipelineNodeId: cell.node.id,
    datasetId: execution.datasetId,
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

  /** Count a saved cell and announce it; `counted`: cells of the run saved so far by every process (shared runs). */
  const announce = async (cell: Cell, outcome: CellOutcome, saved: EvaluationResultRow, counted?: number) => {
    totals.done++;
    totals.hedges += outcome.hedges ?? 0;
    const counting = sink.counted(outcome);
    if (counting) await counting;
    totals.inputTokens += outcome.inputTokens;
    totals.outputTokens += outcome.outputTokens;
    if (outcome.cached) totals.cached++;
    // Checks and skipped cells use no model: they cost nothing rather than an unknown price.
    const cost = outcome.inputTokens + outcome.outputTokens === 0 ? 0 : costOf(outcome.model, outcome.inputTokens, outcome.outputTokens);
    if (cost === null) totals.priced = false;
    else {
      totals.cost += cost;
      if (cost) meter.saved(cost); // counted since it landed
    }
    if (hasSavedListeners()) {
      resultSaved({
        executionId: execution.id, metricId: cell.node.id, metricName: cell.node.name, entityType: cell.entityType, entityId: cell.entityId, conversationId: cell.conversationId,
        messageId: cell.messageId, stepId: cell.stepId, status: saved.status, score: saved.score, result: saved.result, error: saved.error, model: saved.modelName, createdAt: saved.createdAt,
      });
    }
    if (!hasListeners(execution.id)) return; // nobody streams this run here: skip building the event
    const base = { execution_id: execution.id, pipeline_node_id: cell.node.id, entity_type: cell.entityType, entity_id: cell.entityId };
    const result = toResult(saved);
    const progress = progressOf(counted ?? totals.done, total);
    if (outcome.status !== "failed") {
      emit(execution.id, { event: "complete", id: saved.id, data: { ...base, status: "complete", progress, result } });
    } else {
      emit(execution.id, { event: "error", id: saved.id, data: { ...base, status: "error", progress, error: { message: outcome.error ?? "failed" }, result } });
    }
  };

  return {
    /** Save a cell's outcome (the engine's sink), count it and announce it. */
    record: (cell: Cell, outcome: CellOutcome) => sink.record(outcome, values(cell, outcome), ({ saved, counted }) => announce(cell, outcome, saved, counted)),

    /** Save a chunk of cells' outcomes with multi-row inserts, then count and announce each in order. */
    recordMany: (cells: Cell[], outcomes: CellOutcome[]) =>
      sink.recordMany(
        cells.map((cell, i) => values(cell, outcomes[i])),
        (i, { saved, counted }) => announce(cells[i], outcomes[i], saved, counted),
      ),

    /** A billed reply no cell saves (the run ended under it): counted in the run where the sink can. */
    async dropped(outcome: JudgeOutcome): Promise<void> {
      if (outcome.inputTokens + outcome.outputTokens > 0) await sink.billedApart?.(outcome.model, outcome.inputTokens, outcome.outputTokens);
    },

    /** The `processing` event of a cell, built only when someone listens (check cells announce it too). */
    processing(cell: Cell): void {
      if (!hasListeners(execution.id)) return;
      emit(execution.id, {
        event: "processing",
        data: {
          execution_id: execution.id,
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
    },
  };
}

export type CellRecorder = ReturnType<typeof cellRecorder>;
