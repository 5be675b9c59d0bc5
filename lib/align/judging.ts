/**
 * Judging an alignment's prompts: each cell with a given prompt through the same judge client as runs
 * (lib/judge: cache, adaptive limiter, retries, hedges, parsing by output type), a bounded number at once,
 * every call counted in the alignment's usage and stopped at its max_cost_usd.
 */
import "server-only";
import type { PipelineNodeRow } from "@/db/schema";
import { LocalBudgetMeter } from "@/lib/jobs";
import { contextTokensFor, costOf, judge, type JudgeDeps, type JudgeOutcome } from "@/lib/judge";
import { readingOfResult } from "@/lib/labels/readings";
import { buildJudgePrompt, loadConversationTrees, type ConversationTree } from "@/lib/metrics";
import { metricVerdicts } from "@/lib/metrics/metric-verdicts";
import { resolveVariables } from "@/lib/metrics/resolve";
import { listNodes } from "@/db/repositories/metrics";
import { forEachLimited } from "@/lib/runner/limited";
import type { Reading } from "@/lib/agreement";
import type { AlignmentUsage } from "@/lib/schemas/alignments";
import type { TruthCell } from "./truth";

export class BudgetReached extends Error {}

/** The alignment's running figures: calls, tokens, and its budget meter (lib/jobs), which stops it at max_cost_usd. */
export class Spend {
  usage: AlignmentUsage = { judge_calls: 0, optimizer_calls: 0, cached: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  done = 0;
  private readonly meter: LocalBudgetMeter;
  constructor(
    private readonly maxCostUsd: number | undefined,
    private readonly onProgress: () => void,
  ) {
    this.meter = new LocalBudgetMeter(maxCostUsd ?? null);
  }

  /**
   * One call, counted: it starts only while the meter allows (else BudgetReached: no new call starts once
   * the priced cost reached max_cost_usd), and its outcome is counted as it lands.
   */
  async call(kind: "judge" | "optimizer", ask: () => Promise<JudgeOutcome>): Promise<JudgeOutcome> {
    if (!this.meter.mayStart()) {
      throw new BudgetReached(`budget reached: $${(this.meter.spentUsd ?? 0).toFixed(4)} spent of max_cost_usd $${this.maxCostUsd}; the alignment stopped before its figures were complete`);
    }
    try {
      const outcome = await ask();
      this.count(outcome, kind);
      return outcome;
    } finally {
      this.meter.settle();
    }
  }

  private count(outcome: JudgeOutcome, kind: "judge" | "optimizer"): void {
    this.done++;
    if (outcome.cached) this.usage.cached++;
    else if (kind === "judge") this.usage.judge_calls++;
    else this.usage.optimizer_calls++;
    this.usage.input_tokens += outcome.inputTokens;
    this.usage.output_tokens += outcome.outputTokens;
    if (outcome.inputTokens + outcome.outputTokens > 0) this.meter.landed(costOf(outcome.model, outcome.inputTokens, outcome.outputTokens));
    this.usage.cost_usd = this.meter.spentUsd;
    this.onProgress();
  }
}

/** Conversation trees of the truth cells, loaded once for every prompt judged. */
export async function treesOf(cells: readonly TruthCell[]): Promise<Map<number, ConversationTree>> {
  return loadConversationTrees([...new Set(cells.map((c) => c.conversationId))]);
}

/** A cell's text as examples and the optimiser quote it: the transcript up to and including the entity. */
export function cellText(trees: Map<number, ConversationTree>, cell: TruthCell): string {
  const tree = trees.get(cell.conversationId);
  if (!tree) return "";
  return resolveVariables(tree, { type: cell.entityType, id: cell.entityId }, ["@HISTORY"])["@HISTORY"] ?? "";
}

export type JudgeContext = {
  node: PipelineNodeRow;
  model: string;
  trees: Map<number, ConversationTree>;
  /** Each cell's `@METRIC.<name>` values (its dependencies' latest verdicts), read once for every prompt. */
  metricValues?: Map<string, Record<string, string | null>>;
  spend: Spend;
  concurrency: number;
  signal?: AbortSignal;
  deps?: JudgeDeps;
};

/** The dependencies' latest verdicts of each cell, when the metric's prompt uses `@METRIC.<name>` (as a run reads them). */
export async function dependencyValues(node: PipelineNodeRow, cells: readonly TruthCell[]): Promise<Map<string, Record<string, string | null>> | undefined> {
  if (!(node.templateVariables ?? []).some((v) => v.startsWith("@METRIC."))) return undefined;
  const nodes = new Map((await listNodes({ datasetId: node.datasetId })).map((n) => [n.id, n]));
  const out = new Map<string, Record<string, string | null>>();
  for (const c of cells) out.set(`${c.entityType}:${c.entityId}`, await metricVerdicts(node, { type: c.entityType, id: c.entityId, conversationId: c.conversationId }, nodes));
  return out;
}

/**
 * Each cell's reading under its own prompt (candidates differ by fold), all in one pool of calls so no fold
 * waits for another's slowest call; a cell the judge failed on reads null (left out of the figures, as a
 * failed cell is left out of agreement).
 */
export async function judgeMany(ctx: JudgeContext, items: ReadonlyArray<{ cell: TruthCell; prompt: string }>): Promise<Array<Reading | null>> {
  const out: Array<Reading | null> = items.map(() => null);
  const contextTokens = contextTokensFor(ctx.model);
  await forEachLimited(
    items.map((item, i) => [item, i] as const),
    ctx.concurrency,
    async ([{ cell, prompt }, i]) => {
      const tree = ctx.trees.get(cell.conversationId);
      if (!tree) return;
      const metricValues = ctx.metricValues?.get(`${cell.entityType}:${cell.entityId}`);
      const built = buildJudgePrompt({ metric: { ...ctx.node, prompt }, tree, entity: { type: cell.entityType, id: cell.entityId }, metricValues, contextTokens });
      const outcome = await ctx.spend.call("judge", () =>
        judge({ model: ctx.model, system: built.system, prompt: built.prompt, outputType: ctx.node.outputType, outputSchema: ctx.node.outputSchema, signal: ctx.signal }, ctx.deps),
      );
      out[i] = readingOfResult(ctx.node.outputType, { status: outcome.status, result: outcome.result, score: outcome.score }) ?? null;
    },
  );
  return out;
}

/** Every cell under one prompt. */
export async function judgeCells(ctx: JudgeContext, prompt: string, cells: readonly TruthCell[]): Promise<Array<Reading | null>> {
  return judgeMany(ctx, cells.map((cell) => ({ cell, prompt })));
}
