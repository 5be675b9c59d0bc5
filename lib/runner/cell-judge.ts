/**
 * Judging one cell of a run (lib/runner), whichever engine works it: the gate each call passes (a slot of
 * the run's calls, then the run's budget meter), the judge call with the cell's prompt, the reply's cost
 * told to the meter as it lands, and what the cell saves — its verdict, a failure saying why, or nothing
 * when it was never started (left for a retry).
 */
import "server-only";
import { AppError } from "@/lib/errors";
import type { BudgetMeter } from "@/lib/jobs";
import { log } from "@/lib/log";
import { contextTokensFor, judge, resolveModelName, type CallGate, type GoalUsage, type JudgeDeps, type JudgeOutcome } from "@/lib/judge";
import { buildJudgePrompt } from "@/lib/metrics";
import { metricVerdicts, usesMetricVerdicts } from "@/lib/metrics/metric-verdicts";
import type { PipelineNodeRow } from "@/db/schema";
import type { RunRequest } from "@/lib/schemas/executions";
import { pricedUsd, type CellRecorder, type ResultSink } from "./cell-record";
import type { ConversationTrees } from "./cell-trees";
import { skippedOutcome } from "./check-cell";
import { skipReason } from "./dependencies";
import type { Cell } from "./plan";

/** A run's call refused: the server is shutting down or the run's budget is reached, so the cell does not start its call. */
class NotStarted extends Error {
  constructor() {
    super("not started: the server is shutting down or the run's budget is reached");
  }
}

/**
 * The gate of a run's calls to `model`: refused once nothing new may start (shutdown, the meter reached);
 * else a slot of the run's calls in flight (`slot`, if the engine bounds them), then the meter's leave to
 * start — asked once the slot is held, so a call waiting for one sees the spend of the calls before it. A
 * hedge passes it too (batch_size bounds every request the run has out). Leaving gives both back.
 */
export function runCallGate(meter: BudgetMeter, stopped: () => boolean, slot?: CallGate): CallGate {
  return async (signal, options) => {
    if (stopped() || meter.reached) throw new NotStarted();
    const leave = slot ? await slot(signal, options) : () => undefined;
    if (!stopped()) {
      // A local meter answers at once: no await on a run's every call.
      const may = meter.mayStart();
      if (may === true || (may !== false && (await may))) {
        return () => {
          leave();
          meter.settle();
        };
      }
    }
    leave();
    throw new NotStarted();
  };
}

export type JudgeCellOptions = {
  executionId: number;
  req: RunRequest;
  allNodes: Map<number, PipelineNodeRow>;
  signal: AbortSignal;
  judge?: JudgeDeps;
  now: () => number;
  meter: BudgetMeter;
  /** True once no new cell may start (shutdown). */
  stopped: () => boolean;
  sink: ResultSink;
  recorder: CellRecorder;
  trees: ConversationTrees;
  /** The gate of the run's calls for a model. */
  gate: (model: string) => CallGate;
  /** Whether the gate announces a cell's `processing` as its call goes out (a cell prepared ahead is not announced yet). */
  announcesOnCall: boolean;
  onBackoff?: (waiting: boolean) => void;
  /** The model of the cell being judged (its limiter's figures are the run's). */
  onModel: (model: string) => void;
};

