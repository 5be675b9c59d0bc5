/**
 * Pairwise comparisons (issue 38.5): a pairwise metric judges two replies to one input, each pair in both
 * orders, through the same judge client as runs (its cache, retries, the process-wide JUDGE_MAX_CONCURRENCY
 * limiter). A job kind (lib/jobs) worked in the process that started it: leased, swept when its process
 * dies, cancellable from any process. `batch_size` pairs at once; its budget meter stops starting pairs
 * once the judge calls (priced by JUDGE_PRICES) reach `max_cost_usd`. The figures (lib/agreement/pairwise)
 * are computed when read, from the stored verdicts.
 */
import "server-only";
import pLimit from "p-limit";
import { getDataset } from "@/db/repositories/datasets";
import * as repo from "@/db/repositories/comparisons";
import { getGeneration as getGenerationRow } from "@/db/repositories/targets";
import { pairOutcome, pairwiseFigures, type Position } from "@/lib/agreement";
import { AppError, notFound } from "@/lib/errors";
import { contextTokensFor, costOf, getJudgeConfig, judge, resolveModelName, type JudgeDeps } from "@/lib/judge";
import { defineJobKind, LocalBudgetMeter, type BudgetMeter } from "@/lib/jobs";
import { buildPairwisePrompt, getMetricRow, loadConversationTrees, repliesText } from "@/lib/metrics";
import type { Comparison, CreateComparisonInput } from "@/lib/schemas/comparisons";
import { pairBySource, pairSiblings, type PairingTree, type PlannedPair } from "./pairing";

/** Comparisons as background work: leased on their rows, swept, recovered and cancelled by lib/jobs. */
export const comparisonJobs = defineJobKind({
  name: "comparison",
  store: {
    renew: repo.renewComparisonLease,
    failExpired: repo.failExpiredComparisons,
    failUnfinished: repo.failUnfinishedComparisons,
    cancel: repo.cancelComparisonRow,
  },
  expired: "interrupted: the process judging it stopped; start it again",
  interrupted: "interrupted: the server stopped while this comparison ran; start it again",
});

type Usage = NonNullable<repo.ComparisonRow["usage"]>;
const noUsage = (): Usage => ({ judge_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 });

/** A side as the request names it → its dataset (a generation's once it has ended). */
async function resolveSide(side: string, path: "a" | "b"): Promise<number> {
  const [kind, raw] = side.split(":");
  const id = Number(raw);
  if (kind === "dataset") {
    if (!(await getDataset({ id }))) throw new AppError("not_found", `Dataset ${id} does not exist`, [{ path, message: `dataset ${id} does not exist` }]);
    return id;
  }
  const g = await getGenerationRow(id);
  if (!g) throw new AppError("not_found", `Generation ${id} does not exist`, [{ path, message: `generation ${id} does not exist` }]);
  if (g.status === "pending" || g.status === "processing") {
    throw new AppError("conflict", `Generation ${id} is still ${g.status}: compare it once it has ended`, [{ path, message: "the generation has not ended" }]);
  }
  return g.datasetId;
}

async function loadTrees(datasetId: number): Promise<PairingTree[]> {
  const ids = await repo.datasetConversationIds(datasetId);
  const out: PairingTree[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const trees = await loadConversationTrees(ids.slice(i, i + 500));
    for (const id of ids.slice(i, i + 500)) {
      const t = trees.get(id);
      if (t) out.push(t as PairingTree);
    }
  }
  return out;
}

