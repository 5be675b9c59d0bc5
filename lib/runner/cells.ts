/**
 * Evaluating a run's cells, shared by the two engines: inside the process that started it (SQLite,
 * in-process.ts) and as queued batches worked by any process of a PostgreSQL cluster (cluster-run.ts). One code path judges a cell, checks check cells, skips cells whose dependency did
 * not pass, hands the outcome to the engine's result sink to save, counts it and announces it on this
 * process's event bus. What differs between the engines comes in: how results are saved and counted
 * (`results`, a ResultSink) and where a call's slot comes from (`callSlots`).
 */
import "server-only";
import type { NewResult } from "@/db/repositories/evaluation-results";
import type { EvaluationResultRow, PipelineNodeRow } from "@/db/schema";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { contextTokensFor, costOf, getJudgeConfig, judge, resolveModelName, type CallGate, type GoalUsage, type JudgeDeps, type JudgeOutcome } from "@/lib/judge";
import { existingLimiter } from "@/lib/judge/limiter";
import { buildJudgePrompt, loadConversationTree, loadConversationTrees, type ConversationTree } from "@/lib/metrics";
import { metricVerdicts, usesMetricVerdicts } from "@/lib/metrics/metric-verdicts";
import { toResult } from "@/lib/results/serialize";
import type { RunRequest } from "@/lib/schemas/executions";
import { batchSizeOf } from "./batch-size";
import { checkEvaluator, runCheckCells, skippedOutcome, type CellOutcome } from "./check-cell";
import { skipReason } from "./dependencies";
import { emit, hasListeners, hasSavedListeners, progressOf, resultSaved } from "./events";
import { withGoal } from "@/lib/metrics/conversation-goal";
import { forEachLimited } from "./limited";
import type { Cell } from "./plan";

export type RunnerDeps = { judge?: JudgeDeps; now?: () => number };

const TREE_CACHE = 64;

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
   * The run's max_cost_usd: called with this runner's priced cost as each cell's cost is recorded (a
   * shared run reads what every process spent); it stops the run once the budget is reached.
   */
  budget?: (spentHereUsd: number) => void | Promise<void>;
  /**
   * Shared runs with a max_cost_usd. `underBudget`: whether the run is still under it, from what every
   * process saved; asked once a call's slots are taken, before the call goes out, and again before a
   * reply is saved. `oneAtATime` runs those saves (the check and the write) one after another in this
   * process, so a reply is never saved on a reading taken before another reply's save. Once it says no,
   * no call starts and nothing more is saved here (the cells are left for a retry), as an in-process
   * run's abort at the limit: the stop itself reaches other batches only when the run is marked ended,
   * and meanwhile they went on calling and saving past the limit.
   */
  budgetGate?: {
    underBudget: (landedHereUsd: number) => Promise<boolean>;
    oneAtATime: (save: () => Promise<void>) => Promise<void>;
    unsaved: (outcome: JudgeOutcome) => Promise<void>;
    /**
     * The priced replies of the run that landed in this process and wait for their save, across all its
     * batches here (each batch counting only its own let the others start calls past the limit).
     */
    landed?: { add: (usd: number) => void; remove: (usd: number) => void; total: () => number };
  };
  /**
   * True once no new judge call may go out (an in-process run's max_cost_usd reached): asked before each
   * call takes its slot and again once it has it. Calls already out finish and are saved and counted.
   */
  stopStarting?: () => boolean;
};

/** What a result sink is given: the runner's running figures, which it may count into. */
export type ResultSinkContext = { executionId: number; totals: CellTotals; limitNow: () => number | null; signal: AbortSignal; now: () => number };

/** A saved result: its row, and how many of the run's cells every process has saved (queued runs; else the runner's own count). */
export type SavedResult = { saved: EvaluationResultRow; counted?: number };

/**
 * Where an engine's outcomes go — what differs between saving in process and saving queued batches. The
 * runner builds the rows and the announcements; the sink saves and calls `announce` for each result it
 * saved, in order (not for one it did not save: a queued cell another attempt saved first).
 */
export type ResultSink = {
  /** Save one judged (or skipped) cell's outcome. */
  record(outcome: CellOutcome, values: NewResult, announce: (result: SavedResult) => Promise<void>): Promise<void>;
  /** Save a chunk of check cells' outcomes with multi-row inserts; `announce` gets each saved one's index. */
  recordMany(values: NewResult[], announce: (index: number, result: SavedResult) => Promise<void>): Promise<void>;
  /** A saved cell was just counted (totals.done, its hedges); its tokens and cost are counted next. */
  counted(outcome: CellOutcome): Promise<void> | void;
};

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
  /**
   * A shared run: calls stopped on a reading that counted replies landed here (not yet saved), while the
   * saved spend had not reached the limit. The cells not started are the run's still (see cluster-run.ts).
   */
  callsStoppedShortOfBudget(): boolean;
};