export function cellJudge(o: JudgeCellOptions) {
  const { req, allNodes, signal, meter, recorder, now } = o;
  /**
   * What each conversation's @GOAL extraction cost, until a cell of that conversation carries it: the
   * first of its cells to be saved adds those tokens to its own, so the run's tokens, cost, budget and an
   * online rule's daily spend count the extraction call (they read the saved results) — unless the sink
   * counts it in the run at once (billedApart).
   */
  const goalUsage = new Map<number, GoalUsage>();
  const goalLanded = (conversationId: number, usage: GoalUsage) => {
    const cost = pricedUsd(usage.model, usage.inputTokens, usage.outputTokens);
    meter.landed(cost);
    if (!o.sink.billedApart) return void goalUsage.set(conversationId, usage);
    void o.sink
      .billedApart(usage.model, usage.inputTokens, usage.outputTokens)
      .catch((error: unknown) => log.error("goal extraction usage not counted", { execution_id: o.executionId, error }))
      .finally(() => meter.saved(cost));
  };
  const withGoalUsage = (cell: Cell, outcome: JudgeOutcome): JudgeOutcome => {
    const extra = goalUsage.get(cell.conversationId);
    if (!extra) return outcome;
    goalUsage.delete(cell.conversationId);
    return { ...outcome, inputTokens: outcome.inputTokens + extra.inputTokens, outputTokens: outcome.outputTokens + extra.outputTokens };
  };

  const judgeCell = async (cell: Cell) => {
    if (signal.aborted || o.stopped() || meter.reached) return;
    const model = resolveModelName(req.model_name, cell.node.modelName);
    o.onModel(model);
    // With call slots a cell is announced when its call goes out (or when its outcome needs none), not
    // while it is only being prepared ahead.
    let announced = !o.announcesOnCall;
    if (announced) recorder.processing(cell);
    const announce = () => {
      if (announced) return;
      announced = true;
      recorder.processing(cell);
    };
    const callGate = o.gate(model);
    let refused = false;
    const gate: CallGate = (s, opts) =>
      callGate(s, opts).then(
        (leave) => {
          announce();
          return leave;
        },
        (error: unknown) => {
          // Only a refusal (shutdown, budget) leaves the cell for a retry; a hedge whose wait for a slot was
          // aborted because the first request answered is no refusal (its cell is saved as it ended).
          if (error instanceof NotStarted) refused = true;
          throw error;
        },
      );
    // Each reply is counted as it lands, before its slot lets the next cell's call ask the meter; the
    // outcome's cost settles the rest (a hedge's abandoned request) once judge() returns.
    let early = 0;
    const onReply = (input: number, output: number) => {
      const cost = pricedUsd(model, input, output);
      early += cost;
      if (cost) meter.landed(cost);
    };
    /** The cost counted early handed over to the outcome's: what is left of it lands, or is taken back. */
    const settle = (cost: number) => {
      if (cost !== early) meter.landed(cost - early);
      early = 0;
    };
    const started = now();
    // Only a metric with a skip rule reads its dependencies' results (no wait for the others).
    const skipped = cell.node.skipRule ? await skipReason(cell, allNodes) : null;
    if (skipped) {
      announce();
      return await recorder.record(cell, skippedOutcome(skipped));
    }
    let outcome: JudgeOutcome;
    try {
      const tree = await o.trees.treeFor(cell);
      const entity = { type: cell.entityType, id: cell.entityId };
      const metricValues = usesMetricVerdicts(cell.node) ? await metricVerdicts(cell.node, { ...entity, conversationId: cell.conversationId }, allNodes) : undefined;
      const prompt = buildJudgePrompt({ metric: cell.node, tree, entity, metricValues, contextTokens: contextTokensFor(model) });
      outcome = await judge(
        {
          model,
          system: prompt.system,
          prompt: prompt.prompt,
          outputType: cell.node.outputType,
          outputSchema: cell.node.outputSchema,
          signal,
          noCache: req.retry || req.no_cache,
          // Stored with the cell's result, in its transaction (the sink's record).
          deferCacheWrite: true,
          gate,
          onBackoff: o.onBackoff,
          onReply,
        },
        o.judge,
      );
    } catch (error) {
      if (signal.aborted) return; // cancelled: nothing is written after the cancel (the call was aborted)
      outcome = failedOutcome(model, error instanceof AppError ? error.message : `could not evaluate: ${(error as Error).message}`, now() - started);
    }
    // Synchronous from here to the write: a cancel cannot slip in between the check and the save.
    if (signal.aborted) {
      // A reply that landed as the run ended (a budget stop reached from another batch, a cancel): nothing
      // is saved, but the provider billed it, so the run counts it where the sink can.
      settle(0);
      return await recorder.dropped(outcome);
    }
    // A cell refused its call (a shutdown, the budget) was never started: it is left for a retry, like the
    // cells after it. A cell with a billed reply whose next call (a repair, a retry) was refused is saved as
    // it ended: failed, with that reply's tokens (left for a retry, it dropped them uncounted).
    if (refused && outcome.status !== "completed" && outcome.inputTokens + outcome.outputTokens === 0) {
      // Unless this cell carries its conversation's goal extraction, which went to the provider and is saved
      // as a failed cell with its tokens.
      if (!goalUsage.has(cell.conversationId)) return settle(0);
      outcome = failedOutcome(model, "not judged: the run's budget was reached (or the server stopped) after this conversation's goal was extracted; the extraction's tokens are counted here", now() - started);
    }
    settle(pricedUsd(outcome.model, outcome.inputTokens, outcome.outputTokens));
    announce();
    await recorder.record(cell, withGoalUsage(cell, outcome));
  };

  return { judgeCell, goalLanded };
}

export function failedOutcome(model: string, error: string, latencyMs: number): JudgeOutcome {
  return { status: "failed", result: null, score: null, error, rawOutput: null, model, inputTokens: 0, outputTokens: 0, latencyMs, cached: false, attempts: 0 };
}
