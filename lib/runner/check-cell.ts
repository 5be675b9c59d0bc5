/**
 * The runner's branch for check metrics: the verdict of a deterministic check, shaped like a judge
 * outcome (zero tokens, no model call) so results, SSE, aggregates and exports treat it the same.
 */
import "server-only";
import type { PipelineNodeRow } from "@/db/schema";
import type { ResultStatus } from "@/lib/vocabulary";
import { AppError } from "@/lib/errors";
import { checkRunsOffLoop, prepareCheck, type CheckOutcome, type CheckTree } from "@/lib/checks";
import type { JudgeOutcome } from "@/lib/judge";
import { checkOffLoop, INLINE_TEXT_CHARS, treeTextSize } from "./check-thread";
import type { Cell } from "./plan";

type Prepared = ReturnType<typeof prepareCheck>;

/** What the runner records for a cell: a judge's or a check's outcome, or a skip (dependency not met). */
export type CellOutcome = Omit<JudgeOutcome, "status"> & { status: ResultStatus };

export function skippedOutcome(reason: string): CellOutcome {
  return { status: "skipped", result: null, score: null, error: reason, rawOutput: null, model: "", inputTokens: 0, outputTokens: 0, latencyMs: 0, cached: false, attempts: 0 };
}

/**
 * Checks compiled once per metric per run (regexes, JSON Schemas), then called per cell. A check whose
 * work can grow faster than its text runs on the check thread with a time budget when the conversation
 * holds more than a little text (lib/runner/check-thread.ts); the rest run here.
 */
export function checkEvaluator(): (cell: Cell, tree: CheckTree) => JudgeOutcome | Promise<JudgeOutcome> {
  const prepared = new Map<number, Prepared>();
  const forNode = (node: PipelineNodeRow): Prepared => {
    let fn = prepared.get(node.id);
    if (!fn) {
      // Saved checks were validated on save; a check that no longer parses fails its cells with the reason.
      fn = prepareCheck(node.check ?? { type: "", params: {} }, node.evaluationLevel);
      prepared.set(node.id, fn);
    }
    return fn;
  };
  const outcomeOf = (cell: Cell, outcome: CheckOutcome, started: number): JudgeOutcome => ({
    status: "completed",
    result: outcome.result,
    score: outcome.score,
    error: null,
    rawOutput: null,
    model: `check:${cell.node.check?.type ?? "unknown"}`,
    inputTokens: 0,
    outputTokens: 0,
    latencyMs: Math.round(performance.now() - started),
    cached: false,
    attempts: 0,
  });
  return (cell, tree) => {
    const started = performance.now();
    const spec = cell.node.check ?? { type: "", params: {} };
    const entity = { type: cell.entityType, id: cell.entityId };
    if (checkRunsOffLoop(spec.type) && treeTextSize(tree) > INLINE_TEXT_CHARS) {
      return checkOffLoop(spec, cell.node.evaluationLevel, tree, entity).then((outcome) => outcomeOf(cell, outcome, started));
    }
    return outcomeOf(cell, forNode(cell.node)(tree, entity), started);
  };
}

const CHUNK = 2000;
/** Longest stretch of checks run without letting requests in: a chunk of slow checks must not hold the process. */
const SLICE_MS = 20;

/**
 * Evaluate check cells in chunks of one transaction each, yielding to the event loop between chunks so
 * SSE clients, reads and a cancel get their turn. A cancel or shutdown stops before the next cell. Each
 * cell is announced `processing` as it is checked; a chunk's results are then saved together (multi-row
 * inserts, one counter update: a write per cell cost more than the check) and announced in order. The
 * chunk commits as a whole, so a crash leaves either all of its results or none, and
 * no result is announced before it is committed.
 */
export async function runCheckCells(
  cells: Cell[],
  ctx: {
    signal: AbortSignal;
    stopped: () => boolean;
    evaluate: (cell: Cell) => CellOutcome | Promise<CellOutcome>;
    processing: (cell: Cell) => void;
    recordMany: (cells: Cell[], outcomes: CellOutcome[]) => void | Promise<void>;
  },
): Promise<void> {
  let sliceStarted = performance.now();
  for (let start = 0; start < cells.length; start += CHUNK) {
    if (ctx.signal.aborted || ctx.stopped()) return;
    const chunk: Cell[] = [];
    const outcomes: CellOutcome[] = [];
    for (const cell of cells.slice(start, start + CHUNK)) {
      if (ctx.signal.aborted || ctx.stopped()) break;
      ctx.processing(cell);
      let outcome: CellOutcome;
      try {
        outcome = await ctx.evaluate(cell);
      } catch (error) {
        outcome = failed(cell, error);
      }
      chunk.push(cell);
      outcomes.push(outcome);
      if (performance.now() - sliceStarted > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    await ctx.recordMany(chunk, outcomes);
    await new Promise((resolve) => setImmediate(resolve));
    sliceStarted = performance.now();
  }
}

function failed(cell: Cell, error: unknown): JudgeOutcome {
  const message = error instanceof AppError ? error.message : `could not evaluate: ${(error as Error).message}`;
  return { status: "failed", result: null, score: null, error: message, rawOutput: null, model: `check:${cell.node.check?.type ?? "unknown"}`, inputTokens: 0, outputTokens: 0, latencyMs: 0, cached: false, attempts: 0 };
}
