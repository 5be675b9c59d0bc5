/**
 * Evaluating a run's cells, shared by the two engines: inside the process that started it (SQLite,
 * in-process.ts) and as queued batches worked by any process of a PostgreSQL cluster (cluster-run.ts).
 * One code path judges a cell (cell-judge.ts), checks check cells, skips cells whose dependency did not
 * pass, hands the outcome to the engine's result sink to save, counts it and announces it (cell-record.ts).
 * What differs between the engines comes in, and this room does not ask which one it is in: how results
 * are saved and counted (`results`, a ResultSink), where a call's slot comes from (`callSlots`) and the
 * run's budget (`meter`, a lib/jobs BudgetMeter: local in process, shared by the processes of a queued run).
 */
import "server-only";
import type { PipelineNodeRow } from "@/db/schema";
import type { BudgetMeter } from "@/lib/jobs";
import { getJudgeConfig, type CallGate, type JudgeDeps } from "@/lib/judge";
import { existingLimiter } from "@/lib/judge/limiter";
import { loadConversationTree, type ConversationTree } from "@/lib/metrics";
import type { RunRequest } from "@/lib/schemas/executions";
import { batchSizeOf } from "./batch-size";
import { cellJudge, runCallGate } from "./cell-judge";
import { cellRecorder, type CellTotals, type ResultSink, type ResultSinkContext } from "./cell-record";
import { conversationTrees } from "./cell-trees";
import { checkEvaluator, runCheckCells, skippedOutcome } from "./check-cell";
import { skipReason } from "./dependencies";
import { forEachLimited } from "./limited";
import type { Cell } from "./plan";

export type RunnerDeps = { judge?: JudgeDeps; now?: () => number };

export type CellRunnerOptions = {
  execution: { id: number; datasetId: number };
  req: RunRequest;
  /** Every metric of the dataset, by id (dependencies outside the run are read from their latest results). */
  allNodes: Map<number, PipelineNodeRow>;
  /** Cells of the run, for the progress figures of events. */
  total: number;
  /** The model of the run's first cell: whose limiter figures are reported until a cell names its own. */
  firstModel: string;
  signal: AbortSignal;
  /** True once no new cell may start (shutdown). */
  stopped: () => boolean;
  deps: RunnerDeps;
  /** The engine's result sink, made once per runner with the runner's running figures (see ResultSink). */
  results: (context: ResultSinkContext) => ResultSink;
  /**
   * The run's batch size (batchSizeOf): at most that many of its judge calls in flight, @GOAL calls
   * included, on either engine — the engine's `gate` gives a slot (in process: this process's slots of
   * the run; queued: the cluster-wide semaphore of the run and the model's). A call's slot is taken just
   * before the provider call and given back as soon as the provider answers, so an async run evaluates
   * up to `2 × size` cells at once (`evaluateAll`): the next cells' prompts are built and their cache read
   * while the calls are out, and a reply is checked and saved while the next call is already on its way
   * — instead of each of those steps delaying the next call.
   */
  callSlots?: { gate: (model: string) => CallGate };
  /**
   * The run's budget (max_cost_usd; without one a meter with no limit, which still counts): asked before
   * each call goes out, its slot held; told each reply's cost as it lands and each cost once saved. Once it
   * is reached no call starts; calls already out finish and are saved and counted (or counted without a
   * result, as the sink decides).
   */
  meter: BudgetMeter;
};

export type CellRunner = {
  /**
   * Judge these cells and record their outcomes — async runs up to 2 × the batch size at once (more while
   * cells wait out a backoff), sync runs one after another in grid order; nothing is written once the
   * signal aborted. A cell that throws (a database error) ends it only once the cells in flight are over.
   */
  evaluateAll(cells: Cell[]): Promise<void>;
  /** Check cells, written in chunks. */
  runChecks(cells: Cell[]): Promise<void>;
  totals: CellTotals;
  /** The model's adaptive limit of calls in flight in this process. */
  limitNow(): number | null;
};

export function cellRunner(opts: CellRunnerOptions): CellRunner {
  const { execution, req, allNodes, total, signal, deps, meter, callSlots } = opts;
  const now = deps.now ?? Date.now;
  const totals: CellTotals = { done: 0, inputTokens: 0, outputTokens: 0, cached: 0, cost: 0, priced: true, rateLimits: 0, hedges: 0 };
  let lastModel = opts.firstModel;
  const limitNow = () => existingLimiter(lastModel)?.currentLimit ?? null;
  const sink = opts.results({ executionId: execution.id, totals, limitNow, signal, now });
  const size = batchSizeOf(req);
  const recorder = cellRecorder({ execution, total, totals, sink, meter, limitNow });
  const gate = (model: string) => runCallGate(meter, opts.stopped, callSlots?.gate(model));
  const trees = conversationTrees({
    req,
    signal,
    judge: deps.judge,
    judgeConfigured: getJudgeConfig().configured || Boolean(deps.judge?.languageModel),
    gate,
    goalLanded: (conversationId, usage) => judging.goalLanded(conversationId, usage),
  });

  // Async with call slots: 2 × the batch size at once, raised while cells wait out a backoff holding no
  // slot (without it, under a provider that refuses a fifth of the calls with Retry-After 1 s, the
  // waiting cells fill the 2 × size and the call slots go idle). Sync: one cell at a time, in grid order.
  const prepareAhead = Boolean(callSlots) && req.execution_mode === "async";
  let backingOff = 0;
  let setAtOnce: ((n: number) => void) | undefined;
  const judging = cellJudge({
    executionId: execution.id,
    req,
    allNodes,
    signal,
    judge: deps.judge,
    now,
    meter,
    stopped: opts.stopped,
    sink,
    recorder,
    trees,
    gate,
    announcesOnCall: Boolean(callSlots),
    onBackoff: callSlots
      ? (waiting) => {
          backingOff += waiting ? 1 : -1;
          setAtOnce?.(2 * size + backingOff);
        }
      : undefined,
    onModel: (model) => void (lastModel = model),
  });

  const runCheck = checkEvaluator();
  let lastTree: { id: number; tree: ConversationTree } | undefined;
  return {
    totals,
    limitNow,
    evaluateAll: async (cells) => {
      trees.upcoming(cells);
      try {
        await forEachLimited(cells, prepareAhead ? 2 * size : 1, judging.judgeCell, prepareAhead ? (set) => void (setAtOnce = set) : undefined);
      } finally {
        trees.done();
      }
    },
    runChecks: (cells) =>
      runCheckCells(cells, {
        signal,
        stopped: opts.stopped,
        // Cells come in grid order, so consecutive cells share their conversation's tree.
        evaluate: async (cell) => {
          const skipped = await skipReason(cell, allNodes);
          if (skipped) return skippedOutcome(skipped);
          if (lastTree?.id !== cell.conversationId) lastTree = { id: cell.conversationId, tree: await loadConversationTree(cell.conversationId) };
          return runCheck(cell, lastTree.tree);
        },
        processing: recorder.processing,
        recordMany: recorder.recordMany,
      }),
  };
}