/** Start a comparison (202 at once; the judging goes on in this process). */
export async function startComparison(body: CreateComparisonInput, userId: string, deps: JudgeDeps = {}): Promise<Comparison> {
  const node = await getMetricRow(body.pipeline_node_id);
  if (node.outputType !== "pairwise") {
    throw new AppError("unprocessable", `Metric ${node.id} is not pairwise (its output_type is ${node.outputType}): a comparison needs a metric with output_type pairwise`, [
      { path: "pipeline_node_id", message: "must be a pairwise metric" },
    ]);
  }
  if (body.pair_by === "siblings" && body.b !== undefined) {
    throw new AppError("unprocessable", "pair_by siblings compares replies within a: leave b out", [{ path: "b", message: "must be omitted with pair_by siblings" }]);
  }
  if (body.pair_by === "source_conversation" && body.b === undefined) {
    throw new AppError("unprocessable", "pair_by source_conversation compares a with b: give b", [{ path: "b", message: "is required with pair_by source_conversation" }]);
  }
  if (body.pair_by === "siblings" && node.evaluationLevel !== "message") {
    throw new AppError("unprocessable", `Sibling replies are messages: metric ${node.id} must be judged per message, not per ${node.evaluationLevel}`, [
      { path: "pipeline_node_id", message: "must be a message-level pairwise metric for pair_by siblings" },
    ]);
  }
  const aDatasetId = await resolveSide(body.a, "a");
  const bDatasetId = body.b === undefined ? null : await resolveSide(body.b, "b");
  if (bDatasetId === aDatasetId) {
    throw new AppError("unprocessable", `a and b are the same dataset (${aDatasetId}): compare two datasets, or use pair_by siblings within one`, [{ path: "b", message: "must be another dataset than a" }]);
  }
  const aTrees = await loadTrees(aDatasetId);
  const planned = bDatasetId === null ? pairSiblings(aTrees) : pairBySource(aTrees, await loadTrees(bDatasetId), node.evaluationLevel);
  if (planned.length === 0) {
    const why =
      body.pair_by === "siblings"
        ? `no message of dataset ${aDatasetId} has a sibling reply (assistant messages with the same meta.parent_id)`
        : `no conversation of dataset ${aDatasetId} shares a source with one of dataset ${bDatasetId} (meta.source_conversation_id, or the source's own id)`;
    throw new AppError("unprocessable", `Nothing to compare: ${why}`, [{ path: "pair_by", message: "found no pairs" }]);
  }
  if (planned.length > body.max_pairs) {
    throw new AppError("unprocessable", `${planned.length} pairs is more than max_pairs (${body.max_pairs}); each is judged twice`, [{ path: "max_pairs", message: `raise it to ${planned.length} to judge them all` }]);
  }
  const params = { model_name: body.model_name ?? null, batch_size: body.batch_size ?? null, max_cost_usd: body.max_cost_usd ?? null, no_cache: body.no_cache };
  const row = await repo.insertComparison(
    { userId, pipelineNodeId: node.id, aSource: body.a, bSource: body.b ?? null, aDatasetId, bDatasetId, pairBy: body.pair_by, params },
    planned.map((p) => ({ groupKey: p.groupKey, aConversationId: p.a.conversationId, aMessageId: p.a.messageId, bConversationId: p.b.conversationId, bMessageId: p.b.messageId })),
    comparisonJobs.leaseUntil(),
  );
  comparisonJobs.start(
    row.id,
    (job) => work(row, planned, body, job.signal, deps, new LocalBudgetMeter(body.max_cost_usd ?? null)),
    (error) => repo.saveComparisonState(row.id, { status: "failed", usage: null, error: `comparison stopped: ${error.message}`, finishedAt: new Date().toISOString() }),
  );
  return getComparison(row.id);
}

