/**
 * A run priced before it is spent (`dry_run: true`): the run's own plan, the prompts its judge cells
 * would send (built as the runner builds them) and a look in the verdict cache for each — nothing is
 * written and no judge is called.
 */
import "server-only";
import { averageOutputTokens } from "@/db/repositories/online";
import { readJudgeCache } from "@/db/repositories/judge";
import { checkVerdict, contextTokensFor, costOf, judgeCacheKey, resolveModelName, verdictSchema } from "@/lib/judge";
import { buildJudgePrompt, loadConversationTrees, type ConversationTree } from "@/lib/metrics";
import { estimateTokens } from "@/lib/metrics/evidence";
import { metricVerdicts } from "@/lib/metrics/metric-verdicts";
import type { RunEstimate, RunRequest } from "@/lib/schemas/executions";
import { planRun, type Cell } from "./plan";

/** Reply tokens assumed for a metric that has no judged result yet. */
const DEFAULT_OUTPUT_TOKENS = 150;
/** Conversations whose trees are loaded at once. */
const TREES_AT_ONCE = 64;

/** What the run would cost: cells, judge calls, cache hits, tokens and (with prices) USD. Creates nothing. */
export async function estimateRun(req: RunRequest): Promise<RunEstimate> {
  const plan = await planRun(req);
  const checks = plan.cells.filter((c) => c.node.kind === "check").length;
  const judged = plan.cells.filter((c) => c.node.kind !== "check");
  const useCache = !req.retry && !req.no_cache;
  const outputAverage = await averageOutputTokens([...new Set(judged.map((c) => c.node.id))]);
  const estimate = { cells: plan.cells.length, judge_calls: 0, goal_extractions: 0, cached: 0, checks, estimated_input_tokens: 0, estimated_output_tokens: 0 };
  let cost = 0;
  let priced = true;
  const spend = (model: string, input: number, output: number) => {
    estimate.judge_calls++;
    estimate.estimated_input_tokens += input;
    estimate.estimated_output_tokens += output;
    const c = costOf(model, input, output);
    if (c === null) priced = false;
    else cost += c;
  };
  // A sync run writes each verdict before the next cell asks: a prompt repeated within the run is a cache hit then.
  const seen = new Set<string>();
  const goalsAsked = new Set<number>();

  // Cells come in grid order, grouped by conversation: trees are loaded a few dozen conversations at a time.
  for (const group of byConversationGroups(judged)) {
    const trees = await loadConversationTrees([...new Set(group.map((c) => c.conversationId))]);
    for (const cell of group) {
      const tree = trees.get(cell.conversationId);
      if (!tree) continue;
      const model = resolveModelName(req.model_name, cell.node.modelName);
      if (cell.node.templateVariables?.includes("@GOAL") && !tree.conversation.goal && !goalsAsked.has(cell.conversationId)) {
        // The run first asks the judge for the conversation's goal, once.
        goalsAsked.add(cell.conversationId);
        estimate.goal_extractions++;
        spend(model, estimateTokens(historyCharacters(tree)) + 100, 60);
      }
      const metricValues = await metricVerdicts(cell.node, { type: cell.entityType, id: cell.entityId, conversationId: cell.conversationId }, plan.allNodes);
      const prompt = buildJudgePrompt({ metric: cell.node, tree, entity: { type: cell.entityType, id: cell.entityId }, metricValues, contextTokens: contextTokensFor(model) });
      const schema = verdictSchema(cell.node.outputType, cell.node.outputSchema);
      const key = judgeCacheKey({ model, system: prompt.system, prompt: prompt.prompt, outputType: cell.node.outputType }, schema);
      if (useCache) {
        const hit = seen.has(key) && req.execution_mode === "sync" ? true : await cachedVerdict(key, cell);
        seen.add(key);
        if (hit) {
          estimate.cached++;
          continue;
        }
      }
      const input = estimateTokens((prompt.system ?? "").length + prompt.prompt.length + JSON.stringify(schema).length);
      spend(model, input, Math.round(outputAverage.get(cell.node.id) ?? DEFAULT_OUTPUT_TOKENS));
    }
  }
  return { ...estimate, estimated_cost_usd: priced ? cost : null };
}

async function cachedVerdict(key: string, cell: Cell): Promise<boolean> {
  const hit = await readJudgeCache(key);
  // The runner uses a cached verdict only when it still fits the metric's output type.
  return Boolean(hit && checkVerdict(cell.node.outputType, cell.node.outputSchema, hit.response).ok);
}

function* byConversationGroups(cells: Cell[]): Generator<Cell[]> {
  let group: Cell[] = [];
  const conversations = new Set<number>();
  for (const cell of cells) {
    if (!conversations.has(cell.conversationId) && conversations.size >= TREES_AT_ONCE) {
      yield group;
      group = [];
      conversations.clear();
    }
    conversations.add(cell.conversationId);
    group.push(cell);
  }
  if (group.length) yield group;
}

function historyCharacters(tree: ConversationTree): number {
  return tree.messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
}