/** A run's call slot refused: the server is shutting down (or a shared run's budget is reached), so the cell does not start its call. */
class NotStarted extends Error {
  constructor() {
    super("not started: the server is shutting down or the run's budget is reached");
  }
}

export function cellRunner(opts: CellRunnerOptions): CellRunner {
  const { execution, req, allNodes, total, signal, deps } = opts;
  const now = deps.now ?? Date.now;
  const totals: CellTotals = { done: 0, inputTokens: 0, outputTokens: 0, cached: 0, cost: 0, priced: true, rateLimits: 0, hedges: 0 };
  let lastModel = opts.firstModel;
  const limitNow = () => existingLimiter(lastModel)?.currentLimit ?? null;
  const sink = opts.results({ executionId: execution.id, totals, limitNow, signal, now });
  const size = batchSizeOf(req);
  const trees = new Map<number, Promise<ConversationTree>>();
  const judgeConfigured = getJudgeConfig().configured || Boolean(deps.judge?.languageModel);
  const callSlots = opts.callSlots;
  /**
   * A slot of the run's calls in flight, refused once the run may start nothing new (shutdown). A hedge
   * takes one too (batch_size bounds every request the run has out), ahead of calls not yet tried.
   */
  const mayStart = () => !opts.stopped() && !overBudget && !opts.stopStarting?.();
  const runGate = (model: string): CallGate | undefined =>
    callSlots || opts.stopStarting
      ? async (s, o) => {
          if (!mayStart()) throw new NotStarted();
          const leave = callSlots ? await callSlots.gate(model)(s, o) : () => undefined;
          // Without a shared budget nothing is awaited here: a run's every call passes this gate.
          if (mayStart() && (!opts.budgetGate || (await stillUnderBudget(true)))) return leave;
          leave();
          throw new NotStarted();
        }
      : undefined;
  /** Set once `underBudget` said no: nothing of the run starts or is saved here any more. */
  let overBudget = false;
  /**
   * Before a call goes out (`beforeCall`): what every process saved and the replies that landed here but
   * are not saved yet — past the limit no call starts here (`callsStopped`), while the replies still out
   * are saved as they land. Before a save: what is saved; past the limit nothing more is saved here.
   */
  let callsStopped = false;
  const stillUnderBudget = async (beforeCall = false) => {
    if (!opts.budgetGate || overBudget) return !overBudget;
    // What is saved, then what landed here: a reply saved between the two readings is in neither (one
    // call may go out past the limit). Reading what landed first counts such a reply twice, which can stop
    // a batch's calls for good while the saved spend stays under the limit (a run that never ends).
    if (!(await opts.budgetGate.underBudget(0))) overBudget = true;
    else if (beforeCall && !callsStopped) {
      const landedHere = opts.budgetGate.landed?.total() ?? unsavedCost;
      if (landedHere > 0 && !(await opts.budgetGate.underBudget(landedHere))) callsStopped = true;
    }
    return !overBudget && !(beforeCall && callsStopped);
  };

  /**
   * Trees loaded ahead, taken by the first cell of their conversation: a cell whose conversation is not
   * loaded yet loads it together with those of the cells after it, up to TREE_CACHE conversations in three
   * queries (one conversation per cell cost three queries a cell, ~15% of a served run's CPU on one-message
   * conversations). A failed load ahead is no failure: the cell then loads its own tree, whose error it reports.
   */
  const ahead = new Map<number, Promise<ConversationTree | undefined>>();
  /** The cells of the current evaluateAll, and each one's place, to look ahead from. */
  let upcoming: { cells: Cell[]; at: Map<Cell, number> } | undefined;
  const loadAhead = (cell: Cell) => {
    const from = upcoming?.at.get(cell);
    if (!upcoming || from === undefined) return;
    const ids = new Set<number>();
    // Bounded, so a run over few long conversations (thousands of cells each) does not scan the whole run per conversation.
    const until = Math.min(upcoming.cells.length, from + 4 * TREE_CACHE);
    for (let i = from; i < until && ids.size < TREE_CACHE; i++) {
      const id = upcoming.cells[i].conversationId;
      if (!trees.has(id) && !ahead.has(id)) ids.add(id);
    }
    if (ids.size < 2) return; // one conversation: the cell loads it itself, as cheaply
    const loading = loadConversationTrees([...ids]).catch(() => new Map<number, ConversationTree>());
    for (const id of ids) ahead.set(id, loading.then((found) => found.get(id)));
  };
  /**
   * What each conversation's @GOAL extraction cost, until a cell of that conversation carries it: the
   * first of its cells to be saved adds those tokens to its own, so the run's tokens, cost, budget and an
   * online rule's daily spend count the extraction call (they read the saved results).
   */
  const goalUsage = new Map<number, GoalUsage>();
  /**
   * The priced cost of replies that landed but are not saved yet (a cell's judge call, a goal extraction):
   * the budget counts each from the moment it lands, so no call goes out on a reading that misses replies
   * waiting for their save (in-process saves are grouped per turn of the event loop).
   */
  let unsavedCost = 0;
  const priced = (model: string, input: number, output: number) => (input + output === 0 ? 0 : (costOf(model, input, output) ?? 0));
  const landed = (cost: number) => {
    if (!cost) return;
    unsavedCost += cost;
    opts.budgetGate?.landed?.add(cost);
    if (opts.budget) void opts.budget(totals.cost + unsavedCost);
  };
  /** A landed reply is saved, or counted in the run without a result: no longer waiting. */
  const unlanded = (cost: number) => {
    const before = unsavedCost;
    unsavedCost = Math.max(0, unsavedCost - cost);
    if (before > unsavedCost) opts.budgetGate?.landed?.remove(before - unsavedCost);
  };
  const addGoalUsage = (conversationId: number, usage: GoalUsage) => {
    // A shared run counts it in the run at once, where every process's budget reading sees it (a cell
    // carrying it is saved only after its own call, while other processes kept starting calls).
    if (opts.budgetGate) {
      // Counted here from the moment it lands, until the run's row holds it (the other batches here read both).
      const gate = opts.budgetGate;
      const cost = priced(usage.model, usage.inputTokens, usage.outputTokens);
      gate.landed?.add(cost);
      return void gate
        .unsaved({ ...failedOutcome(usage.model, "", 0), inputTokens: usage.inputTokens, outputTokens: usage.outputTokens })
        .catch((error: unknown) => log.error("goal extraction usage not counted", { execution_id: execution.id, error }))
        .finally(() => gate.landed?.remove(cost));
    }
    goalUsage.set(conversationId, usage);
    landed(priced(usage.model, usage.inputTokens, usage.outputTokens));
  };
  const withGoalUsage = (cell: Cell, outcome: JudgeOutcome): JudgeOutcome => {
    const extra = goalUsage.get(cell.conversationId);
    if (!extra) return outcome;
    goalUsage.delete(cell.conversationId);
    return { ...outcome, inputTokens: outcome.inputTokens + extra.inputTokens, outputTokens: outcome.outputTokens + extra.outputTokens };
  };
  /** The conversation's tree once its @GOAL is ensured (by the first cell of a metric that uses it). */
  const goalTrees = new Map<number, Promise<ConversationTree>>();
  const treeFor = (conversationId: number, cell: Cell): Promise<ConversationTree> => {
    let tree = trees.get(conversationId);
    if (!tree) {
      if (!ahead.has(conversationId)) loadAhead(cell);
      const early = ahead.get(conversationId);
      ahead.delete(conversationId);
      tree = early ? early.then((t) => t ?? loadConversationTree(conversationId)) : loadConversationTree(conversationId);
      trees.set(conversationId, tree);
      if (trees.size > TREE_CACHE) trees.delete(trees.keys().next().value as number);
    }
    // Per cell, not per tree: the conversation's first cell may be of a metric without @GOAL (another
    // column first, or a queued batch that starts mid-conversation), and a later cell's metric needs it.
    if (!judgeConfigured || !cell.node.templateVariables?.includes("@GOAL")) return tree;
    let withIt = goalTrees.get(conversationId);
    if (!withIt) {
      // @GOAL is extracted once per conversation by the judge model and stored; later runs reuse it. With
      // the model of the first metric that needs it, so its tokens are priced as the cell that carries them.
      const model = resolveModelName(req.model_name, cell.node.modelName);
      const onUsage = (u: GoalUsage) => addGoalUsage(conversationId, u);
      withIt = tree.then((t) => (t.conversation.goal ? t : withGoal(t, { model, signal, gate: runGate(model), onUsage }, deps.judge)));
      goalTrees.set(conversationId, withIt);
      if (goalTrees.size > TREE_CACHE) goalTrees.delete(goalTrees.keys().next().value as number);
    }
    return withIt;
  };

  const runCheck = checkEvaluator();
  let lastTree: { id: number; tree: ConversationTree } | undefined;

  const resultValues = (cell: Cell, outcome: CellOutcome): NewResult => ({
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
    const base = { execution_id: execution.id, pipeline_node_id: cell.node.id, entity_type: cell.entityType, entity_id: cell.entityId };
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
      unlanded(cost); // counted since it landed (judge cells; checks cost nothing)
    }
    if (opts.budget && cost) await opts.budget(totals.cost + unsavedCost);
    if (hasSavedListeners()) {
      resultSaved({
        executionId: execution.id, metricId: cell.node.id, metricName: cell.node.name, entityType: cell.entityType, entityId: cell.entityId, conversationId: cell.conversationId,
        messageId: cell.messageId, stepId: cell.stepId, status: saved.status, score: saved.score, result: saved.result, error: saved.error, model: saved.modelName, createdAt: saved.createdAt,
      });
    }
    if (!hasListeners(execution.id)) return; // nobody streams this run here: skip building the event
    const result = toResult(saved);
    const progress = progressOf(counted ?? totals.done, total);
    if (outcome.status !== "failed") {
      emit(execution.id, { event: "complete", id: saved.id, data: { ...base, status: "complete", progress, result } });
    } else {
      emit(execution.id, { event: "error", id: saved.id, data: { ...base, status: "error", progress, error: { message: outcome.error ?? "failed" }, result } });
    }
  };

  /** Save a cell's outcome (the engine's sink), count it and announce it. */
  const record = (cell: Cell, outcome: CellOutcome) =>
    sink.record(outcome, resultValues(cell, outcome), ({ saved, counted }) => announce(cell, outcome, saved, counted));

  /** Save a chunk of cells' outcomes with multi-row inserts, then count and announce each in order. */
  const recordMany = (cells: Cell[], outcomes: CellOutcome[]) =>
    sink.recordMany(
      cells.map((cell, i) => resultValues(cell, outcomes[i])),
      (i, { saved, counted }) => announce(cells[i], outcomes[i], saved, counted),
    );

  /** The `processing` event of a cell, built only when someone listens (check cells announce it too). */
  const announceProcessing = (cell: Cell) => {
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
  };

  let backingOff = 0;
  let setAtOnce: ((n: number) => void) | undefined;
  const onBackoff = callSlots
    ? (waiting: boolean) => {
        backingOff += waiting ? 1 : -1;
        setAtOnce?.(2 * size + backingOff);
      }
    : undefined;

  const judgeCell = async (cell: Cell) => {
    if (signal.aborted || !mayStart()) return;
    const model = resolveModelName(req.model_name, cell.node.modelName);
    lastModel = model;
    // With call slots a cell is announced when its call goes out (or when its outcome needs none), not
    // while it is only being prepared ahead.
    let announced = false;
    const announce = () => {
      if (announced) return;
      announced = true;
      announceProcessing(cell);
    };
    const callGate = runGate(model);
    if (!callGate) announce();
    let refused = false;
    const gate: CallGate | undefined =
      callGate &&
      ((s, o) =>
        callGate(s, o).then(
          (leave) => {
            announce();
            return leave;
          },
          (error: unknown) => {
            // Only a shutdown's refusal leaves the cell for a retry; a hedge whose wait for a slot was
            // aborted because the first request answered is no refusal (its cell is saved as it ended).
            if (error instanceof NotStarted) refused = true;
            throw error;
          },
        ));
    // With a budget, each reply is counted as it lands, before its slot lets the next cell's call check
    // the budget; the outcome's cost settles the rest (a hedge's abandoned request) once judge() returns.
    let early = 0;
    const onReply =
      opts.budget || opts.budgetGate
        ? (input: number, output: number) => {
            const cost = priced(model, input, output);
            early += cost;
            landed(cost);
          }
        : undefined;
    /** The cost counted early handed over to the outcome's: what is left of it is landed, or taken back. */
    const settle = (cost: number) => {
      if (cost > early) landed(cost - early);
      else if (early > cost) unlanded(early - cost);
      early = 0;
    };
    const started = now();
    // Only a metric with a skip rule reads its dependencies' results (no wait for the others).
    const skipped = cell.node.skipRule ? await skipReason(cell, allNodes) : null;
    if (skipped) {
      announce();
      return await record(cell, skippedOutcome(skipped));
    }
    let outcome: JudgeOutcome;
    try {
      const tree = await treeFor(cell.conversationId, cell);
      const metricValues = usesMetricVerdicts(cell.node)
        ? await metricVerdicts(cell.node, { type: cell.entityType, id: cell.entityId, conversationId: cell.conversationId }, allNodes)
        : undefined;
      const prompt = buildJudgePrompt({
        metric: cell.node,
        tree,
        entity: { type: cell.entityType, id: cell.entityId },
        metricValues,
        contextTokens: contextTokensFor(model),
      });
      outcome = await judge(
        {
          model,
          system: prompt.system,
          prompt: prompt.prompt,
          outputType: cell.node.outputType,
          outputSchema: cell.node.outputSchema,
          signal,
          noCache: req.retry || req.no_cache,
          // Stored with the cell's result, in its transaction (record()).
          deferCacheWrite: true,
          gate,
          onBackoff,
          onReply,
        },
        deps.judge,
      );
    } catch (error) {
      if (signal.aborted) return; // cancelled: nothing is written after the cancel (the call was aborted)
      outcome = failedOutcome(model, error instanceof AppError ? error.message : `could not evaluate: ${(error as Error).message}`, now() - started);
    }
    // Synchronous from here to the write: a cancel cannot slip in between the check and the save. A cell
    // refused its call slot by a shutdown was never started: it is left for a retry, like the cells after it.
    // (A refused hedge or retry does not undo an answer the cell already has.)
    if (signal.aborted) {
      // A reply that landed as the run ended (a budget stop reached from another batch): nothing is saved,
      // but the provider billed it, so a shared run counts it (a user's cancel counts it too).
      settle(0);
      if (opts.budgetGate && outcome.inputTokens + outcome.outputTokens > 0) await opts.budgetGate.unsaved(outcome);
      return;
    }
    // A cell with a billed reply whose next call (a repair, a retry) was refused is saved as it ended:
    // failed, with that reply's tokens (left for a retry, it dropped them uncounted).
    if (refused && outcome.status !== "completed" && outcome.inputTokens + outcome.outputTokens === 0) {
      // Not judged (budget reached or shutdown): left for a retry — unless this cell carries its
      // conversation's goal extraction, which went to the provider and is saved as a failed cell with its tokens.
      if (!goalUsage.has(cell.conversationId)) return settle(0);
      outcome = failedOutcome(model, "not judged: the run's budget was reached (or the server stopped) after this conversation's goal was extracted; the extraction's tokens are counted here", now() - started);
    }
    settle(priced(outcome.model, outcome.inputTokens, outcome.outputTokens));
    outcome = withGoalUsage(cell, outcome);
    if (opts.budgetGate) {
      // A shared run's budget reached meanwhile (by any process): the reply is not saved, but the provider
      // billed it, so its tokens and cost are added to the run's (the save itself checks again that the run is active).
      const gate = opts.budgetGate;
      return await gate.oneAtATime(async () => {
        if (signal.aborted) return;
        if (await stillUnderBudget()) {
          announce();
          return await record(cell, outcome);
        }
        if (outcome.inputTokens + outcome.outputTokens > 0) await gate.unsaved(outcome);
        unlanded(priced(outcome.model, outcome.inputTokens, outcome.outputTokens));
      });
    }
    announce();
    await record(cell, outcome);
  };

  // Async with call slots: 2 × the batch size at once, raised while cells wait out a backoff holding no
  // slot (without it, under a provider that refuses a fifth of the calls with Retry-After 1 s, the
  // waiting cells fill the 2 × size and the call slots go idle). Sync: one cell at a time, in grid order.
  const prepareAhead = Boolean(callSlots) && req.execution_mode === "async";
  return {
    totals,
    limitNow,
    callsStoppedShortOfBudget: () => callsStopped && !overBudget,
    evaluateAll: async (cells) => {
      upcoming = { cells, at: new Map(cells.map((cell, i) => [cell, i])) };
      try {
        await forEachLimited(cells, prepareAhead ? 2 * size : 1, judgeCell, prepareAhead ? (set) => void (setAtOnce = set) : undefined);
      } finally {
        upcoming = undefined;
        ahead.clear();
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
        processing: announceProcessing,
        recordMany,
      }),
  };
}

export function failedOutcome(model: string, error: string, latencyMs: number): JudgeOutcome {
  return {
    status: "failed",
    result: null,
    score: null,
    error,
    rawOutput: null,
    model,
    inputTokens: 0,
    outputTokens: 0,
    latencyMs,
    cached: false,
    attempts: 0,
  };
}