async function work(row: repo.ComparisonRow, planned: PlannedPair[], body: CreateComparisonInput, signal: AbortSignal, deps: JudgeDeps, meter: BudgetMeter): Promise<void> {
  const node = await getMetricRow(row.pipelineNodeId);
  const model = resolveModelName(body.model_name, node.modelName);
  const pairRows = await repo.listPairs(row.id);
  const usage = noUsage();
  const startedAt = new Date().toISOString();
  let judged = 0;
  await repo.saveComparisonState(row.id, { status: "processing", usage, startedAt });
  const limit = pLimit(body.batch_size ?? getJudgeConfig().maxConcurrency);

  const one = async (planned: PlannedPair, pairId: number) => {
    // A pair is one start of the budget: both its orders go out, and count, together.
    if (signal.aborted || !(await meter.mayStart())) return;
    try {
      await judgePair(planned, pairId);
    } finally {
      meter.settle();
    }
  };
  const judgePair = async (planned: PlannedPair, pairId: number) => {
    const [textA, textB] = [repliesText(planned.a.replies), repliesText(planned.b.replies)];
    const ask = async (first: string, second: string) => {
      const prompt = buildPairwisePrompt({ metric: node, input: planned.input, candidateA: first, candidateB: second, contextTokens: contextTokensFor(model) });
      const outcome = await judge({ model, system: prompt.system, prompt: prompt.prompt, outputType: "pairwise", signal, noCache: body.no_cache }, deps);
      usage.judge_calls += outcome.cached ? 0 : outcome.attempts;
      usage.input_tokens += outcome.inputTokens;
      usage.output_tokens += outcome.outputTokens;
      if (outcome.inputTokens + outcome.outputTokens > 0) {
        const cost = costOf(outcome.model, outcome.inputTokens, outcome.outputTokens);
        meter.landed(cost);
        usage.cost_usd = meter.spentUsd;
      }
      return outcome;
    };
    // Both orders at once: a first (a is A), then b first (b is A).
    let ab: Awaited<ReturnType<typeof ask>>;
    let ba: typeof ab;
    try {
      [ab, ba] = await Promise.all([ask(textA, textB), ask(textB, textA)]);
    } catch (error) {
      // The judge throws only on our own cancel: nothing is written after it.
      if (signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    const winner = (o: typeof ab) => (o.status === "completed" ? ((o.result?.winner as Position | undefined) ?? null) : null);
    const reasoning = (o: typeof ab) => (o.status === "completed" ? String(o.result?.reasoning ?? "") : null);
    const [vAb, vBa] = [winner(ab), winner(ba)];
    const error = [ab, ba].map((o, i) => (o.status === "failed" ? `${i === 0 ? "a first" : "b first"}: ${o.error}` : null)).filter(Boolean).join("; ") || null;
    await repo.savePair(pairId, {
      verdictAb: vAb,
      verdictBa: vBa,
      reasoningAb: reasoning(ab),
      reasoningBa: reasoning(ba),
      outcome: vAb && vBa ? pairOutcome(vAb, vBa) : null,
      error,
    });
    judged++;
    await repo.saveComparisonState(row.id, { status: "processing", usage });
  };
  await Promise.all(planned.map((p, i) => limit(() => one(p, pairRows[i].id))));
  const finishedAt = new Date().toISOString();
  const pairs = await repo.listPairs(row.id);
  const allFailed = judged > 0 && pairs.every((p) => p.outcome === null);
  const budgetReached = meter.reached;
  const status = signal.aborted || budgetReached ? "cancelled" : allFailed ? "failed" : "completed";
  const error = budgetReached
    ? `budget reached: max_cost_usd ${body.max_cost_usd}; the pairs not started were not judged`
    : signal.aborted
      ? "cancelled"
      : allFailed
        ? `every pair failed: ${pairs[0]?.error ?? "unknown error"}`
        : undefined;
  await repo.saveComparisonState(row.id, { status, usage, finishedAt, ...(error ? { error } : {}) });
}

/** A comparison with its figures over the pairs judged in both orders, and every pair. */
export async function getComparison(id: number): Promise<Comparison> {
  const row = await repo.getComparison(id);
  if (!row) throw notFound("Comparison", id);
  const pairs = await repo.listPairs(id);
  const judged = pairs.filter((p) => p.verdictAb && p.verdictBa).map((p) => ({ ab: p.verdictAb!, ba: p.verdictBa! }));
  const figures = pairwiseFigures(judged);
  const usage = row.usage ?? noUsage();
  return {
    id: row.id,
    pipeline_node_id: row.pipelineNodeId,
    a: row.aSource,
    b: row.bSource,
    a_dataset_id: row.aDatasetId,
    b_dataset_id: row.bDatasetId,
    pair_by: row.pairBy as Comparison["pair_by"],
    status: row.status,
    total: row.total,
    ...figures,
    failed: pairs.filter((p) => p.error !== null).length,
    judge_calls: usage.judge_calls,
    usage,
    error: row.error,
    created_at: row.createdAt,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
    results: pairs.map((p) => ({
      group: p.groupKey,
      a: { conversation_id: p.aConversationId, message_id: p.aMessageId },
      b: { conversation_id: p.bConversationId, message_id: p.bMessageId },
      verdict_ab: p.verdictAb,
      verdict_ba: p.verdictBa,
      reasoning_ab: p.reasoningAb,
      reasoning_ba: p.reasoningBa,
      outcome: p.outcome,
      error: p.error,
    })),
  };
}

/**
 * Cancel a running comparison from any process: it ends `cancelled` at once, the pairs judged so far kept;
 * the process judging it aborts its calls in flight and writes nothing more (lib/jobs).
 */
export async function cancelComparison(id: number): Promise<Comparison> {
  const row = await repo.getComparison(id);
  if (!row) throw notFound("Comparison", id);
  if (row.status !== "pending" && row.status !== "processing") throw new AppError("conflict", `Comparison ${id} is already ${row.status}`);
  if (!(await comparisonJobs.cancel(id))) throw new AppError("conflict", `Comparison ${id} ended meanwhile`);
  return getComparison(id);
}

/** Wait for a comparison of this process to end (tests). */
export const waitForComparison = (id: number): Promise<void> => comparisonJobs.waitFor(id);

/**
 * At start-up on SQLite (one server owns the store): a comparison a stopped server left unfinished can
 * never finish, so it ends failed, saying to start it again, instead of showing "judging" for good. On
 * PostgreSQL another process may be working it, so it is left alone.
 */
export const recoverComparisons = (): Promise<number> => comparisonJobs.recover();

/** Every process, on either store: comparisons whose process died (their lease ran out) end failed, saying so. */
export const sweepExpiredComparisons = (now: string): Promise<number> => comparisonJobs.sweep(now);

export type ComparisonSummary = {
  id: number;
  pipeline_node_id: number;
  a_dataset_id: number;
  b_dataset_id: number | null;
  pair_by: Comparison["pair_by"];
  status: repo.ComparisonStatus;
  total: number;
  wins_a: number;
  wins_b: number;
  ties: number;
  created_at: string;
};

/** The latest comparisons with a dataset on either side, newest first (the Compare replies page lists them). */
export async function listDatasetComparisons(datasetId: number, limit = 20): Promise<ComparisonSummary[]> {
  return (await repo.listComparisonsOfDataset(datasetId, limit)).map((r) => ({
    id: r.id,
    pipeline_node_id: r.pipelineNodeId,
    a_dataset_id: r.aDatasetId,
    b_dataset_id: r.bDatasetId,
    pair_by: r.pairBy as Comparison["pair_by"],
    status: r.status,
    total: r.total,
    wins_a: r.winsA,
    wins_b: r.winsB,
    ties: r.ties,
    created_at: r.createdAt,
  }));
}
