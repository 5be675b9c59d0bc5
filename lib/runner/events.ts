/**
 * The per-execution event bus: the runner emits after each result is saved, SSE streams subscribe.
 * One bus per process (see lib/process-state.ts).
 */
import type { EvaluationLevel } from "@/lib/vocabulary";
import { processSingleton } from "@/lib/process-state";
import type { Execution, IndividualResult } from "@/lib/schemas/executions";

type CellFields = {
  execution_id: number;
  pipeline_node_id: number;
  entity_type: EvaluationLevel;
  entity_id: number;
  progress: number;
};

export type RunEvent =
  | {
      event: "processing";
      data: CellFields & {
        status: "processing";
        completed: number;
        total: number;
        /** The judge model's adaptive limit of calls in flight right now (process-wide). */
        concurrency_limit: number | null;
        /** 429s the provider has answered this run's calls with so far. */
        rate_limits: number;
      };
    }
  | { event: "complete"; id: number; data: CellFields & { status: "complete"; result: IndividualResult } }
  | { event: "error"; id: number; data: CellFields & { status: "error"; error: { message: string }; result: IndividualResult } }
  | { event: "done"; data: { status: "completed" | "failed" | "cancelled"; execution: Execution } };

type Listener = (e: RunEvent) => void;

const listeners = processSingleton("runner.listeners", () => new Map<number, Set<Listener>>());

/** Subscribe to one execution's events; returns the unsubscribe function. */
export function subscribe(executionId: number, listener: Listener): () => void {
  let set = listeners.get(executionId);
  if (!set) {
    set = new Set();
    listeners.set(executionId, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(executionId) === set) listeners.delete(executionId);
  };
}

/** Whether anyone listens to the execution: lets the runner skip building events nobody reads. */
export function hasListeners(executionId: number): boolean {
  return listeners.has(executionId);
}

export function emit(executionId: number, e: RunEvent): void {
  for (const listener of listeners.get(executionId) ?? []) {
    try {
      listener(e);
    } catch {
      // A broken subscriber (a closed stream) must never stop the run.
    }
  }
}

/** A cell as saved, for the process-wide listeners (lib/otel/export.ts sends verdicts back onto the traces). */
export type SavedCell = {
  executionId: number;
  metricId: number;
  metricName: string;
  entityType: EvaluationLevel;
  entityId: number;
  conversationId: number;
  messageId: number | null;
  stepId: number | null;
  status: string;
  score: number | null;
  result: unknown;
  error: string | null;
  model: string | null;
  createdAt: string;
};

const savedListeners = processSingleton("runner.saved-listeners", () => new Set<(cell: SavedCell) => void>());

/** Hear of every cell this process saves, whatever the run; returns the unsubscribe function. */
export function onResultSaved(listener: (cell: SavedCell) => void): () => void {
  savedListeners.add(listener);
  return () => void savedListeners.delete(listener);
}

/** Whether anyone hears of saved cells (the runner skips building them otherwise). */
export function hasSavedListeners(): boolean {
  return savedListeners.size > 0;
}

export function resultSaved(cell: SavedCell): void {
  for (const listener of savedListeners) {
    try {
      listener(cell);
    } catch {
      // A listener's fault must never stop the run.
    }
  }
}

/** Percent done, one decimal. */
export function progressOf(done: number, total: number): number {
  return total === 0 ? 100 : Math.round((done * 1000) / total) / 10;
}
